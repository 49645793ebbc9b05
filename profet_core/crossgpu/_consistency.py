"""Predictions that never contradict the spec sheet (issue 40).

GPU A *dominates* GPU B when A has at least B's FP32, TF32-tensor (the rate FP32 training runs
on) and FP16-tensor rates and at least 95% of its memory bandwidth; with several GPUs per step,
also the same GPU count and at least B's interconnect (a slower link may rightly slow a step).
A prediction table is *inverted* where a dominating target's step is longer than 1.10 times the
dominated one's for the same profile row, precision and GPU count.

:func:`spec_order` makes a table consistent: per profile row, each target's step (and its
interval) is capped at the shortest step of every target it dominates (transitively), unless
published measurements of those two GPUs themselves show the inversion
(:func:`published_exceptions`), which the row's note then cites. Measured targets (a trained
pair, FP32 on one GPU) are never moved: a target dominated by a measured one is raised to it
instead. The data itself measures some small host-bound CNNs slower on the V100 (p3.2xlarge)
than on the T4 (g4dn.xlarge), up to 1.46x on 17 of its 274 shared workloads; such inversions
between measured answers (and the same-spec lines raised to them) are kept and counted apart
(:func:`inversions` ``measured``).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from .._base import kept_for

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
    from ._gpuref import gpu_table

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
        ``slower_spec``, their steps (ms), ``measured`` (both answers are trained pairs' FP32
        steps, or the faster one a same-spec line raised to one: the data's own inversion)
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
        # a measured GPU at least as good as a (a itself or a same-spec line raised to it)
        # with the same step: the trained pairs' own (measured) inversion
        same = (dom | np.eye(len(p), dtype=bool)) & fixed[:, None]
        k = k if isinstance(k, tuple) else (k,)
        for a, b in zip(i, j, strict=True):
            row = dict(zip(keys, k, strict=True))
            row.update(faster_spec=t[a], slower_spec=t[b], faster_ms=p[a], slower_ms=p[b])
            row["measured"] = bool(fixed[b] and np.isclose(p[same[:, a]], p[a], rtol=1e-9).any())
            out.append(row)
    cols = [*keys, "faster_spec", "slower_spec", "faster_ms", "slower_ms", "measured"]
    res = pd.DataFrame(out, columns=cols)
    res["ratio"] = res["faster_ms"] / res["slower_ms"]
    return res


def published_exceptions(published: pd.DataFrame | None = None, slack: float = SLACK) -> dict:
    """Inversions the published measurements themselves show: ``{(gpu_a, gpu_b, precision):
    citation}`` where GPU a dominates b on the spec sheet (:func:`dominance` over
    ``gpu_reference.csv`` and ``gpu_specs.csv``) and a published one-GPU table (same source,
    framework, precision, CNN, batch and image size) gives a more than ``slack`` times b's step.
    ``precision`` is ``fp32`` (FP32, TF32) or ``amp``; VGG16 and Inception-v3 rows are left out
    (never used for any choice)."""
    if published is None:  # the package's table: read and compared once per process
        return dict(_package_exceptions(slack))
    return _exceptions(published, slack)


@functools.lru_cache(maxsize=4)
def _package_exceptions(slack: float) -> tuple:
    from ._published import load_published

    return tuple(_exceptions(load_published(), slack).items())


def _exceptions(pub: pd.DataFrame, slack: float) -> dict:
    from ._gpuref import gpu_table
    from ._published import held_out

    pub = pub[(pub["gpu_count"] == 1) & ~held_out(pub["model"])]
    gpus = gpu_table().reset_index()
    dom = dominance(gpus.assign(instance=gpus["gpu"]))
    where = {g: i for i, g in enumerate(gpus["gpu"])}
    pub = pub.assign(kind=np.where(pub["precision"] == "AMP", "amp", "fp32"))
    keys = ["source_doc", "framework", "kind", "model", "batch_size", "image_size"]
    pub = pub.assign(source_doc=pub["source"].str.rsplit(":", n=1).str[0])
    out = {}
    for k, grp in pub.groupby(keys, sort=False, dropna=False):
        rows = grp[grp["catalog_gpu"].isin(where)].drop_duplicates("catalog_gpu")
        names, ips = rows["catalog_gpu"].tolist(), rows["images_per_s"].to_numpy(float)
        for a, ga in enumerate(names):
            for b, gb in enumerate(names):
                if dom[where[ga], where[gb]] and ips[b] > slack * ips[a]:
                    out[(ga, gb, k[2])] = (
                        f"{ga} {ips[a]:g} vs {gb} {ips[b]:g} images/s, {k[3]} batch "
                        f"{k[4]:g} ({rows['source'].iloc[a]}; {rows['source'].iloc[b]})"
                    )
    return out


def _fixed(table: pd.DataFrame) -> np.ndarray:
    """Rows answered by a trained pair: basis ``measured``, FP32, one GPU (never moved)."""
    fixed = table["basis"].astype(str).to_numpy() == "measured"
    if "precision" in table:
        fixed &= table["precision"].astype(str).to_numpy() == "fp32"
    if "gpus" in table:
        fixed &= table["gpus"].to_numpy() == 1
    return fixed


def _closure(dom: np.ndarray) -> np.ndarray:
    """Transitive closure of a dominance matrix (the 95% bandwidth share does not chain)."""
    c = dom.copy()
    while True:
        nxt = c | ((c.astype(np.int32) @ c.astype(np.int32)) > 0)
        np.fill_diagonal(nxt, False)
        if (nxt == c).all():
            return c
        c = nxt


def spec_order(table: pd.DataFrame, specs: pd.DataFrame, precision: str = "fp32", exceptions=None):
    """A prediction table whose steps follow the spec sheet's order, and what moved.

    Per profile row and GPU count, a target's step is capped at the shortest step of every
    target it dominates (through chains of dominance), then a target dominated by a *measured*
    one (FP32, one GPU: a trained pair, never moved) is raised to it. Its interval moves by the
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
    moved : list of (target, bound_target, factor)
        Each moved target once (its largest move), ``factor`` = new / old step.
    kept : list of (faster_spec, slower_spec, ratio)
        Inversions between two measured answers, kept (the largest ratio per pair).
    """
    exceptions = {} if exceptions is None else exceptions
    sheet = kept_for(_SHEETS, specs, _sheet, 8)
    names = strings(table["target"])
    gpus = table["gpus"].to_numpy() if "gpus" in table else np.ones(len(table), dtype=int)
    fixed = (strings(table["basis"]) == "measured") & (gpus == 1)
    fixed &= precision == "fp32"
    p = table["batch_latency_ms"].to_numpy(dtype=float)
    new, moved, kept = p.copy(), {}, []
    where = sheet["where"]
    for g in np.unique(gpus):
        sel = np.flatnonzero(
            (gpus == g) & np.fromiter((n in where for n in names), bool, len(names))
        )
        if not len(sel):
            continue
        tg = sorted(set(names[sel]))
        dom, clo = _graph(sheet, tuple(where[t] for t in tg), g > 1, precision, exceptions)
        # a (profile rows x targets) matrix of steps, NaN where a row lacks a target
        r_codes, rows = pd.factorize(table["row"].to_numpy()[sel])
        t_codes = pd.Index(tg).get_indexer(names[sel])
        q = np.full((len(rows), len(tg)), np.nan)
        q[r_codes, t_codes] = p[sel]
        fix = np.zeros_like(q, dtype=bool)
        fix[r_codes, t_codes] = fixed[sel]
        lim = _order_matrix(q, fix, clo)
        new[sel] = lim[r_codes, t_codes]
        if not np.array_equal(lim, q, equal_nan=True):
            _moved(moved, q, lim, clo, tg)
        kept += _kept(lim, fix, dom, tg)
    if np.array_equal(new, p):
        return table, [], kept
    out = table.copy(deep=False)
    factor = new / p
    out["batch_latency_ms"] = new
    for col in ("low_ms", "high_ms"):
        if col in out:
            out[col] = out[col].to_numpy(dtype=float) * factor
    return out, [(t, b, f) for t, (b, f) in moved.items()], kept


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


def _order_matrix(q, fix, clo) -> np.ndarray:
    """Steps ``q`` (rows x targets) capped at every target each dominates (``clo``, closed),
    then raised to every measured (``fix``) target dominating it: cap first, so where two
    measured answers are themselves inverted (the data measures some host-bound CNNs slower on
    the V100 than on the T4) the measurement wins."""
    inf = np.where(np.isnan(q), np.inf, q)
    down = q.copy()
    for a in range(q.shape[1]):
        if clo[a].any():
            down[:, a] = np.minimum(q[:, a], inf[:, clo[a]].min(axis=1))
    down = np.where(fix, q, down)
    meas = np.where(fix & ~np.isnan(q), q, -np.inf)
    lim = down.copy()
    for b in range(q.shape[1]):
        if clo[:, b].any():
            lim[:, b] = np.maximum(down[:, b], meas[:, clo[:, b]].max(axis=1))
    return np.where(fix, q, lim)


def _graph(sheet: dict, rows: tuple, multi: bool, precision: str, exceptions: dict) -> tuple:
    """Dominance (exceptions removed) and its closure of the sheet's lines ``rows``, kept per
    sheet (a prediction asks it for the same targets on every call)."""
    key = (rows, multi, precision, tuple(sorted(exceptions)))
    got = sheet["graphs"].get(key)
    if got is None:
        sub = sheet["lines"].iloc[list(rows)].reset_index(drop=True)
        dom = dominance(sub, multi_gpu=multi)
        gn = sub["gpu"].to_numpy()
        for a, b in zip(*np.nonzero(dom), strict=True):
            dom[a, b] = (gn[a], gn[b], precision) not in exceptions
        got = (dom, _closure(dom))
        for m in got:
            m.flags.writeable = False
        if len(sheet["graphs"]) > 64:
            sheet["graphs"].clear()
        sheet["graphs"][key] = got
    return got


def _kept(lim, fix, dom, tg) -> list:
    """Pairs of measured answers (trained pairs) inverted beyond :data:`SLACK`."""
    out = []
    cols = fix.any(axis=0)
    for a, b in zip(*np.nonzero(dom & cols[:, None] & cols[None, :]), strict=True):
        both = fix[:, a] & fix[:, b]
        if both.any():
            r = float(np.max(lim[both, a] / lim[both, b]))
            if r > SLACK:
                out.append((tg[a], tg[b], r))
    return out


def _moved(moved: dict, q, lim, clo, tg) -> None:
    """Record each moved target's largest move and the target it was moved to."""
    with np.errstate(invalid="ignore", divide="ignore"):
        f = lim / q
    for k in np.flatnonzero(np.nanmax(np.abs(np.log(f)), axis=0, initial=0.0) > 1e-9):
        r = int(np.nanargmax(np.abs(np.log(f[:, k]))))
        src = np.flatnonzero(np.isclose(q[r], lim[r, k]) & (clo[k] | clo[:, k]))
        bound = tg[src[0]] if len(src) else ""
        if tg[k] not in moved or abs(np.log(f[r, k])) > abs(np.log(moved[tg[k]][1])):
            moved[tg[k]] = (bound, float(f[r, k]))


def order_notes(moved, precision: str, kept=()) -> list[str]:
    """The notes of a table :func:`spec_order` moved or kept inverted (none where neither)."""
    notes = []
    if moved:
        parts = [
            f"{t} {'capped at' if f < 1 else 'raised to'} {b or 'a GPU it dominates'}'s step "
            f"(x{f:.2f})"
            for t, b, f in sorted(moved, key=lambda m: m[2])
        ]
        notes.append(
            f"spec order ({precision}): a GPU with at least another's FP32, TF32 and FP16 "
            "tensor rates and 95% of its bandwidth is never predicted slower than it (no "
            f"published measurement of these pairs shows such an inversion): {'; '.join(parts)}."
        )
    if kept:
        a, b, r = max(kept, key=lambda k: k[2])
        notes.append(
            f"{a} is predicted up to {r:.2f}x slower than {b} though it has at least its rates "
            "and bandwidth: both answers come from pairs trained on measurements, and the data "
            "itself measures some small host-bound CNNs slower on the V100 (p3.2xlarge) than on "
            "the T4 (g4dn.xlarge): up to 1.46x, on 17 of its 274 shared workloads."
        )
    return notes
