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

:func:`inhouse_amp_pairs` gives the rows' same-GPU FP16 AMP vs TF32 pairs in the form the AMP-gain
model learns from (candidate S3 of docs/inhouse_amp_rule.md; :data:`USE_INHOUSE_AMP`).
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

from ..errors import ProfetValueError
from ._pairs import FAM_COLS
from ._published import PAIR_COLUMNS, held_out

#: The data GPU the in-house rows are paired with (every published pair's baseline is a data GPU;
#: the data's K80 and T4 run far below their rated resources).
ANCHOR = "p3.2xlarge"
#: Largest 10th-90th percentile step spread (% of the median) of a row that enters.
MAX_SPREAD_PCT = 10.0
#: Whether :func:`learn_published` adds these pairs (docs/arch_efficiency_rule.md, candidate B).
USE_INHOUSE = False
#: Whether :func:`profet_core.crossgpu._amp.amp_state_from` adds :func:`inhouse_amp_pairs` to the
#: published AMP pairs (docs/inhouse_amp_rule.md, candidate S3).
USE_INHOUSE_AMP = False


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


#: The two Hopper GPUs the in-house rows measured (``catalog_gpu``), same script and versions.
H100_SXM = "NVIDIA H100 SXM5 80GB"
H200_SXM = "NVIDIA H200 SXM 141GB"
#: One measured workload: torchvision's CNN, the data's CNN it stands for, image size, batch.
KEY = ["model", "cnn", "image_size", "batch_size"]
#: ``precision`` values of the rows (``torch_steps.py``): strict FP32, TF32, FP16 and BF16 AMP.
PRECISIONS = ("FP32", "TF32", "AMP", "AMP BF16")
_NEEDED = ("catalog_gpu", "model", "data_model", "image_size", "batch_size", "precision")
_NEEDED += ("ms_per_step", "spread_pct", "gpu_count")


def _steps(rows: pd.DataFrame) -> pd.DataFrame:
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
        If ``num`` equals ``den``, either GPU has no one-GPU row, or :func:`_steps` refuses.
    """
    if num == den:
        raise ProfetValueError(f"a ratio needs two different GPUs, got {num!r} twice")
    r = _steps(rows)
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
    r = _steps(rows)
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


def inhouse_amp_pairs(rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """Same-GPU AMP gains of the in-house rows, shaped as
    :func:`profet_core.crossgpu._amp.amp_pairs` rows (docs/inhouse_amp_rule.md, candidate S3).

    Each one-GPU ``AMP`` (FP16 autocast) row pairs with the ``TF32`` row of the same GPU, CNN,
    image size and batch; both rows' ``spread_pct`` must be at most :data:`MAX_SPREAD_PCT`.
    ``AMP BF16`` and strict ``FP32`` rows never pair. The profile is ``data_model``, else
    ``profile_proxy`` (the published table's convention); VGG16 and Inception-v3 rows are flagged
    ``held_out`` (by name or proxy), as in every source.

    Parameters
    ----------
    rows : pandas.DataFrame, optional
        In-house rows as ``torch_steps.py`` writes them (default: :func:`load_inhouse`); the
        columns :func:`gpu_ratios` reads plus ``source``, ``framework``, ``gpu_published``.

    Returns
    -------
    pandas.DataFrame
        ``repo`` (``source`` before its ``@``), ``framework``, ``model``, ``profile``,
        ``catalog_gpu``, ``gpu_published``, ``source`` (the AMP row's), ``baseline_source`` (the
        TF32 row's), ``gain`` (TF32 ms per step / AMP ms per step), ``batch_size``,
        ``image_size``, ``held_out``; one row per pair, empty (same columns) where none pairs.
    """
    rows = load_inhouse() if rows is None else rows
    r = _steps(rows)
    r = r[(r["spread"] <= MAX_SPREAD_PCT) & (r["cnn"] != "")]
    key = ["catalog_gpu", *KEY]
    cols = [*key, "source", "framework", "gpu_published", "ms", "held_out"]
    amp = r.loc[r["precision"] == "AMP", cols]
    tf32 = r.loc[r["precision"] == "TF32", [*key, "source", "ms"]]
    p = amp.merge(tf32, on=key, suffixes=("", "_tf32"))
    out = pd.DataFrame(
        {
            "repo": p["source"].astype(str).str.split("@").str[0],
            "framework": p["framework"].astype(str),
            "model": p["model"].astype(str),
            "profile": p["cnn"].astype(str),
            "catalog_gpu": p["catalog_gpu"].astype(str),
            "gpu_published": p["gpu_published"].astype(str),
            "source": p["source"].astype(str),
            "baseline_source": p["source_tf32"].astype(str),
            "gain": (p["ms_tf32"] / p["ms"]).astype(float),
            "batch_size": p["batch_size"],
            "image_size": p["image_size"],
            "held_out": p["held_out"].astype(bool),
        }
    )
    return out.sort_values(["catalog_gpu", "model", "batch_size"], ignore_index=True)
