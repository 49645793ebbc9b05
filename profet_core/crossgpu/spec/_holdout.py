"""Leave-one-GPU-out over published speed-up pairs: the tensor-core efficiencies judged on GPUs
they never saw, against the spec baselines and the model before them.

For each catalog GPU ``g`` with published pairs the efficiencies are refitted without any pair of
``g`` and predict ``g``'s pairs: basis ``published (n)`` where other GPUs of its generation
remain, ``specs only`` (the shared tensor-core ``mu``) where none does. Held-out rows (VGG16,
Inception-v3) are never fitted: they are predicted by every fold's model as an independent check
and summarised apart (:func:`summarize_published`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._calibrate import weighted_quantile as _weighted_quantile
from ._efficiency import fit_published, predict_speedups

#: Members compared: the model after (``cross``), before (data only), and spec baselines.
MEMBERS = ("cross", "before", "fp32-ratio", "bandwidth-ratio", "roofline")


def _predict(after, before, test: pd.DataFrame) -> pd.DataFrame:
    new, old = predict_speedups(after, test), predict_speedups(before, test)
    out = new[["cross", "fp32-ratio", "bandwidth-ratio", "roofline"]].copy()
    out["before"] = old["cross"]
    return out


#: Ways to leave published pairs out: one GPU (the MAPE goal), one whole generation (what a
#: ``specs only`` tensor-core GPU is: nothing published of it), one (document, CNN) group (a new
#: CNN on a GPU whose other pairs were published: the ``published`` basis).
FOLDS = ("target_gpu", "generation", "group")


def _fold_keys(model, pairs: pd.DataFrame, by: str) -> np.ndarray:
    if by == "generation":
        return model.spec_arch_[model.spec_index_.get_indexer(pairs["target"])]
    if by == "group":
        return (pairs["document"] + " | " + pairs["model"] + " | " + pairs["target_gpu"]).to_numpy()
    return pairs[by].to_numpy(dtype=object)


def published_logo(model, pairs: pd.DataFrame, by: str = "target_gpu") -> pd.DataFrame:
    """Out-of-fold predicted speed-ups of every published pair, one fold (by default one GPU)
    left out at a time.

    Parameters
    ----------
    model : CrossInstanceModel
        Fitted on the data only (the "before" model).
    pairs : pandas.DataFrame
        :func:`published_pairs` rows, held-out ones included (they are never fitted).
    by : str
        One of :data:`FOLDS`.

    Returns
    -------
    pandas.DataFrame
        ``pairs``' identifying columns, ``speedup`` (published), :data:`MEMBERS` (predicted
        speed-ups), ``left_out`` (the fold's key) and ``basis`` (each row's basis in its fold);
        stacked fold by fold, each row keeping its index in ``pairs``.
    """
    keep = ["document", "source", "framework", "model", "profile", "target", "target_gpu"]
    keys = _fold_keys(model, pairs, by)
    frames = []
    for key in sorted(set(keys)):
        train = pairs[(keys != key) & ~pairs["held_out"].to_numpy()]
        fold = fit_published(model, train)
        test = pairs[keys == key]
        basis = [fold.basis(t).split(" (")[0] for t in test["target"]]
        frames.append(
            pd.concat(
                [test[[*keep, "held_out", "speedup"]], _predict(fold, model, test)], axis=1
            ).assign(left_out=key, basis=basis)
        )
    return pd.concat(frames)


def log_errors(oof: pd.DataFrame, member: str = "cross") -> np.ndarray:
    """|log(predicted / published speed-up)| per row."""
    return np.abs(np.log(oof[member].to_numpy(dtype=float) / oof["speedup"].to_numpy(dtype=float)))


def published_half_width(oof: pd.DataFrame, level: float = 0.8) -> float:
    """The ``level`` quantile of |log error| over the fitted out-of-fold rows of one basis'
    folds (:func:`basis_frames`)."""
    fitted = oof[~oof["held_out"]]
    return _weighted_quantile(log_errors(fitted), _weights(fitted), level)


def _weights(part: pd.DataFrame) -> np.ndarray:
    """Each (document, CNN, GPU) group weighs 1 in total, as in the fit (vendors' repeats of
    one table count once)."""
    grp = part.groupby(["document", "model", "target_gpu"]).ngroup().to_numpy()
    return 1.0 / np.bincount(grp)[grp]


def crossfit_coverage(oof: pd.DataFrame, level: float = 0.8) -> pd.Series:
    """Whether (1.0/0.0) each row's published speed-up lies in an 80% interval set on the
    fitted rows of other folds and other GPUs (so no row, nor its GPU, sets its own); NaN where
    none remain."""
    err, w = log_errors(oof), _weights(oof)
    fitted = ~oof["held_out"].to_numpy()
    inside = np.full(len(oof), np.nan)
    for i in range(len(oof)):
        other = (
            fitted
            & (oof["left_out"] != oof["left_out"].iloc[i]).to_numpy()
            & (oof["target_gpu"] != oof["target_gpu"].iloc[i]).to_numpy()
        )
        if other.any():
            inside[i] = err[i] <= _weighted_quantile(err[other], w[other], level)
    return pd.Series(inside, index=oof.index)


def basis_frames(model, pairs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Out-of-fold rows that set and check each basis' interval: ``published`` one (document,
    CNN, GPU) group left out (the GPU keeps its other pairs), ``specs only`` one generation
    left out (nothing published of it, only ``mu``)."""
    return {
        "published": published_logo(model, pairs, "group"),
        "specs only": published_logo(model, pairs, "generation"),
    }


