"""Predictions that never contradict the spec sheet.

GPU A *dominates* GPU B when A has at least B's FP32, TF32-tensor (the rate FP32 training runs
on) and FP16-tensor rates and at least 95% of its memory bandwidth; with several GPUs per step,
also the same GPU count and at least B's interconnect (a slower link may rightly slow a step).
A prediction table is *inverted* where a dominating target's step is longer than 1.10 times the
dominated one's for the same profile row, precision and GPU count.

:func:`spec_order` makes a table consistent with the general form of that rule, the roofline
bounds of :mod:`._bounds`: a step is never longer than another GPU's over the least ratio of its
resources to that GPU's, nor shorter than it over the largest (so a dominating GPU is at most
1/0.95 times slower, and the L4, with 94% of the T4's bandwidth and more of every rate, at most
1.07 times the T4's step). Per profile row, each answer (and its interval) is moved into the
bounds of every other; the answer with less evidence moves (specs only, then published, never a
trained pair's), unless published measurements of those two GPUs themselves break the bound
(:func:`published_exceptions`). Measured targets (a trained pair on one GPU) are never moved:
a target they dominate is raised to them instead. The data itself measures some small
host-bound CNNs slower on the V100 (p3.2xlarge) than on the T4 (g4dn.xlarge), up to 1.46x on
17 of its 274 shared workloads; such inversions between measured answers (and what the measured
answers raise) are kept and counted apart (:func:`inversions` ``measured``).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from ..._base import kept_for
from ._bounds import bound_matrix, order_bounds, order_matrix, raise_matrix
from ._exceptions import published_exceptions  # noqa: F401  (re-exported)
from ._notes import order_notes  # noqa: F401  (re-exported)
from ._notes import why as _why

#: Share of the dominated GPU's bandwidth the dominating one needs.
BW_SHARE = 0.95
#: How much longer a dominating GPU's step may be before it counts as an inversion.
SLACK = 1.10
RATES = ("fp32_tflops", "tensor_tflops_fp32_training", "fp16_tensor_tflops")


def dominance(specs: pd.DataFrame, multi_gpu: bool = False) -> np.ndarray:
    """(n, n) bool: ``[i, j]`` where spec line i dominates line j (i != j).

    Parameters
    ----------
    specs : pandas.DataFrame
        Spec lines with the :data:`RATES` columns (TFLOPS), ``mem_bandwidth_gbs`` (GB/s) and,
        for ``multi_gpu``, ``gpu_count`` and ``interconnect_gbs`` (GB/s).
    multi_gpu : bool
        Compare steps of every GPU of each line: also the same GPU count and at least j's link.
    """
    specs = _with_columns(specs, multi_gpu)
    ok = np.ones((len(specs), len(specs)), dtype=bool)
    for col in RATES:
        v = specs[col].to_numpy(dtype=float)
        ok &= v[:, None] >= v[None, :]
    bw = specs["mem_bandwidth_gbs"].to_numpy(dtype=float)
    ok &= bw[:, None] >= BW_SHARE * bw[None, :]
    if multi_gpu:
        n = specs["gpu_count"].to_numpy(dtype=float)
        link = specs["interconnect_gbs"].to_numpy(dtype=float)
        ok &= (n[:, None] == n[None, :]) & (link[:, None] >= link[None, :])
    np.fill_diagonal(ok, False)
    return ok


def _with_columns(specs: pd.DataFrame, multi_gpu: bool) -> pd.DataFrame:
    """``specs`` with every column :func:`dominance` reads: missing ones (a sheet made before
    them) filled by GPU name from the package's sheets, else NaN (then nothing dominates)."""
    need = [*RATES, "mem_bandwidth_gbs", *(("gpu_count", "interconnect_gbs") if multi_gpu else ())]
    missing = [c for c in need if c not in specs]
    if not missing:
        return specs
    from ..spec._gpuref import gpu_table

    out = specs.copy()
    gpus = gpu_table(specs) if "gpu" in specs else None
    for c in missing:
        if gpus is not None and c in gpus:
            out[c] = specs["gpu"].map(gpus[c]).to_numpy(dtype=float)
        else:
            out[c] = np.nan
    return out


