"""Precision and GPU count of a prediction: the FP32 one-GPU table moved to AMP and to N GPUs
data-parallel (``Predictor.predict(precision=, gpus=)``).

``batch_latency_ms`` stays the time of ONE training step at the profile's per-GPU batch;
``images_per_s`` is ``gpus * batch / step time``; ``usd_per_1000_steps`` is at the whole
instance's price. Intervals widen by the AMP and data-parallel models' own cross-fitted 80%
half-widths (added in quadrature to the FP32 one, log units).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .._messages import quote
from ..crossgpu.configurations._amp import DEFAULT_STATE as AMP_DEFAULT
from ..crossgpu.configurations._amp import move_shares, step_ratio, user_offset
from ..crossgpu.configurations._amp_checks import amp_miss_notes
from ..crossgpu.configurations._dataparallel import DEFAULT_STATE as DP_DEFAULT
from ..crossgpu.configurations._dataparallel import link_gbs, row_half_width, step_factor
from ..crossgpu.spec._gpuref import amp_dtype, fp32_rate, gpu_table
from ..crossgpu.spec._pairs import FAM_COLS, model_family_times
from ..errors import ProfetValueError
from ._option_checks import (
    PARAMS_UNUSED,
    amp_latency_notes,
    checked_amp_latency,
    checked_params,
    gpu_counts,
    no_count_left,
)

PRECISIONS = ("fp32", "amp")
MS_PER_HOUR = 3_600_000.0
#: Bytes the legacy SGD update moves per parameter (reads weight and gradient, writes weight).
OPT_BYTES_PER_PARAM = 12.0
#: Share of the anchor's memory bandwidth the optimizer ops reach (profile -> parameter count):
#: the median over the data's CNNs per instance, and over all of them for other anchors
#: (``bench/claims/amp_multigpu.py``: the count is then off by a median 30%, 56% on p3.2xlarge,
#: where small CNNs' per-variable overhead dominates; ``--params`` where it is known).
OPT_BANDWIDTH_SHARE = {
    "g3s.xlarge": 0.681,
    "g4dn.xlarge": 0.647,
    "p2.xlarge": 0.451,
    "p3.2xlarge": 0.557,
}
OPT_BANDWIDTH_SHARE_OTHER = 0.504


def check_options(precision, gpus, anchor_amp_latency_s, params):
    """Validated ``(precision, gpus, anchor_amp_latency_s, params)``; ``gpus`` becomes 1,
    ``"all"`` or a sorted list of ints."""
    if not isinstance(precision, str) or precision.lower() not in PRECISIONS:
        raise ProfetValueError(f"precision {quote(precision)} is not allowed; use fp32 or amp")
    precision = precision.lower()
    if isinstance(gpus, str) and gpus.lower() == "all":
        gpus = "all"
    else:
        many = gpus if isinstance(gpus, (list, tuple)) else [gpus]
        ok = [
            isinstance(g, (int, np.integer)) and not isinstance(g, bool) and 1 <= g <= 64
            for g in many
        ]
        if not many or not all(ok):
            raise ProfetValueError(
                f"gpus {quote(gpus)} is not allowed; use a whole number 1..64, 'all' or a list"
            )
        gpus = (
            1
            if list(many) == [1] and not isinstance(gpus, (list, tuple))
            else sorted({int(g) for g in many})
        )
    anchor_amp_latency_s = checked_amp_latency(anchor_amp_latency_s)
    params = checked_params(params)
    if anchor_amp_latency_s is not None and precision != "amp":
        raise ProfetValueError("an anchor AMP latency is only used with precision amp")
    return precision, gpus, anchor_amp_latency_s, params


def _amp_factors(predictor, anchor, fam, targets, amp_lat, fp32_lat):
    """(n, k) AMP / FP32 time per row and target, the targets without tensor cores, the state."""
    cross = predictor.cross
    state = getattr(cross, "amp_state_", None) or AMP_DEFAULT
    gpus = gpu_table(cross.specs_)
    rate = dict(zip(gpus.index, fp32_rate(gpus), strict=True))
    gpu_of = cross.specs_.set_index("instance")["gpu"]
    a_row = gpus.loc[gpu_of[anchor]]

    def gain(row) -> np.ndarray:
        """AMP / FP32 step ratio per profile row on the tensor-core GPU of ``row``."""
        r = row["fp16_tensor_tflops"] / rate[row.name]
        tf32 = float(row["tensor_tflops_fp32_training"] > row["fp32_tflops"])
        shares = move_shares(cross.theta_, fam, a_row, row)
        ratio = step_ratio(state, np.full(len(fam), r), np.full(len(fam), tf32), shares)
        return ratio / np.exp(user_offset(state))

    out = np.ones((len(fam), len(targets)))
    none = []
    for j, t in enumerate(targets):
        row = gpus.loc[gpu_of[t]]
        if amp_dtype(row) in ("fp32", "unknown"):
            none.append(t)
            continue
        out[:, j] = gain(row)
    if amp_lat is not None and amp_dtype(a_row) not in ("fp32", "unknown"):
        # The anchor's own AMP gain is measured: correct every tensor-core target by the
        # anchor's measured / predicted AMP ratio.
        corr = (amp_lat / np.asarray(fp32_lat, float)) / gain(a_row)
        mask = np.array([t not in none for t in targets])
        out[:, mask] *= np.where(np.isfinite(corr), corr, 1.0)[:, None]
    return out, none, state


def _params(predictor, anchor, fam, params) -> np.ndarray:
    """Parameter count per row: given, or from the optimizer ops' time (2 steps) and the
    anchor's memory bandwidth."""
    if params is not None:
        return np.full(len(fam), float(params))
    bw = float(predictor.cross._spec_value(anchor, "mem_bandwidth_gbs")) * 1e9
    opt = fam[:, FAM_COLS.index("fam_optimizer")] * 1e-6 / 2.0
    share = OPT_BANDWIDTH_SHARE.get(anchor, OPT_BANDWIDTH_SHARE_OTHER)
    return opt * bw * share / OPT_BYTES_PER_PARAM


