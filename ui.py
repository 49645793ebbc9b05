"""Shared helpers of the Streamlit pages: the cached predictor, units, formatting and charts.

No model or feature code lives here: every number shown comes from ``profet_core``. This module
is at the top level (not in ``pages/``) because Streamlit treats every ``pages/*.py`` as a page.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from profet_core import Prediction, Predictor, ProfetError, latency_seconds, load_artifacts
from profet_core.inputs._csv import escape_formulas

#: Session-state key of the last anchor prediction (read by the scaler page to prefill it).
ANCHOR_RESULT = "anchor_result"
#: Characters that make Markdown (as st.error/st.warning render it) links, images, HTML, code
#: or emphasis.
_MARKDOWN = re.compile(r"([\\`*_\[\]<>!#|~$])")
#: GFM turns bare "https://...", "www." and e-mail addresses into links even when escaped or
#: written as character references; an invisible word joiner after ":", "@" and "www." keeps
#: the text as it reads but breaks the pattern.
_JOINER = "\u2060"
#: Longest user-derived message shown (characters); longer ones are cut.
MAX_MESSAGE = 2000


@dataclass(frozen=True)
class AnchorResult:
    """What the Anchor page hands to the Scaler page (kept in session state).

    Attributes
    ----------
    prediction : profet_core.Prediction
    table : pandas.DataFrame
        ``prediction.table`` plus run time and cost columns when a run was described.
    breakdown : pandas.DataFrame
    batch_size, input_size : int
        The sizes the profile was taken with (images; pixels per side).
    profiles : pandas.DataFrame or None
        The parsed profile rows (as ``parse_profile`` returned them): they shape the Scaler
        page's one-point curve.
    """

    prediction: Prediction
    table: pd.DataFrame
    breakdown: pd.DataFrame
    batch_size: int
    input_size: int
    profiles: pd.DataFrame | None = None

    @property
    def anchor(self) -> str:
        return self.prediction.anchor


def safe(text) -> str:
    """``text`` escaped for Markdown and bounded in length: user strings (op names, file names,
    query parameters) must never become links, images or HTML in the app."""
    text = str(text)
    if len(text) > MAX_MESSAGE:
        text = text[: MAX_MESSAGE - 1] + "…"
    text = _MARKDOWN.sub(r"\\\1", text.replace("&", "&amp;"))
    return re.sub(r"(?i)([:@]|www\.)", rf"\1{_JOINER}", text)


def show_error(exc: Exception, prefix: str = "") -> None:
    """An ``st.error`` with the (escaped) message of a ProfetError."""
    st.error(safe(f"{prefix}{exc}"))


#: Seconds per unit of the anchor latency input.
LATENCY_UNITS = {"ms": 1e-3, "s": 1.0, "µs": 1e-6}
#: People-facing names and units of the two scaling dimensions.
DIMENSIONS = {
    "batch": {"label": "Batch size", "unit": "images", "short": "batch"},
    "input": {"label": "Input size", "unit": "pixels per side", "short": "px"},
}


@st.cache_resource(show_spinner="Loading the PROFET models…")
def get_predictor() -> Predictor:
    """Load the trained artifacts once per server process.

    Returns
    -------
    profet_core.Predictor
        From ``$PROFET_ARTIFACTS`` or the repository's ``artifacts/``.
    """
    return load_artifacts()


def predictor_or_stop() -> Predictor:
    """The cached predictor, or an ``st.error`` and a stopped page when the artifacts are unusable.

    Returns
    -------
    profet_core.Predictor
    """
    try:
        return get_predictor()
    except ProfetError as exc:
        show_error(exc, "The trained models cannot be loaded: ")
        st.stop()


def instance_label(predictor: Predictor):
    """A ``format_func`` for instance selectboxes: ``"p3.2xlarge — V100, 3.06 USD/h"``.

    Parameters
    ----------
    predictor : profet_core.Predictor

    Returns
    -------
    callable
        Maps an instance name to its label.
    """
    cat = predictor.catalog.set_index("instance")

    def label(name: str) -> str:
        if name not in cat.index:
            return name
        gpu = cat.at[name, "gpu"]
        price = cat.at[name, "usd_per_hour"]
        price_txt = f"{price:.3g} USD/h" if pd.notna(price) else "price unknown"
        return f"{name} — {gpu}, {price_txt}"

    return label


def latency_to_seconds(value, unit: str):
    """Convert a latency typed in ``unit`` to seconds; ``None`` stays ``None``.

    Parameters
    ----------
    value : float or None
    unit : {"ms", "s", "µs"}

    Returns
    -------
    float or None

    Raises
    ------
    profet_core.ProfetError
        A latency outside 1 us .. 11.6 days, named in ``unit``.
    """
    # checked in the unit typed: "-5 ms" is refused as -5 ms, not as -0.005 s
    return latency_seconds(value, unit, "the anchor latency")


def round_sig(x: float, digits: int = 3) -> float:
    """Round to ``digits`` significant digits (for text shown to people)."""
    if x is None or not np.isfinite(x) or x == 0:
        return x
    return round(x, digits - 1 - int(math.floor(math.log10(abs(x)))))


def fmt_ms(ms: float) -> str:
    """A latency for people: ``"12.3 ms"``, ``"1.23 s"``."""
    if ms is None or not np.isfinite(ms):
        return "–"
    return f"{round_sig(ms / 1000):g} s" if ms >= 1000 else f"{round_sig(ms):g} ms"


def fmt_usd(usd: float) -> str:
    """A cost for people: ``"$1,234"``, ``"$12.30"``, ``"$0.0123"``."""
    if usd is None or not np.isfinite(usd):
        return "–"
    if usd >= 100:
        return f"${usd:,.0f}"
    if usd >= 1:
        return f"${usd:,.2f}"
    return f"${round_sig(usd):g}"


def csv_bytes(df: pd.DataFrame) -> bytes:
    """The table as UTF-8 CSV for a download button (formula-looking text escaped)."""
    return escape_formulas(df).to_csv(index=False).encode("utf-8")


def _mark_picks(fig: go.Figure, picks: dict, cost_col: str) -> None:
    """Arrows at the fastest bar and the cheapest marker (``Prediction.picks``)."""
    marks = (
        ("fastest", "batch_latency_ms", "y", -45, -35, None),
        ("cheapest", cost_col, "y2", 45, -55, {"color": "#F58518"}),
    )
    for text, col, yref, ax, ay, font in marks:
        best = picks.get(text)
        if best is None:
            continue
        fig.add_annotation(
            x=best["target"],
            y=best[col],
            text=text,
            showarrow=True,
            arrowhead=2,
            ax=ax,
            ay=ay,
            yref=yref,
            font=font,
        )


def _error_bars(value, low, high) -> dict:
    return {"type": "data", "symmetric": False, "array": high - value, "arrayminus": value - low}


def latency_cost_figure(
    table: pd.DataFrame,
    picks: dict,
    cost_col: str,
    cost_label: str,
    cost_low: str | None = None,
    cost_high: str | None = None,
) -> go.Figure:
    """Bars of predicted latency (left axis) and markers of cost (right axis) per target.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per target: ``target``, ``batch_latency_ms``, ``low_ms``, ``high_ms`` and
        ``cost_col``.
    picks : dict
        ``Prediction.picks``: the fastest and the cheapest row, marked with arrows.
    cost_col, cost_label : str
        Column and axis title (with unit) of the cost.
    cost_low, cost_high : str, optional
        Columns of the cost's interval.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    t = table.reset_index(drop=True)
    basis = t["basis"].tolist() if "basis" in t else ["measured"] * len(t)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    lat = t["batch_latency_ms"].to_numpy(dtype=float)
    has_band = t[["low_ms", "high_ms"]].notna().any().any()
    error_y = None
    if has_band:
        error_y = _error_bars(lat, t["low_ms"].to_numpy(float), t["high_ms"].to_numpy(float))
    fig.add_trace(
        go.Bar(
            x=t["target"],
            y=lat,
            name="Batch latency (ms)",
            error_y=error_y,
            # Targets predicted from spec sheets only are drawn lighter and hatched.
            marker={
                "color": ["#4C78A8" if b == "measured" else "#9ECAE9" for b in basis],
                "pattern": {"shape": ["" if b == "measured" else "/" for b in basis]},
            },
            customdata=basis,
            hovertemplate="%{x}<br>%{y:.3g} ms (%{customdata})<extra></extra>",
        ),
        secondary_y=False,
    )
    cost = t[cost_col].to_numpy(dtype=float)
    cost_err = None
    if cost_low and cost_high and t[[cost_low, cost_high]].notna().all().all():
        cost_err = _error_bars(cost, t[cost_low].to_numpy(float), t[cost_high].to_numpy(float))
    fig.add_trace(
        go.Scatter(
            x=t["target"],
            y=cost,
            name=cost_label,
            mode="markers",
            marker={"size": 14, "symbol": "diamond", "color": "#F58518"},
            error_y=cost_err,
            hovertemplate="%{x}<br>$%{y:.3g}<extra></extra>",
        ),
        secondary_y=True,
    )
    _mark_picks(fig, picks, cost_col)
    fig.update_xaxes(title_text="Target instance")
    fig.update_yaxes(
        title_text="Predicted batch latency (ms)", secondary_y=False, rangemode="tozero"
    )
    fig.update_yaxes(title_text=cost_label, secondary_y=True, rangemode="tozero", showgrid=False)
    fig.update_layout(legend={"orientation": "h", "y": 1.12}, margin={"t": 60}, height=430)
    return fig


