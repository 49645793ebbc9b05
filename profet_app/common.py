"""Shared helpers of the Streamlit pages: the cached predictor, units, formatting and charts.

No model or feature code lives here: every number shown comes from ``profet_core``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from profet_core import LATENCY_UNITS as CORE_UNITS
from profet_core import (
    Prediction,
    Predictor,
    ProfetError,
    format_number,
    latency_seconds,
    load_artifacts,
)

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
    """What the Anchor page hands to the Scaler page (kept in session state): the prediction,
    its table (plus run time and cost columns when a run was described), the breakdown, the
    sizes the profile was taken with (images; pixels per side) and the parsed profile rows
    (they shape the Scaler page's one-point curve)."""

    prediction: Prediction
    table: pd.DataFrame
    breakdown: pd.DataFrame
    batch_size: int
    input_size: int
    profiles: pd.DataFrame | None = None
    #: The :class:`~profet_core.PredictRequest` it answers (precision, GPUs, latency...).
    request: object = None

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


#: Twelve distinct colours, none light (plotly's Dark24), for the 12 training architectures.
PALETTE = (
    "#2E91E5 #E15F99 #1CA71C #FB0D0D #DA16FF #222A2A "
    "#B68100 #750D86 #EB663B #511CFB #00A08B #6C7C32"
).split()
#: Seconds per unit of the anchor latency input, milliseconds first (the page's default).
LATENCY_UNITS = {unit: CORE_UNITS[unit] for unit in ("ms", "s", "µs")}
#: People-facing names and units of the two scaling dimensions.
DIMENSIONS = {
    "batch": {"label": "Batch size", "unit": "images", "short": "batch"},
    "input": {"label": "Input size", "unit": "pixels per side", "short": "px"},
}


@st.cache_resource(show_spinner="Loading the PROFET models…", max_entries=1)
def get_predictor() -> Predictor:
    """The trained artifacts (``$PROFET_ARTIFACTS`` or ``artifacts/``), loaded once a process."""
    return load_artifacts()


#: Modules the other pages import, loaded by :func:`warm_up` (the DOE page's statsmodels takes
#: seconds to import: its first request in a fresh browser took 4.4 s, 2 s after).
WARM_MODULES = (
    "plotly.express",
    "plotly.io.json",
    "profet_core.doe",
    "profet_app.accuracy",
    "profet_app.spec_order",
)
_WARMING: list = []


def warm_up() -> None:
    """Once a process, in a background thread: load the models and their validation tables and
    import what every page imports, so that a page a fresh browser opens first draws in seconds
    (Model accuracy took 6.3 s to its first metric when it was the first page the server ran,
    Experiment design 4.4 s to its tabs when it was the first to import statsmodels)."""
    import threading

    if _WARMING:
        return
    _WARMING.append(threading.Thread(target=_warm, name="profet-warm-up", daemon=True))
    _WARMING[0].start()


def _warm() -> None:
    import importlib

    try:
        predictor = load_predictor_cached()
        for name in predictor.validation:  # each table parsed on first use
            predictor.validation.get(name)
    except ProfetError:
        pass  # the pages say what is wrong with the artifacts
    for name in WARM_MODULES:
        importlib.import_module(name)
    _warm_doe()


def _warm_doe() -> None:
    """The Experiment design page's first view computed once (its ANOVA imports some 900
    modules of statsmodels, formulaic and scipy on first use: 3.5 s of a first run whose tabs
    then reached a fresh browser after 4.8 s)."""
    from profet_core.doe import analyze, default_factors, doe_figures, montgomery_filtration_example

    example = montgomery_filtration_example()
    response = "filtration_rate"
    doe_figures(analyze(example, response, default_factors(example, response)))


def load_predictor_cached() -> Predictor:
    """:func:`get_predictor` outside a page's run (no spinner to show there)."""
    return get_predictor()


def wide_layout() -> None:
    """The app's wide layout, set by each page too: a page opened by its own link (a fresh
    browser's ``/model_accuracy?section=...``) was drawn in Streamlit's narrow layout (736 px at
    1440, its tables cut at the right) although the entry point sets the wide one; opened from
    the menu it was wide."""
    st.set_page_config(layout="wide")


def predictor_or_stop() -> Predictor:
    """The cached predictor, or an ``st.error`` and a stopped page when the artifacts are unusable."""
    try:
        return get_predictor()
    except ProfetError as exc:
        show_error(exc, "The trained models cannot be loaded: ")
        st.stop()


#: Most profile rows offered in a list; a file with more has its row picked by number.
MAX_ROW_CHOICES = 1000


def pick_row(container, label: str, n_rows: int, key: str | None = None) -> int:
    """The profile row (0..``n_rows`` - 1) a page shows, picked in ``container`` (``st`` or a
    column): 0 for one row; a list up to :data:`MAX_ROW_CHOICES` rows; a number box beyond (a
    list of a 43 MB file's 95,000 rows is no choice, and the server rebuilt it on every rerun).
    ``key``: the list's key; the number box's adds the row count (another file starts at 0)."""
    if n_rows <= 1:
        return 0
    if n_rows <= MAX_ROW_CHOICES:
        return container.selectbox(f"{label} (the file holds {n_rows})", range(n_rows), key=key)
    return container.number_input(
        f"{label} (0 to {n_rows - 1:,}; the file holds {n_rows:,})",
        min_value=0,
        max_value=n_rows - 1,
        value=0,
        step=1,
        key=f"{key or label}_{n_rows}",
    )


def instance_label(predictor: Predictor):
    """A ``format_func`` for instance selectboxes: ``"p3.2xlarge — V100, 3.06 USD/h"``."""
    cat = predictor.catalog.set_index("instance")

    def label(name: str) -> str:
        if name not in cat.index:
            return name
        gpu = cat.at[name, "gpu"]
        price = cat.at[name, "usd_per_hour"]
        price_txt = f"{price:.3g} USD/h" if pd.notna(price) else "no offering rents it"
        return f"{name} — {gpu}, {price_txt}"

    return label


def latency_to_seconds(value, unit: str):
    """A latency typed in ``unit`` (``"ms"``, ``"s"``, ``"µs"``) in seconds; ``None`` stays
    ``None``. Raises ProfetError for one outside 1 us .. 11.6 days, named in ``unit``."""
    # checked in the unit typed: "-5 ms" is refused as -5 ms, not as -0.005 s
    return latency_seconds(value, unit, "the anchor latency")


def fmt_ms(ms: float) -> str:
    """A latency for people, by the CLI's rule (``format_number``): ``"60.78 ms"``, ``"1.23 s"``."""
    if ms is None or not np.isfinite(ms):
        return "–"
    return f"{format_number(ms / 1000)} s" if ms >= 1000 else f"{format_number(ms)} ms"


def fmt_usd(usd: float) -> str:
    """A cost for people, by the CLI's rule: ``"$0.008931"``, ``"$1,234"``."""
    if usd is None or not np.isfinite(usd):
        return "–"
    return f"${format_number(usd)}"


#: What an unknown number shows as (Streamlit draws a missing cell as the word "None").
DASH = "—"


def fmt_p(p: float) -> str:
    """A p-value for people: ``"0.0123"``, ``"3.2e-05"``, ``"< 1e-6"`` (no 20-digit zeros)."""
    if p is None or not np.isfinite(p):
        return DASH
    if p < 1e-6:
        return "< 1e-6"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def dashed(df: pd.DataFrame, formats: dict) -> pd.DataFrame:
    """``df`` with the ``formats`` columns that miss a value (or have a function format) as text
    in that format, a missing value as an em dash; configure them with :func:`number_column`."""
    out = df.copy()
    for col, fmt in formats.items():
        if col in out and (callable(fmt) or out[col].isna().any()):
            show = fmt if callable(fmt) else fmt.format
            out[col] = [DASH if pd.isna(v) else show(v) for v in out[col]]
    return out


def number_column(shown: pd.DataFrame, col: str, label: str, fmt, **kwargs):
    """The column config of a number of a :func:`dashed` table: right-aligned text where it
    became text, else a number column in ``fmt`` (as given to :func:`dashed`)."""
    if callable(fmt) or not pd.api.types.is_numeric_dtype(shown[col]):
        return st.column_config.TextColumn(label, alignment="right", **kwargs)
    return st.column_config.NumberColumn(label, format="%" + fmt[2:-1], **kwargs)


def recorded_table(val, name: str, what: str, bench: str) -> pd.DataFrame | None:
    """The validation table ``name`` a bench recorded into the artifacts (``bench --record``),
    or None after an ``st.info`` saying the artifacts carry no ``what`` and how to make it."""
    table = val.get(name)
    if table is None or table.empty:
        st.info(
            f"These artifacts carry no {what}: `python {bench} --record` writes it into them "
            f"(validation/{name}.csv)."
        )
        return None
    return table


def error_bars(value, low, high) -> dict:
    """Plotly error bars from ``value`` down to ``low`` and up to ``high``."""
    return {"type": "data", "symmetric": False, "array": high - value, "arrayminus": value - low}


def _ratio_ticks(ratios: np.ndarray) -> tuple[list[float], list[str]]:
    """Ticks of a log axis of ratios: powers of two spanning ``ratios``, labelled ``0.5x``."""
    finite = ratios[np.isfinite(ratios) & (ratios > 0)]
    lo, hi = (np.log2(finite.min()), np.log2(finite.max())) if finite.size else (0.0, 0.0)
    powers = range(min(-1, math.floor(lo)), max(1, math.ceil(hi)) + 1)
    vals = [2.0**k for k in powers]
    return vals, [f"{v:g}x" for v in vals]


def breakdown_figure(breakdown: pd.DataFrame) -> go.Figure:
    """Grouped bars of the predicted speed-up per op family and target, drawn from 1 on a log
    axis: up is faster than on the anchor, down slower.

    Parameters
    ----------
    breakdown : pandas.DataFrame
        ``target, family, anchor_us, target_us, speedup`` from ``Predictor.breakdown``.
    """
    fig = go.Figure()
    for target, part in breakdown.groupby("target", sort=True):
        fig.add_bar(
            x=part["family"],
            y=part["speedup"] - 1.0,  # bar length from the base: it ends at the speed-up
            base=1.0,
            name=target,
            customdata=part[["anchor_us", "target_us", "speedup"]],
            hovertemplate="%{x}: %{customdata[2]:.2f}x<br>anchor %{customdata[0]:,.0f} µs -> "
            "target %{customdata[1]:,.0f} µs<extra>%{fullData.name}</extra>",
        )
    fig.add_hline(y=1.0, line_color="gray")
    vals, text = _ratio_ticks(breakdown["speedup"].to_numpy(dtype=float))
    fig.update_yaxes(type="log", tickvals=vals, ticktext=text)
    fig.update_layout(
        barmode="group",
        height=380,
        yaxis_title="Speed-up vs anchor (x, log)<br>above 1x faster, below slower",
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
