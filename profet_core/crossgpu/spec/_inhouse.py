"""In-house PyTorch rows (``profet_core/data/inhouse_torch.csv``): the two Hopper GPUs' measured
step-time ratios and mixed-precision gains, which ``bench/claims/hopper_check.py`` sets the
shipped model's answers against (a check of direction and ratios; no fit reads these rows).

The rows were measured on a lent GPU by ``profet_core/data/build/torch_steps.py`` (framework
PyTorch, its version and settings in their columns; ``profet_core/data/build/README.md``).
Held-out rows (VGG16, Inception-v3) are flagged as in every source. Using them as a source of
fitted pairs was judged and rejected twice (docs/arch_efficiency_rule.md candidate B,
docs/inhouse_amp_rule.md candidate S3); those variants live with their studies in
``bench/studies/_variants.py``.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

from ...errors import ProfetValueError
from ._published import held_out


def load_inhouse() -> pd.DataFrame:
    """The package's in-house rows, as written by ``torch_steps.py``."""
    import io

    data = resources.files("profet_core").joinpath("data/inhouse_torch.csv").read_bytes()
    return pd.read_csv(io.StringIO(data.decode("utf-8")), dtype={"notes": str})


#: The two Hopper GPUs the in-house rows measured (``catalog_gpu``), same script and versions.
H100_SXM = "NVIDIA H100 SXM5 80GB"
H200_SXM = "NVIDIA H200 SXM 141GB"
#: One measured workload: torchvision's CNN, the data's CNN it stands for, image size, batch.
KEY = ["model", "cnn", "image_size", "batch_size"]
#: ``precision`` values of the rows (``torch_steps.py``): strict FP32, TF32, FP16 and BF16 AMP.
PRECISIONS = ("FP32", "TF32", "AMP", "AMP BF16")
_NEEDED = ("catalog_gpu", "model", "data_model", "image_size", "batch_size", "precision")
_NEEDED += ("ms_per_step", "spread_pct", "gpu_count")


def checked_steps(rows: pd.DataFrame) -> pd.DataFrame:
    """The one-GPU rows, checked: ``cnn`` (``data_model``, else ``profile_proxy``), ``ms`` and
    ``spread`` as floats; refuses missing columns, unknown precisions, steps that are not
    positive, and two rows of one (GPU, workload, precision)."""
    missing = [c for c in _NEEDED if c not in rows.columns]
    if missing:
        raise ProfetValueError(f"in-house rows lack the columns {missing}")
    r = rows[pd.to_numeric(rows["gpu_count"], errors="coerce") == 1].copy()
    bad = sorted(set(r["precision"].astype(str)) - set(PRECISIONS))
    if bad:
        raise ProfetValueError(
            f"unknown precision {bad} in the in-house rows (allowed: {PRECISIONS})"
        )
    proxy = r["profile_proxy"] if "profile_proxy" in r else pd.Series("", index=r.index)
    dm = r["data_model"].astype("string").fillna("")
    r["cnn"] = dm.where(dm != "", proxy.astype("string").fillna("")).astype(str)
    r["ms"] = pd.to_numeric(r["ms_per_step"], errors="coerce")
    r["spread"] = pd.to_numeric(r["spread_pct"], errors="coerce")
    nonpos = r[~(r["ms"] > 0)]
    if len(nonpos):
        w = nonpos.iloc[0]
        raise ProfetValueError(
            f"ms_per_step must be a positive number of milliseconds; '{w['ms_per_step']}' for "
            f"{w['model']} batch {w['batch_size']} {w['precision']} on {w['catalog_gpu']}"
        )
    dup = r.duplicated(["catalog_gpu", *KEY, "precision"], keep=False)
    if dup.any():
        w = r[dup].iloc[0]
        raise ProfetValueError(
            f"two in-house rows of {w['model']} {w['image_size']} px batch {w['batch_size']} "
            f"{w['precision']} on {w['catalog_gpu']}: which one to compare is ambiguous"
        )
    r["held_out"] = held_out(r["model"]) | held_out(r["cnn"])
    return r