def _short(document: str) -> str:
    """``owner/repo:path`` without the commit (the table keeps it)."""
    repo, _, path = document.partition("@")
    return f"{repo}:{path.split(':', 1)[-1]}"


def _mape(part: pd.DataFrame, member: str) -> float:
    return float(np.mean(np.abs(part[member] / part["speedup"] - 1)) * 100)


def summarize_published(oof: pd.DataFrame, bases=None, level: float = 0.8) -> pd.DataFrame:
    """Speed-up MAPE (%) per member, per left-out GPU and per source document, plus per basis
    the interval and its coverage.

    Parameters
    ----------
    oof : pandas.DataFrame
        :func:`published_logo` rows (one GPU left out at a time).
    bases : dict of str to pandas.DataFrame, optional
        :func:`basis_frames`.

    Returns
    -------
    pandas.DataFrame
        Rows ``scope`` (``all``, ``gpu``, ``source``, ``basis`` and ``held-out`` for the VGG16 /
        Inception-v3 rows, never fitted), ``group``, ``pairs``, ``mape_<member>``; for ``basis``
        rows ``half_width_log`` (its 80% interval, all fitted rows) and ``coverage_pct``
        (cross-fitted, :func:`crossfit_coverage`).
    """
    fitted, held = oof[~oof["held_out"]], oof[oof["held_out"]]
    cuts = [("all", "all", fitted)]
    cuts += [("gpu", g, p) for g, p in fitted.groupby("left_out")]
    cuts += [("source", _short(s), p) for s, p in fitted.groupby("document")]
    cuts += [("held-out", f"{m} on {g}", p) for (m, g), p in held.groupby(["model", "left_out"])]
    rows = []
    for scope, group, part in cuts:
        row = {"scope": scope, "group": group, "pairs": len(part)}
        rows.append(row | {f"mape_{m}": _mape(part, m) for m in MEMBERS})
    for b, frame in (bases or {}).items():
        part = frame[~frame["held_out"]]
        row = {"scope": "basis", "group": b, "pairs": len(part)}
        row.update({f"mape_{m}": _mape(part, m) for m in MEMBERS})
        row["half_width_log"] = published_half_width(frame, level)
        row["coverage_pct"] = 100 * crossfit_coverage(frame, level)[~frame["held_out"]].mean()
        rows.append(row)
    return pd.DataFrame(rows)