def breakdown_figure(breakdown: pd.DataFrame) -> go.Figure:
    """Grouped bars of the predicted speed-up per op family and target (log axis).

    Parameters
    ----------
    breakdown : pandas.DataFrame
        ``target, family, anchor_us, target_us, speedup`` from ``Predictor.breakdown``.
    """
    fig = go.Figure()
    for target, part in breakdown.groupby("target", sort=True):
        fig.add_bar(
            x=part["family"],
            y=part["speedup"],
            name=target,
            customdata=part[["anchor_us", "target_us"]],
            hovertemplate="%{x}: %{y:.2f}x<br>anchor %{customdata[0]:,.0f} µs -> "
            "target %{customdata[1]:,.0f} µs<extra>%{fullData.name}</extra>",
        )
    fig.add_hline(y=1.0, line_dash="dot", line_color="gray")
    fig.update_layout(
        barmode="group",
        yaxis_type="log",
        height=380,
        yaxis_title="Speed-up vs anchor (x, log scale)",
        xaxis_title="Op family",
        legend_title_text="Target",
        margin={"t": 30},
    )
    return fig


def scaler_chart(grid, curve, band, points: dict, size, value, dim: dict) -> None:
    """Draw the Scaler page's curve (ms over the size), its interval band, the given points and
    the predicted one."""
    fig = go.Figure()
    hover = f"{dim['short']} %{{x:.0f}}<br>%{{y:.3g}} ms<extra></extra>"
    if band is not None and np.isfinite(band[0]).any():
        fig.add_trace(
            go.Scatter(
                x=np.concatenate([grid, grid[::-1]]),
                y=np.concatenate([band[1], band[0][::-1]]),
                fill="toself",
                line={"width": 0},
                opacity=0.25,
                name="80% interval",
                hoverinfo="skip",
            )
        )
    fig.add_trace(
        go.Scatter(x=grid, y=curve, mode="lines", name="Scaler prediction", hovertemplate=hover)
    )
    sizes = sorted(points)
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
            text=[fmt_ms(value)],
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
