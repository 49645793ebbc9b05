"""The Anchor page's time-cost front over every GPU offering: the filter widgets, the
scatter with the Pareto front and the picks, the sortable table and its download.

Every number comes from the page's one core call, :func:`profet_core.answer` (made when Predict
is pressed); the widgets only narrow its table (:meth:`OfferingsResult.where`). Kept apart from
``profet_app/common.py`` so that the page's other helpers change independently.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from profet_app.common import safe
from profet_core import OfferingFilter, format_number, price_source

#: Session-state key of the offerings priced at the last Predict.
OFFERINGS_RESULT = "offerings_result"
#: Marker per basis: solid where measured, hollow where only the spec sheet speaks.
_SYMBOLS = {
    "measured": "circle",
    "anchor": "star",
    "published": "diamond",
    "specs only": "circle-open",
    "calibrated": "square",
}
_MARKETS = {"On-demand": False, "Spot": True, "Both": None}
#: Columns of the grid, in order, under the core's names (the CSV download's, the CLI's): one
#: name per quantity in every view; the labels are the column config's.
_GRID = (
    "cloud",
    "instance",
    "region",
    "gpu",
    "gpus",
    "market",
    "usd_per_hour",
    "regions_at_price",
    "price_check",
    "basis",
    "batch_latency_ms",
    "low_ms",
    "high_ms",
    "usd_per_1000_steps",
    "precision",
    "gpus_used",
    "images_per_s",
    "ms_per_batch",
    "usd_per_1000_batches",
    "steps",
    "run_hours",
    "run_usd",
    "pareto",
    "pick",
    "note",
)
#: Four significant digits: the CLI's rule (``format_number``), as the per-configuration table.
SIG = "%.4g"


def _basis_kind(basis: str) -> str:
    b = str(basis)
    return (
        "measured"
        if b.startswith("measured")
        else next((k for k in _SYMBOLS if b.startswith(k)), "specs only")
    )


def plot_text(text) -> str:
    """``text`` (a catalog's or a user's) as Plotly draws it literally: Plotly renders ``<a>``,
    ``<img>``-like tags, ``<b>`` and ``<br>`` in legends, annotations and hover text."""
    return html.escape(str(text), quote=False)


def _cloud_traces(t: pd.DataFrame, cost_col: str, time_col: str, units: str) -> list[dict]:
    """One marker trace per cloud, each marker shaped by the offering's basis; the hover text
    names the offering and its two numbers with their ``units``."""
    palette = ["#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2", "#9D755D"]
    data = []
    for i, (cloud, g) in enumerate(t.groupby("cloud", sort=True)):
        color = palette[i % len(palette)]
        data.append(
            {
                "type": "scatter",
                "x": g[cost_col].to_numpy(),
                "y": g[time_col].to_numpy(),
                "mode": "markers",
                "name": plot_text(cloud),
                "marker": {
                    "color": color,
                    "size": 9,
                    "symbol": [_SYMBOLS[_basis_kind(b)] for b in g["basis"]],
                    "line": {"width": 1.5, "color": color},
                },
                "customdata": g[["instance", "region", "market", "basis", "gpu"]]
                .astype(str)
                .map(plot_text)
                .to_numpy(),
                "hovertemplate": "%{customdata[0]} (%{customdata[1]}, %{customdata[2]})<br>"
                f"%{{customdata[4]}}<br>%{{y:.4g}}, %{{x:.4g}} ({units})<br>%{{customdata[3]}}"
                "<extra></extra>",
            }
        )
    return data


def front_figure(
    table: pd.DataFrame,
    cost_col: str,
    cost_label: str,
    time_col: str = "batch_latency_ms",
    time_label: str = "Step time (ms)",
    criterion: str = "",
) -> go.Figure:
    """Step time against cost, one point per offering, coloured by cloud, marked by basis, the
    Pareto front drawn and the fastest / cheapest / best-value offerings named with their
    ``criterion`` (per step, per image, whole run).

    Built as one figure from plain dicts: adding traces and annotations one by one costs the
    page several tenths of a second in Plotly's validation."""
    t = table[np.isfinite(table[time_col]) & np.isfinite(table[cost_col])]
    data = _cloud_traces(t, cost_col, time_col, f"{time_label}, {cost_label}")
    front = t[t["pareto"]].sort_values(cost_col)
    data.append(
        {
            "type": "scatter",
            "x": front[cost_col].to_numpy(),
            "y": front[time_col].to_numpy(),
            "mode": "lines",
            "name": "time-cost front",
            "line": {"color": "#333", "dash": "dot", "shape": "hv"},
        }
    )
    notes = [
        {
            "x": float(np.log10(r[cost_col])),
            "y": float(np.log10(r[time_col])),
            "text": plot_text(
                f"{r['pick']}{f' ({criterion})' if criterion else ''}: {r['cloud']} {r['instance']}"
                + (f" (price to check: {r['price_check']})" if r.get("price_check") else "")
            ),
            "showarrow": True,
            "arrowhead": 2,
            # Each label to the upper right of its point, one above another, on a white box:
            # they ran under the markers and each other.
            "ax": 60,
            "ay": -45 - 32 * i,
            "bgcolor": "rgba(255,255,255,0.85)",
            "bordercolor": "#999",
            "font": {"size": 12},
            "xanchor": "left",
        }
        for i, (_, r) in enumerate(front[front["pick"] != ""].iterrows())
    ]
    layout = {
        "xaxis": {"title": {"text": cost_label}, "type": "log"},
        "yaxis": {"title": {"text": f"Predicted {time_label}"}, "type": "log"},
        "height": 560,
        "margin": {"l": 60, "r": 20, "t": 110, "b": 60},
        "legend": {"title": {"text": "cloud (hollow: specs only; ◆ published; ★ anchor)"}},
        "annotations": notes,
    }
    return go.Figure(data=data, layout=layout)


