"""The work behind ``Predictor.predict`` and ``Predictor.scale``, vectorised over rows."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from .._messages import show_number
from .._schema import MAX_BATCH_SIZE, MAX_INPUT_SIZE, MS_PER_HOUR
from ..crossgpu.spec._memory import fit_probability
from ..errors import ArtifactError, ProfetValueError
from ..features._profile_features import family_times
from ..inputs._args import numbers_arg
from ..models._intervals import interval_scale, member_spread, novelty_bands
from ._result import NOVELTY_WARN, Prediction


def run_prediction(
    predictor, anchor, ops, lat, method, targets, notes=(), sizes=None, blocks=None
) -> Prediction:
    """Predict ``ops`` (n rows) from ``anchor`` on each target: see ``Predictor.predict``;
    ``blocks``: the question's :class:`Blocks`, shared by the calls that answer it."""
    targets = sorted(targets)
    n, k = len(ops), len(targets)
    from ._blocks import Blocks

    work = Blocks(anchor, ops, lat) if blocks is None else blocks
    used = work.used
    blocks = work.get(predictor, method, targets)
    usd, gpu, counts = catalog_maps(predictor)
    # Row-major: input row 0 on every target, then row 1, ... (targets sorted).
    flat = {
        c: np.column_stack([b[c] for b in blocks]).ravel() for c in ("p", "lo", "hi", "novelty")
    }
    _check_latencies(predictor, flat["p"])
    price = np.tile([float(usd.get(t, np.nan)) for t in targets], n)
    notes = (*notes, *_multi_gpu_notes(counts, targets), *_unpriced_notes(predictor, targets, usd))

    def per_target(values) -> pd.Categorical:
        # Categorical: 100,000 rows x k targets repeat k strings; no copies of the strings.
        uniq = list(dict.fromkeys(values))
        codes = np.tile([uniq.index(v) for v in values], n)
        return categorical(codes, uniq)

    p_fit, fit_note = fit_probability(predictor, anchor, targets, lat, sizes, n)
    columns = {
        "row": np.repeat(np.arange(n), k),
        "anchor": categorical(np.zeros(n * k, dtype=int), [anchor]),
        "target": per_target(targets),
        "gpu": per_target([str(gpu.get(t, "")) for t in targets]),
        "basis": per_target([b["basis"] for b in blocks]),
        "batch_latency_ms": flat["p"],
        "low_ms": flat["lo"],
        "high_ms": flat["hi"],
        "novelty": flat["novelty"],
        "usd_per_hour": price,
        "offering": per_target([offering_of(predictor, t) for t in targets]),
        "usd_per_1000_steps": flat["p"] * 1000 / MS_PER_HOUR * price,
        "method": categorical(np.zeros(n * k, dtype=int), [method]),
        "ensemble": per_target([b["ensemble"] for b in blocks]),
        "p_fit": p_fit,
    }
    notes = (*notes, *fit_note)
    names = list(dict.fromkeys(m for b in blocks for m in b["members"]))
    nan = np.full(n, np.nan)
    for name in names:  # one frame built once, member columns included
        columns[f"{name}_ms"] = np.column_stack(
            [b["members"].get(name, nan) for b in blocks]
        ).ravel()
    table = pd.DataFrame(columns)
    ignored = next((b["ignored"] for b in blocks if b["ignored"]), ())
    rows = _row_summary(predictor, n, flat["novelty"], lat, method)
    level = predictor.interval_level
    family = work.parts is not None  # the spec family model reads no op by its spelling
    matched = () if family else spelling_matches(predictor, method, used)
    return Prediction(table, tuple(ignored), method, level, anchor, rows, tuple(notes), matched)


def vocabulary(model: dict) -> tuple[set, float]:
    """The op columns the models were trained on (the op clustering's members; empty for
    artifacts without one) and the edit distance within which another spelling counts as one."""
    clustering = model.get("clustering") or {}
    known = {op for members in (clustering.get("groups") or {}).values() for op in members}
    return known, float(clustering.get("threshold", 6.0))


def spelling_matches(predictor, method: str, used) -> tuple:
    """``(op, known op)`` for each op of ``used`` (the columns with time) that training never
    saw but ``method`` counts as a known op by its spelling: the reference method's
    edit-distance clusters, the others' op families
    (:func:`~profet_core.features._profile_features.lookalike_ops`)."""
    known, threshold = vocabulary(predictor.bundle.model)
    new = [op for op in used if op.startswith("Device_") and op not in known]
    if not known or not new:  # no vocabulary to compare with, or every name is exact
        return ()
    if method == "profet":
        return tuple(predictor._clusterer().matched_ops(new).items())
    from ..features._profile_features import lookalike_ops

    return tuple(lookalike_ops(new, known, threshold).items())


