"""Scaler prediction: latency at any batch or input size, from one latency (a curve learned per
instance) or from latencies measured at two or three sizes."""

from __future__ import annotations

import numpy as np
import streamlit as st

import ui
from profet_core import ProfetError

ONE, POINTS = "one", "points"
MODES = {
    ONE: "One latency (the curve's shape learned per instance)",
    POINTS: "Two or three measured latencies",
}

predictor = ui.predictor_or_stop()
st.title("Scaler prediction")
st.caption(
    "From one latency (predicted on the Anchor page, or measured) the scaler draws the latency "
    "over the whole trained range with a curve learned from the training CNNs on that instance; "
    "from two or three measured latencies it runs through them, linearly in the work."
)

by = st.radio(
    "Scale by",
    list(ui.DIMENSIONS),
    horizontal=True,
    format_func=lambda b: f"{ui.DIMENSIONS[b]['label']} ({ui.DIMENSIONS[b]['unit']})",
    key="by",
)
mode = st.radio("Scale from", list(MODES), format_func=MODES.get, horizontal=True, key="mode")
dim = ui.DIMENSIONS[by]
other_dim = ui.DIMENSIONS["input" if by == "batch" else "batch"]
try:
    lo, hi = (int(v) for v in predictor.scaler(None, by).size_range_)
except ProfetError as exc:
    ui.show_error(exc)
    st.stop()
result: ui.AnchorResult | None = st.session_state.get(ui.ANCHOR_RESULT)


def _anchor_point():
    """The point the Anchor page predicted for a chosen row and target:
    ``(target, latency_ms, size, other_size, profile)``, or None without a usable result."""
    if result is None:
        return None
    table = result.table
    rows = sorted(table["row"].unique())
    c1, c2 = st.columns(2)
    row = c1.selectbox("Anchor page profile row", rows, key="prefill_row") if len(rows) > 1 else 0
    shown = table[table["row"] == row]
    targets = list(shown["target"])
    fastest = result.prediction.picks(row)["fastest"]["target"]
    target = c2.selectbox("Target instance", targets, targets.index(fastest), key="pre_target")
    size, other = (result.batch_size, result.input_size)[:: 1 if by == "batch" else -1]
    if not lo <= size <= hi:
        st.info(f"The profiled {dim['short']} {size} is outside {lo}..{hi}: nothing prefilled.")
        return None
    latency = float(shown.set_index("target").at[target, "batch_latency_ms"])
    profile = None if result.profiles is None else result.profiles.iloc[[int(row)]]
    st.info(
        f"From the Anchor page: {ui.fmt_ms(latency)} predicted on {target} at "
        f"{dim['label'].lower()} {size} {dim['unit']} "
        f"({other_dim['label'].lower()} {other} {other_dim['unit']}), "
        "shaped by that row's profile."
    )
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


def two_point_inputs():
    """Widgets of the measured-points mode: ``{size: latency_ms}`` (two or three points)."""
    points = {}
    cols = st.columns(2, gap="large")
    for col, name, size0 in ((cols[0], "first", lo), (cols[1], "second", hi)):
        size = col.number_input(
            f"{dim['label']} ({dim['unit']}), {name}", lo, hi, size0, 1, key=f"size_{name}_{by}"
        )
        lat = _latency_input(col, f"Batch latency at the {name} size (ms)", f"lat_{name}_{by}")
        if lat is not None:
            points[float(size)] = float(lat)
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


grid = np.arange(lo, hi + 1, dtype=float)
band = None
if mode == ONE:
    target, latency, size_from, other, profile = one_point_inputs()
    size = st.slider(f"{dim['label']} to predict ({dim['unit']})", lo, hi, 128, 1, key="one_to")
    try:
        scaled = predictor.scale_from_point(target, by, latency, size_from, grid, other, profile)
    except ProfetError as exc:
        ui.show_error(exc)
        st.stop()
    curve, band, warnings = scaled.latency_ms, (scaled.low_ms, scaled.high_ms), scaled.notes
    points = {size_from: latency}
else:
    points = two_point_inputs()
    size = st.slider(f"{dim['label']} to predict ({dim['unit']})", lo, hi, 128, 1, key="pts_to")
    try:
        curve = predictor.scale(None, by, points, grid)
    except ProfetError as exc:
        ui.show_error(exc)
        st.stop()
    warnings = predictor.scale_warnings(by, points)
for warning in warnings:
    st.warning(ui.safe(warning))

at = int(size - lo)
value = float(curve[at])
shown = ui.fmt_ms(value)
low, high = (ui.fmt_ms(b[at]) for b in band) if band is not None else (None, None)
if mode == ONE and float(size) in points:  # the curve runs through the latency given there
    shown += f", the latency given at this {dim['label'].lower()}"
elif band is not None and np.isfinite(band[0][at]) and low != high:
    shown += f" ({low} to {high}, 80% interval)"
st.metric(
    f"Predicted batch latency at {dim['label'].lower()} {size} {dim['unit']}", ui.fmt_ms(value)
)
st.caption(f"Predicted: {shown}.")
ui.scaler_chart(grid, curve, band, points, size, value, dim)

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
