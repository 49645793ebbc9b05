"""The Anchor page's result table: its cells (an em dash for an unknown value, one "low–high"
cell per interval) and columns sized to fit the grid at 1440 px.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from profet_app import common
from profet_core import Prediction, format_number

#: Every number's format: four significant digits, the CLI's rule (``format_number``), so a
#: price reads the same in the table, the picks and the front (63.19, not 63.2 on one of them).
SIG = "%.4g"


def _ranges(shown: pd.DataFrame, run: bool) -> dict:
    """One "low–high" text cell per row and interval (an em dash where a bound is unknown)."""
    ranges = {"latency_range": ("low_ms", "high_ms")}
    if run:
        ranges["run_range"] = ("run_usd_low", "run_usd_high")
    return {
        key: [
            common.DASH if pd.isna(a) or pd.isna(b) else f"{format_number(a)}–{format_number(b)}"
            for a, b in zip(shown[lo], shown[hi], strict=True)
        ]
        for key, (lo, hi) in ranges.items()
    }


def _config(display: pd.DataFrame, prediction: Prediction) -> dict:
    """Column labels, formats and widths: together they fit the grid at 1440 px, and each
    header fits its width."""
    members = prediction.member_columns
    num, text = st.column_config.NumberColumn, st.column_config.TextColumn
    return {
        "configuration": text(
            "GPU configuration",
            width=140,
            help="GPUs x GPU: what the prediction is for; the Offering column names the "
            "instance type that rents it cheapest",
        ),
        "target": text(
            "Model line",
            width=95,
            help="the spec line (or measured instance) the GPU is predicted as",
        ),
        "gpu": text("GPU (NVIDIA)", width=115),
        "basis": text(
            "Basis",
            width=90,
            help="measured: a trained pair; specs only / calibrated / published (n): the "
            "cross-instance spec model (hatched bars), for GPUs the training data never "
            "measured; published (n): its generation's efficiency from n published speed-ups",
        ),
        "batch_latency_ms": num("Step time (ms)", format=SIG, width=90),
        "latency_range": text(
            "80% range (ms)",
            width=100,
            alignment="right",
            help=f"{prediction.interval_level:.0%} prediction interval of the batch latency",
        ),
        "p_fit": common.number_column(
            display,
            "p_fit",
            "Fits (P)",
            "{:.2f}",
            width=60,
            help="Probability that the step fits the target GPU's memory (from the anchor "
            "latency, batch and input size); — where unknown (no anchor latency)",
        ),
        **_cost_config(),
        "pick": text("Pick", width=60),
        **_flag_config(),
        "gpus": num("GPUs", format="%d", width=50),
        "images_per_s": num("Images/s", format="%.0f", width=80),  # whole images
        "basis_precision": text(
            "AMP / GPUs basis",
            help="what the mixed-precision gain and the several-GPU step rest on: published "
            "(n) pairs or rows of that GPU, or specs only",
        ),
        "precision": text("Precision", width=70),
        "ensemble": text("Ensemble"),
        **{m: common.number_column(display, m, f"{m[:-3]} member (ms)", "{:.4g}") for m in members},
    }


def _flag_config() -> dict:
    """Labels and widths of what a row's price needs said."""
    num, text = st.column_config.NumberColumn, st.column_config.TextColumn
    return {
        "price_check": text(
            "Price check",
            width=95,
            help="a catalog price that needs a word (swapped prices, spot not below on-demand, "
            "far below other regions): the offering's note says why",
        ),
        "regions_at_price": num(
            "Regions",
            format="%d",
            width=60,
            help="regions that share the offering's cheapest price (the first by name is shown)",
        ),
        "note": text(
            "Offering note",
            help="what this price needs said: the catalog checks, regions at the same price, a "
            "whole instance paid for fewer GPUs, an instance type renting elsewhere at its own "
            "price",
        ),
    }


