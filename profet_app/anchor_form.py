"""The Anchor page's form: its widgets, and the profile and :class:`~profet_core.PredictRequest`
they describe (the CLI's ``predict`` flags, as the page's controls)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from profet_app import common
from profet_core import STEPS_ASSUMED, PredictRequest, ProfetError, ProfetValueError, parse_profile

EXAMPLE, UPLOAD, PASTE = "Built-in example", "Upload a file", "Paste JSON"
#: Key scope of an upload's fields (the example's and a paste's are scoped by the anchor).
FILE = "file"
#: Batch and input size the form starts with when nothing says otherwise.
DEFAULTS = {"batch": 32, "input": 224}
#: The GPUs control: the CLI's --gpus (N or all): every GPU count an offering rents (gcp
#: a2-megagpu-16g rents 16); another N is the CLI's (each GPU on the smallest instance with N).
GPU_CHOICES = {"1": 1, "2": 2, "4": 4, "8": 8, "16": 16, "all": "all"}


@dataclass(frozen=True)
class AnchorForm:
    """What the form holds: the widgets' values, as the Predict button reads them."""

    anchor: str
    source: str
    example: dict | None
    uploaded: object
    pasted: str
    known: bool
    latency: float | None
    unit: str
    steps: int | None
    method: str
    precision: str
    gpus: str
    amp_latency_ms: float | None
    dataset_images: int | None
    batch_size: int | None
    input_size: int | None
    epochs: int | None

    @property
    def inputs(self) -> dict:
        """What a result was predicted from: a change marks it stale."""
        return {
            "anchor": self.anchor,
            "profile": (
                self.source,
                getattr(self.uploaded, "file_id", None),
                self.pasted,
                self.steps,
            ),
            "anchor latency": (self.known, self.latency, self.unit),
            "method": self.method,
            "sizes or run": (self.dataset_images, self.batch_size, self.input_size, self.epochs),
            "precision or GPUs": (self.precision, self.gpus, self.amp_latency_ms),
        }

    def profile(self) -> pd.DataFrame:
        """The profile the form names, parsed (a ProfetError says what is wrong)."""
        if self.source == EXAMPLE:
            if self.example is None:
                raise ProfetValueError(f"no example profile for {self.anchor}")
            # a training-data profile: two steps by construction, so no "2 steps assumed" note
            return parse_profile(json.dumps(self.example["profile"]), "example.json", steps=2)
        if self.source == UPLOAD:
            if self.uploaded is None:
                raise ProfetValueError(
                    "no profile file uploaded; choose a .json or .csv file first"
                )
            profile = parse_profile(self.uploaded.getvalue(), self.uploaded.name, steps=self.steps)
            if not self.known and len(profile) == 1:  # the latency the user unticked is unused
                profile = profile.drop(columns="batch_latency_s", errors="ignore")
            return profile
        return parse_profile(self.pasted, "pasted.json", steps=self.steps)

    def request(self) -> PredictRequest:
        """The :class:`~profet_core.PredictRequest` of the form (a ProfetError says what is
        wrong)."""
        if self.known and self.latency is None:
            raise ProfetValueError(
                "the anchor batch latency is missing: enter it, or untick "
                '"I measured the anchor\'s batch latency"'
            )
        run = self.dataset_images is not None
        return PredictRequest(
            anchor=self.anchor,
            anchor_latency_s=common.latency_to_seconds(self.latency, self.unit),
            method=self.method,
            batch_size=self.batch_size,
            input_size=self.input_size,
            precision=self.precision,
            gpus=GPU_CHOICES[self.gpus],
            anchor_amp_latency_s=None
            if self.amp_latency_ms is None
            else self.amp_latency_ms / 1000,
            dataset_images=self.dataset_images,
            epochs=self.epochs if run else None,
        )


def _default(key: str, value):
    """``value=`` for a widget keyed ``key``: None (no default) where the key's value is already
    set (an upload's prefill): Streamlit warns about a widget given a default value whose key was
    also set through Session State, and the set value wins anyway."""
    return {} if key in st.session_state else {"value": value}


def _one_value(profile: pd.DataFrame, column: str):
    """The value every row of a parsed profile gives ``column``, or None."""
    if column not in profile or profile[column].isna().any() or profile[column].nunique() != 1:
        return None
    return profile[column].iloc[0]


