"""The Anchor page's per-target chart: bars of the predicted step time or of the images/s the
GPUs used on each instance process, markers of the whole instance's cost per 1,000 steps or of
the whole run, the fastest (or highest throughput) and the cheapest target marked.

Every number is a column of the prediction table (``batch_latency_ms``, ``low_ms``/``high_ms``, ``images_per_s``, ``gpus``,
``usd_per_1000_steps``, ``run_usd``...); only the images/s interval is read off the step-time
interval (images/s = images per step / step time).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from profet_app.common import error_bars
from profet_core import Prediction

#: What the bars show: option -> (column, name with unit).
BARS = {
    "Step time (ms)": ("batch_latency_ms", "Batch latency (ms)"),
    "Images/s (instance)": ("images_per_s", "Images/s"),
}
#: What the markers show: option -> (column, interval columns or None).
COSTS = {
    "Cost per 1,000 steps": ("usd_per_1000_steps", None),
    "Run cost": ("run_usd", ("run_usd_low", "run_usd_high")),
}
#: Bar colours and patterns: solid for a trained pair, lighter and hatched for the spec model.
_MEASURED = {"color": "#4C78A8", "pattern": {"shape": ""}}
_SPEC = {"color": "#9ECAE9", "pattern": {"shape": "/"}}


def _names(t: pd.DataFrame) -> pd.Series:
    """Each row's name on the x axis: its GPU configuration (``8 x H100 SXM5 80GB``), or its
    target where the table has none."""
    return (t["configuration"] if "configuration" in t else t["target"]).astype(str)


def _legend_bar(name: str, marker: dict) -> go.Bar:  # the bars mix two looks
    return go.Bar(x=[None], y=[None], name=name, marker=marker, offsetgroup="latency")


def _bar_values(t: pd.DataFrame, col: str):
    """The bars' values and their interval (or None): the step time's, or for images/s the same
    interval turned over (the slowest step gives the fewest images/s)."""
    value = t[col].to_numpy(dtype=float)
    if not t[["low_ms", "high_ms"]].notna().any().any():
        return value, None
    low, high = t["low_ms"].to_numpy(float), t["high_ms"].to_numpy(float)
    if col == "batch_latency_ms":
        return value, error_bars(value, low, high)
    lat = t["batch_latency_ms"].to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return value, error_bars(value, value * lat / high, value * lat / low)


def _bars(t: pd.DataFrame, col: str, name: str) -> list[go.Bar]:
    """The bars (one trace, error bars from the interval) and their legend entries."""
    basis = t["basis"].tolist() if "basis" in t else ["measured"] * len(t)
    gpus = t["gpus"].to_numpy() if "gpus" in t else np.ones(len(t), dtype=int)
    value, error_y = _bar_values(t, col)
    looks = [_MEASURED if b == "measured" else _SPEC for b in basis]
    unit = "ms" if col == "batch_latency_ms" else "images/s"
    bars = go.Bar(
        x=_names(t),
        y=value,
        name=name,
        showlegend=False,
        offsetgroup="latency",
        error_y=error_y,
        marker={
            "color": [m["color"] for m in looks],
            "pattern": {"shape": [m["pattern"]["shape"] for m in looks]},
        },
        customdata=np.column_stack([basis, gpus]),
        hovertemplate="%{x}<br>%{y:.4g} "
        + unit
        + " on %{customdata[1]} GPU(s) (%{customdata[0]})<extra></extra>",
    )
    legend = [_legend_bar(f"{name}, measured pair", _MEASURED)]
    if any(b != "measured" for b in basis):
        legend.append(_legend_bar(f"{name}, GPU spec model (hatched)", _SPEC))
    return [bars, *legend]


def _mark(fig: go.Figure, marks) -> None:
    """Arrows at the picked targets: ``(text, row or None, column, y axis, ax, ay, font)``."""
    for text, best, col, yref, ax, ay, font in marks:
        if best is None:
            continue
        fig.add_annotation(
            x=str(best["configuration"] if "configuration" in best.index else best["target"]),
            y=best[col],
            text=text,
            showarrow=True,
            arrowhead=2,
            ax=ax,
            ay=ay,
            yref=yref,
            font=font,
        )


def _mark_picks(fig: go.Figure, picks: dict, bars: str, cost_col: str, criterion: str) -> None:
    """The fastest and the cheapest target's arrows, at their bar and cost marker, each label
    naming the ``criterion`` the picks rank by (whatever the bars and markers show)."""
    name = f" ({criterion})" if criterion else ""
    orange = {"color": "#F58518"}
    _mark(
        fig,
        [
            (f"fastest{name}", picks.get("fastest"), bars, "y", -45, -35, None),
            (f"cheapest{name}", picks.get("cheapest"), cost_col, "y2", 45, -55, orange),
        ],
    )


def latency_cost_figure(
    table: pd.DataFrame,
    picks: dict,
    cost_col: str,
    cost_label: str,
    cost_low: str | None = None,
    cost_high: str | None = None,
    bars: str = "batch_latency_ms",
    bars_label: str = "Predicted batch latency (ms)",
    criterion: str = "",
) -> go.Figure:
    """Bars (left axis) and markers of cost (right axis) per target.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per GPU configuration: ``configuration`` (or ``target``), ``batch_latency_ms``, ``low_ms``, ``high_ms``,
        ``cost_col`` and (for ``bars="images_per_s"``) ``images_per_s``.
    picks : dict
        ``Prediction.picks``: the fastest and the cheapest row by the prediction's one
        criterion, marked with arrows at their bar and marker whatever the bars and markers
        show.
    cost_col, cost_label : str
        Column and axis title (with unit) of the cost.
    cost_low, cost_high : str, optional
        Columns of the cost's interval.
    bars, bars_label : str
        Column of the bars (``batch_latency_ms`` or ``images_per_s``) and their axis title
        (with unit).
    criterion : str
        The picks' criterion (``per step``, ``per image``, ``whole run``), named in the labels.

    Returns
    -------
    plotly.graph_objects.Figure
        ``data[0]`` the bars, then their legend entries, then the cost markers.
    """
    t = table.reset_index(drop=True)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    name = "Batch latency (ms)" if bars == "batch_latency_ms" else "Images/s"
    for trace in _bars(t, bars, name):
        fig.add_trace(trace, secondary_y=False)
    cost = t[cost_col].to_numpy(dtype=float)
    cost_err = None
    if cost_low and cost_high and t[[cost_low, cost_high]].notna().all().all():
        cost_err = error_bars(cost, t[cost_low].to_numpy(float), t[cost_high].to_numpy(float))
    fig.add_trace(
        go.Scatter(
            x=_names(t),
            y=cost,
            name=cost_label,
            mode="markers",
            marker={"size": 14, "symbol": "diamond", "color": "#F58518"},
            error_y=cost_err,
            hovertemplate="%{x}<br>$%{y:.3g}<extra></extra>",
        ),
        secondary_y=True,
    )
    _mark_picks(fig, picks, bars, cost_col, criterion)
    fig.update_xaxes(title_text="GPU configuration (GPUs x GPU)")
    fig.update_yaxes(title_text=bars_label, secondary_y=False, rangemode="tozero")
    # Its own round ticks ($0.02, $0.04), not ones synced to the bars' grid (0.0201).
    fig.update_yaxes(
        title_text=cost_label,
        secondary_y=True,
        rangemode="tozero",
        showgrid=False,
        tickmode="auto",
        tickformat="$,.3~g",
    )
    fig.update_layout(
        barmode="group", legend={"orientation": "h", "y": 1.12}, margin={"t": 60}, height=430
    )
    return fig


def render(prediction: Prediction, shown: pd.DataFrame, row: int) -> None:
    """The chart of one input row (``shown``, rows of the prediction's table) with its two
    controls: step time or images/s bars; cost per 1,000 steps or (a run described) of the run, both at the
    whole instance's price."""
    run = "run_usd" in shown
    all_gpus = "gpus" in shown and bool((shown["gpus"] > 1).any())
    c1, c2, _ = st.columns([2, 2, 3])
    bars = c1.radio(
        "Bars",
        list(BARS),
        horizontal=True,
        key="chart_bars",
        help="Images/s: the images every GPU used on the instance processes per second "
        "(GPUs x batch / step time), at the GPU count chosen above.",
    )
    costs = [*COSTS][: 2 if run else 1]
    cost = c2.radio(
        "Markers",
        costs,
        index=len(costs) - 1,
        horizontal=True,
        key=f"chart_cost_{run}",
        help="At the whole instance's price (USD/h), whatever number of its GPUs is used; "
        "the run cost needs the dataset size above.",
    )
    col, (lo, hi) = COSTS[cost][0], COSTS[cost][1] or (None, None)
    # Axis titles fit the chart's height (about 36 characters).
    cost_label = {
        "usd_per_1000_steps": "USD per 1,000 steps, whole instance",
        "run_usd": "Run cost, whole instance (USD)",
    }[col]
    bars_col = BARS[bars][0]
    bars_label = "Predicted batch latency (ms)"
    if bars_col == "images_per_s":
        bars_label = f"Images/s, {'every' if all_gpus else 'one'} GPU of the instance"
    fig = latency_cost_figure(
        shown,
        prediction.picks(row),
        col,
        cost_label,
        lo,
        hi,
        bars_col,
        bars_label,
        prediction.criterion.name,
    )
    st.plotly_chart(fig, width="stretch", key="result_chart")
