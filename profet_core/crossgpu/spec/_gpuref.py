"""GPU-level specs for mixed precision and multi-GPU: the spec sheet's precision columns, and
the reference specs of GPUs that published measurements name but no catalog instance rents.

``gpu_specs.csv`` (one row per instance) carries ``fp16_tensor_tflops``, ``bf16``,
``interconnect``, ``interconnect_gbs`` and ``precision_source``; ``gpu_reference.csv`` holds
the same per GPU (plus ``nvlink_bridge_gbs``, the bridge some workstation cards pair over, and ``p2p``, 0
for GeForce cards whose PCIe peer-to-peer is disabled: their all-reduce goes through host memory) for
the GPUs of ``published.csv`` without an instance. Artifacts made before these columns keep a
spec copy without them: the package's sheet fills them by ``gpu`` (a GPU found nowhere gets no
FP16 rate and no interconnect, so AMP and multi-GPU answers are refused or said to be FP32).
"""

from __future__ import annotations

import functools
from importlib import resources

import numpy as np
import pandas as pd

#: Per-GPU columns the AMP and data-parallel models read.
GPU_COLUMNS = (
    "fp32_tflops",
    "tensor_tflops_fp32_training",
    "fp16_tensor_tflops",
    "bf16",
    "mem_bandwidth_gbs",
    "boost_clock_mhz",
    "arch",
    "interconnect",
    "interconnect_gbs",
    "nvlink_bridge_gbs",
    "p2p",
)
NUMERIC = tuple(c for c in GPU_COLUMNS if c not in ("arch", "interconnect"))


@functools.cache
def _package_csv(name: str) -> pd.DataFrame:
    """A sheet of the package, read once a process (callers get copies: :func:`gpu_table`)."""
    with resources.files("profet_core").joinpath(f"data/{name}").open("rb") as fh:
        return pd.read_csv(fh)


#: Built tables by the content of the spec sheet they came from (a prediction asks for the same
#: model's sheet several times a call: building one took ~70 ms, most of a prediction's time).
_TABLES: dict = {}


def gpu_table(specs: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per GPU name (index ``gpu``) with :data:`GPU_COLUMNS`.

    Parameters
    ----------
    specs : pandas.DataFrame, optional
        An instance spec sheet (e.g. a model's ``specs_``); its values win, missing columns or
        values are filled from the package's ``gpu_specs.csv`` and ``gpu_reference.csv``.

    Returns
    -------
    pandas.DataFrame
        A new frame each call (built once per distinct ``specs`` content, then copied).
    """
    key = None if specs is None else _content_key(specs)
    table = _TABLES.get(key)
    if table is None:
        table = _build(specs)
        if len(_TABLES) >= 32:  # a process meets a few sheets; never grow without bound
            _TABLES.clear()
        _TABLES[key] = table
    return table.copy()


def _content_key(specs: pd.DataFrame) -> tuple:
    """What :func:`gpu_table` reads of ``specs``: its columns and a hash of every cell."""
    cells = pd.util.hash_pandas_object(specs, index=False).to_numpy()
    return (tuple(map(str, specs.columns)), len(specs), hash(cells.tobytes()))


def _build(specs: pd.DataFrame | None) -> pd.DataFrame:
    frames = [] if specs is None else [specs]
    frames += [_package_csv("gpu_specs.csv"), _package_csv("gpu_reference.csv")]
    rows = []
    for f in frames:
        f = f.drop_duplicates("gpu").set_index("gpu")
        rows.append(f.reindex(columns=list(GPU_COLUMNS)))
    out = rows[0]
    for r in rows[1:]:
        out = out.combine_first(r)
    for c in NUMERIC:
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    out["nvlink_bridge_gbs"] = out["nvlink_bridge_gbs"].fillna(0.0)
    out["p2p"] = out["p2p"].fillna(1.0)  # 0: GeForce cards without PCIe peer-to-peer
    return out


def fp32_rate(gpus: pd.DataFrame) -> np.ndarray:
    """Peak rate FP32 training uses (TF32 tensor cores where there are any), TFLOPS."""
    return np.maximum(gpus["fp32_tflops"], gpus["tensor_tflops_fp32_training"].fillna(0)).to_numpy()


def amp_dtype(row) -> str:
    """What ``amp`` computes in on a GPU: ``bf16 or fp16`` (Ampere and later), ``fp16``
    (Volta, Turing), ``fp32`` (no tensor cores: AMP brings nothing to predict) or ``unknown``
    (a spec sheet without ``fp16_tensor_tflops`` for it: no gain is made up)."""
    if not np.isfinite(row["fp16_tensor_tflops"]):
        return "unknown"
    if row["fp16_tensor_tflops"] <= 0:
        return "fp32"
    return "bf16 or fp16" if row.get("bf16", 0) == 1 else "fp16"
