"""A PyTorch trace's GPU as the anchor: the spec line of the GPU it names, and the refusal of
an anchor of other silicon."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import ProfetValueError


def anchor_of_gpu(predictor, profiles: pd.DataFrame) -> str:
    """The instance whose spec line is the GPU a trace names (``gpu_name``, with its
    ``gpu_memory_gib`` and ``gpu_sm_count``): a measured instance of that GPU first, else
    its one-GPU spec line.

    Raises
    ------
    ProfetValueError
        The rows name several GPUs, or one without a spec line (named, with what to do).
    """
    from ..inputs._gpu_names import gpu_key

    cols = ["gpu_name", "gpu_memory_gib", "gpu_sm_count"]
    rows = profiles.reindex(columns=cols).drop_duplicates()
    if len(rows) != 1:
        raise ProfetValueError(
            f"the profile's rows were taken on {len(rows)} GPUs; give --anchor INSTANCE, "
            "or one GPU's rows"
        )
    name, mem, sms = rows.iloc[0].tolist()
    gpu = gpu_key(str(name), _num(mem), _num(sms))
    # the spec sheet names GPUs as gpu_key does (the catalog may name them shorter)
    cat = predictor.cross.specs_ if predictor.cross is not None else predictor.catalog
    found = cat[cat["gpu"] == gpu]["instance"].tolist() if gpu else []
    found = [i for i in found if i in predictor.all_instances]
    if not found:
        from .._messages import quote

        raise ProfetValueError(
            f"the trace's GPU {quote(name)} has no spec line PROFET knows (a line of "
            "profet_core/data/gpu_specs.csv names each GPU it predicts from); give --anchor "
            "INSTANCE for the spec line of the same GPU, or add a line for it"
        )
    measured = [i for i in found if i in predictor.instances]
    return (measured or sorted(found, key=_count_then_name(cat)))[0]


def check_traced_gpu(predictor, anchor: str, profiles) -> None:
    """Refuse an anchor whose GPU is not the one the trace names (where the name says
    which it is)."""
    from ..inputs._gpu_names import gpu_key

    predictor.check_instance(anchor, "anchor")
    row = profiles.iloc[0]
    name = str(row.get("gpu_name", ""))
    traced = gpu_key(name, _num(row.get("gpu_memory_gib")), _num(row.get("gpu_sm_count")))
    specs = predictor.cross.specs_ if predictor.cross is not None else None
    if not traced or specs is None:
        return
    mine = specs.set_index("instance")["gpu"].get(anchor)
    same = specs[specs["gpu"] == traced]["instance"].tolist()
    if mine is None or not same or mine == traced:
        return
    # the same silicon under another line (a V100 SXM2 16 GB for a 32 GB trace) is fine
    if np.allclose(predictor.cross._spec_rows([anchor]), predictor.cross._spec_rows(same[:1])):
        return
    from .._messages import quote

    raise ProfetValueError(
        f"the trace was taken on {quote(name)} ({traced}), but the anchor {quote(anchor)} is "
        f"a {mine}; leave the anchor out (the trace names its GPU) or name an instance of "
        "that GPU"
    )


def _num(value):
    """A trace's GPU memory or SM count as a number, None where it has none."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if v == v and v > 0 else None


def _count_then_name(catalog: pd.DataFrame):
    """Sort key: an instance's GPU count (one-GPU spec lines first), then its name."""
    counts = dict(zip(catalog["instance"], catalog.get("gpu_count", 1), strict=False))
    return lambda name: (float(counts.get(name, 1) or 1), name)