def inversions(table: pd.DataFrame, specs: pd.DataFrame, slack: float = SLACK) -> pd.DataFrame:
    """Inverted pairs of a prediction table.

    Parameters
    ----------
    table : pandas.DataFrame
        ``row``, ``target``, ``batch_latency_ms`` and optionally ``gpus`` and ``precision``
        and ``basis`` (a :class:`Prediction` table; several may be concatenated with other keys
        in ``key``).
    specs : pandas.DataFrame
        Spec lines by ``instance`` (the predictor's sheet).

    Returns
    -------
    pandas.DataFrame
        One row per inversion: the keys, ``faster_spec`` (the dominating target),
        ``slower_spec``, their steps (ms), ``measured`` (the slower-spec answer is a trained
        pair's FP32 step and the other one too, or raised to one's bound by the spec order: the
        data's own inversion)
        and ``ratio`` (> ``slack``).
    """
    specs = specs.drop_duplicates("instance").set_index("instance")
    keys = [c for c in ("key", "row", "precision", "gpus") if c in table]
    out = []
    for k, grp in table.groupby(keys, sort=False, observed=True):
        grp = grp[grp["target"].isin(specs.index)]
        multi = "gpus" in grp and (grp["gpus"] > 1).any()
        sub = specs.loc[grp["target"]].reset_index()
        dom = dominance(sub, multi_gpu=bool(multi))
        if "gpus" in grp:  # steps of different GPU counts are not compared
            g = grp["gpus"].to_numpy()
            dom &= g[:, None] == g[None, :]
        p = grp["batch_latency_ms"].to_numpy(dtype=float)
        i, j = np.nonzero(dom & (p[:, None] > slack * p[None, :]))
        t = grp["target"].to_numpy()
        fixed = _fixed(grp)
        # a is a measured answer or was raised to one (f's step over its bound on a), and b is
        # measured: the trained pairs' own (measured) inversion, e.g. the data's V100 slower
        # than its T4 on small host-bound CNNs, passed on to what the V100 bounds from below
        prec = str(grp["precision"].iloc[0]) if "precision" in grp else "fp32"
        h = order_bounds(_with_columns(sub, bool(multi)), prec, bool(multi))
        meas = grp["basis"].astype(str).to_numpy() == "measured"
        up = raise_matrix(h, meas)
        with np.errstate(divide="ignore"):
            raised = np.isclose(p[:, None] / up, p[None, :], rtol=1e-9) & fixed[:, None]
        k = k if isinstance(k, tuple) else (k,)
        for a, b in zip(i, j, strict=True):
            row = dict(zip(keys, k, strict=True))
            row.update(faster_spec=t[a], slower_spec=t[b], faster_ms=p[a], slower_ms=p[b])
            row["measured"] = bool(fixed[b] and raised[:, a].any())
            out.append(row)
    cols = [*keys, "faster_spec", "slower_spec", "faster_ms", "slower_ms", "measured"]
    res = pd.DataFrame(out, columns=cols)
    res["ratio"] = res["faster_ms"] / res["slower_ms"]
    return res


