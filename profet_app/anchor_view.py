"""The Anchor page's answer: the picks, the per-configuration table and chart, downloads and
the per-op-family breakdown (the front over every offering is ``offerings_front``)."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from profet_app import common, result_table, target_chart
from profet_core import format_number


def render(result, predicted_from: dict, inputs: dict) -> None:
    """Show ``result`` (a :class:`~profet_app.common.AnchorResult`, or None: nothing yet);
    ``predicted_from``: the form's inputs it was predicted from, ``inputs``: the form's now
    (a change marks the result stale)."""
    if not result:
        return
    prediction = result.prediction
    table: pd.DataFrame = result.table
    run = "run_usd" in table
    st.divider()
    changed = [k for k, v in predicted_from.items() if inputs.get(k) != v]
    if changed:
        named = " and ".join(filter(None, (", ".join(changed[:-1]), changed[-1])))
        st.warning(f"Stale: the {named} changed since this prediction; press Predict again.")
    named = "configuration" if "configuration" in table else "target"
    st.subheader(
        f"Predicted on {table[named].nunique()} GPU configurations from a profile on "
        f"{result.anchor}"
    )
    ensemble = "; ".join(table["ensemble"].unique())
    st.caption(
        f"Method **{prediction.method}**: {ensemble}. Bands: "
        f"{prediction.interval_level:.0%} prediction intervals from the leave-one-"
        "architecture-out validation. Latencies in ms per training step; prices in USD, each "
        "GPU configuration's from the offering that rents it cheapest on demand (Offering "
        "column; SkyPilot's catalog snapshot, the same prices as the time-cost front below)."
    )
    row = common.pick_row(st, "Profile row to show", table["row"].nunique())
    for warning in prediction.warnings(row):
        st.warning(common.safe(warning))
    for text in prediction.price_notes:  # what the prices rest on: notes, as the CLI's
        st.info(common.safe(text))
    shown = table[table["row"] == row].reset_index(drop=True)
    novelty = shown["novelty"].max()
    if pd.notna(novelty) and not prediction.novelty_warning(row):
        st.caption(
            f"Novelty of this profile: {novelty:.2f} (1 = a typical held-out CNN in validation)."
        )
    _picks(prediction, row, named)
    if run:
        st.caption(prediction.steps_text(row))
    result_table.result_table(shown, shown["pick"].tolist(), prediction, run)
    target_chart.render(prediction, shown, row)
    _downloads(prediction, result.anchor)
    st.caption(
        "Open the **Scaler prediction** page to scale these latencies to other batch or "
        "input sizes."
    )
    _breakdown(result.breakdown)


def _picks(prediction, row: int, named: str) -> None:
    """The fastest, cheapest and best-value configurations, each with its numbers."""
    picks, crit = prediction.picks(row), prediction.criterion
    cols = st.columns(3)
    for col, (what, best) in zip(cols, picks.items(), strict=True):
        if best is not None:
            col.metric(f"{what.capitalize()} target ({crit.name})", str(best[named]))
            # Its numbers and offering in a caption, which wraps: the metric's one-line delta
            # cut them short at 1440 px ("… runpod …", "time per per-GPU batch (ms) 1.7…").
            where = f"; on {best['offering']}" if best.get("offering") else ""
            col.caption(
                common.safe(
                    f"{crit.time_label} {format_number(best[crit.time_column])}, "
                    f"{crit.cost_label} {format_number(best[crit.cost_column])}{where}"
                )
            )
    st.caption(common.safe(crit.describe()[:1].upper() + crit.describe()[1:] + "."))


def _downloads(prediction, anchor: str) -> None:
    """CSV and JSON of the whole prediction (``profet predict --format csv/json``)."""
    d1, d2, _ = st.columns([1, 1, 4])
    stem = f"profet_{anchor}_{prediction.method}"
    whole = prediction  # one document: `profet predict --format csv/json`
    # Made on click (deferred), not on every rerun: a many-row profile's tables run to 100s of MB.
    d1.download_button("Download CSV", whole.to_csv, f"{stem}.csv", "text/csv")
    d2.download_button(
        "Download JSON",
        lambda: json.dumps(whole.to_json(), indent=1),
        f"{stem}.json",
        "application/json",
    )


def _breakdown(breakdown) -> None:
    """Which kinds of work get faster on each target, in an expander."""
    if breakdown is not None and not breakdown.empty:
        with st.expander("Which kinds of work get faster on each target (per-op-family breakdown)"):
            st.caption(
                "Predicted device time per op family on each target, from a multi-output "
                "model of target op times given the anchor's (first profile row). "
                "Speed-up > 1: faster than on the anchor."
            )
            st.plotly_chart(
                common.breakdown_figure(breakdown), width="stretch", key="breakdown_chart"
            )
            st.dataframe(
                breakdown,
                hide_index=True,
                width="stretch",
                column_config={
                    "target": st.column_config.TextColumn("Target instance"),
                    "family": st.column_config.TextColumn("Op family"),
                    "anchor_us": st.column_config.NumberColumn("On the anchor (µs)", format="%.0f"),
                    "target_us": st.column_config.NumberColumn(
                        "Predicted on target (µs)", format="%.0f"
                    ),
                    "speedup": st.column_config.NumberColumn("Speed-up (x)", format="%.2f"),
                },
            )