def _widen(table, q_extra) -> None:
    """Widen ``low_ms``/``high_ms`` around ``batch_latency_ms`` by ``q_extra`` (log units, added
    in quadrature to each side's own log distance; 0 leaves a side as it is)."""
    p = table["batch_latency_ms"].to_numpy(float)
    e = np.asarray(q_extra, float) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = np.log(p / table["low_ms"].to_numpy(float))
        hi = np.log(table["high_ms"].to_numpy(float) / p)
    table["low_ms"] = np.where(e > 0, p * np.exp(-np.sqrt(lo**2 + e)), table["low_ms"])
    table["high_ms"] = np.where(e > 0, p * np.exp(np.sqrt(hi**2 + e)), table["high_ms"])


def _scale(table, factor) -> None:
    for c in [c for c in table.columns if c.endswith("_ms")]:
        table[c] = table[c].to_numpy(float) * factor


def _gpu_basis(state: dict, key: str, gpu: str) -> str:
    n = state.get(key, {}).get(gpu)
    return f"published ({n})" if n else "specs only"


def apply_options(
    predictor, pred, anchor, ops, lat, options, batch, reference=None, framework="tensorflow"
) -> object:
    """The FP32 one-GPU :class:`Prediction` moved to ``options`` = (precision, gpus, anchor AMP
    latency s, params) from :func:`check_options`; ``lat`` (n,) the anchor FP32 latency (s, NaN
    where unknown); ``batch`` (n,) images per step or NaN. ``reference``: for a method other than
    the default, the default method's answer to the same call; the spec order then keeps this
    method's own answers (its trained pairs) and gives every other target the reference's.
    ``framework``: the profile's; TensorFlow's AMP steps on several GPUs carry their own
    synchronisation term (dynamic loss scaling without XLA), PyTorch's do not."""
    precision, gpus, amp_lat, params = options
    # Copy-on-write: a shallow copy gains columns without touching the prediction's table.
    table = pred.table.copy(deep=False)
    row = table["row"].to_numpy()
    n_rows = int(row.max()) + 1 if len(table) else 0
    batch = np.broadcast_to(np.asarray(batch, float), (n_rows,))
    unused = [PARAMS_UNUSED] if params is not None and gpus == 1 else []
    if precision == "fp32" and gpus == 1:
        table["precision"], table["gpus"] = "fp32", 1
        table, order = _spec_order(predictor, table, precision, reference)
        table["images_per_s"] = batch[row] / table["batch_latency_ms"].to_numpy() * 1e3
        return dataclasses.replace(pred, table=table, notes=(*pred.notes, *unused, *order))
    notes = [*pred.notes, *unused]
    if reference is None and predictor.cross is not None:
        # AMP and N-GPU steps start from the FP32 one-GPU answers in spec order (a GPU without
        # tensor cores keeps its FP32 step under AMP: the ordered one)
        table = _spec_order(predictor, table, "fp32")[0]
    fam = model_family_times(ops)
    table["precision"] = precision
    table["basis_precision"] = ""
    if precision == "amp":
        a_gpu = predictor.cross.specs_.set_index("instance")["gpu"][anchor]
        tensor = amp_dtype(gpu_table(predictor.cross.specs_).loc[a_gpu]) not in ("fp32", "unknown")
        notes += amp_latency_notes(tensor, ops, lat, amp_lat)
        notes += _apply_amp(predictor, table, anchor, fam, amp_lat, lat)
    out, more = _apply_gpus(predictor, table, anchor, fam, gpus, params, framework)
    notes = [s for s in notes if "the latency is for one of the instance's GPUs" not in s] + more
    out.loc[out["basis_precision"] == "", "basis_precision"] = "fp32, one GPU: as basis"
    out, order = _spec_order(predictor, out, precision, reference)
    notes += order
    out["usd_per_1000_steps"] = out["batch_latency_ms"] * 1000 / MS_PER_HOUR * out["usd_per_hour"]
    out["images_per_s"] = out["gpus"] * batch[out["row"].to_numpy()] / out["batch_latency_ms"] * 1e3
    return dataclasses.replace(pred, table=out, notes=tuple(dict.fromkeys(notes)))