def _check_latencies(predictor, latency_ms: np.ndarray) -> None:
    """Well-formed but absurd models (a tampered artifact) must not show a NaN latency."""
    if not (np.isfinite(latency_ms) & (latency_ms > 0)).all():
        raise ArtifactError(
            f"the artifacts in {str(predictor.path)!r} predict a latency that is not a finite "
            "positive number; retrain or restore them"
        )


def categorical(codes: np.ndarray, categories: list) -> pd.Categorical:
    """``pd.Categorical.from_codes(codes, categories)`` for codes known to be valid (0..k-1),
    its dtype built once per list of categories."""
    return pd.Categorical.from_codes(codes, dtype=_dtype(tuple(categories)), validate=False)


@functools.lru_cache(maxsize=64)
def _dtype(categories: tuple) -> pd.CategoricalDtype:
    return pd.CategoricalDtype(list(categories))


def catalog_maps(predictor) -> tuple[dict, dict, dict | None]:
    """``({instance: USD/h}, {instance: GPU}, {instance: GPU count} or None)`` of the
    predictor's catalog, read once per catalog (predictors sharing a cache may hold others)."""

    def build(cat):  # instances are unique: plain dicts look each one up
        names = cat["instance"].tolist()
        usd = dict(zip(names, cat["usd_per_hour"].tolist(), strict=True))
        gpu = dict(zip(names, cat["gpu"].tolist(), strict=True))
        counts = None
        if "gpu_count" in cat:
            values = pd.to_numeric(cat["gpu_count"], errors="coerce").tolist()
            counts = dict(zip(names, values, strict=True))
        return usd, gpu, counts

    return predictor.derived(("catalog-maps",), predictor.catalog, build)


def offering_of(predictor, target: str) -> str:
    """The offering whose price a target carries (``"<cloud> <type> (<region>)"``, the user's
    catalog, or ``""`` where nothing prices it): the catalog's ``offering`` column."""
    offers = predictor.derived(
        ("catalog-offerings",),
        predictor.catalog,
        lambda cat: (
            dict(zip(cat["instance"], cat["offering"].fillna(""), strict=True))
            if "offering" in cat
            else {}
        ),
    )
    return str(offers.get(target, ""))


def _unpriced_notes(predictor, targets, usd: dict) -> tuple:
    """A note on targets no offering prices (a retired instance such as p2.xlarge): their
    latency is shown, their cost is not."""
    gone = [t for t in targets if not np.isfinite(float(usd.get(t, np.nan)))]
    if not gone or "offering" not in predictor.catalog:  # unpriced artifacts: nothing to say
        return ()
    return (
        f"{', '.join(gone)}: no offering of the price source rents "
        f"{'this configuration' if len(gone) == 1 else 'these configurations'} (retired or "
        "never offered), so its latency is shown without a price or cost.",
    )


def _multi_gpu_notes(counts: dict | None, targets) -> tuple:
    """A note on targets whose instance has several GPUs (``counts``: GPUs per instance, None
    where the catalog does not say): the latency is one GPU's, the price the whole instance's
    (no smaller configuration can be rented)."""
    if counts is None:
        return ()
    multi = [f"{t} ({int(counts[t])} GPUs)" for t in targets if t in counts and counts[t] > 1]
    if not multi:
        return ()
    return (
        f"{', '.join(multi)}: the latency is for one of the instance's GPUs, while its price and "
        "cost are for the whole instance (USD/h), which is what renting it costs even when the "
        "run uses one GPU.",
    )


def workload_sizes(profiles, batch_size, input_size):
    """(batch sizes, input sizes) per row, each an array of shape (n,) or None when unknown."""
    out = []
    for name, given in (("batch_size", batch_size), ("input_size", input_size)):
        if given is not None:
            value = numbers_arg(given, name, none_is_nan=True)
            if value.size not in (1, len(profiles)):
                raise ProfetValueError(
                    f"{name} must be one number or one per profile row ({len(profiles)}); "
                    f"got {value.size}"
                )
            value = np.broadcast_to(value, (len(profiles),))
        elif name in profiles.columns:
            value = numeric_column(profiles[name])
        else:  # unknown: the other, if given, is still checked
            out.append(None)
            continue
        top = MAX_BATCH_SIZE if name == "batch_size" else MAX_INPUT_SIZE
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(value) & (value >= 1) & (value <= top) & (value == np.floor(value))
        if not ok.all():
            raise ProfetValueError(
                f"{name} {show_number(value[~ok][0])} is not allowed; it must be a whole number "
                f"1..{top:,} for every profile row"
            )
        out.append(value)
    return None if any(v is None for v in out) else tuple(out)