def gpu_ratios(rows: pd.DataFrame, num: str = H100_SXM, den: str = H200_SXM) -> pd.DataFrame:
    """Measured step-time ratio ``num`` / ``den`` of each workload and precision both GPUs ran.

    Parameters
    ----------
    rows : pandas.DataFrame
        In-house rows as ``torch_steps.py`` writes them (``catalog_gpu``, ``model``,
        ``data_model``, ``profile_proxy``, ``image_size``, ``batch_size``, ``precision``,
        ``ms_per_step``, ``spread_pct``, ``gpu_count``); one-GPU rows are read.
    num, den : str
        ``catalog_gpu`` of the numerator and denominator GPU (default H100 SXM5 over H200).

    Returns
    -------
    pandas.DataFrame
        One row per (:data:`KEY`, ``precision``) measured on both: ``held_out``, ``ms_num`` and
        ``ms_den`` (ms per step), ``spread`` (the larger ``spread_pct`` of the two, %) and
        ``ratio`` = ``ms_num`` / ``ms_den`` (= ``den``'s images/s over ``num``'s).

    Raises
    ------
    ProfetValueError
        If ``num`` equals ``den``, either GPU has no one-GPU row, or :func:`checked_steps` refuses.
    """
    if num == den:
        raise ProfetValueError(f"a ratio needs two different GPUs, got {num!r} twice")
    r = checked_steps(rows)
    have = sorted(set(r["catalog_gpu"]))
    for gpu in (num, den):
        if gpu not in have:
            raise ProfetValueError(f"no one-GPU in-house row of {gpu!r}; the rows have {have}")
    cols = [*KEY, "precision", "held_out", "ms", "spread"]
    a = r.loc[r["catalog_gpu"] == num, cols]
    b = r.loc[r["catalog_gpu"] == den, cols].drop(columns="held_out")
    out = a.merge(b, on=[*KEY, "precision"], suffixes=("_num", "_den"))
    out["spread"] = out[["spread_num", "spread_den"]].max(axis=1)
    out["ratio"] = out["ms_num"] / out["ms_den"]
    out = out.drop(columns=["spread_num", "spread_den"])
    return out.sort_values([*KEY, "precision"], ignore_index=True)


def amp_gains(rows: pd.DataFrame) -> pd.DataFrame:
    """Measured mixed-precision gains of each GPU and workload (step-time ratios, > 1: faster).

    Parameters
    ----------
    rows : pandas.DataFrame
        In-house rows, as for :func:`gpu_ratios`.

    Returns
    -------
    pandas.DataFrame
        One row per (``catalog_gpu``, :data:`KEY`): ``held_out``, ``spread`` (largest
        ``spread_pct`` of its precisions, %), the step (ms) per precision in
        :data:`PRECISIONS` (NaN where not measured), and the gains ``fp16_tf32`` (TF32 step
        over the FP16 AMP step), ``bf16_tf32``, ``fp16_fp32`` and ``bf16_fp32`` (strict FP32
        step over the AMP step) and ``tf32_fp32``.
    """
    r = checked_steps(rows)
    idx = ["catalog_gpu", *KEY]
    wide = r.pivot(index=idx, columns="precision", values="ms")
    wide = wide.reindex(columns=list(PRECISIONS))
    g = r.groupby(idx)
    out = pd.DataFrame({"held_out": g["held_out"].any(), "spread": g["spread"].max()})
    out = out.join(wide)
    for name, (slow, fast) in {
        "fp16_tf32": ("TF32", "AMP"),
        "bf16_tf32": ("TF32", "AMP BF16"),
        "fp16_fp32": ("FP32", "AMP"),
        "bf16_fp32": ("FP32", "AMP BF16"),
        "tf32_fp32": ("FP32", "TF32"),
    }.items():
        out[name] = out[slow] / out[fast]
    return out.reset_index()