def _prefill_from_file(predictor) -> None:
    """Copy what an uploaded file says about itself (anchor, sizes, steps, latency) into the
    form, where it stays editable: a file taken at 128 px must not be predicted as 224 px.

    The upload's fields are not keyed by the anchor: changing the anchor keeps the file's
    values; only the user's edits or a new file change them. What a new file does not say goes
    back to the default (and a step count it does not state stays empty: 2 assumed).
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
    elif "gpu_name" in profile:  # a PyTorch trace names its GPU: its spec line is the anchor
        try:
            state["anchor"] = predictor.anchor_of_gpu(profile)
        except ProfetError:
            pass  # Predict says why (a GPU without a spec line)
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


def _anchor_index(predictor) -> int:
    """Deep links (?anchor=p2.xlarge) preselect the anchor; an unknown one is reported."""
    wanted = st.query_params.get("anchor")
    if wanted:
        try:
            predictor.targets(wanted)
            return predictor.all_instances.index(wanted)
        except ProfetError as exc:
            common.show_error(exc, "Profile from an unknown anchor: ")
    return 0


def render(predictor) -> AnchorForm:
    """Draw the form (left: the anchor, the profile and the options; right: the run) and
    return what it holds."""
    left, right = st.columns([3, 2], gap="large")
    with left:
        anchor = st.selectbox(
            "Anchor instance (where the profile was taken)",
            predictor.all_instances,
            index=_anchor_index(predictor),
            format_func=common.instance_label(predictor),
            key="anchor",
        )
        source = st.radio("Profile", [EXAMPLE, UPLOAD, PASTE], horizontal=True, key="source")
        example = predictor.examples.get(anchor)
        uploaded, pasted = _profile_input(predictor, source, example, anchor)
        use_example = source == EXAMPLE and example is not None
        scope = FILE if source == UPLOAD else anchor  # an upload's values outlive anchor changes
        known, latency, unit = _latency_input(source, scope, example if use_example else None)
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
        precision, gpus, amp_latency = _precision_input()
    with right:
        run = _run_input(scope, source, example if use_example else None)
    return AnchorForm(
        anchor,
        source,
        example,
        uploaded,
        pasted,
        known,
        latency,
        unit,
        steps,
        method,
        precision,
        gpus,
        amp_latency,
        *run,
    )


def _profile_input(predictor, source, example, anchor):
    """The example's caption, the uploader or the text area: ``(uploaded, pasted)``."""
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
        # No `type=` filter: a wrong file type then reaches parse_profile, which names it.
        uploaded = st.file_uploader(
            "Profile file: PROFET JSON (op -> µs), TensorBoard tensorflow_stats CSV, a CSV of "
            "Host_<Op>/Device_<Op> columns, or a torch.profiler trace (.json or .json.gz)",
            key="profile_file",
            on_change=_prefill_from_file,
            args=(predictor,),
        )
    else:
        pasted = st.text_area(
            "Profile JSON (op name -> total microseconds)",
            height=160,
            key="profile_text",
            placeholder='{"Host_IteratorGetNext": 1520.0, "Device_Conv2D": 40211.5, ...}',
        )
    return uploaded, pasted


def _latency_input(source, scope, example):
    """The measured anchor latency: ``(known, value, unit)``."""
    # A checkbox, not an empty field, says "no latency": a prefilled number input cannot be
    # cleared in the browser.
    key = f"known_{source}_{scope}"
    known = st.checkbox(
        "I measured the anchor's batch latency",
        **_default(key, example is not None),
        key=key,
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
            default = example["batch_latency_s"] / common.LATENCY_UNITS[unit] if example else None
            key = f"latency_{source}_{scope}_{unit}"
            latency = st.number_input(
                "Measured anchor batch latency",
                **_default(key, default),
                format="%.3f",
                key=key,
                placeholder=f"one training step, in {unit}",
            )
    return known, latency, unit


def _precision_input():
    """Precision, GPUs and the anchor's measured AMP step: ``(precision, gpus, amp ms)``."""
    prec_col, gpus_col = st.columns(2)
    precision = prec_col.radio(
        "Precision",
        ["fp32", "amp"],
        horizontal=True,
        key="precision",
        help="amp: mixed precision (Keras mixed_float16 / PyTorch autocast) on each target; "
        "the profile stays FP32. GPUs without tensor cores keep their FP32 time.",
    )
    gpus = gpus_col.radio(
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
    return precision, gpus, amp_latency


def _run_input(scope, source, example):
    """The whole run: ``(dataset_images, batch_size, input_size, epochs)``."""
    st.markdown("**Whole training run** (optional)")
    dataset_images = st.number_input(
        "Dataset size (images per epoch)",
        value=None,
        step=1,
        placeholder="e.g. 50000",
        key="dataset_images",
    )
    key = f"batch_{scope}_{source}"
    batch_size = st.number_input(
        "Batch size (images per step, as profiled)",
        step=1,
        key=key,
        **_default(key, int(example["batch_size"]) if example else DEFAULTS["batch"]),
    )
    key = f"input_{scope}_{source}"
    input_size = st.number_input(
        "Input size (pixels per side, as profiled)",
        step=1,
        key=key,
        **_default(key, int(example["input_size"]) if example else DEFAULTS["input"]),
        help="Used to judge whether the step fits each GPU's memory, and by the Scaler page.",
    )
    epochs = st.number_input("Epochs", value=10, step=1, key="epochs")
    return dataset_images, batch_size, input_size, epochs