def bound_violations(table: pd.DataFrame, specs: pd.DataFrame, slack: float = SLACK):
    """Pairs of a prediction table out of the roofline bounds (:func:`~._bounds.bound_matrix`):
    a step longer than ``slack`` times ``H[a, b]`` times b's, for the same profile row,
    precision and GPU count (keys as in :func:`inversions`).

    Returns
    -------
    pandas.DataFrame
        The keys, ``slower_spec`` (a), ``faster_spec`` (b), ``slower_ms``, ``faster_ms``,
        ``bound`` (``H[a, b]``) and ``ratio`` (a's step over ``H[a, b]`` times b's, >
        ``slack``).
    """
    specs = specs.drop_duplicates("instance").set_index("instance")
    keys = [c for c in ("key", "row", "precision", "gpus") if c in table]
    out = []
    for k, grp in table.groupby(keys, sort=False, observed=True):
        grp = grp[strings(grp["target"]).astype(str) != ""]
        grp = grp[grp["target"].astype(str).isin(specs.index)]
        k = k if isinstance(k, tuple) else (k,)
        row = dict(zip(keys, k, strict=True))
        multi = "gpus" in grp and bool((grp["gpus"] > 1).any())
        sub = _with_columns(specs.loc[grp["target"].astype(str)].reset_index(), multi)
        h = bound_matrix(sub, str(row.get("precision", "fp32")), multi)
        if "gpus" in grp:
            g = grp["gpus"].to_numpy()
            h = np.where(g[:, None] == g[None, :], h, np.inf)
        p = grp["batch_latency_ms"].to_numpy(dtype=float)
        t = grp["target"].astype(str).to_numpy()
        with np.errstate(invalid="ignore"):
            r = p[:, None] / (h * p[None, :])
        for a, b in zip(*np.nonzero(r > slack), strict=True):
            out.append(
                {
                    **row,
                    "slower_spec": t[a],
                    "faster_spec": t[b],
                    "slower_ms": p[a],
                    "faster_ms": p[b],
                    "bound": h[a, b],
                    "ratio": r[a, b],
                }
            )
    cols = [*keys, "slower_spec", "faster_spec", "slower_ms", "faster_ms", "bound", "ratio"]
    return pd.DataFrame(out, columns=cols)


def _fixed(table: pd.DataFrame) -> np.ndarray:
    """Rows answered by a trained pair: basis ``measured``, one GPU (never moved; under AMP
    the pair's FP32 step times the AMP gain: the K80's, with no tensor cores, its FP32 step)."""
    fixed = table["basis"].astype(str).to_numpy() == "measured"
    if "gpus" in table:
        fixed &= table["gpus"].to_numpy() == 1
    return fixed


def spec_order(table: pd.DataFrame, specs: pd.DataFrame, precision: str = "fp32", exceptions=None):
    """A prediction table whose steps respect the spec sheet's roofline bounds, and what moved.

    Per profile row and GPU count, a target's step is capped at ``H[a, b]`` times every other
    target b's step (:func:`~._bounds.bound_matrix`: 1 where a has at least b's every resource,
    else b's largest resource over a's), then raised to every *measured* target's step (one
    GPU: a trained pair, never moved; under AMP its FP32 step times the AMP gain) over the bound
    from its side (:func:`~._bounds.raise_matrix`). Measured and published answers are ordered
    among themselves first, then the spec-only ones against them: the less supported moves. Its interval moves by the
    same factor. Pairs in ``exceptions`` (:func:`published_exceptions`, keyed by GPU names)
    are left as predicted.

    Parameters
    ----------
    table : pandas.DataFrame
        ``row, target, basis, batch_latency_ms, low_ms, high_ms`` and optionally ``gpus``.
    specs : pandas.DataFrame
        The predictor's spec sheet (``instance``, ``gpu`` and the :func:`dominance` columns).
    precision : {"fp32", "amp"}
    exceptions : dict, optional
        ``{(gpu_a, gpu_b, precision): citation}``.

    Returns
    -------
    table : pandas.DataFrame
        A copy with the moved steps (ms).
    moved : list of (target, bound_target, factor, why)
        Each moved target once (its largest move), ``factor`` = new / old step, ``why`` the
        resource that sets the bound and the ratio of the two GPUs' (e.g. ``memory bandwidth
        0.94x``).
    kept : list of (faster_spec, slower_spec, ratio)
        Measured answers out of each other's bounds by more than :data:`SLACK`, kept (the
        largest ratio over the bound per pair).
    """
    exceptions = {} if exceptions is None else exceptions
    sheet = kept_for(_SHEETS, specs, _sheet, 8)
    names = strings(table["target"])
    gpus = table["gpus"].to_numpy() if "gpus" in table else np.ones(len(table), dtype=int)
    fixed = (strings(table["basis"]) == "measured") & (gpus == 1)
    p = table["batch_latency_ms"].to_numpy(dtype=float)
    new, moved, kept = p.copy(), {}, []
    where = sheet["where"]
    basis = strings(table["basis"])
    for g in np.unique(gpus):
        sel = np.flatnonzero(
            (gpus == g) & np.fromiter((n in where for n in names), bool, len(names))
        )
        if len(sel):
            ctx = (sheet, precision, exceptions, moved)
            new[sel], found = _order_count(table, sel, names, basis, fixed, p, g, ctx)
            kept += found
    if np.array_equal(new, p):
        return table, [], kept
    out = table.copy(deep=False)
    factor = new / p
    out["batch_latency_ms"] = new
    for col in ("low_ms", "high_ms"):
        if col in out:
            out[col] = out[col].to_numpy(dtype=float) * factor
    return out, [(t, *m) for t, m in moved.items()], kept


