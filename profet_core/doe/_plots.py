"""Plotly figures for a two-level factorial analysis (see :func:`profet_core.doe.analyze`)."""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from scipy import stats

if TYPE_CHECKING:
    from ._analysis import AnalysisResult

__all__ = ["doe_figures"]

_LOW, _HIGH = "#1f77b4", "#d62728"


def _t(text) -> str:
    """User text (names, level labels) for a Plotly string: Plotly renders a subset of HTML
    (``<a href>``, ``<b>``, ...) in titles, legends, ticks and hover labels, so ``<``, ``>`` and
    ``&`` are written as entities and show as typed."""
    return html.escape(str(text), quote=False)


def doe_figures(result: AnalysisResult) -> dict[str, go.Figure]:
    """Build the figures of a factorial analysis.

    Parameters
    ----------
    result : AnalysisResult
        Output of :func:`profet_core.doe.analyze`.

    Returns
    -------
    dict of str to plotly.graph_objects.Figure
        ``half_normal`` (effects), ``main_effects``, ``interactions`` (when the model has
        two-factor interactions), ``boxplots``; and, when an error term exists, ``qq``,
        ``residuals_vs_fitted`` and ``residuals_vs_order``.
    """
    figs = {"half_normal": half_normal_figure(result), "main_effects": main_effects_figure(result)}
    if result.interaction_pairs:
        figs["interactions"] = interaction_figure(result)
    figs["boxplots"] = boxplot_figure(result)
    if result.has_error:
        figs["qq"] = qq_figure(result)
        figs["residuals_vs_fitted"] = residual_figure(result, "fitted")
        figs["residuals_vs_order"] = residual_figure(result, "run_order")
    return figs


def half_normal_figure(result: AnalysisResult) -> go.Figure:
    """Half-normal probability plot of the absolute effects, labelled with their letters."""
    eff = result.effects.assign(abs_effect=result.effects["effect"].abs())
    eff = eff.sort_values("abs_effect").reset_index(drop=True)
    m = len(eff)
    quantiles = stats.halfnorm.ppf((np.arange(1, m + 1) - 0.5) / m)
    fig = go.Figure(
        go.Scatter(
            x=eff["abs_effect"],
            y=quantiles,
            mode="markers+text",
            text=[_t(v) for v in eff["letters"]],
            textposition="middle left",
            customdata=np.stack([[_t(v) for v in eff["term"]], eff["effect"]], axis=1),
            hovertemplate="%{customdata[0]}<br>effect %{customdata[1]:.4g}<extra></extra>",
            marker={"size": 9},
        )
    )
    fig.update_layout(
        title=f"Half-normal plot of effects: {_t(result.response)}",
        xaxis_title="|effect|",
        yaxis_title="half-normal quantile",
    )
    return fig


def main_effects_figure(result: AnalysisResult) -> go.Figure:
    """Mean response at the low and high level of each factor."""
    data, y = result.data, result.response
    k = len(result.factors)
    fig = make_subplots(
        rows=1, cols=k, shared_yaxes=True, subplot_titles=[_t(f.name) for f in result.factors]
    )
    grand = float(data[y].mean())
    for j, f in enumerate(result.factors, start=1):
        means = [data.loc[data[f.name] == lv, y].mean() for lv in (f.low, f.high)]
        fig.add_trace(
            go.Scatter(
                x=[_t(f.low), _t(f.high)],
                y=means,
                mode="lines+markers",
                name=_t(f.name),
                showlegend=False,
            ),
            row=1,
            col=j,
        )
        fig.add_hline(y=grand, line_dash="dot", line_color="gray", row=1, col=j)
    fig.update_yaxes(title_text=f"mean {_t(y)}", row=1, col=1)
    fig.update_layout(title=f"Main effects: {_t(y)}")
    return fig


