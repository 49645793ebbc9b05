"""Every GPU offering a user can rent (SkyPilot's catalog: clouds, regions, on-demand and spot),
and predictions joined to them once per GPU configuration.

``load_offerings()`` is the shipped snapshot (``profet_core/data/offerings.csv``, metadata in
``offerings_meta.json``); ``refresh(folder)`` derives it from a SkyPilot catalog folder (``write_offerings`` writes it);
``predict_offerings(...)`` prices a profile on every offering a filter keeps.
"""

from ._answer import Answer, answer
from ._filter import (
    CHEAPEST_NOTE,
    SPOT_NOTE,
    OfferingFilter,
    choose,
    choose_lines,
    markets,
    matches,
)
from ._front import BEST_VALUE, add_front, pareto_mask
from ._gpus import GPU_OF_ACCELERATOR, spec_gpu
from ._join import NO_SPEC, join_offerings
from ._list import basis_of, list_offerings
from ._predict import OFFERING_COLUMNS, OfferingsResult, predict_offerings
from ._read import catalog_files, read_catalog
from ._snapshot import (
    SNAPSHOT_COLUMNS,
    changes_text,
    compare,
    derive_offerings,
    load_offerings,
    offerings_meta,
    price_source,
    refresh,
    write_offerings,
)

refresh_offerings = refresh
offerings_changes_text = changes_text

__all__ = [
    "Answer",
    "answer",
    "BEST_VALUE",
    "CHEAPEST_NOTE",
    "GPU_OF_ACCELERATOR",
    "NO_SPEC",
    "OFFERING_COLUMNS",
    "SNAPSHOT_COLUMNS",
    "SPOT_NOTE",
    "OfferingFilter",
    "OfferingsResult",
    "add_front",
    "basis_of",
    "catalog_files",
    "changes_text",
    "choose",
    "choose_lines",
    "compare",
    "derive_offerings",
    "join_offerings",
    "list_offerings",
    "load_offerings",
    "markets",
    "matches",
    "offerings_changes_text",
    "offerings_meta",
    "pareto_mask",
    "predict_offerings",
    "price_source",
    "read_catalog",
    "refresh",
    "write_offerings",
    "refresh_offerings",
    "spec_gpu",
]