def _order_count(table, sel, names, basis, fixed, p, g, ctx) -> tuple[np.ndarray, list]:
    """:func:`spec_order` on the rows ``sel`` of one GPU count ``g``: their ordered steps (ms)
    and the measured answers kept out of bounds; ``ctx`` = (sheet, precision, exceptions,
    moved), ``moved`` updated in place."""
    sheet, precision, exceptions, moved = ctx
    tg = sorted(set(names[sel]))
    rows = tuple(sheet["where"][t] for t in tg)
    # a (profile rows x targets) matrix of steps, NaN where a row lacks a target
    r_codes, uniq = pd.factorize(table["row"].to_numpy()[sel])
    t_codes = pd.Index(tg).get_indexer(names[sel])
    q = np.full((len(uniq), len(tg)), np.nan)
    q[r_codes, t_codes] = p[sel]
    fix = np.zeros_like(q, dtype=bool)
    fix[r_codes, t_codes] = fixed[sel]
    tier = np.full(len(tg), 2)
    tier[t_codes] = [_tier(b) for b in basis[sel]]
    h, up, dom = _graph(sheet, rows, g > 1, precision, exceptions, tier == 0)
    lines = sheet["lines"].iloc[list(rows)].reset_index(drop=True)
    why = functools.partial(_why, lines, precision=precision, multi=g > 1)
    lim = _tiers(q, fix, tier, (h, up, dom), moved, tg, why)
    return lim[r_codes, t_codes], _kept(lim, fix, up, tg)


_SHEETS: dict = {}


def strings(col: pd.Series) -> np.ndarray:
    """A column's values as Python strings (object array); a categorical one through its
    categories (the prediction tables' target and basis: astype(str) costs milliseconds)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = np.asarray(col.cat.categories.astype(str), dtype=object)
        return cats[col.cat.codes.to_numpy()]
    return col.astype(str).to_numpy(dtype=object)


def _sheet(specs: pd.DataFrame) -> dict:
    """A spec sheet's lines by instance (the first of a name), read once per sheet object."""
    lines = specs.drop_duplicates("instance").reset_index(drop=True)
    lines = _with_columns(lines, True)
    return {"lines": lines, "where": {n: i for i, n in enumerate(lines["instance"])}, "graphs": {}}


def _tier(basis: str) -> int:
    """How much an answer rests on: 0 a trained pair (measured), 1 published measurements of
    its GPU, 2 the spec sheet only. The less supported answer of a pair out of bounds moves."""
    return 0 if basis == "measured" else 1 if basis.startswith("published") else 2


