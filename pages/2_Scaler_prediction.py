"""Scaler prediction: latency at any batch or input size from latencies at two (or three) sizes."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

import ui
from profet_core import ProfetError

predictor = ui.predictor_or_stop()
st.title("Scaler prediction")
st.caption(
    "Give the batch latency at two sizes (measured, or predicted on the Anchor page) and the "
    "scaler draws the latency over the whole trained range, linearly in the work (batch size, "
    "or pixel count): the same on every instance."
)

by = st.radio(
    "Scale by",
    list(ui.DIMENSIONS),
    horizontal=True,
    format_func=lambda b: f"{ui.DIMENSIONS[b]['label']} ({ui.DIMENSIONS[b]['unit']})",
    key="by",
)
dim = ui.DIMENSIONS[by]
try:
    lo, hi = (int(v) for v in predictor.scaler(None, by).size_range_)
except ProfetError as exc:
    ui.show_error(exc)
    st.stop()

# One point can come from the Anchor page: the latency predicted for one target, for one
# profile row, at the size that profile was taken with.
prefill, prefill_size = None, None
result: ui.AnchorResult | None = st.session_state.get(ui.ANCHOR_RESULT)
if result is not None:
    table = result.table
    rows = sorted(table["row"].unique())
    c1, c2 = st.columns(2)
    row = c1.selectbox("Anchor page profile row", rows, key="prefill_row") if len(rows) > 1 else 0
    shown = table[table["row"] == row]
    fastest = shown.loc[shown["batch_latency_ms"].idxmin(), "target"]
    targets = list(shown["target"])
    target = c2.selectbox(
        "Take the latency predicted for",
        targets,
        index=targets.index(fastest),
        key="prefill_target",
    )
    profiled = int(result.batch_size if by == "batch" else result.input_size)
    if lo <= profiled <= hi:
        prefill = float(shown.set_index("target").at[target, "batch_latency_ms"])
        prefill_size = profiled
        st.info(
            f"Prefilled one point from the Anchor page: {ui.fmt_ms(prefill)} on {target} at "
            f"{dim['short']} {profiled} (the profiled size). Enter the latency at a second size."
        )
    else:
        st.info(f"The profiled {dim['short']} {profiled} is outside {lo}..{hi}: nothing prefilled.")

key = f"{by}_{prefill}_{prefill_size}"
first_size = prefill_size if prefill_size is not None and prefill_size < hi else lo
points = {}
cols = st.columns(2, gap="large")
for col, name, size0, lat0 in (
    (cols[0], "first", first_size, prefill),
    (cols[1], "second", hi if first_size != hi else lo, None),
):
    with col:
        st.markdown(f"**Measured point, {name}**")
        size = st.number_input(
            f"{dim['label']} ({dim['unit']}), {name}",
            min_value=lo,
            max_value=hi,
            value=size0,
            step=1,
            key=f"size_{name}_{key}",
        )
        lat = st.number_input(
            f"Batch latency at the {name} size (ms)",
            value=lat0,
            min_value=0.0,
            format="%.3f",
            key=f"lat_{name}_{key}",
            placeholder="milliseconds",
        )
        if lat is not None:
            points[float(size)] = float(lat)

if st.checkbox(f"I measured a third {dim['label'].lower()}", key=f"third_{by}"):
    c3, c4 = st.columns(2, gap="large")
    mid = c3.number_input(
        f"{dim['label']} ({dim['unit']}), third", lo, hi, int(np.sqrt(lo * hi)), 1, key=f"mid_{key}"
    )
    mid_lat = c4.number_input(
        "Batch latency at that size (ms)",
        value=None,
        min_value=0.0,
        format="%.3f",
        key=f"mid_lat_{key}",
        placeholder="milliseconds",
    )
    if mid_lat is not None:
        points[float(mid)] = float(mid_lat)

size = st.slider(
    f"{dim['label']} to predict ({dim['unit']})",
    lo,
    hi,
    int(ui.round_sig((lo + hi) / 2, 2)),
    1,
    key=f"predict_{by}",
)
if len(points) < 2:
    st.info(
        f"Enter the batch latency (ms) at two different {dim['label'].lower()}s to draw the "
        "curve" + (" (one is prefilled from the Anchor page)." if prefill is not None else ".")
    )
    st.stop()
sizes = sorted(points)
ends, inner = (sizes[0], sizes[-1]), {s: points[s] for s in sizes[1:-1]}
grid = np.arange(lo, hi + 1, dtype=float)
try:
    args = (None, by, points[ends[0]], points[ends[1]])
    curve = predictor.scale(*args, grid, ends[0], ends[1], points=inner)
    value = float(predictor.scale(*args, size, ends[0], ends[1], points=inner))
except ProfetError as exc:
    ui.show_error(exc)
    st.stop()
for warning in predictor.scale_warnings(by, points):
    st.warning(ui.safe(warning))

st.metric(f"Predicted batch latency at {dim['short']} {size}", ui.fmt_ms(value))
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
        x=sizes,
        y=[points[s] for s in sizes],
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
    sel = scalers[(scalers["by"] == by) & (scalers["variant"] == "default")]
    if not sel.empty:
        st.caption(
            "Scaler error on architectures left out of training, between the two trained ends: "
            + ", ".join(f"{r.instance} {r.mape_pct:.1f}%" for r in sel.itertuples())
            + " (Model accuracy page)."
        )
