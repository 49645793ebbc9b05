"""Scaler prediction: latency at any batch or input size, from one latency (a curve learned per
instance) or from latencies measured at two or three sizes."""

from __future__ import annotations

import json

import numpy as np
import streamlit as st

from profet_app import common
from profet_core import ProfetError, parse_profile

ONE, POINTS = "one", "points"
MODES = {
    ONE: "One latency (the curve's shape learned per instance)",
    POINTS: "Two or three measured latencies",
}

common.wide_layout()
predictor = common.predictor_or_stop()
st.title("Scaler prediction")
st.caption(
    "From one latency (predicted on the Anchor page, or measured) the scaler draws the latency "
    "over the whole trained range with a curve learned from the training CNNs on that instance; "
    "from two or three measured latencies it runs through them, linearly in the work."
)

by = st.radio(
    "Scale by",
    list(common.DIMENSIONS),
    horizontal=True,
    format_func=lambda b: f"{common.DIMENSIONS[b]['label']} ({common.DIMENSIONS[b]['unit']})",
    key="by",
)
mode = st.radio("Scale from", list(MODES), format_func=MODES.get, horizontal=True, key="mode")
dim = common.DIMENSIONS[by]
other_dim = common.DIMENSIONS["input" if by == "batch" else "batch"]
try:
    lo, hi = (int(v) for v in predictor.scaler(None, by).size_range_)
except ProfetError as exc:
    common.show_error(exc)
    st.stop()
grid = np.arange(lo, hi + 1, dtype=float)
result: common.AnchorResult | None = st.session_state.get(common.ANCHOR_RESULT)


def _per_gpu_step(row, profile) -> float:
    """The one-GPU step (ms) of a prediction row at its precision: what the one-point curve
    scales with the per-GPU batch (a data-parallel step adds its synchronisation, which the
    per-GPU batch does not change). A one-GPU row's own step; another's asked of the core."""
    if int(row.get("gpus", 1)) == 1 or result.request is None or profile is None:
        return float(row["batch_latency_ms"])
    from dataclasses import replace

    one = replace(
        result.request, gpus=1, targets=(str(row["target"]),), dataset_images=None, epochs=None
    )
    table = predictor.predict(None, profile, one).table
    return float(table.loc[table["target"] == row["target"], "batch_latency_ms"].iloc[0])


def _anchor_point():
    """The point the Anchor page predicted for a chosen row and configuration:
    ``(target, latency_ms, size, other_size, profile)``, or None without a usable result.

    The latency is one GPU's step at the row's precision and per-GPU batch, which the curve
    scales; the message names the configuration, its precision and GPU count."""
    if result is None:
        return None
    table = result.table
    c1, c2 = st.columns(2)
    row = common.pick_row(c1, "Anchor page profile row", table["row"].nunique(), "prefill_row")
    shown = table[table["row"] == row].reset_index(drop=True)
    named = "configuration" if "configuration" in shown else "target"
    names = list(dict.fromkeys(shown[named].astype(str)))
    # A measured target first (its one-point curve rests on that instance's own runs), the
    # fastest of them; a spec-only GPU was never measured at several sizes.
    measured = shown[shown["basis"] == "measured"]
    pool = measured if len(measured) else shown
    first = str(pool[named].iloc[int(np.nanargmin(pool["batch_latency_ms"].to_numpy(float)))])
    chosen = c2.selectbox("Configuration", names, names.index(first), key="pre_target")
    picked = shown[shown[named].astype(str) == chosen].iloc[0]
    target = str(picked["target"])
    size, other = (result.batch_size, result.input_size)[:: 1 if by == "batch" else -1]
    if not lo <= size <= hi:
        st.info(f"The profiled {dim['short']} {size} is outside {lo}..{hi}: nothing prefilled.")
        return None
    profile = None if result.profiles is None else result.profiles.iloc[[int(row)]]
    try:
        latency = _per_gpu_step(picked, profile)
    except ProfetError as exc:
        common.show_error(exc)
        return None
    gpus, precision = int(picked.get("gpus", 1)), str(picked.get("precision", "fp32"))
    step = f"{common.fmt_ms(float(picked['batch_latency_ms']))} per step on {gpus} GPUs"
    per = "per-GPU " if by == "batch" and gpus > 1 else ""
    said = (
        f"From the Anchor page: {chosen}, {precision.upper()}, at {per}"
        f"{dim['label'].lower()} {size} {dim['unit']} ({other_dim['label'].lower()} {other} "
        f"{other_dim['unit']}): "
    )
    if gpus > 1:
        glob = f"; global batch {gpus * result.batch_size}" if by == "batch" else ""
        said += (
            f"{step}{glob}. Scaled here: one GPU's {precision.upper()} step, "
            f"{common.fmt_ms(latency)} (a data-parallel step adds its synchronisation, which "
            f"the per-GPU {dim['short']} does not change), predicted as {target}"
        )
    else:
        said += f"{common.fmt_ms(latency)} predicted as {target}"
    if precision != "fp32":
        said += "; the curve's shape is learned from FP32 steps"
    st.info(common.safe(said + ", shaped by that row's profile."))
    return target, latency, size, other, profile