def numeric_column(col: pd.Series) -> np.ndarray:
    """A column as floats, what is not a number as NaN (numbers as they are, without
    ``to_numeric``'s pass)."""
    if col.dtype.kind in "iuf":
        return col.to_numpy(dtype=float, na_value=np.nan)
    return pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)


def _row_summary(predictor, n: int, novelty: np.ndarray, lat, method) -> pd.DataFrame:
    """Per input row (``n``): the largest novelty over targets and its validation band;
    ``novelty`` row-major (each input row on every target)."""
    # The largest novelty of each row, NaN ignored (NaN where every target's is), as a
    # group-by would give.
    nov = np.fmax.reduce(np.asarray(novelty, dtype=float).reshape(n, -1), axis=1)
    has = np.zeros(n, dtype=bool) if lat is None else ~np.isnan(lat)
    # Bands are shown only where a warning may be (novelty >= NOVELTY_WARN)
    with np.errstate(invalid="ignore"):
        values = np.where(nov >= NOVELTY_WARN, nov, np.nan)
    bands = predictor.validation.get("novelty")
    band, mape = novelty_bands(bands, values, has, method or predictor.default_method)
    columns = {"row": np.arange(n), "novelty": nov, "with_latency": has}
    return pd.DataFrame({**columns, "band": band, "band_mape_pct": mape})


def pair_interval(table: dict, anchor, target, method, lat, members: dict, novelty=None):
    """Log-space bounds per row and each row's relative novelty (NaN where uncalibrated).

    Parameters
    ----------
    table : dict
        ``{(anchor, target, estimator, with_latency): intervals.csv row}``.
    lat : ndarray of shape (n,) or None
        Anchor latency (s; NaN where unknown).
    members : dict of str to ndarray of shape (n,)
    novelty : ndarray of shape (n,), optional

    Returns
    -------
    (lo, hi), rel : tuple of ndarray, ndarray
    """
    n = len(next(iter(members.values())))
    has = np.zeros(n, dtype=bool) if lat is None else ~np.isnan(lat)
    spread = member_spread(np.column_stack(list(members.values())))
    lo, hi, rel = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    for with_lat, rows in ((True, has), (False, ~has)):
        cal = table.get((anchor, target, method, with_lat))
        if cal is None or not rows.any():
            continue
        eps, n_ref = cal.get("eps", np.nan), cal.get("novelty_ref", np.nan)
        s = spread[rows] if np.isfinite(eps) else None
        nov = novelty[rows] if novelty is not None and np.isfinite(n_ref) else None
        if nov is not None:
            rel[rows] = nov / n_ref
        scale = interval_scale(s, eps, nov, n_ref)
        lo[rows], hi[rows] = cal["q_lo"] * scale, cal["q_hi"] * scale
    return (lo, hi), rel


def breakdown_table(predictor, anchor: str, ops: pd.DataFrame, targets) -> pd.DataFrame:
    """Predicted device time per op family on each target (see ``Predictor.breakdown``)."""
    from .._base import sub_arrays
    from ..models._breakdown import BreakdownRegressor, breakdown_change

    fam = family_times(ops.iloc[[0]], "Device")
    parts = []
    for target in targets:
        key = f"{anchor}->{target}"
        meta = predictor.bundle.model.get("breakdowns", {}).get(key)
        if meta is None:
            continue
        arrays = sub_arrays(predictor.bundle.arrays, f"breakdown|{key}|")
        model = predictor._cached(
            ("breakdown", anchor, target),
            lambda m=meta, a=arrays: BreakdownRegressor.from_state(m, a),
        )
        parts.append(breakdown_change(fam, model.predict(fam)).assign(target=target))
    cols = ["target", "family", "anchor_us", "target_us", "speedup"]
    return pd.concat(parts, ignore_index=True)[cols] if parts else pd.DataFrame(columns=cols)


def batch_sizes(profiles: pd.DataFrame, batch_size) -> np.ndarray:
    """Images per step per row (NaN where unknown)."""
    if batch_size is not None:
        return np.broadcast_to(np.asarray(batch_size, dtype=float), (len(profiles),))
    if "batch_size" in profiles.columns:
        return numeric_column(profiles["batch_size"])
    return np.full(len(profiles), np.nan)
