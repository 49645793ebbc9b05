"""Anchor prediction: a profile taken on one instance -> batch latency and cost on the others."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from profet_app import common, offerings_front, result_table, target_chart, worker
from profet_core import (
    STEPS_ASSUMED,
    ProfetError,
    ProfetValueError,
    format_number,
    parse_profile,
)

EXAMPLE, UPLOAD, PASTE = "Built-in example", "Upload a file", "Paste JSON"
#: Key scope of an upload's fields (the example's and a paste's are scoped by the anchor).
FILE = "file"
#: Session-state key of the inputs the shown result was predicted from.
INPUTS = "anchor_inputs"
#: Batch and input size the form starts with when nothing says otherwise.
DEFAULTS = {"batch": 32, "input": 224}
#: The GPUs control: the CLI's --gpus (N or all): every GPU count an offering rents (gcp
#: a2-megagpu-16g rents 16); another N is the CLI's (each GPU on the smallest instance with N).
GPU_CHOICES = {"1": 1, "2": 2, "4": 4, "8": 8, "16": 16, "all": "all"}


def _one_value(profile: pd.DataFrame, column: str):
    """The value every row of a parsed profile gives ``column``, or None."""
    if column not in profile or profile[column].isna().any() or profile[column].nunique() != 1:
        return None
    return profile[column].iloc[0]


def _prefill_from_file() -> None:
    """Copy what an uploaded file says about itself (anchor, sizes, steps, latency) into the
    form, where it stays editable: a file taken at 128 px must not be predicted as 224 px.

    The upload's fields are not keyed by the anchor: changing the anchor keeps the file's
    values (issue 28); only the user's edits or a new file change them. What a new file does not
    say goes back to the default (and a step count it does not state stays empty: 2 assumed).
    """
    uploaded = st.session_state.get("profile_file")
    try:
        profile = parse_profile(uploaded.getvalue(), uploaded.name) if uploaded else None
    except ProfetError:
        return  # Predict shows the message
    if profile is None:
        return
    state = st.session_state
    if _one_value(profile, "instance") in predictor.all_instances:
        state["anchor"] = str(_one_value(profile, "instance"))
    for column, key in (("batch_size", "batch"), ("input_size", "input")):
        value = _one_value(profile, column)
        state[f"{key}_{FILE}_{UPLOAD}"] = int(value) if value is not None else DEFAULTS[key]
    stated = not profile.attrs.get(STEPS_ASSUMED)  # the parser's 2 is not the file's word
    steps = _one_value(profile, "steps") if stated else None
    state["steps"] = None if steps is None else int(steps)
    latency_s = _one_value(profile, "batch_latency_s")
    state[f"known_{UPLOAD}_{FILE}"] = latency_s is not None
    state[f"unit_{UPLOAD}_{FILE}"] = "ms"
    state[f"latency_{UPLOAD}_{FILE}_ms"] = None if latency_s is None else 1000 * float(latency_s)


predictor = common.predictor_or_stop()
st.title("Anchor prediction")
st.caption(
    "Profile one training step on the instance you have (the anchor); PROFET predicts how long "
    "the same step takes on the other GPU instances and what a whole run costs there."
)

# Deep links (?anchor=p2.xlarge) preselect the anchor; an unknown one is reported, not fatal.
instances = predictor.all_instances
anchor_index = 0
wanted = st.query_params.get("anchor")
if wanted:
    try:
        predictor.targets(wanted)
        anchor_index = instances.index(wanted)
    except ProfetError as exc:
        common.show_error(exc, "Profile from an unknown anchor: ")

left, right = st.columns([3, 2], gap="large")
with left:
    anchor = st.selectbox(
        "Anchor instance (where the profile was taken)",
        instances,
        index=anchor_index,
        format_func=common.instance_label(predictor),
        key="anchor",
    )
    source = st.radio("Profile", [EXAMPLE, UPLOAD, PASTE], horizontal=True, key="source")
    example = predictor.examples.get(anchor)
    uploaded, pasted = None, ""
    if source == EXAMPLE:
        if example is None:
            st.warning(f"The artifacts hold no example profile for {anchor}; upload or paste one.")
        else:
            st.caption(
                f"Example: {example['label']}; "
                f"{len(example['profile'])} ops, measured batch latency "
                f"{common.fmt_ms(1000 * example['batch_latency_s'])}."
            )
    elif source == UPLOAD:
        # No `type=` filter: a wrong file type then reaches parse_profile, which names the problem.
        uploaded = st.file_uploader(
            "Profile file: PROFET JSON (op -> µs), TensorBoard tensorflow_stats CSV, or a CSV of "
            "Host_<Op>/Device_<Op> columns",
            key="profile_file",
            on_change=_prefill_from_file,
        )
    else:
        pasted = st.text_area(
            "Profile JSON (op name -> total microseconds)",
            height=160,
            key="profile_text",
            placeholder='{"Host_IteratorGetNext": 1520.0, "Device_Conv2D": 40211.5, ...}',
        )

    use_example = source == EXAMPLE and example is not None
    scope = FILE if source == UPLOAD else anchor  # an upload's values outlive anchor changes
    # A checkbox, not an empty field, says "no latency": a prefilled number input cannot be
    # cleared in the browser.
    known = st.checkbox(
        "I measured the anchor's batch latency",
        value=use_example,
        key=f"known_{source}_{scope}",
        help="One training step's wall time on the anchor. With it PROFET predicts the "
        "target/anchor latency ratio, which is more accurate (see Model accuracy); without "
        "it, it predicts from the profile's device time alone.",
    )
    latency, unit = None, "ms"
    if known:
        lat_col, unit_col = st.columns([3, 1])
        with unit_col:
            unit = st.selectbox("Unit", list(common.LATENCY_UNITS), key=f"unit_{source}_{scope}")
        with lat_col:
            default_lat = (
                example["batch_latency_s"] / common.LATENCY_UNITS[unit] if use_example else None
            )
            latency = st.number_input(
                "Measured anchor batch latency",
                value=default_lat,
                format="%.3f",
                key=f"latency_{source}_{scope}_{unit}",
                placeholder=f"one training step, in {unit}",
            )
    steps = st.number_input(
        "Steps covered by the profile",
        min_value=1,
        max_value=1000,
        value=None,
        step=1,
        key="steps",
        placeholder="not given: 2 assumed (PROFET's convention)",
        help="How many training steps the profiler traced. PROFET's profiles cover two "
        "consecutive steps; a profile over more steps is rescaled to two. With the anchor "
        "latency, a profile whose device time does not fit its step count is flagged.",
    )
    method = st.selectbox(
        "Method",
        predictor.methods,
        index=predictor.methods.index(predictor.default_method),
        key="method",
        help="The artifacts' default is listed first in the Model accuracy page.",
    )
    prec_col, gpus_col = st.columns(2)
    precision = prec_col.radio(
        "Precision",
        ["fp32", "amp"],
        horizontal=True,
        key="precision",
        help="amp: mixed precision (Keras mixed_float16 / PyTorch autocast) on each target; "
        "the profile stays FP32. GPUs without tensor cores keep their FP32 time.",
    )
    gpus_choice = gpus_col.radio(
        "GPUs",
        list(GPU_CHOICES),
        horizontal=True,
        key="gpus",
        help="As the CLI's --gpus: N data-parallel at the profiled per-GPU batch (each GPU at "
        "the cheapest offering with at least N of it; GPUs no offering rents N of are left "
        "out) or all: one row per GPU count the offerings rent; images/s of the GPUs used, "
        "cost of the whole instance renting them.",
    )
    amp_latency = None
    if precision == "amp":
        amp_latency = st.number_input(
            "Measured anchor AMP step latency (ms, optional)",
            value=None,
            min_value=0.0,
            format="%.3f",
            key="amp_latency_ms",
            placeholder="not measured: the AMP gain is predicted",
            help="As the CLI's --anchor-amp-latency-ms: one mixed-precision training step's "
            "wall time on the anchor; every tensor-core target's AMP gain is corrected by it.",
        )

with right:
    st.markdown("**Whole training run** (optional)")
    dataset_images = st.number_input(
        "Dataset size (images per epoch)",
        value=None,
        step=1,
        placeholder="e.g. 50000",
        key="dataset_images",
    )
    batch_size = st.number_input(
        "Batch size (images per step, as profiled)",
        step=1,
        key=f"batch_{scope}_{source}",
        value=int(example["batch_size"]) if use_example else DEFAULTS["batch"],
    )
    input_size = st.number_input(
        "Input size (pixels per side, as profiled)",
        step=1,
        key=f"input_{scope}_{source}",
        value=int(example["input_size"]) if use_example else DEFAULTS["input"],
        help="Used to judge whether the step fits each GPU's memory, and by the Scaler page.",
    )
    epochs = st.number_input("Epochs", value=10, step=1, key="epochs")

#: What the shown result was predicted from: a change marks it stale (issue 28).
inputs = {
    "anchor": anchor,
    "profile": (source, getattr(uploaded, "file_id", None), pasted, steps),
    "anchor latency": (known, latency, unit),
    "method": method,
    "sizes or run": (dataset_images, batch_size, input_size, epochs),
    "precision or GPUs": (precision, gpus_choice, amp_latency),
}
if st.button("Predict", type="primary", key="predict"):
    st.session_state.pop(common.ANCHOR_RESULT, None)
    st.session_state.pop(offerings_front.OFFERINGS_RESULT, None)
    st.session_state[INPUTS] = inputs
    try:
        if known and latency is None:
            raise ProfetValueError(
                "the anchor batch latency is missing: enter it, or untick "
                '"I measured the anchor\'s batch latency"'
            )
        if source == EXAMPLE:
            if example is None:
                raise ProfetValueError(f"no example profile for {anchor}")
            # a training-data profile: two steps by construction, so no "2 steps assumed" note
            profile = parse_profile(json.dumps(example["profile"]), "example.json", steps=2)
        elif source == UPLOAD:
            if uploaded is None:
                raise ProfetValueError(
                    "no profile file uploaded; choose a .json or .csv file first"
                )
            profile = parse_profile(uploaded.getvalue(), uploaded.name, steps=steps)
            if not known and len(profile) == 1:  # the latency the user unticked is not used
                profile = profile.drop(columns="batch_latency_s", errors="ignore")
        else:
            profile = parse_profile(pasted, "pasted.json", steps=steps)
        options = {  # the CLI's --precision, --gpus and --anchor-amp-latency-ms
            "precision": precision,
            "gpus": GPU_CHOICES[gpus_choice],
            "anchor_amp_latency_s": None if amp_latency is None else amp_latency / 1000,
        }
        # A many-row file is predicted in a child process: the server's memory stays flat.
        prediction = worker.predict(
            predictor,
            anchor,
            profile,
            anchor_latency_s=common.latency_to_seconds(latency, unit),
            method=method,
            batch_size=batch_size,
            input_size=input_size,
            **options,
        )
        # Run totals per configuration and the one set of picks (the CLI's table, too).
        prediction = prediction.with_run(dataset_images, batch_size, epochs)
        st.session_state[common.ANCHOR_RESULT] = common.AnchorResult(
            prediction,
            prediction.table,
            predictor.breakdown(anchor, profile),
            batch_size,
            input_size,
            profile,
        )
        run = {"dataset_images": dataset_images, "batch_size": batch_size, "epochs": epochs}
        st.session_state[offerings_front.OFFERINGS_RESULT] = offerings_front.price(
            predictor,
            anchor,
            profile,
            common.latency_to_seconds(latency, unit),
            method,
            batch_size,
            input_size,
            run if dataset_images is not None else None,
            **options,
        )
    except ProfetError as exc:
        common.show_error(exc)

result: common.AnchorResult | None = st.session_state.get(common.ANCHOR_RESULT)
if result:
    prediction = result.prediction
    table: pd.DataFrame = result.table
    run = "run_usd" in table
    st.divider()
    changed = [k for k, v in st.session_state.get(INPUTS, {}).items() if inputs.get(k) != v]
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
    if run:
        st.caption(prediction.steps_text(row))

    notes = shown["pick"].tolist()
    result_table.result_table(shown, notes, prediction, run)

    target_chart.render(prediction, shown, row)

    d1, d2, _ = st.columns([1, 1, 4])
    stem = f"profet_{result.anchor}_{prediction.method}"
    whole = prediction  # one document: `profet predict --format csv/json`
    # Made on click (deferred), not on every rerun: a many-row profile's tables run to 100s of MB.
    d1.download_button("Download CSV", whole.to_csv, f"{stem}.csv", "text/csv")
    d2.download_button(
        "Download JSON",
        lambda: json.dumps(whole.to_json(), indent=1),
        f"{stem}.json",
        "application/json",
    )
    st.caption(
        "Open the **Scaler prediction** page to scale these latencies to other batch or "
        "input sizes."
    )

    breakdown = result.breakdown
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

    offerings_front.render(st.session_state.get(offerings_front.OFFERINGS_RESULT))