def _spec_order(predictor, table, precision, reference=None) -> tuple:
    """``table`` with its steps in the spec sheet's order and its notes: what moved
    (a GPU with at least another's rates and 95% of its bandwidth is never slower than it) and
    what the published- and spec-based intervals rest on (the spread between sources)."""
    from ..crossgpu.order._order import order_notes, published_exceptions, spec_order, strings

    if predictor.cross is None or table.empty:
        return table, []
    if reference is not None:
        from ._method_order import own_answers

        return own_answers(table, reference, predictor.cross.specs_, precision)
    exceptions = getattr(predictor.cross, "spec_exceptions_", None)
    exceptions = published_exceptions() if exceptions is None else exceptions
    out, moved, kept = spec_order(table, predictor.cross.specs_, precision, exceptions)
    if moved and "usd_per_1000_steps" in out:
        out["usd_per_1000_steps"] = (
            out["batch_latency_ms"] * 1000 / MS_PER_HOUR * out["usd_per_hour"]
        )
    notes = order_notes(moved, precision, kept)
    bases = set(strings(out["basis"]))
    if any(b.startswith(("published", "specs only")) for b in bases):
        from ..crossgpu.spec._calibrate import source_note

        multi = "gpus" in out and bool((out["gpus"] > 1).any())
        note = source_note(predictor.cross, precision, multi)
        notes += [] if note is None else [note]
        from ..crossgpu.spec._efficiency import arch_note

        specs_only = sorted(
            {
                t
                for t, b in zip(strings(out["target"]), strings(out["basis"]), strict=True)
                if b == "specs only"
            }
        )
        note = arch_note(predictor.cross, specs_only) if specs_only else None
        notes += [] if note is None else [note]
    return out, notes


