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

from ._efficiency import fit_published, predict_speedups

#: Members compared: the model after (``cross``), before (data only), and spec baselines.
MEMBERS = ("cross", "before", "fp32-ratio", "bandwidth-ratio", "roofline")


def _predict(after, before, test: pd.DataFrame) -> pd.DataFrame:
    new, old = predict_speedups(after, test), predict_speedups(before, test)
    out = new[["cross", "fp32-ratio", "bandwidth-ratio", "roofline"]].copy()
    out["before"] = old["cross"]
    return out


def published_logo(model, pairs: pd.DataFrame) -> pd.DataFrame:
    """Out-of-fold predicted speed-ups of every published pair, one GPU left out at a time.

    Parameters
    ----------
    model : CrossInstanceModel
        Fitted on the data only (the "before" model).
    pairs : pandas.DataFrame
        :func:`published_pairs` rows, held-out ones included (they are never fitted).

    Returns
    -------
    pandas.DataFrame
        ``pairs``' identifying columns, ``speedup`` (published), :data:`MEMBERS` (predicted
        speed-ups), ``left_out`` (the target GPU) and ``basis`` (its basis in that fold).
    """
    keep = ["document", "source", "framework", "model", "profile", "target", "target_gpu"]
    frames = []
    for gpu in sorted(pairs["target_gpu"].unique()):
        train = pairs[(pairs["target_gpu"] != gpu) & ~pairs["held_out"]]
        fold = fit_published(model, train)
        test = pairs[pairs["target_gpu"] == gpu]
        basis = fold.basis(test["target"].iloc[0])
        frames.append(
            pd.concat(
                [test[[*keep, "held_out", "speedup"]], _predict(fold, model, test)], axis=1
            ).assign(left_out=gpu, basis=basis.split(" (")[0])
        )
    return pd.concat(frames, ignore_index=True)


def log_errors(oof: pd.DataFrame, member: str = "cross") -> np.ndarray:
    """|log(predicted / published speed-up)| per row."""
    return np.abs(np.log(oof[member].to_numpy(dtype=float) / oof["speedup"].to_numpy(dtype=float)))


def published_half_width(oof: pd.DataFrame, level: float = 0.8) -> float:
    """The ``level`` quantile of |log error| over every fitted out-of-GPU row: each is a GPU
    predicted from other GPUs' published pairs, as a ``published`` basis is for a new one."""
    fitted = oof[~oof["held_out"]]
    return _weighted_quantile(log_errors(fitted), _weights(fitted), level)


def _weights(part: pd.DataFrame) -> np.ndarray:
    """Each (document, CNN, GPU) group weighs 1 in total, as in the fit (vendors' repeats of
    one table count once)."""
    grp = part.groupby(["document", "model", "target_gpu"]).ngroup().to_numpy()
    return 1.0 / np.bincount(grp)[grp]


def _weighted_quantile(values, weights, level: float) -> float:
    order = np.argsort(values)
    cum = np.cumsum(np.asarray(weights)[order])
    return float(np.asarray(values)[order][np.searchsorted(cum, level * cum[-1])])


def crossfit_coverage(oof: pd.DataFrame, intervals: dict, level: float = 0.8) -> pd.Series:
    """Whether (1.0/0.0) each row's published speed-up lies in its basis' interval: for
    ``published`` a half-width set on the other GPUs' fitted rows (cross-fitted), for other
    bases the model's shipped half-width ``intervals[basis]``; NaN where none can be set."""
    err, w = log_errors(oof), _weights(oof)
    inside = np.full(len(oof), np.nan)
    pub = ~oof["held_out"].to_numpy()
    for i in range(len(oof)):
        if oof["basis"].iloc[i] == "published":
            other = pub & (oof["left_out"] != oof["left_out"].iloc[i]).to_numpy()
            if other.any():
                inside[i] = err[i] <= _weighted_quantile(err[other], w[other], level)
        elif oof["basis"].iloc[i] in intervals:
            inside[i] = err[i] <= intervals[oof["basis"].iloc[i]]
    return pd.Series(inside, index=oof.index)


def _short(document: str) -> str:
    """``owner/repo:path`` without the commit (the table keeps it)."""
    repo, _, path = document.partition("@")
    return f"{repo}:{path.split(':', 1)[-1]}"


def _mape(part: pd.DataFrame, member: str) -> float:
    return float(np.mean(np.abs(part[member] / part["speedup"] - 1)) * 100)


def summarize_published(oof: pd.DataFrame, intervals: dict, level: float = 0.8) -> pd.DataFrame:
    """Speed-up MAPE (%) per member, per left-out GPU and per source document, plus coverage.

    Returns
    -------
    pandas.DataFrame
        Rows ``scope`` (``gpu``, ``source``, ``basis``, ``all``, and ``held-out`` for the VGG16 /
        Inception-v3 rows, never fitted), ``group``, ``pairs``, ``mape_<member>`` and
        ``coverage_pct`` (80% interval of the row's basis, see :func:`crossfit_coverage`).
    """
    oof = oof.assign(_inside=crossfit_coverage(oof, intervals, level))
    fitted, held = oof[~oof["held_out"]], oof[oof["held_out"]]
    cuts = [("all", "all", fitted)]
    cuts += [("gpu", g, p) for g, p in fitted.groupby("left_out")]
    cuts += [("source", _short(s), p) for s, p in fitted.groupby("document")]
    cuts += [("basis", b, p) for b, p in fitted.groupby("basis")]
    cuts += [("held-out", f"{m} on {g}", p) for (m, g), p in held.groupby(["model", "left_out"])]
    rows = []
    for scope, group, part in cuts:
        row = {"scope": scope, "group": group, "pairs": len(part)}
        row.update({f"mape_{m}": _mape(part, m) for m in MEMBERS})
        row["coverage_pct"] = 100 * part["_inside"].mean()
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

    pairs = published_pairs(load_published() if table is None else table, specs, medians)
    fitted = fit_published(model, pairs[~pairs["held_out"]])
    if quantiles is None or pairs.empty:
        return (fitted if quantiles is None else fitted.with_intervals(quantiles)), {}
    oof = published_logo(model, pairs)
    fitted = fitted.with_intervals({**quantiles, "published": published_half_width(oof)})
    summary = summarize_published(oof, quantiles)
    return fitted, {"published.csv": summary, "published_pairs.csv": oof}