def interaction_figure(result: AnalysisResult) -> go.Figure:
    """Interaction plot of each two-factor interaction in the model (first of its alias chain)."""
    data, y = result.data, result.response
    by_name = {f.name: f for f in result.factors}
    pairs = result.interaction_pairs
    ncols = min(3, len(pairs))
    nrows = math.ceil(len(pairs) / ncols)
    fig = make_subplots(
        rows=nrows, cols=ncols, subplot_titles=[f"{_t(a)} x {_t(b)}" for a, b in pairs]
    )
    shown: set[str] = set()
    for n, (a, b) in enumerate(pairs):
        fa, fb = by_name[a], by_name[b]
        row, col = n // ncols + 1, n % ncols + 1
        for lv, color in ((fb.low, _LOW), (fb.high, _HIGH)):
            sub = data[data[b] == lv]
            means = [sub.loc[sub[a] == la, y].mean() for la in (fa.low, fa.high)]
            fig.add_trace(
                go.Scatter(
                    x=[_t(fa.low), _t(fa.high)],
                    y=means,
                    mode="lines+markers",
                    name=f"{_t(b)} = {_t(lv)}",
                    line={"color": color},
                    legendgroup=_t(f"{b}={lv}"),
                    showlegend=f"{b}={lv}" not in shown,
                ),
                row=row,
                col=col,
            )
            shown.add(f"{b}={lv}")
        fig.update_xaxes(title_text=_t(a), row=row, col=col)
    # One legend entry per level of every second factor: a column of them beside the plots is
    # taller than one row of plots and was cut off, so they run in rows under the plots.
    legend_rows = math.ceil(len(shown) / 3)
    fig.update_layout(
        title=f"Two-factor interactions: {_t(y)}",
        height=320 * nrows + 24 * legend_rows + 40,
        legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0, "x": 0},
        margin={"b": 24 * legend_rows + 70},
    )
    return fig


def boxplot_figure(result: AnalysisResult) -> go.Figure:
    """Box plot of the response at each level of each factor."""
    data, y = result.data, result.response
    k = len(result.factors)
    fig = make_subplots(
        rows=1, cols=k, shared_yaxes=True, subplot_titles=[_t(f.name) for f in result.factors]
    )
    for j, f in enumerate(result.factors, start=1):
        for lv, color in ((f.low, _LOW), (f.high, _HIGH)):
            fig.add_trace(
                go.Box(
                    y=data.loc[data[f.name] == lv, y],
                    name=_t(lv),
                    boxpoints="all",
                    marker_color=color,
                    showlegend=False,
                ),
                row=1,
                col=j,
            )
    fig.update_yaxes(title_text=_t(y), row=1, col=1)
    fig.update_layout(title=f"{_t(y)} by factor level")
    return fig


def qq_figure(result: AnalysisResult) -> go.Figure:
    """Normal Q-Q plot of the residuals, with the Shapiro-Wilk p-value in the title."""
    (osm, osr), (slope, intercept, _) = stats.probplot(result.residuals["residual"], dist="norm")
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=osm, y=osr, mode="markers", name="residuals"))
    fig.add_trace(
        go.Scatter(
            x=[osm[0], osm[-1]],
            y=[intercept + slope * osm[0], intercept + slope * osm[-1]],
            mode="lines",
            name="normal line",
            line={"dash": "dash"},
        )
    )
    sw = result.shapiro
    title = f"Normal Q-Q plot of residuals: {_t(result.response)}"
    if sw is not None:
        title += f" (Shapiro-Wilk W = {sw.statistic:.3f}, p = {sw.p_value:.3g})"
    fig.update_layout(title=title, xaxis_title="theoretical quantile", yaxis_title="residual")
    return fig


def residual_figure(result: AnalysisResult, against: str) -> go.Figure:
    """Residuals against ``"fitted"`` values or ``"run_order"``."""
    res = result.residuals.sort_values(against)
    mode = "lines+markers" if against == "run_order" else "markers"
    fig = go.Figure(go.Scatter(x=res[against], y=res["residual"], mode=mode, name="residual"))
    fig.add_hline(y=0, line_dash="dot", line_color="gray")
    label = "fitted value" if against == "fitted" else "run order"
    fig.update_layout(
        title=f"Residuals vs {label}: {_t(result.response)}",
        xaxis_title=label,
        yaxis_title="residual",
    )
    return fig