def _apply_amp(predictor, table, anchor, fam, amp_lat, lat) -> list:
    """Move ``table`` (in place) to AMP; return the notes."""
    gpu_of = predictor.cross.specs_.set_index("instance")["gpu"]
    names = table["target"].astype(str)
    targets = sorted(set(names))
    f, none, state = _amp_factors(predictor, anchor, fam, targets, amp_lat, lat)
    _scale(table, f[table["row"].to_numpy(), pd.Index(targets).get_indexer(names)])
    _widen(table, np.where(names.isin(none).to_numpy(), 0.0, state["half_width"]))
    table["basis_precision"] = [
        "fp32 time (no tensor cores)"
        if t in none
        else "amp " + _gpu_basis(state, "pairs", gpu_of[t])
        for t in names
    ]
    notes = []
    gpus = gpu_table(predictor.cross.specs_)
    unknown = [t for t in none if amp_dtype(gpus.loc[gpu_of[t]]) == "unknown"]
    if unknown:
        notes.append(
            f"{', '.join(unknown)}: the spec sheet gives no FP16 tensor rate "
            "(fp16_tensor_tflops), so no AMP gain is predicted: the FP32 step time is shown."
        )
    if set(none) - set(unknown):
        notes.append(
            f"{', '.join(t for t in none if t not in unknown)}: no FP16 tensor cores, so mixed "
            "precision brings no speed-up to predict: the FP32 step time is shown for amp."
        )
    notes.append(
        "amp: FP16 on Volta/Turing, BF16 or FP16 on Ampere and later (same tensor-core rate "
        "and bytes: the prediction is the same for either)."
    )
    # GPUs whose measured AMP gains the model misses by more than 15%: say by how much
    notes += amp_miss_notes({t: gpu_of[t] for t in targets if t not in none})
    return notes


def _apply_gpus(predictor, table, anchor, fam, gpus, params, framework="tensorflow"):
    """One row per (row, target, GPU count) with the data-parallel step time; and the notes."""
    cross = predictor.cross
    gpu_of = cross.specs_.set_index("instance")["gpu"]
    names = table["target"].astype(str)
    counts = gpu_counts(predictor, sorted(set(names)), gpus)
    out = table.loc[table.index.repeat([len(counts[t]) for t in names])].reset_index(drop=True)
    if len(table):  # a count no target has: refused, not an empty table
        have = gpu_counts(predictor, sorted(set(names)), "all")
        no_count_left(out, {t: max(n, default=1) for t, n in have.items()}, gpus)
    out["gpus"] = np.array([g for t in names for g in counts[t]], dtype=int)
    notes = []
    missing = sorted(t for t in set(names) if not counts[t])
    if missing:
        notes.append(f"{', '.join(missing)}: fewer GPUs than asked for ({gpus}); left out.")
    multi = out["gpus"].to_numpy() > 1
    if not multi.any():
        return out, notes
    st = getattr(cross, "dp_state_", None) or DP_DEFAULT
    p = _params(predictor, anchor, fam, params)[out["row"].to_numpy()]
    links = gpu_table(cross.specs_)
    links = pd.Series(link_gbs(links), index=links.index)
    gbs = out["target"].astype(str).map(gpu_of).map(links).to_numpy(float)
    kind = out["target"].astype(str).map(gpu_of).map(gpu_table(cross.specs_)["interconnect"])
    t1 = out["batch_latency_ms"].to_numpy(float) / 1e3
    # TensorFlow AMP without XLA (the product's condition) has its own synchronisation cost;
    # an AMP answer shown as the FP32 time (no tensor cores) keeps the FP32 one.
    # the AMP synchronisation term is TensorFlow's (dynamic loss scaling without XLA)
    amp = out["basis_precision"].astype(str).str.startswith("amp ").to_numpy()
    amp = amp & (framework == "tensorflow")
    fac = step_factor(st, t1, out["gpus"], p, gbs, (kind == "pcie").to_numpy(), amp)
    _scale(out, np.where(multi, fac, 1.0))
    blind = sorted(set(out.loc[multi & ~np.isfinite(gbs), "target"].astype(str)))
    if blind:
        notes.append(
            f"{', '.join(blind)}: the spec sheet gives no interconnect bandwidth "
            "(interconnect_gbs), so the step on several GPUs is not predicted (NaN)."
        )
    # GPUs without peer-to-peer have their own (wider) interval: the model misses them most
    _widen(out, np.where(multi, row_half_width(st, gbs < 0, out["gpus"]), 0.0))
    # each distinct target and count once: a 95,000-row profile repeats a few dozen
    basis = {t: _gpu_basis(st, "rows", gpu_of[t]) for t in set(out["target"].astype(str))}
    part = [
        f"{n} GPUs {basis[t]}"
        for t, n in zip(out["target"].astype(str).tolist(), out["gpus"].tolist(), strict=True)
    ]
    out["basis_precision"] = [
        "; ".join(x for x in (b, g) if x) if m else b
        for b, g, m in zip(out["basis_precision"], part, multi, strict=True)
    ]
    notes += _gpu_notes(st, out.loc[multi & (gbs < 0), ["target", "gpus"]], (amp & multi).any())
    how = "--params" if params is not None else "the profile's optimizer time"
    notes.append(
        "Several GPUs: data-parallel at the profile's per-GPU batch (global batch = GPUs x "
        f"batch); the gradient all-reduce is sized from {how} "
        f"(about {np.nanmedian(p) / 1e6:.3g} M parameters)."
    )
    return out, notes


