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


def pick_marks(picks: dict, criterion: str = "") -> list[tuple[str, pd.Series]]:
    """One arrow label per picked row: ``(label, row)``, a row picked twice or thrice named
    once with every pick (``"fastest, best value (whole run)"``), never two labels on one bar."""
    by_row: dict = {}
    for what, best in picks.items():
        if best is not None:
            by_row.setdefault(best.name, [best, []])[1].append(what)
    name = f" ({criterion})" if criterion else ""
    return [(f"{', '.join(whats)}{name}", best) for best, whats in by_row.values()]


def _mark_picks(fig: go.Figure, picks: dict, bars: str, cost_col: str, criterion: str) -> None:
    """The fastest, cheapest and best-value rows' arrows at their bars, each label naming the
    ``criterion`` the picks rank by (whatever the bars and markers show); the arrows of
    different rows at different heights, so that their labels never overlap."""
    colors = ({"color": "#333"}, {"color": "#F58518"}, {"color": "#2E7D32"})
    marks = [
        (text, best, bars, "y", 0, -40 - 28 * i, colors[i % 3])
        for i, (text, best) in enumerate(pick_marks(picks, criterion))
    ]
    _mark(fig, marks)


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
    names = _names(t).tolist()
    # Every bar labelled (Plotly drops every other label when they crowd): the chart shows at
    # most TOP bars, so each label has room at 1440 px.
    fig.update_xaxes(
        title_text="GPU configuration (GPUs x GPU)",
        tickmode="array",
        tickvals=names,
        ticktext=names,
        tickangle=-50,
        automargin=True,
    )
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
    # Room above the tallest bar for the picks' staggered labels.
    fig.update_layout(
        barmode="group", legend={"orientation": "h", "y": 1.2}, margin={"t": 110}, height=520
    )
    return fig


#: The most bars the chart draws: at 1440 px (about 1,050 px of plot) each gets 26 px, room
#: for its label at an angle; every one-GPU answer fits (about 35 configurations), and the table
#: lists every configuration of an all-GPUs answer (105).
TOP = 40


def chart_rows(shown: pd.DataFrame, picks: dict, time_column: str, top: int = TOP) -> pd.DataFrame:
    """The rows the chart draws, in the table's order: all of them up to ``top``; beyond, every
    picked row and then the fastest by the picks' time column (``time_column``) up to ``top``."""
    if len(shown) <= top:
        return shown
    names = _names(shown)
    wanted = {str(_names(best.to_frame().T).iat[0]) for best in picks.values() if best is not None}
    picked = list(shown.index[names.isin(wanted)])
    order = shown[time_column].sort_values(kind="stable", na_position="last").index
    keep = set(list(dict.fromkeys([*picked, *order]))[:top])
    return shown[shown.index.isin(keep)]


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
    picks = prediction.picks(row)
    crit = prediction.criterion
    drawn = chart_rows(shown, picks, crit.time_column)
    if len(drawn) < len(shown):
        st.caption(
            f"The chart shows {len(drawn)} of the {len(shown)} configurations: the three picks "
            f"and the fastest by {crit.time_label}; the table above lists every one."
        )
    fig = latency_cost_figure(
        drawn,
        picks,
        col,
        cost_label,
        lo,
        hi,
        bars_col,
        bars_label,
        prediction.criterion.name,
    )
    st.plotly_chart(fig, width="stretch", key="result_chart")