def learn_published(model, medians: pd.DataFrame, specs: pd.DataFrame, quantiles=None, table=None):
    """Fit the tensor-core efficiencies on a published table (default: the package's) and, with
    the data's interval ``quantiles`` ({basis: log half-width}), validate them and add a
    ``published`` one.

    Returns
    -------
    model : CrossInstanceModel
        With ``published_eta_`` (and ``interval_log_`` when ``quantiles`` is given).
    reports : dict of str to pandas.DataFrame
        ``published.csv`` (:func:`summarize_published`) and ``published_pairs.csv`` (the
        out-of-fold rows of :func:`published_logo`); empty without ``quantiles``.
    """
    from ._published import load_published, published_pairs

    table = load_published() if table is None else table
    pairs = published_pairs(table, specs, medians)
    fitted = fit_published(model, pairs[~pairs["held_out"]])
    fitted.amp_state_, fitted.dp_state_ = learn_amp_dp(fitted, table, medians)
    # inversions the published tables themselves show: kept, not ordered away
    from ..order._order import published_exceptions

    fitted.spec_exceptions_ = published_exceptions(table)
    if quantiles is None or pairs.empty:
        return (fitted if quantiles is None else fitted.with_intervals(quantiles)), {}
    oof, bases = published_logo(model, pairs), basis_frames(model, pairs)
    # Every catalog GPU the data lacks is a tensor-core one: its specs-only interval comes from
    # whole generations left out of the published pairs, not from the data's FP32 GPUs.
    widths = {b: published_half_width(f) for b, f in bases.items()}
    # ... times one factor so that they also hold with a whole source left out
    cal = fp32_source_calibration(model, pairs, bases, widths)
    widths = {b: w * cal["scale"] for b, w in widths.items()}
    fitted = fitted.with_intervals({**quantiles, **widths})
    fitted.source_calibration_ = {**getattr(fitted, "source_calibration_", {}), "fp32": cal}
    summary = summarize_published(oof, bases)
    frames = [f.assign(fold=b) for b, f in bases.items()]
    return fitted, {
        "published.csv": summary,
        "published_pairs.csv": pd.concat([oof.assign(fold="gpu"), *frames], ignore_index=True),
    }


def fp32_source_calibration(model, pairs, bases, widths) -> dict:
    """:func:`calibration` (``pooled``) of the FP32 published/specs-only widths: each basis'
    out-of-fold rows (GPU side) and one source document left out at a time, rows weighted as
    the fit weighs them; plus its cross-fitted coverages (widths and factor refitted without
    the judged row's GPU or document)."""
    from ._calibrate import calibration, crossfit

    gpu = pd.concat([f[f["basis"] == b] for b, f in bases.items()])
    gpu = gpu[~gpu["held_out"]]
    src = published_logo(model, pairs, "document")
    src = src[~src["held_out"]]
    signed = np.log(src["cross"].to_numpy(float) / src["speedup"].to_numpy(float))
    out = calibration(
        log_errors(gpu),
        gpu["basis"].map(widths),
        signed,
        src["basis"].map(widths),
        src["document"],
        "pooled",
        _weights(gpu),
        _weights(src),
    )
    rows = pd.concat([gpu.assign(side="gpu"), src.assign(side="source")], ignore_index=True)
    return out | crossfit(
        rows["side"],
        rows["target_gpu"],
        rows["document"],
        log_errors(rows),
        lambda train, test: _fp32_widths(rows[train], rows[test]),
    )


