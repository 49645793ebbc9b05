"""In-house PyTorch rows (``profet_core/data/inhouse_torch.csv``) as one more source of speed-up
pairs (issue 40, items 3 and 4).

The rows were measured on a lent GPU by ``profet_core/data/build/torch_steps.py`` (framework
PyTorch, its version and settings in their columns; ``profet_core/data/build/README.md``). They
have no data GPU of their own to pair with, so each ``TF32`` row (PyTorch's default for
convolutions, and the model's convention that FP32 training runs on TF32 tensor cores) is paired
with the data's own V100 (:data:`ANCHOR`) median latency of the same CNN (``data_model``, not a
stand-in), image size and batch: a cross-framework pair, PyTorch on the target, the data's
TensorFlow on the anchor. Only rows whose step spread is at most :data:`MAX_SPREAD_PCT` enter
(small batches are host-bound there). The rule that chose this form: docs/arch_efficiency_rule.md
(candidate B). Held-out rows (VGG16, Inception-v3) are flagged as in every source.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

from ._pairs import FAM_COLS
from ._published import PAIR_COLUMNS, held_out

#: The data GPU the in-house rows are paired with (every published pair's baseline is a data GPU;
#: the data's K80 and T4 run far below their rated resources).
ANCHOR = "p3.2xlarge"
#: Largest 10th-90th percentile step spread (% of the median) of a row that enters.
MAX_SPREAD_PCT = 10.0
#: Whether :func:`learn_published` adds these pairs (docs/arch_efficiency_rule.md, candidate B).
USE_INHOUSE = False


def load_inhouse() -> pd.DataFrame:
    """The package's in-house rows, as written by ``torch_steps.py``."""
    import io

    data = resources.files("profet_core").joinpath("data/inhouse_torch.csv").read_bytes()
    return pd.read_csv(io.StringIO(data.decode("utf-8")), dtype={"notes": str})


def inhouse_pairs(specs: pd.DataFrame, medians: pd.DataFrame, rows=None) -> pd.DataFrame:
    """:func:`profet_core.crossgpu._published.published_pairs`-shaped pairs of the in-house
    ``TF32`` one-GPU rows against the data's :data:`ANCHOR` at the same workload.

    Parameters
    ----------
    specs : pandas.DataFrame
        Spec catalog (``instance``, ``gpu``).
    medians : pandas.DataFrame
        :func:`profet_core.crossgpu.median_table` of the data.
    rows : pandas.DataFrame, optional
        In-house rows (default: :func:`load_inhouse`).

    Returns
    -------
    pandas.DataFrame
        :data:`PAIR_COLUMNS`; ``document`` is the rows' ``source`` (one source), ``framework``
        ``PyTorch``; empty where the data lacks the anchor.
    """
    rows = load_inhouse() if rows is None else rows
    keep = (
        (rows["precision"] == "TF32")
        & (rows["gpu_count"] == 1)
        & rows["data_model"].fillna("").ne("")
        & (rows["spread_pct"].astype(float) <= MAX_SPREAD_PCT)
    )
    by_gpu = specs.sort_values("instance").drop_duplicates("gpu").set_index("gpu")["instance"]
    anchor = medians[medians["instance"] == ANCHOR].dropna(subset=list(FAM_COLS))
    out = []
    for r in rows[keep].itertuples(index=False):
        target = by_gpu.get(r.catalog_gpu)
        a = anchor[
            (anchor["model"] == r.data_model)
            & (anchor["input_size"] == r.image_size)
            & (anchor["batch_size"] == r.batch_size)
        ]
        if target is None or a.empty:
            continue
        a = a.iloc[0]
        out.append(
            {
                "document": r.source,
                "source": r.source,
                "baseline_source": f"PROFET data: {ANCHOR} median",
                "framework": r.framework,
                "model": r.model,
                "profile": r.data_model,
                "anchor": ANCHOR,
                "target": target,
                "target_gpu": r.catalog_gpu,
                "gpu_published": r.gpu_published,
                "speedup": float(r.images_per_s) * a["latency_s"] / float(r.batch_size),
                "held_out": bool(held_out([r.model])[0] or held_out([r.data_model])[0]),
                "input_size": a["input_size"],
                "batch_size": a["batch_size"],
                **{c: a[c] for c in FAM_COLS},
                "anchor_latency_s": a["latency_s"],
            }
        )
    frame = pd.DataFrame(out, columns=list(PAIR_COLUMNS))
    return frame.astype({"held_out": bool, "speedup": float})


def all_published_pairs(table, specs, medians) -> pd.DataFrame:
    """The published table's pairs, then (where :data:`USE_INHOUSE`) the in-house ones."""
    from ._published import published_pairs

    pairs = published_pairs(table, specs, medians)
    if not USE_INHOUSE or ANCHOR not in set(medians["instance"]):
        return pairs
    extra = inhouse_pairs(specs, medians)
    return pd.concat([pairs, extra], ignore_index=True) if len(extra) else pairs