def _latency_input(col, label: str, key: str, value=None):
    """A latency field in ms, empty (not a made-up number) until the user or a prefill fills it."""
    return col.number_input(
        label, value=value, min_value=0.0, format="%.3f", key=key, placeholder="milliseconds"
    )


def one_point_inputs():
    """Widgets of the one-point mode: ``(target, latency_ms, size_from, other_size, profile)``."""
    pre = _anchor_point()
    profile = None
    if pre is None:
        target = st.selectbox("Target instance", predictor.all_instances, key="one_target")
        pre = (target, None, 32 if by == "batch" else 224, 224 if by == "batch" else 32, None)
    target, lat0, size0, other0, profile = pre
    key = f"{by}_{target}_{lat0}_{size0}"
    c1, c2, c3 = st.columns(3)
    latency = _latency_input(c1, f"Batch latency on {target} (ms)", f"one_lat_{key}", lat0)
    size = c2.number_input(
        f"at {dim['label'].lower()} ({dim['unit']})", lo, hi, int(size0), 1, key=f"one_s_{key}"
    )
    other = c3.number_input(
        f"{other_dim['label']} held fixed ({other_dim['unit']})",
        1,
        100_000,
        int(other0),
        1,
        key=f"one_o_{key}",
    )
    if latency is None:
        st.info(f"Enter the batch latency (ms) measured on {target} at one {dim['label'].lower()}.")
        st.stop()
    return target, float(latency), float(size), float(other), profile


#: Each latency slider runs up to this many times the upper 80% bound of the reference CNN there.
HEADROOM = 4.0