def _fp32_widths(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    """``test``'s half-widths with every parameter (each basis' width, the pooled factor)
    fitted on ``train`` (:func:`fp32_source_calibration`'s rows)."""
    from ._calibrate import pooled_scale

    g, s = train[train["side"] == "gpu"], train[train["side"] == "source"]
    pooled = published_half_width(g)
    w = {b: published_half_width(p) for b, p in g.groupby("basis")}
    k = pooled_scale(
        log_errors(g),
        g["basis"].map(w),
        log_errors(s),
        s["basis"].map(w).fillna(pooled),
        _weights(g),
        _weights(s),
    )["scale"]
    return k * test["basis"].map(w).fillna(pooled).to_numpy(float)


def learn_amp_dp(model, table: pd.DataFrame, medians: pd.DataFrame) -> tuple[dict, dict]:
    """The AMP and data-parallel models' states, fitted on a published table (held-out rows
    dropped before each fit) and cross-fitted 80% log half-widths (split-conformal on
    leave-one-GPU-out errors; AMP's also per source, N-GPU's per peer-to-peer class and per
    doubling of the GPU count)."""
    from ..configurations._amp import amp_half_widths, amp_logo, amp_pairs, amp_state_from
    from ..configurations._dataparallel import dp_logo, fit_dataparallel, half_widths, scaling_rows
    from ._gpuref import gpu_table

    gpus = gpu_table(model.specs_)
    amp = dp = None  # too few published rows: the predictions use the models' defaults
    amp_pairs_ = amp_pairs(table)
    if (~amp_pairs_["held_out"] & amp_pairs_["catalog_gpu"].isin(gpus.index)).sum() >= 2 and (
        "p3.2xlarge" in set(medians["instance"])
    ):
        amp, pairs, shares = amp_state_from(table, gpus, medians, model.theta_)
        if pairs["catalog_gpu"][~pairs["held_out"]].nunique() >= 2:
            # Set on whole GPUs left out (a specs-only GPU's setting; bench/claims/amp_multigpu.py
            # also reports sources left out, which a user's own training resembles).
            oof = amp_logo(pairs, gpus, shares)
            amp["half_width"], amp["source_half_width"] = amp_half_widths(oof)
            # ... times one factor so that it also holds with a source left out
            amp["source_calibration"] = _amp_calibration(
                oof, amp_logo(pairs, gpus, shares, "repo"), amp["half_width"]
            )
            amp["half_width"] *= amp["source_calibration"]["scale"]
    rows = scaling_rows(table, gpus)
    if rows.loc[~rows["held_out"], "catalog_gpu"].nunique() >= 2:
        dp = fit_dataparallel(rows[~rows["held_out"]])
        # per peer-to-peer class and doubling of the GPU count (rounds 9 and 10)
        dp.update(half_widths(dp_logo(rows)))
        dp["source_calibration"] = _dp_calibration(dp_logo(rows), dp_logo(rows, "repo"), dp)
        f = dp["source_calibration"]["scale"]
        dp["half_width"] *= f
        dp["class_half_width"] = {k: v * f for k, v in dp.get("class_half_width", {}).items()}
    return amp, dp


def _amp_calibration(by_gpu, by_source, half_width) -> dict:
    from ..configurations._amp import conformal_half_width
    from ._calibrate import calibration, crossfit, two_way_scale

    g, s = by_gpu[~by_gpu["held_out"]], by_source[~by_source["held_out"]]
    err = np.abs(np.log(g["pred"] / g["gain"])).to_numpy(float)
    signed = np.log(s["pred"] / s["gain"]).to_numpy(float)
    rows = pd.concat([g.assign(side="gpu"), s.assign(side="source")], ignore_index=True)
    e = np.abs(np.log(rows["pred"] / rows["gain"])).to_numpy(float)
    gs = (rows["side"] == "gpu").to_numpy()

    def widths(train, test):  # the pooled conformal width on GPU-out rows, times its factor
        w = conformal_half_width(e[train & gs])
        hw = np.full(len(e), w)
        k = two_way_scale(e[train & gs], hw[train & gs], e[train & ~gs], hw[train & ~gs])["scale"]
        return np.full(test.sum(), k * w)

    out = calibration(
        err, np.full(len(g), half_width), signed, np.full(len(s), half_width), s["repo"]
    )
    return out | crossfit(rows["side"], rows["catalog_gpu"], rows["repo"], e, widths)


def _dp_calibration(by_gpu, by_source, state) -> dict:
    from ..configurations._dataparallel import half_widths, row_half_width
    from ._calibrate import calibration, crossfit, two_way_scale

    g, s = by_gpu[~by_gpu["held_out"]], by_source[~by_source["held_out"]]
    err = np.abs(np.log(g["pred"] / g["scaling"])).to_numpy(float)
    signed = np.log(s["pred"] / s["scaling"]).to_numpy(float)
    hw_g = row_half_width(state, g["no_p2p"], g["gpu_count"])
    hw_s = row_half_width(state, s["no_p2p"], s["gpu_count"])
    rows = pd.concat([g.assign(side="gpu"), s.assign(side="source")], ignore_index=True)
    e = np.abs(np.log(rows["pred"] / rows["scaling"])).to_numpy(float)
    gs = (rows["side"] == "gpu").to_numpy()

    def widths(train, test):  # per class and doubling on GPU-out rows, times its factor
        st = half_widths(rows[train & gs])
        hw = row_half_width(st, rows["no_p2p"], rows["gpu_count"])
        k = two_way_scale(e[train & gs], hw[train & gs], e[train & ~gs], hw[train & ~gs])
        return k["scale"] * hw[test]

    out = calibration(err, hw_g, signed, hw_s, s["repo"])
    return out | crossfit(rows["side"], rows["catalog_gpu"], rows["repo"], e, widths)