def _cost_config() -> dict:
    """Labels, formats and widths of the price, cost and run columns."""
    num, text = st.column_config.NumberColumn, st.column_config.TextColumn
    return {
        "usd_per_hour": num("USD/h", format=SIG, width=55),
        "offering": text(
            "Offering",
            width=150,
            help="the offering that rents this GPU configuration cheapest on demand (cloud, "
            "instance type, region), whose price USD/h is: an instance type named as a target "
            "at its own cheapest region; empty where no offering rents it",
        ),
        "usd_per_1000_steps": num("USD/1k steps", format=SIG, width=100),
        "steps": num(
            "Steps",
            format="localized",
            width=60,
            help="steps of the run at the configuration's global batch (GPUs used x per-GPU batch)",
        ),
        "ms_per_batch": num(
            "ms / GPU batch",
            format=SIG,
            width=95,
            help="step time / GPUs used: the time per per-GPU batch of work (picks per image)",
        ),
        "usd_per_1000_batches": num("USD/1k GPU batches", format=SIG, width=120),
        "run_hours": num("Run (h)", format=SIG, width=60),
        "run_usd": num("Run (USD)", format=SIG, width=75),
        "run_range": text("80% (USD)", width=85, alignment="right"),
    }


def result_table(shown: pd.DataFrame, notes: list, prediction: Prediction, run: bool) -> None:
    """Draw one profile row's predictions, with a "More columns" chooser for the rest.

    Parameters
    ----------
    shown : pandas.DataFrame
        The prediction table's rows of one profile (plus run columns when ``run``).
    notes : list of str
        Per row: its ``pick`` ("fastest", "cheapest", "best value", several or ""), the column
        the CLI's table calls ``pick`` too.
    prediction : Prediction
        For its member columns and interval level.
    run : bool
        Whether a whole run was described (run time and cost columns).
    """
    members = prediction.member_columns
    # An unknown value (the fit without the anchor latency, a member the spec model has not)
    # is an em dash, never the grid's "None".
    display = common.dashed(
        shown.assign(
            pick=notes,
            gpu=shown["gpu"].astype(str).str.removeprefix("NVIDIA "),
            **_ranges(shown, run),
        ),
        {"p_fit": "{:.2f}", **dict.fromkeys(members, "{:.4g}")},
    )
    config = _config(display, prediction)
    # A configuration names its GPU and count; without one (unpriced artifacts) the target does.
    named = ["configuration"] if "configuration" in display else ["target", "gpu"]
    columns = [*named, "basis", "batch_latency_ms", "latency_range", "p_fit"]
    columns += ["usd_per_hour", *(["run_hours", "run_usd", "run_range"] if run else [])]
    if "ms_per_batch" in display.columns:  # picks per image rest on these
        columns += ["ms_per_batch", "usd_per_1000_batches"]
    # The offering each USD/h is from: one click away, so the numbers fit 1440 px.
    more = ["offering", *(["steps", "usd_per_1000_steps"] if run else []), "ensemble", *members]
    if "configuration" in display:
        more[1:1] = ["target", "gpu"]
    if "basis_precision" in display.columns:  # amp or several GPUs
        columns.insert(columns.index("batch_latency_ms"), "gpus")
        more[:0] = ["basis_precision", "precision", "images_per_s"]
    if run and display["steps"].nunique() > 1:  # GPU counts differ: so do their steps
        more.remove("steps")
        columns.insert(columns.index("run_hours"), "steps")
    if not run:
        columns.append("usd_per_1000_steps")
    columns += [c for c in ("price_check", "regions_at_price") if c in display.columns]
    if "note" in display.columns:
        more.insert(1, "note")
    more = st.multiselect(
        "More columns",
        more,
        format_func=lambda c: config[c]["label"],
        key="more_columns",
        placeholder="offering, cost per 1,000 steps, ensemble members…"
        if run
        else "offering, ensemble members…",
    )
    st.dataframe(
        display,
        column_order=[*columns, "pick", *more],
        column_config=config,
        hide_index=True,
        width="stretch",
        key="result_table",
    )
