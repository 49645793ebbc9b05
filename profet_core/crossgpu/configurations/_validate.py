"""Validation of the AMP gain and data-parallel N-GPU scaling models on published measurements.

Leave-one-GPU-out and leave-one-source-out (source: the repository) MAPE (%) of the AMP gain
(FP32 time / AMP time, one GPU) against a constant AMP factor (the median gain of the training
pairs; also of the training pairs of the same source) and the tensor-peak ratio; of the N-GPU
scaling (N-GPU images/s over N x one-GPU images/s) against linear scaling (1). 80% interval
coverage cross-fitted: each left-out group's rows judged with a half-width set on the other
groups' out-of-fold errors. VGG16 and Inception-v3 rows are never fitted: they are predicted
by the leave-one-GPU-out fits and summarised apart (``fold`` ``held-out``).

One computation for ``bench/claims/amp_multigpu.py`` (which prints the tables) and ``train()`` (which
writes :data:`AMP_FILE` and :data:`SCALING_FILE` into its validation folder for the Model
accuracy page).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._amp import amp_half_widths, crossfit_amp_coverage
from ._dataparallel import crossfit_coverage, half_widths, row_half_width

#: Validation files ``train()`` writes (the Model accuracy page reads them).
AMP_FILE, SCALING_FILE = "amp_gain.csv", "gpu_scaling.csv"
#: Baselines of each model (columns of :func:`amp_logo` / :func:`dp_logo`).
AMP_BASELINES = ("constant", "constant_source", "tensor_peak")
SCALING_BASELINES = ("linear",)
#: Interval level whose coverage is reported.
LEVEL = 0.8


def ape(pred, true) -> np.ndarray:
    """Absolute percentage error (%) of ``pred`` against ``true``, element-wise."""
    return np.abs(np.asarray(pred, float) / np.asarray(true, float) - 1) * 100


def group_coverage(oof: pd.DataFrame, by: str, truth: str, level: float = LEVEL) -> pd.Series:
    """Cross-fitted interval coverage (%) per group of ``by`` and over all rows (``all``): each
    row judged against the split-conformal half-width the product would set without its group
    (the AMP gain: its source's width where the source has enough rows there,
    :func:`~profet_core.crossgpu.configurations._amp.crossfit_amp_coverage`; the N-GPU scaling: its
    peer-to-peer class's, :func:`~profet_core.crossgpu.configurations._dataparallel.crossfit_coverage`)."""
    if truth == "gain":
        inside = crossfit_amp_coverage(oof, by, level)
    else:
        inside = crossfit_coverage(oof, by, level)
    cov = (inside.groupby(oof[by]).mean() * 100).astype(float)
    cov["all"] = float(inside.mean() * 100)
    return cov


def summarize_logo(oof: pd.DataFrame, by: str, truth: str, baselines) -> pd.DataFrame:
    """MAPE (%) of the model and each baseline per left-out group, and coverage (%).

    Parameters
    ----------
    oof : pandas.DataFrame
        :func:`~profet_core.crossgpu.configurations._amp.amp_logo` or
        :func:`~profet_core.crossgpu.configurations._dataparallel.dp_logo` rows (held-out rows are left out).
    by : str
        The group column (``catalog_gpu``, ``repo``, ...).
    truth : str
        The published value (``gain`` or ``scaling``).
    baselines : sequence of str
        Baseline columns of ``oof``.

    Returns
    -------
    pandas.DataFrame
        ``by, rows, mape, mape_<baseline>..., coverage_pct``, one row per group and ``all``.
    """
    fit = oof[~oof["held_out"]].copy()
    fit["mape"] = ape(fit["pred"], fit[truth])
    for b in baselines:
        fit[f"mape_{b}"] = ape(fit[b], fit[truth])
    cols = ["mape", *[f"mape_{b}" for b in baselines]]
    g = fit.groupby(by)[cols].mean()
    g.insert(0, "rows", fit.groupby(by).size())
    g.loc["all"] = [len(fit), *fit[cols].mean().to_numpy()]
    g["coverage_pct"] = group_coverage(fit, by, truth)
    return g.reset_index().rename(columns={"index": by})


def held_out_errors(oof: pd.DataFrame, truth: str, baselines) -> pd.DataFrame:
    """Mean APE (%) of the never-fitted rows (VGG16, Inception-v3) per CNN: ``model, ape,
    ape_<baseline>...``."""
    h = oof[oof["held_out"]].copy()
    h["ape"] = ape(h["pred"], h[truth])
    for b in baselines:
        h[f"ape_{b}"] = ape(h[b], h[truth])
    return h.groupby(["model"])[["ape", *[f"ape_{b}" for b in baselines]]].mean().reset_index()


def _held_out_rows(oof: pd.DataFrame, truth: str, baselines, level: float) -> pd.DataFrame:
    """:func:`held_out_errors` as rows of the long table, with the coverage of the interval a
    prediction uses (the split-conformal half-width of the fitted rows' out-of-fold |log errors|,
    per source for the AMP gain, per peer-to-peer class and GPU count for the N-GPU scaling)."""
    fit, held = oof[~oof["held_out"]], oof[oof["held_out"]]
    if held.empty or fit.empty:
        return pd.DataFrame()
    if truth == "gain":
        pooled, per = amp_half_widths(fit, level)
        hw = held["repo"].map(per).fillna(pooled).to_numpy(float)
    else:
        hw = row_half_width(half_widths(fit, level), held["no_p2p"], held["gpu_count"])
    err = np.abs(np.log(held["pred"] / held[truth]))
    out = held_out_errors(oof, truth, baselines).rename(columns={"model": "group"})
    out = out.rename(columns={c: "m" + c for c in out.columns if c.startswith("ape")})
    out.insert(1, "rows", out["group"].map(held.groupby("model").size()))
    out["coverage_pct"] = out["group"].map((err <= hw).groupby(held["model"]).mean() * 100)
    return out.assign(fold="held-out")


def _long(parts: list[tuple[str, str, pd.DataFrame]]) -> pd.DataFrame:
    """Summaries stacked into ``fold, group, rows, mape_pct, mape_<baseline>_pct...,
    coverage_pct``."""
    frames = []
    for fold, by, summary in parts:
        frames.append(summary.rename(columns={by: "group"}).assign(fold=fold))
    out = pd.concat([f for f in frames if not f.empty], ignore_index=True)
    out = out.rename(columns={c: f"{c}_pct" for c in out.columns if c.startswith("mape")})
    first = ["fold", "group", "rows"]
    out = out[first + [c for c in out.columns if c not in first]]
    out["rows"] = out["rows"].astype(int)
    return out


def amp_gain_table(by_gpu: pd.DataFrame, by_source: pd.DataFrame) -> pd.DataFrame:
    """The AMP gain validation (:data:`AMP_FILE`): ``fold`` ``gpu`` (one GPU left out),
    ``source`` (one repository left out) and ``held-out`` (VGG16 / Inception-v3 per CNN, the
    leave-one-GPU-out fits), ``group`` (``all`` over a fold), ``rows``, ``mape_pct``,
    ``mape_constant_pct``, ``mape_constant_source_pct``, ``mape_tensor_peak_pct``,
    ``coverage_pct`` (80%, cross-fitted).

    ``by_gpu``/``by_source``: :func:`~profet_core.crossgpu.configurations._amp.amp_logo` by ``catalog_gpu``
    and by ``repo``.
    """
    b = list(AMP_BASELINES)
    return _long(
        [
            ("gpu", "catalog_gpu", summarize_logo(by_gpu, "catalog_gpu", "gain", b)),
            ("source", "repo", summarize_logo(by_source, "repo", "gain", b)),
            ("held-out", "group", _held_out_rows(by_gpu, "gain", b, LEVEL)),
        ]
    )


def scaling_table(by_gpu: pd.DataFrame, by_source: pd.DataFrame) -> pd.DataFrame:
    """The N-GPU scaling validation (:data:`SCALING_FILE`): as :func:`amp_gain_table` with
    ``mape_linear_pct`` and one more fold, ``gpu count`` (the leave-one-GPU-out rows per GPU
    count: ``group`` ``2``, ``4``, ``8``).

    ``by_gpu``/``by_source``: :func:`~profet_core.crossgpu.configurations._dataparallel.dp_logo` by
    ``catalog_gpu`` and by ``repo``.
    """
    b = list(SCALING_BASELINES)
    per_n = by_gpu.assign(n=by_gpu["gpu_count"].astype(int).astype(str))
    return _long(
        [
            ("gpu", "catalog_gpu", summarize_logo(by_gpu, "catalog_gpu", "scaling", b)),
            ("source", "repo", summarize_logo(by_source, "repo", "scaling", b)),
            ("gpu count", "n", summarize_logo(per_n, "n", "scaling", b)),
            ("held-out", "group", _held_out_rows(by_gpu, "scaling", b, LEVEL)),
        ]
    )


def amp_dp_validation(table: pd.DataFrame, gpus: pd.DataFrame, medians, theta) -> dict:
    """The AMP gain and N-GPU scaling validation tables by file name.

    Parameters
    ----------
    table : pandas.DataFrame
        Published measurements (:func:`~profet_core.crossgpu.spec._published.load_published`).
    gpus : pandas.DataFrame
        :func:`~profet_core.crossgpu.spec._gpuref.gpu_table`.
    medians : pandas.DataFrame
        The data's median table (each CNN's FP32 profile from its ``p3.2xlarge`` rows).
    theta : ndarray
        The spec model's exponents (``CrossInstanceModel.theta_``).

    Returns
    -------
    dict of str to pandas.DataFrame
        :data:`AMP_FILE` (:func:`amp_gain_table`) and :data:`SCALING_FILE`
        (:func:`scaling_table`); a model with fewer than two GPUs (or sources) to leave out, or
        (AMP) data without ``p3.2xlarge`` profiles, has no table.
    """
    from ._amp import amp_logo
    from ._dataparallel import dp_logo, scaling_rows

    out = {}
    if "p3.2xlarge" in set(medians["instance"]):
        pairs = _amp_pairs_or_none(table, gpus, medians, theta)
        if pairs is not None:
            pairs, shares = pairs
            out[AMP_FILE] = amp_gain_table(
                amp_logo(pairs, gpus, shares, "catalog_gpu"), amp_logo(pairs, gpus, shares, "repo")
            )
    rows = scaling_rows(table, gpus)
    if _enough(rows):
        out[SCALING_FILE] = scaling_table(dp_logo(rows, "catalog_gpu"), dp_logo(rows, "repo"))
    return out


def _enough(rows: pd.DataFrame) -> bool:
    """Whether every fold of both ways leaves fitted rows: two GPUs and two sources."""
    fit = rows[~rows["held_out"]]
    return fit["catalog_gpu"].nunique() >= 2 and fit["repo"].nunique() >= 2


def _amp_pairs_or_none(table, gpus, medians, theta):
    from ._amp import amp_pairs, amp_state_from

    have = amp_pairs(table)
    usable = have["catalog_gpu"].isin(gpus.index) & have["profile"].isin(set(medians["model"]))
    have = have[~have["held_out"] & usable]
    if have["catalog_gpu"].nunique() < 2:
        return None
    _, pairs, shares = amp_state_from(table, gpus, medians, theta)
    return (pairs, shares) if _enough(pairs) else None


def amp_dp_reports(model, medians: pd.DataFrame, table: pd.DataFrame | None = None) -> dict:
    """:func:`amp_dp_validation` of a fitted ``CrossInstanceModel`` (its spec sheet and
    exponents) on a published table (default: the package's)."""
    from ..spec._gpuref import gpu_table
    from ..spec._published import load_published

    table = load_published() if table is None else table
    return amp_dp_validation(table, gpu_table(model.specs_), medians, model.theta_)