def _gpu_notes(st: dict, no_p2p: pd.DataFrame, amp: bool) -> list[str]:
    """The notes of answers on several GPUs: rows on targets without peer-to-peer (``no_p2p``:
    their ``target`` and ``gpus``) and AMP's synchronisation term."""
    notes = []
    if len(no_p2p):
        names = ", ".join(sorted(set(no_p2p["target"].astype(str))))
        most = int(no_p2p["gpus"].max())
        hw = float(row_half_width(st, [True], [most])[0])
        notes.append(
            f"{names}: no peer-to-peer between the GPUs (gradients pass through host memory); "
            "published servers of such GPUs scale very differently from one another "
            "(docs/dp_candidates.md), so the step time on several of them is uncertain: its 80% "
            f"interval is widened by a factor of up to {np.exp(hw):.2f} (on {most} GPUs)."
        )
    if amp and st.get("k0_amp", 0.0) > 0:
        notes.append(
            "amp on several GPUs: includes the extra synchronisation that published TensorFlow "
            "AMP runs without XLA show over FP32 on the same servers (about "
            f"{100 * st['k0_amp']:.0f}% of the one-GPU step per doubling of the GPU count)."
        )
    return notes


def order_over_all(subset, full) -> object:
    """A :class:`Prediction` of some targets with the steps (and intervals, costs, images/s) the
    spec order gives them among every target (``full``, the same call on all of them): an
    answer does not depend on which other targets were asked for."""
    t, f = subset.table, full.table
    keys = ["row", "target", "gpus"]
    cols = ["batch_latency_ms", "low_ms", "high_ms"]
    got = (
        t[keys]
        .astype({"target": str})
        .merge(f[keys + cols].astype({"target": str}), on=keys, how="left", validate="one_to_one")
    )
    if np.array_equal(got["batch_latency_ms"].to_numpy(), t["batch_latency_ms"].to_numpy()):
        return subset
    table = t.copy(deep=False)
    factor = got["batch_latency_ms"].to_numpy() / t["batch_latency_ms"].to_numpy()
    for c in cols:
        table[c] = got[c].to_numpy()
    for c in ("usd_per_1000_steps", "images_per_s"):
        if c in table:
            table[c] = table[c].to_numpy() * (factor if c != "images_per_s" else 1 / factor)
    spec = [n for n in full.notes if n.startswith("spec order")]
    notes = [n for n in subset.notes if not n.startswith("spec order")] + spec
    return dataclasses.replace(subset, table=table, notes=tuple(notes))
