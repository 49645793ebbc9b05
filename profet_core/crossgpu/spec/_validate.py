"""Leave-one-GPU-out x leave-one-architecture-out validation of the cross-instance model.

For each GPU ``g`` and each architecture ``a`` the model is fitted on the other GPUs' rows of the
other architectures, then predicts every pair involving ``g`` on ``a``: with ``k = 0`` runs of
``g`` (specs only) or after calibrating on the ``k`` architectures a quick collection would
measure first (the cheapest by median latency on the training GPUs: a fixed rule, never chosen
by a score). ``measured`` rows (all GPUs trained, ``a`` left out) are the comparison.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._model import CrossInstanceModel
from ._pairs import FAM_COLS, WORKLOAD, all_pairs

MEMBERS = ("cross", "physical", "fp32-ratio", "bandwidth-ratio", "roofline", "cross-nolat")


def cheapest_architectures(medians: pd.DataFrame, k: int, exclude=()) -> list[str]:
    """The ``k`` architectures with the smallest median latency, ties by name.

    Parameters
    ----------
    medians : pandas.DataFrame
        :func:`profet_core.crossgpu.median_table` rows (``model``, ``latency_s``).
    k : int
    exclude : iterable of str
        Architectures not to pick (the one being predicted).
    """
    m = medians[~medians["model"].isin(list(exclude))]
    order = (
        m.groupby("model")["latency_s"].median().reset_index().sort_values(["latency_s", "model"])
    )
    return order["model"].head(k).tolist()


def predict_pairs(model: CrossInstanceModel, pairs: pd.DataFrame) -> pd.DataFrame:
    """Every member's prediction for each row of an :func:`all_pairs` table (seconds)."""
    out = pd.DataFrame(index=pairs.index, columns=list(MEMBERS), dtype=float)
    for (a, t), grp in pairs.groupby(["anchor", "target"]):
        fam = grp[list(FAM_COLS)].to_numpy()
        _, members = model.predict_families(a, t, fam, grp["anchor_latency_s"].to_numpy())
        for name in MEMBERS[:-1]:
            out.loc[grp.index, name] = members[name]
        out.loc[grp.index, "cross-nolat"] = model.predict_families(a, t, fam)[0]
    return out


def _rows(pairs, pred, **labels) -> pd.DataFrame:
    keep = ["anchor", "target", *WORKLOAD, "anchor_latency_s", "target_latency_s"]
    return pd.concat([pairs[keep], pred], axis=1).assign(**labels)


def logo_runs(
    medians: pd.DataFrame, specs: pd.DataFrame, ks=(0, 1, 3), gpus=None, archs=None, params=None
) -> pd.DataFrame:
    """Out-of-fold predictions, leave-one-GPU-out x leave-one-architecture-out.

    Parameters
    ----------
    medians : pandas.DataFrame
        :func:`profet_core.crossgpu.median_table` of the dataset.
    specs : pandas.DataFrame
        Spec catalog listing every instance.
    ks : tuple of int
        Numbers of calibration architectures of the left-out GPU (0 = specs only).
    gpus, archs : list of str, optional
        Subsets to run (default all).
    params : dict, optional
        :class:`CrossInstanceModel` parameters.

    Returns
    -------
    pandas.DataFrame
        One row per predicted (pair, workload, k): pair and workload columns, latencies,
        :data:`MEMBERS` (s), ``left_out``, ``arch``, ``k``, ``direction`` and ``basis``.
    """
    gpus = sorted(medians["instance"].unique()) if gpus is None else gpus
    archs = sorted(medians["model"].unique()) if archs is None else archs
    frames = []
    for g in gpus:
        rest = medians[medians["instance"] != g]
        for a in archs:
            model = CrossInstanceModel(**(params or {})).fit_pairs(
                all_pairs(rest[rest["model"] != a]), specs
            )
            test = all_pairs(medians[medians["model"] == a])
            test = test[(test["anchor"] == g) | (test["target"] == g)]
            for k in ks:
                fitted = model
                if k:
                    cal = cheapest_architectures(rest, k, exclude=[a])
                    cp = all_pairs(medians[medians["model"].isin(cal)])
                    cp = cp[(cp["anchor"] == g) | (cp["target"] == g)]
                    runs = int(
                        medians[(medians["instance"] == g) & medians["model"].isin(cal)].shape[0]
                    )
                    fitted = model.calibrate_pairs(g, cp, runs)
                frames.append(
                    _rows(
                        test,
                        predict_pairs(fitted, test),
                        left_out=g,
                        arch=a,
                        k=k,
                        basis="specs only" if k == 0 else "calibrated",
                    )
                )
    out = pd.concat(frames, ignore_index=True)
    out["direction"] = np.where(out["target"] == out["left_out"], "to", "from")
    return out