def filter_widgets(result) -> OfferingFilter:
    """Clouds, GPUs, market and the price cap as widgets: one :class:`OfferingFilter`."""
    t = result.table
    c1, c2, c3, c4 = st.columns([2, 3, 1.4, 1.4])
    clouds = c1.multiselect(
        "Clouds", sorted(t["cloud"].unique()), key="off_clouds", placeholder="every cloud"
    )
    gpus = c2.multiselect(
        "GPUs",
        sorted(t["accelerator"].astype(str).unique()),
        key="off_gpus",
        placeholder="every GPU",
    )
    market = c3.radio("Market", list(_MARKETS), key="off_market", horizontal=True)
    cap = c4.number_input(
        "Max price (USD/h)", min_value=0.01, value=None, key="off_max", placeholder="no limit"
    )
    return OfferingFilter(
        clouds=tuple(clouds), gpus=tuple(gpus), spot=_MARKETS[market], max_usd_per_hour=cap
    )


def source_caption(meta: dict | None = None) -> str:
    """The section's first caption: how offerings are priced and where the prices come from
    (the price source names the catalog's commits: its text, escaped)."""
    return (
        "One prediction per GPU, joined to every offering that rents it (each instance type "
        "at its cheapest region). " + safe(price_source(meta))
    )


def note_captions(shown) -> list[str]:
    """The result's notes past the price source and region view, escaped (they name the
    catalog's GPUs, e.g. those without a spec model)."""
    return [safe(note) for note in shown.notes[2:]]


def pick_metrics(shown) -> list[tuple[str, str, str]]:
    """``(label, value, caption)`` of each pick's metric: its GPU configuration as the value
    (``"8 x RTX A5000"``), its numbers and offering in a caption, which wraps (as a value or
    delta, one line, "lambda gpu_1x_b200_sxm6" was cut short at 1440 px); the offering's names
    escaped (Streamlit renders both as Markdown)."""
    time_label, cost_label = shown.axis_labels()
    return [
        (
            f"{what.capitalize()} ({shown.criterion.name})",
            safe(f"{int(r['gpus_used'])} x {str(r['gpu']).removeprefix('NVIDIA ')}"),
            ("⚠️ " if r.get("price_check") else "")
            + safe(
                f"{time_label} {format_number(r[shown.time_column])}, {cost_label} "
                f"{format_number(r[shown.cost_column])}; on {r['cloud']} {r['instance']} "
                f"({r['region']}, {r['market']}) at {format_number(r['usd_per_hour'])} USD/h"
                + (f"; price to check: {r['price_check']}" if r.get("price_check") else "")
            ),
        )
        for what, r in shown.picks().items()
        if r is not None
    ]


def render(result) -> None:
    """The offerings section: source, filters, front, picks, table and download."""
    if result is None:
        return
    st.divider()
    st.subheader("Every GPU offering: the time-cost front")
    st.caption(source_caption())
    shown = result.where(filter_widgets(result))
    t = shown.table
    time_label, cost_label = shown.axis_labels()
    priced = int(t["batch_latency_ms"].notna().sum())
    st.caption(
        f"{priced} offerings priced, {len(t) - priced} without a spec model (listed, not "
        f"predicted); {int(t['pareto'].sum())} on the front. Best value = least cost x "
        f"{time_label.split(' (')[0]}. Spot capacity can be taken back."
    )
    cols = st.columns(3)
    for col, (label, value, text) in zip(cols, pick_metrics(shown), strict=False):
        col.metric(label, value)
        col.caption(text)
    notes = note_captions(shown)
    if notes:
        about = [n for n in notes if any(p in n for p in ("[fastest", "[cheapest", "[best value"))]
        with st.expander(
            f"Notes on the offerings: {len(notes)}"
            + (f" ({len(about)} about the picks)" if about else "; none about the picks")
        ):
            for note in notes:
                st.caption(note)
    st.plotly_chart(
        front_figure(
            t, shown.cost_column, cost_label, shown.time_column, time_label, shown.criterion.name
        ),
        width="stretch",
        key="offerings_front",
    )
    _grid(t)
    st.download_button(
        "Download offerings CSV",
        shown.to_csv,  # made on click
        "profet_offerings.csv",
        "text/csv",
        key="offerings_csv",
        on_click="ignore",  # no rerun: the other downloads' links stay valid
    )


def _grid(t: pd.DataFrame) -> None:
    """The offerings' sortable table, under the core's column names and the per-configuration
    table's labels and rule for the same quantities."""
    grid = t[[c for c in _GRID if c in t.columns]]
    num = st.column_config.NumberColumn
    st.dataframe(
        grid,
        hide_index=True,
        width="stretch",
        key="offerings_table",
        column_config={
            "usd_per_hour": num("USD/h", format=SIG),
            "regions_at_price": num("Regions", format="%d"),
            "price_check": st.column_config.TextColumn("Price check"),
            "batch_latency_ms": num("Step time (ms)", format=SIG),
            "low_ms": num("80% low (ms)", format=SIG),
            "high_ms": num("80% high (ms)", format=SIG),
            "usd_per_1000_steps": num("USD/1k steps", format=SIG),
            "images_per_s": num("Images/s", format="%.0f"),  # whole images
            "ms_per_batch": num("ms / GPU batch", format=SIG),
            "usd_per_1000_batches": num("USD/1k GPU batches", format=SIG),
            "steps": num("Steps", format="localized"),
            "run_usd": num("Run (USD)", format=SIG),
            "run_hours": num("Run (h)", format=SIG),
            "pick": st.column_config.TextColumn("Pick"),
            "note": st.column_config.TextColumn("Offering note"),
        },
    )
