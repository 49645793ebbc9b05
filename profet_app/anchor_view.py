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
    (a change marks the result stale).

    The answer comes first: under the heading the three picks, each with its offering, price
    and any flag on that price; then every warning and note in one expander that counts them
    and says which concern the picks; then the table, the chart, downloads and breakdown."""
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
    row = common.pick_row(st, "Profile row to show", table["row"].nunique())
    picks = _picks(prediction, row, named)
    _notes(prediction, row, picks)
    shown = table[table["row"] == row].reset_index(drop=True)
    ensemble = "; ".join(table["ensemble"].unique())
    st.caption(
        f"Method **{prediction.method}**: {ensemble}. Bands: "
        f"{prediction.interval_level:.0%} prediction intervals from the leave-one-"
        "architecture-out validation. Step times in ms per training step; prices in USD, each "
        "GPU configuration's from the offering that rents it cheapest on demand (Offering "
        "column; SkyPilot's catalog snapshot, the same prices as the time-cost front below)."
    )
    novelty = shown["novelty"].max()
    if pd.notna(novelty) and not prediction.novelty_warning(row):
        st.caption(
            f"Novelty of this profile: {novelty:.2f} (1 = a typical held-out CNN in validation)."
        )
    if run:
        st.caption(prediction.steps_text(row))
    result_table.result_table(shown, shown["pick"].tolist(), prediction, run)
    target_chart.render(prediction, shown, row)
    _downloads(prediction, result.anchor)
    st.caption(
        "Open the **Scaler prediction** page to scale these latencies to other batch or "
        "input sizes."
    )
    _breakdown(result.breakdown, prediction)


def pick_text(prediction, best) -> str:
    """A pick's numbers, offering, price and any flag on that price, in one caption (escaped
    where it is shown: the offering's names are a catalog's)."""
    crit = prediction.criterion
    text = (
        f"{crit.time_label} {format_number(best[crit.time_column])}, "
        f"{crit.cost_label} {format_number(best[crit.cost_column])}"
    )
    if best.get("offering"):
        text += f"; on {best['offering']} at {format_number(best['usd_per_hour'])} USD/h"
    if best.get("price_check"):
        text += f"; price to check: {best['price_check']}"
    return text


def _picks(prediction, row: int, named: str) -> dict:
    """The fastest, cheapest and best-value configurations, each with its numbers, offering,
    price and flag (the answer, directly under the heading); returns the picks."""
    picks, crit = prediction.picks(row), prediction.criterion
    cols = st.columns(3)
    for col, (what, best) in zip(cols, picks.items(), strict=True):
        if best is not None:
            col.metric(f"{what.capitalize()} target ({crit.name})", str(best[named]))
            # Its numbers and offering in a caption, which wraps: the metric's one-line delta
            # cut them short at 1440 px ("… runpod …", "time per per-GPU batch (ms) 1.7…").
            caption = common.safe(pick_text(prediction, best))
            col.caption(f"⚠️ {caption}" if best.get("price_check") else caption)
    st.caption(common.safe(crit.describe()[:1].upper() + crit.describe()[1:] + "."))
    return picks


def about_picks(text: str, picks: dict) -> list[str]:
    """The picks (``"fastest"``, ...) a message speaks of: it names the pick's configuration
    (or target) or its offering, or it is the warning about the picks' basis."""
    said = []
    for what, best in picks.items():
        if best is None:
            continue
        names = [str(best.get("configuration") or best.get("target") or "")]
        names.append(str(best.get("offering") or ""))
        if any(n and n in text for n in names) or f"the {what} target" in text.lower():
            said.append(what)
    return said


def notes_of(prediction, row: int, picks: dict) -> list[tuple[str, str, list]]:
    """Every warning and note of one profile row's answer: ``(kind, text, picks it concerns)``
    (``kind``: ``"warning"`` or ``"note"``)."""
    found = [("warning", w) for w in prediction.warnings(row)]
    found += [("note", n) for n in prediction.price_notes]
    # In the CLI's order (warnings, then notes), each marked with the picks it concerns.
    return [(kind, text, about_picks(text, picks)) for kind, text in found]


def notes_label(notes: list) -> str:
    """The expander's label: how many messages, how many warnings, which concern the picks."""
    warned = sum(kind == "warning" for kind, _, _ in notes)
    picked = [t for t in notes if t[2]]
    which = sorted(
        {p for _, _, ps in picked for p in ps}, key=["fastest", "cheapest", "best value"].index
    )
    about = (
        f"{len(picked)} about the picks ({', '.join(which)})" if picked else "none about the picks"
    )
    kinds = f"{warned} warning{'s' if warned != 1 else ''}, {len(notes) - warned} note"
    kinds += "s" if len(notes) - warned != 1 else ""
    return f"{'⚠️ ' if warned else ''}Warnings and notes: {len(notes)} ({kinds}); {about}"


def _notes(prediction, row: int, picks: dict) -> None:
    """Every warning and note in one expander, which says how many and which concern the picks
    (the answer above stays on the first screen)."""
    notes = notes_of(prediction, row, picks)
    if not notes:
        return
    with st.expander(notes_label(notes)):
        for kind, text, about in notes:
            if about:  # the message's own words stay the CLI's; what it concerns above it
                st.caption(f"About the {', '.join(about)} pick{'s' if len(about) > 1 else ''}:")
            (st.warning if kind == "warning" else st.info)(common.safe(text))


def _downloads(prediction, anchor: str) -> None:
    """CSV and JSON of the whole prediction (``profet predict --format csv/json``)."""
    d1, d2, _ = st.columns([1, 1, 4])
    stem = f"profet_{anchor}_{prediction.method}"
    whole = prediction  # one document: `profet predict --format csv/json`
    # Made on click (deferred), not on every rerun: a many-row profile's tables run to 100s of MB.
    # A click reruns nothing (on_click="ignore"): a rerun registered the other button's file
    # anew, and its link, clicked just after, found no file ("Deferred file ... not found").
    d1.download_button(
        "Download CSV", whole.to_csv, f"{stem}.csv", "text/csv", on_click="ignore", key="dl_csv"
    )
    d2.download_button(
        "Download JSON",
        lambda: json.dumps(whole.to_json(), indent=1),
        f"{stem}.json",
        "application/json",
        on_click="ignore",
        key="dl_json",
    )


def _breakdown(breakdown, prediction) -> None:
    """Which kinds of work get faster on each target, in an expander."""
    if breakdown is not None and not breakdown.empty:
        title = "Which kinds of work get faster on each target (per-op-family breakdown, FP32 on "
        with st.expander(title + "one GPU)"):
            table = getattr(prediction, "table", pd.DataFrame())
            other = ("precision" in table and (table["precision"] != "fp32").any()) or (
                "gpus" in table and (table["gpus"] > 1).any()
            )
            if other:  # the table above is AMP or several GPUs; this model knows neither
                st.info(
                    "These speed-ups are FP32 on one GPU (the breakdown model is trained on "
                    "FP32 one-GPU profiles), not the precision and GPU counts of the table above."
                )
            st.caption(
                "Predicted device time per op family on each measured target, from a "
                "multi-output model of target op times given the anchor's (first profile row). "
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