def measured_runs(medians: pd.DataFrame, specs: pd.DataFrame, archs=None, params=None):
    """Leave-one-architecture-out with every GPU trained (basis ``measured``); as :func:`logo_runs`."""
    archs = sorted(medians["model"].unique()) if archs is None else archs
    frames = []
    for a in archs:
        model = CrossInstanceModel(**(params or {})).fit_pairs(
            all_pairs(medians[medians["model"] != a]), specs
        )
        test = all_pairs(medians[medians["model"] == a])
        frames.append(
            _rows(
                test,
                predict_pairs(model, test),
                left_out="none",
                arch=a,
                k=-1,
                basis="measured",
                direction="both",
            )
        )
    return pd.concat(frames, ignore_index=True)


def log_errors(oof: pd.DataFrame, member: str = "cross") -> np.ndarray:
    """|log(predicted / measured)| per row."""
    return np.abs(np.log(oof[member].to_numpy() / oof["target_latency_s"].to_numpy()))


def crossfit_coverage(oof: pd.DataFrame, level: float = 0.8, member: str = "cross") -> pd.Series:
    """Whether (1.0/0.0) each row falls in an interval calibrated without its own group.

    The half-width is the ``level`` quantile of |log error| over the rows of the same basis
    whose left-out GPU differs (for ``measured`` rows: whose architecture differs), so no row
    helps set its own interval.
    """
    err = log_errors(oof, member)
    group = np.where(oof["basis"] == "measured", oof["arch"], oof["left_out"])
    inside = np.full(len(oof), np.nan)
    for b in oof["basis"].unique():
        for g in np.unique(group[oof["basis"] == b]):
            own = (oof["basis"] == b).to_numpy() & (group == g)
            other = (oof["basis"] == b).to_numpy() & (group != g)
            if other.any():  # a single group cannot be cross-fitted: NaN
                inside[own] = err[own] <= np.quantile(err[other], level)
    return pd.Series(inside, index=oof.index)


def interval_log_quantiles(oof: pd.DataFrame, level: float = 0.8) -> dict[str, float]:
    """Per basis the ``level`` quantile of |log error| of ``cross`` (for ``with_intervals``)."""
    err = log_errors(oof)
    return {
        b: float(np.quantile(err[(oof["basis"] == b).to_numpy()], level))
        for b in oof["basis"].unique()
    }


def _pair_mape(oof: pd.DataFrame, member: str) -> pd.Series:
    ape = np.abs(oof[member] / oof["target_latency_s"] - 1) * 100
    return ape.groupby([oof["anchor"], oof["target"]]).mean()


def _r2(oof: pd.DataFrame, member: str) -> float:
    y, p = oof["target_latency_s"].to_numpy(), oof[member].to_numpy()
    return float(1 - np.sum((y - p) ** 2) / np.sum((y - y.mean()) ** 2))


def summarize_gpus(oof: pd.DataFrame, level: float = 0.8) -> pd.DataFrame:
    """MAPE (mean over pairs), R2 and cross-fitted coverage per left-out GPU, direction, k.

    Returns
    -------
    pandas.DataFrame
        Rows per (``basis``, ``k``, ``left_out``, ``direction``) including ``both`` and ``all``
        aggregates; columns ``mape_<member>`` (%), ``max_pair_<member>`` (%), ``r2_cross``
        and ``coverage_pct``.
    """
    oof = oof.assign(_inside=crossfit_coverage(oof, level))
    rows = []
    for (basis, k), sub in oof.groupby(["basis", "k"], sort=False):
        cuts = [("all", "both", sub)]
        for g, gs in sub.groupby("left_out") if basis != "measured" else ():
            cuts.append((g, "both", gs))
            cuts += [(g, d, ds) for d, ds in gs.groupby("direction")]
        for g, d, part in cuts:
            row = {"basis": basis, "k": k, "left_out": g, "direction": d, "rows": len(part)}
            for m in MEMBERS:
                pm = _pair_mape(part, m)
                row[f"mape_{m}"], row[f"max_pair_{m}"] = pm.mean(), pm.max()
            row["r2_cross"] = _r2(part, "cross")
            row["coverage_pct"] = 100 * part["_inside"].mean()
            rows.append(row)
    return pd.DataFrame(rows)


def cross_validate_gpus(medians: pd.DataFrame, specs: pd.DataFrame) -> pd.DataFrame:
    """Every run the cross-instance model is judged and calibrated on: leave-one-GPU-out for
    k = 0, 1, 3 (:func:`logo_runs`) plus the measured setting (:func:`measured_runs`)."""
    return pd.concat([logo_runs(medians, specs), measured_runs(medians, specs)], ignore_index=True)