def _nice_ceil(x: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten that is >= ``x`` (> 0)."""
    power = 10.0 ** np.floor(np.log10(x))
    return float(next(m * power for m in (1, 2, 5, 10) if m * power >= x))


@st.cache_data(show_spinner=False, max_entries=64)
def _reference_curve(_predictor, artifacts: int, target: str, by: str):
    """The first built-in example CNN's latency on ``target`` over the trained range (ms): its
    measured latency there, or the latency predicted from its anchor, scaled by the one-point
    curve. Returns ``(label, latency_ms, high_ms)``, one value per size ``lo..hi``."""
    anchor = _predictor.instances[0]
    example = _predictor.examples[anchor]
    profile = parse_profile(json.dumps(example["profile"]), "example.json", steps=2)
    sizes = {"batch": example["batch_size"], "input": example["input_size"]}
    latency = 1000 * example["batch_latency_s"]
    if target != anchor:
        table = _predictor.predict(
            anchor, profile, anchor_latency_s=example["batch_latency_s"], batch_size=sizes["batch"]
        ).table
        latency = float(table.set_index("target").at[target, "batch_latency_ms"])
    other = sizes["input" if by == "batch" else "batch"]
    scaled = _predictor.scale_from_point(target, by, latency, sizes[by], grid, other, profile)
    high = np.where(np.isfinite(scaled.high_ms), scaled.high_ms, scaled.latency_ms)
    return example["label"], scaled.latency_ms, np.maximum(high, scaled.latency_ms)


def _sync(source: str, dest: str) -> None:
    """Copy one latency widget's value to its twin (slider <-> number box); the slider's 0 is
    "not entered": an empty box."""
    value = st.session_state[source]
    if source.endswith("_slider") and not value:
        value = None
    st.session_state[dest] = value


def _latency_control(name: str, title: str, size0: int, reference) -> tuple[float, float | None]:
    """One measured point: its size, a latency slider and a number box kept in sync.

    The slider runs from 0 to :data:`HEADROOM` times the reference CNN's upper bound at the
    chosen size (further when a larger latency is typed). The number box stays empty (no
    made-up latency) until the user types or drags. Returns ``(size, latency_ms or None)``.
    """
    state = st.session_state
    box, slider = f"lat_{name}_{by}", f"lat_{name}_{by}_slider"
    c_size, c_slider, c_box = st.columns([1.3, 3, 1.3])
    size = c_size.number_input(
        f"{dim['label']} ({dim['unit']}), {name}", lo, hi, size0, 1, key=f"size_{name}_{by}"
    )
    at = int(size - lo)
    typed = state.get(box)
    top = _nice_ceil(HEADROOM * reference[2][at])
    if typed is not None and typed > 0:
        top = max(top, _nice_ceil(1.25 * typed))
    step = 10.0 ** np.floor(np.log10(top / 1000))
    # Set every run: a new range is a new widget, which would start at its minimum. Untouched,
    # the slider sits at 0 ms, "not entered" (not at a reference CNN's latency: the page asks
    # for the user's), and the number box stays empty.
    value = typed if typed is not None and typed > 0 else 0.0
    state[slider] = round(float(min(max(value, 0.0), top)), 6)
    c_slider.slider(
        f"{title} latency (ms), at the {name} {dim['label'].lower()} (0: not entered)",
        0.0,
        top,
        step=step,
        format="%.1f ms" if step < 1 else "%.0f ms",
        key=slider,
        on_change=_sync,
        args=(slider, box),
    )
    lat = c_box.number_input(
        f"{title} latency (ms)",
        value=None,
        min_value=0.0,
        format="%.3f",
        key=box,
        placeholder="milliseconds",
        on_change=lambda: None if state.get(box) is None else _sync(box, slider),
    )
    return float(size), (None if lat is None else float(lat))


def two_point_inputs():
    """Widgets of the measured-points mode: ``{size: latency_ms}`` (two or three points).

    The minimum and maximum latencies (at the first and second size) are sliders with a number
    box beside each; their ranges come from the instance and the sizes (see
    :func:`_reference_curve`)."""
    target = st.selectbox(
        "Instance the latencies were measured on (sets the sliders' ranges)",
        predictor.all_instances,
        key="pts_target",
        format_func=common.instance_label(predictor),
    )
    try:
        reference = _reference_curve(predictor, id(predictor), target, by)
    except ProfetError as exc:
        common.show_error(exc)
        st.stop()
    points = {}
    for name, title, size0 in (("first", "Min", lo), ("second", "Max", hi)):
        size, lat = _latency_control(name, title, size0, reference)
        if lat is not None:
            points[size] = lat
    st.caption(
        f"Drag a slider or type the latency. Each slider runs up to {HEADROOM:g} times the "
        f"upper 80% bound of {reference[0]} on {target} at that {dim['label'].lower()} "
        "(further when you type more); the two-point curve itself is the same on every instance."
    )
    if st.checkbox(f"I measured a third {dim['label'].lower()}", key=f"third_{by}"):
        c3, c4 = st.columns(2, gap="large")
        mid = c3.number_input(
            f"{dim['label']} ({dim['unit']}), third", lo, hi, int(np.sqrt(lo * hi)), 1, key="mid"
        )
        mid_lat = _latency_input(c4, "Batch latency at that size (ms)", f"mid_lat_{by}")
        if mid_lat is not None:
            points[float(mid)] = float(mid_lat)
    if len(points) < 2:
        st.info(f"Enter the batch latency (ms) at two different {dim['label'].lower()}s.")
        st.stop()
    return points


band = None
if mode == ONE:
    target, latency, size_from, other, profile = one_point_inputs()
    size = st.slider(f"{dim['label']} to predict ({dim['unit']})", lo, hi, 128, 1, key="one_to")
    try:
        scaled = predictor.scale_from_point(target, by, latency, size_from, grid, other, profile)
    except ProfetError as exc:
        common.show_error(exc)
        st.stop()
    curve, band, warnings = scaled.latency_ms, (scaled.low_ms, scaled.high_ms), scaled.warnings
    notes = scaled.notes  # what the curve rests on: notes, as the CLI prints them
    points = {size_from: latency}
else:
    points = two_point_inputs()
    size = st.slider(f"{dim['label']} to predict ({dim['unit']})", lo, hi, 128, 1, key="pts_to")
    try:
        curve = predictor.scale(None, by, points, grid)
    except ProfetError as exc:
        common.show_error(exc)
        st.stop()
    warnings, notes = predictor.scale_warnings(by, points), ()
for warning in warnings:
    st.warning(common.safe(warning))
for text in notes:
    st.info(common.safe(text))

at = int(size - lo)
value = float(curve[at])
shown = common.fmt_ms(value)
low, high = (common.fmt_ms(b[at]) for b in band) if band is not None else (None, None)
if mode == ONE and float(size) in points:  # the curve runs through the latency given there
    shown += f", the latency given at this {dim['label'].lower()}"
elif band is not None and np.isfinite(band[0][at]) and low != high:
    shown += f" ({low} to {high}, 80% interval)"
st.metric(
    f"Predicted batch latency at {dim['label'].lower()} {size} {dim['unit']}", common.fmt_ms(value)
)
st.caption(f"Predicted: {shown}.")
common.scaler_chart(grid, curve, band, points, size, value, dim)

report = predictor.validation.get("onepoint" if mode == ONE else "scalers")
if report is not None and not report.empty:
    sel = report[(report["by"] == by)]
    sel = sel[sel["variant"] == ("profile" if mode == ONE else "default")]
    st.caption(
        "Mean error on CNNs left out of training"
        + (", from one point at every other size: " if mode == ONE else ", between two ends: ")
        + ", ".join(f"{r.instance} {r.mape_pct:.1f}%" for r in sel.itertuples())
        + " (Model accuracy page)."
    )
