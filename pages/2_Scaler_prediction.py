"""Scaler prediction: latency at any batch or input size from latencies at two sizes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import ui
from profet_core import ProfetError

NUMBERS, SLIDERS = "Numbers", "Sliders"

predictor = ui.predictor_or_stop()
st.title("Scaler prediction")
st.caption(
    "Give a target instance's batch latency at two sizes (measured, or predicted on the Anchor "
    "page) and PROFET's scaler draws the latency over the whole trained range."
)

anchor_result = st.session_state.get(ui.ANCHOR_RESULT)
instances = predictor.instances
target_index = 0
if anchor_result is not None:
    # Start on the anchor page's fastest target: the one a user most likely wants to scale.
    t = anchor_result.table
    target_index = instances.index(t.loc[t["batch_latency_ms"].idxmin(), "target"])

c1, c2 = st.columns([2, 1])
target = c1.selectbox(
    "Target instance",
    instances,
    index=target_index,
    format_func=ui.instance_label(predictor),
    key="target",
)
by = c2.radio(
    "Scale by",
    list(ui.DIMENSIONS),
    horizontal=True,
    format_func=lambda b: f"{ui.DIMENSIONS[b]['label']} ({ui.DIMENSIONS[b]['unit']})",
    key="by",
)
dim = ui.DIMENSIONS[by]
try:
    lo, hi = (int(v) for v in predictor.scaler(target, by).size_range_)
except ProfetError:
    st.error(f"The artifacts hold no {dim['label'].lower()} scaler for {target}.")
    st.stop()

# Prefill from the anchor page. One predicted row gives one point at the size it was profiled
# with; several rows (profiles at several sizes) give the two ends, fastest at the smaller.
size_a, size_b, lat_a, lat_b = lo, hi, None, None
prefill_note = None
if anchor_result is not None and target != anchor_result.anchor:
    rows = anchor_result.table
    rows = rows[rows["target"] == target]["batch_latency_ms"].to_numpy(dtype=float)
    profiled = int(anchor_result.batch_size if by == "batch" else anchor_result.input_size)
    if len(rows) == 1 and lo <= profiled <= hi:
        if profiled <= (lo + hi) / 2:
            size_a, lat_a = profiled, float(rows[0])
        else:
            size_b, lat_b = profiled, float(rows[0])
        prefill_note = (
            f"Prefilled one point from the Anchor page: {ui.fmt_ms(rows[0])} on "
            f"{target} at {dim['short']} {profiled}. Enter the other point."
        )
    elif len(rows) > 1:
        lat_a, lat_b = float(rows.min()), float(rows.max())
        prefill_note = (
            f"Prefilled both ends from the Anchor page's {len(rows)} profiles: the "
            f"fastest prediction at {dim['short']} {lo}, the slowest at {hi}."
        )
if prefill_note:
    st.info(prefill_note)

mode = st.radio("Enter the two latencies as", [NUMBERS, SLIDERS], horizontal=True, key="mode")
# Widget keys carry the prefill so that a new anchor prediction resets the inputs.
key = f"{target}_{by}_{lat_a}_{lat_b}_{size_a}_{size_b}"
slider_max = float(max(200.0, 3 * max(v for v in (lat_a, lat_b, 1.0) if v is not None)))
slider_max = float(ui.round_sig(slider_max, 2))
cols = st.columns(2, gap="large")
points = []
for col, name, size0, lat0, fallback in (
    (cols[0], "smaller", size_a, lat_a, slider_max / 10),
    (cols[1], "larger", size_b, lat_b, slider_max / 2),
):
    with col:
        st.markdown(f"**Given point at the {name} size**")
        size = st.number_input(
            f"{dim['label']} ({dim['unit']}), {name}",
            min_value=lo,
            max_value=hi,
            value=size0,
            step=1,
            key=f"size_{name}_{key}",
        )
        label = f"Batch latency at the {name} size (ms)"
        if mode == NUMBERS:
            lat = st.number_input(
                label,
                value=lat0,
                format="%.3f",
                key=f"num_{name}_{key}",
                placeholder="milliseconds",
            )
        else:
            lat = st.slider(
                label,
                min_value=0.1,
                max_value=slider_max,
                value=float(lat0 if lat0 is not None else fallback),
                step=0.1,
                key=f"slide_{name}_{key}",
            )
        points.append((size, lat))

extra = {}
if st.checkbox(
    f"I measured a third {dim['label'].lower()} in between",
    key=f"third_{by}",
    help="The curve then runs through all three points; on architectures left out of "
    "training a middle point cut the error at the other sizes by 30-45% "
    "(Model accuracy page, scalers).",
):
    c3, c4 = st.columns(2, gap="large")
    mid_size = c3.number_input(
        f"{dim['label']} ({dim['unit']}), in between",
        min_value=lo,
        max_value=hi,
        value=int(round(np.sqrt(lo * hi))),
        step=1,
        key=f"size_mid_{key}",
    )
    label = "Batch latency at that size (ms)"
    if mode == NUMBERS:
        mid_lat = c4.number_input(
            label, value=None, format="%.3f", key=f"num_mid_{key}", placeholder="milliseconds"
        )
    else:
        mid_lat = c4.slider(
            label,
            min_value=0.1,
            max_value=slider_max,
            value=slider_max / 4,
            step=0.1,
            key=f"slide_mid_{key}",
        )
    if mid_lat is not None:
        extra[mid_size] = mid_lat

size = st.slider(
    f"{dim['label']} to predict ({dim['unit']})",
    min_value=lo,
    max_value=hi,
    value=int(ui.round_sig((lo + hi) / 2, 2)),
    step=1,
    key=f"predict_{by}",
)

(size_min, lat_min), (size_max, lat_max) = points
if lat_min is None and lat_max is None:
    st.info(f"Enter the batch latency (ms) at the two {dim['label'].lower()}s to draw the curve.")
    st.stop()
try:
    grid = np.arange(lo, hi + 1, dtype=float)
    curve = predictor.scale(target, by, lat_min, lat_max, grid, size_min, size_max, points=extra)
    value = float(
        predictor.scale(target, by, lat_min, lat_max, size, size_min, size_max, points=extra)
    )
except ProfetError as exc:
    ui.show_error(exc)
    st.stop()

st.metric(f"Predicted batch latency on {target} at {dim['short']} {size}", ui.fmt_ms(value))
fig = go.Figure()
fig.add_trace(
    go.Scatter(
        x=grid,
        y=curve,
        mode="lines",
        name="Scaler prediction",
        hovertemplate=f"{dim['short']} %{{x:.0f}}<br>%{{y:.3g}} ms<extra></extra>",
    )
)
fig.add_trace(
    go.Scatter(
        x=[size_min, *extra, size_max],
        y=[lat_min, *extra.values(), lat_max],
        mode="markers",
        name="Given points",
        marker={"size": 13, "symbol": "circle-open", "line": {"width": 3}},
    )
)
fig.add_trace(
    go.Scatter(
        x=[size],
        y=[value],
        mode="markers+text",
        name="Predicted",
        text=[ui.fmt_ms(value)],
        textposition="top left",
        marker={"size": 14, "symbol": "star"},
    )
)
fig.update_layout(
    xaxis_title=f"{dim['label']} ({dim['unit']})",
    yaxis_title="Batch latency (ms)",
    height=450,
    legend={"orientation": "h", "y": 1.1},
)
fig.update_yaxes(rangemode="tozero")
st.plotly_chart(fig, width="stretch", key="scaler_chart")

scalers = predictor.validation.get("scalers")
if scalers is not None and not scalers.empty:
    sel = scalers[(scalers["instance"] == target) & (scalers["by"] == by)]
    if not sel.empty:
        parts = [
            f"{r.variant}: {r.mape_pct:.1f}% (n = {r.n}"
            + (
                f"; {r.mape_3pt_pct:.1f}% with a middle size given"
                if pd.notna(getattr(r, "mape_3pt_pct", None))
                else ""
            )
            + ")"
            for r in sel.itertuples()
        ]
        st.caption(
            "Scaler error on this instance (MAPE between the two trained ends, "
            "validation): " + "; ".join(parts)
        )