def _tiers(q, fix, tier, bounds, moved, tg, why) -> np.ndarray:
    """:func:`~._bounds.order_matrix` tier by tier: the measured and published answers among
    themselves (fixed ones kept), then the spec-only ones against all of those, kept.
    ``bounds``: (h, up, dom) of :func:`_graph`."""
    h, up, dom = bounds
    known = np.flatnonzero(tier <= 1)
    lim = q.copy()
    if len(known):
        sub = np.ix_(known, known)
        lim[:, known] = order_matrix(q[:, known], fix[:, known], h[sub], up[sub], dom[sub])
        _moved(
            moved,
            q[:, known],
            lim[:, known],
            h[sub],
            up[sub],
            [tg[k] for k in known],
            lambda k, b, c, fac: why(known[k], known[b], c, fac),
        )
    fix2 = fix | (tier <= 1)[None, :]
    out = order_matrix(lim, fix2, h, up, dom)
    _moved(moved, lim, out, h, up, tg, why)
    return np.where(fix, q, out)


def _graph(sheet: dict, rows: tuple, multi: bool, precision: str, exceptions: dict, measured):
    """The bounds (:func:`~._bounds.bound_matrix`, exceptions removed) of the sheet's lines
    ``rows`` and those a step may be raised by (:func:`~._bounds.raise_matrix`), kept per
    sheet (a prediction asks it for the same targets on every call)."""
    key = (rows, multi, precision, tuple(sorted(exceptions)), tuple(measured))
    got = sheet["graphs"].get(key)
    if got is None:
        sub = sheet["lines"].iloc[list(rows)].reset_index(drop=True)
        got = order_bounds(sub, precision, multi)
        gn = sub["gpu"].to_numpy()
        for a, b in zip(*np.nonzero(np.isfinite(got)), strict=True):
            if a != b and (gn[a], gn[b], precision) in exceptions:
                got[a, b] = np.inf
        dom = dominance(sub, multi) & np.isfinite(got)  # exceptions removed
        got = (got, raise_matrix(got, np.asarray(measured, bool)), dom)
        for m in got:
            m.flags.writeable = False
        if len(sheet["graphs"]) > 64:
            sheet["graphs"].clear()
        sheet["graphs"][key] = got
    return got


def _kept(lim, fix, h, tg) -> list:
    """Pairs of measured answers (trained pairs) out of bounds by more than :data:`SLACK`
    (``h``: :func:`~._bounds.raise_matrix`, from a measured GPU only where it has at least the
    other's rates and 95% of its bandwidth)."""
    out = []
    cols = np.flatnonzero(fix.any(axis=0))
    for a in cols:
        for b in cols:
            both = fix[:, a] & fix[:, b]
            if a == b or not both.any() or not np.isfinite(h[a, b]):
                continue
            r = float(np.max(lim[both, a] / (h[a, b] * lim[both, b])))
            if r > SLACK:
                out.append((tg[a], tg[b], r))
    return out


def _moved(moved: dict, q, lim, h, up, tg, why) -> None:
    """Record each moved target's largest move, the target whose step bound it and why."""
    with np.errstate(invalid="ignore", divide="ignore"):
        f = lim / q
    for k in np.flatnonzero(np.nanmax(np.abs(np.log(f)), axis=0, initial=0.0) > 1e-9):
        r = int(np.nanargmax(np.abs(np.log(f[:, k]))))
        if f[r, k] < 1:  # capped at h[k, b] * q_b
            src = np.flatnonzero(np.isclose(h[k] * q[r], lim[r, k]))
        else:  # raised to q_b / h[b, k]
            src = np.flatnonzero(np.isclose(q[r] / up[:, k], lim[r, k]))
        src = [s for s in src if s != k]
        if src:
            b = src[0]
            fac = h[k, b] if f[r, k] < 1 else up[b, k]
            bound = (tg[b], why(k, b, f[r, k] < 1, fac))
        else:
            bound = ("", "")
        if tg[k] not in moved or abs(np.log(f[r, k])) > abs(np.log(moved[tg[k]][1])):
            moved[tg[k]] = (bound[0], float(f[r, k]), bound[1])
