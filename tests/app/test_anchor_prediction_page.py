"""Anchor prediction page: the shown table equals profet_core's prediction for the same input,
and bad input shows an error without an exception."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from profet_app import common, target_chart
from profet_core import NOVELTY_WARN, estimate_run, parse_profile
from tests.app._utils import example_profile, no_exception, plain, plotly_spec, values


def _widget(widgets, prefix: str):
    found = [w for w in widgets if w.label.startswith(prefix)]
    assert len(found) == 1, (
        f"expected one widget labelled {prefix!r}, got {[w.label for w in widgets]}"
    )
    return found[0]


def _latency_input(at):
    return _widget(at.number_input, "Measured anchor batch latency")


def _shown_table(at) -> pd.DataFrame:
    frames = [
        d
        for d in at.dataframe
        if "batch_latency_ms" in d.value.columns and "cloud" not in d.value.columns
    ]
    assert len(frames) == 1, "the result table is not shown"
    return frames[0].value.reset_index(drop=True)


def _expected(predictor, anchor, profile, latency_s, method=None) -> pd.DataFrame:
    table = predictor.predict(anchor, profile, anchor_latency_s=latency_s, method=method).table
    return table[table["row"] == 0].reset_index(drop=True)


def _assert_same(shown: pd.DataFrame, expected: pd.DataFrame, columns=("batch_latency_ms",)):
    assert list(shown["target"]) == list(expected["target"])
    for col in columns:
        np.testing.assert_allclose(
            shown[col].to_numpy(float),
            expected[col].to_numpy(float),
            rtol=1e-9,
            equal_nan=True,
            err_msg=col,
        )


def _known(at):
    return _widget(at.checkbox, "I measured the anchor")


def _predict(page, anchor, *, latency="example"):
    at = page("anchor").run()
    at.selectbox(key="anchor").set_value(anchor).run()
    if latency is None:
        _known(at).uncheck().run()
    elif latency != "example":
        _latency_input(at).set_value(latency)
    at.button(key="predict").click().run()
    return at


@pytest.mark.parametrize("with_latency", [True, False], ids=["with-latency", "without-latency"])
def test_example_prediction_equals_core(page, predictor, anchor, with_latency):
    at = _predict(page, anchor, latency="example" if with_latency else None)
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    example = predictor.examples[anchor]
    # The latency field shows the example's latency in ms; that is what the page passes on.
    lat_s = example["batch_latency_s"] if with_latency else None
    expected = _expected(predictor, anchor, example_profile(predictor, anchor), lat_s)
    shown = _shown_table(at)
    _assert_same(shown, expected, ("batch_latency_ms", "low_ms", "high_ms", "usd_per_hour"))
    assert set(shown["ensemble"]) == set(expected["ensemble"])
    assert set(predictor.targets(anchor)) == set(shown["target"])
    # The chart's bars are the same latencies.
    bars = plotly_spec(at)["data"][0]
    np.testing.assert_allclose(values(bars["y"]), expected["batch_latency_ms"], rtol=1e-9)
    best = expected.loc[expected["batch_latency_ms"].idxmin()]
    assert at.metric[0].value == best["configuration"]  # a GPU configuration: "1 x B200"
    # Its numbers and offering in full under the metric, where they wrap: the metric's delta,
    # one line, cut them short at 1440 px ("… runpod …"; tests/e2e/test_browser.py measures it).
    assert not at.metric[0].delta
    said = f"step time (ms) {common.format_number(best['batch_latency_ms'])}, "
    assert any(
        plain(c.value).startswith(said) and f"; on {best['offering']} at " in plain(c.value)
        for c in at.caption
    ), [c.value for c in at.caption]
    assert len(at.get("download_button")) == 3  # CSV, JSON and the offerings CSV
    # The per-op-family breakdown is the core's for the same profile.
    frames = [d for d in at.dataframe if "speedup" in d.value.columns]
    assert len(frames) == 1
    want = predictor.breakdown(anchor, example_profile(predictor, anchor))
    np.testing.assert_allclose(
        frames[0].value["speedup"].to_numpy(float),
        want["speedup"].to_numpy(float),
        rtol=1e-9,
        equal_nan=True,
    )


def test_with_and_without_latency_use_different_ensembles(page, predictor):
    anchor = predictor.instances[0]
    with_lat = _shown_table(_predict(page, anchor))
    without = _shown_table(_predict(page, anchor, latency=None))
    assert set(with_lat["ensemble"]) != set(without["ensemble"])


@pytest.mark.parametrize(
    "unit,factor", [("ms", 1e3), ("s", 1.0), ("µs", 1e6)], ids=["ms", "s", "us"]
)
def test_latency_unit_is_converted(page, predictor, unit, factor):
    anchor = predictor.instances[-1]
    at = page("anchor").run()
    at.selectbox(key="anchor").set_value(anchor).run()
    _widget(at.selectbox, "Unit").set_value(unit).run()
    _latency_input(at).set_value(0.05 * factor)
    at.button(key="predict").click().run()
    no_exception(at)
    expected = _expected(predictor, anchor, example_profile(predictor, anchor), 0.05)
    _assert_same(_shown_table(at), expected)


@pytest.mark.parametrize("unit", ["ms", "s", "µs"])
def test_negative_latency_is_named_in_the_unit_typed(page, predictor, unit):
    """-5 typed in µs was reported as "-5e-06 s"."""
    at = page("anchor").run()
    at.selectbox(key="anchor").set_value(predictor.instances[-1]).run()
    _widget(at.selectbox, "Unit").set_value(unit).run()
    _latency_input(at).set_value(-5.0)
    at.button(key="predict").click().run()
    no_exception(at)
    errors = [plain(e.value) for e in at.error]
    assert [e for e in errors if f"latency -5 {unit} is not allowed" in e], errors


def test_every_method_is_offered_and_used(page, predictor):
    anchor = predictor.instances[0]
    at = page("anchor").run()
    assert at.selectbox(key="method").options == predictor.methods
    assert at.selectbox(key="method").value == predictor.default_method
    for method in predictor.methods:
        at.selectbox(key="anchor").set_value(anchor)
        at.selectbox(key="method").set_value(method).run()
        at.button(key="predict").click().run()
        no_exception(at)
        expected = _expected(
            predictor,
            anchor,
            example_profile(predictor, anchor),
            predictor.examples[anchor]["batch_latency_s"],
            method,
        )
        _assert_same(_shown_table(at), expected)


def test_run_time_and_cost_equal_estimate_run(page, predictor):
    anchor = predictor.instances[1]
    at = page("anchor").run()
    at.selectbox(key="anchor").set_value(anchor).run()
    at.number_input(key="dataset_images").set_value(50_000)
    _widget(at.number_input, "Batch size").set_value(64)
    at.number_input(key="epochs").set_value(3)
    at.button(key="predict").click().run()
    no_exception(at)
    prediction = predictor.predict(
        anchor,
        example_profile(predictor, anchor),
        anchor_latency_s=predictor.examples[anchor]["batch_latency_s"],
    )
    expected = estimate_run(prediction.table, 50_000, 64, 3)
    shown = _shown_table(at)
    _assert_same(shown, expected, ("run_hours", "run_usd", "run_usd_low", "run_usd_high"))
    cost = next(d for d in plotly_spec(at)["data"] if d.get("mode") == "markers")
    np.testing.assert_allclose(values(cost["y"]), expected["run_usd"], rtol=1e-9)
    # Steps per GPU count (every target here uses one GPU), not one number for the page.
    steps = int(expected["steps"].iloc[0])
    assert any(f"Steps in the run: {steps:,} on 1 GPU " in c.value for c in at.caption)
    # The result is kept for the scaler page.
    kept = at.session_state[common.ANCHOR_RESULT]
    assert kept.anchor == anchor and kept.batch_size == 64


def test_pasted_json_equals_core(page, predictor):
    anchor = predictor.instances[0]
    text = json.dumps(predictor.examples[anchor]["profile"], indent=2)
    at = page("anchor").run()
    at.radio(key="source").set_value("Paste JSON").run()
    at.text_area(key="profile_text").input(text)
    at.button(key="predict").click().run()
    no_exception(at)
    assert not at.error
    expected = _expected(predictor, anchor, parse_profile(text, "pasted.json"), None)
    _assert_same(_shown_table(at), expected)


@pytest.mark.parametrize("unusual", [False, True], ids=["usual", "unusual"])
def test_novelty_is_shown_and_warned_about(page, predictor, unusual):
    anchor = predictor.instances[0]
    profile = dict(predictor.examples[anchor]["profile"])
    if unusual:
        # All device time in one pooling op: no trained CNN spends its step like that.
        profile = {k: v for k, v in profile.items() if not k.startswith("Device_")}
        profile["Device_MaxPool"] = 1e6
    text = json.dumps(profile)
    novelty = predictor.predict(anchor, parse_profile(text, "p.json")).table["novelty"].max()
    assert (novelty >= NOVELTY_WARN) == unusual
    at = page("anchor").run()
    at.radio(key="source").set_value("Paste JSON").run()
    at.text_area(key="profile_text").input(text)
    _known(at).uncheck().run()
    at.button(key="predict").click().run()
    no_exception(at)
    shown = f"{novelty:.2f}"
    warned = [plain(w.value) for w in at.warning if "unlike the networks" in plain(w.value)]
    if unusual:
        assert len(warned) == 1 and shown in warned[0]
    else:
        assert not warned
        assert any(f"Novelty of this profile: {shown}" in c.value for c in at.caption)


def _tensorboard_csv(profile: dict) -> bytes:
    rows = [
        {
            "Rank": i + 1,
            "Host/device": k.split("_", 1)[0],
            "Type": k.split("_", 1)[1],
            "Operation": f"op{i}",
            "#Occurrences": 1,
            "Total time (us)": v,
        }
        for i, (k, v) in enumerate(profile.items())
    ]
    return pd.DataFrame(rows).to_csv(index=False).encode()


@pytest.mark.parametrize("kind", ["json", "tensorboard-csv"], ids=["json", "tensorboard-csv"])
def test_uploaded_file_equals_core(page, predictor, kind):
    anchor = predictor.instances[-1]
    profile = predictor.examples[anchor]["profile"]
    name, data, mime = (
        ("profile.json", json.dumps(profile).encode(), "application/json")
        if kind == "json"
        else ("tensorflow_stats.csv", _tensorboard_csv(profile), "text/csv")
    )
    at = page("anchor").run()
    at.selectbox(key="anchor").set_value(anchor)
    at.radio(key="source").set_value("Upload a file").run()
    at.file_uploader(key="profile_file").upload(name, data, mime)
    at.run()
    assert not _known(at).value  # no latency unless the user says so
    at.button(key="predict").click().run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    expected = _expected(predictor, anchor, parse_profile(data, name), None)
    _assert_same(_shown_table(at), expected)


def test_multi_row_table_shows_each_row(page, predictor):
    anchor = predictor.instances[0]
    profile = predictor.examples[anchor]["profile"]
    rows = [profile, {k: 2 * v for k, v in profile.items()}]
    at = page("anchor").run()
    at.radio(key="source").set_value("Paste JSON").run()
    at.text_area(key="profile_text").input(json.dumps(rows))
    at.button(key="predict").click().run()
    no_exception(at)
    full = predictor.predict(anchor, parse_profile(json.dumps(rows), "pasted.json")).table
    _widget(at.selectbox, "Profile row to show").set_value(1).run()
    expected = full[full["row"] == 1].reset_index(drop=True)
    _assert_same(_shown_table(at), expected)


def test_a_file_of_many_rows_has_its_row_picked_by_number(page, predictor, monkeypatch):
    # A 43 MB file's 95,000 rows made a list the server rebuilt on every rerun.
    monkeypatch.setattr(common, "MAX_ROW_CHOICES", 2)
    anchor = predictor.instances[0]
    profile = predictor.examples[anchor]["profile"]
    rows = [{k: f * v for k, v in profile.items()} for f in (1, 2, 3)]
    at = page("anchor").run()
    at.radio(key="source").set_value("Paste JSON").run()
    at.text_area(key="profile_text").input(json.dumps(rows))
    at.button(key="predict").click().run()
    no_exception(at)
    assert not [w for w in at.selectbox if w.label.startswith("Profile row to show")]
    picker = _widget(at.number_input, "Profile row to show (0 to 2; the file holds 3)")
    assert (picker.min, picker.max, picker.value) == (0, 2, 0)
    picker.set_value(2).run()
    full = predictor.predict(anchor, parse_profile(json.dumps(rows), "pasted.json")).table
    _assert_same(_shown_table(at), full[full["row"] == 2].reset_index(drop=True))


BAD_INPUTS = [
    # (id, source, value, message fragment)
    ("malformed-json", "Paste JSON", '{"Host_Conv2D": 12,', "not valid JSON"),
    ("empty-paste", "Paste JSON", "", "empty"),
    ("bad-op-name", "Paste JSON", '{"Conv2D": 12}', "Host_<Op> or Device_<Op>"),
    ("negative-op-time", "Paste JSON", '{"Device_Conv2D": -5}', ">= 0"),
    ("xla-profile", "Paste JSON", '{"Device_fusion": 9e3, "Device_Conv2D": 99}', "jit_compile"),
    (
        "wrong-file-type",
        "Upload a file",
        ("picture.png", b"\x89PNG\r\n\x1a\n", "image/png"),
        "allowed: .json",
    ),
    ("empty-file", "Upload a file", ("profile.json", b"", "application/json"), "empty"),
    (
        "oversized-file",
        "Upload a file",
        ("profile.json", b"[" + b" " * (50 * 1024 * 1024) + b"]", "application/json"),
        "limit",
    ),
    ("no-file", "Upload a file", None, "no profile file"),
]


@pytest.mark.parametrize(
    "source,value,fragment", [b[1:] for b in BAD_INPUTS], ids=[b[0] for b in BAD_INPUTS]
)
def test_bad_profile_shows_error_and_app_keeps_working(page, predictor, source, value, fragment):
    at = page("anchor").run()
    at.radio(key="source").set_value(source).run()
    if source == "Paste JSON":
        at.text_area(key="profile_text").input(value)
    elif value is not None:
        at.file_uploader(key="profile_file").upload(*value)
        at.run()
    at.button(key="predict").click().run()
    no_exception(at)
    assert len(at.error) == 1 and fragment in plain(at.error[0].value), [e.value for e in at.error]
    assert not [d for d in at.dataframe if "batch_latency_ms" in d.value.columns]
    # The page still works: the example predicts.
    at.radio(key="source").set_value("Built-in example").run()
    at.button(key="predict").click().run()
    no_exception(at)
    assert not at.error
    assert len(_shown_table(at)) == len(predictor.targets(at.selectbox(key="anchor").value))


@pytest.mark.parametrize(
    "field,value,fragment",
    [
        ("latency", -3.0, "latency -3 ms is not allowed"),
        ("dataset_images", -10, "dataset_images"),
        ("epochs", 0, "epochs"),
        ("batch", -8, "batch_size"),
        ("missing-latency", None, "latency is missing"),
    ],
    ids=[
        "negative-latency",
        "negative-dataset",
        "zero-epochs",
        "negative-batch-size",
        "missing-latency",
    ],
)
def test_bad_numbers_show_error(page, field, value, fragment):
    at = page("anchor").run()
    if field == "latency":
        _latency_input(at).set_value(value)
    elif field == "missing-latency":
        at.radio(key="source").set_value("Paste JSON").run()
        at.text_area(key="profile_text").input('{"Device_Conv2D": 5}')
        _known(at).check().run()
        assert _latency_input(at).value is None
    elif field == "batch":
        at.number_input(key="dataset_images").set_value(1000)
        _widget(at.number_input, "Batch size").set_value(value)
    else:
        if field != "dataset_images":
            at.number_input(key="dataset_images").set_value(1000)
        at.number_input(key=field).set_value(value)
    at.button(key="predict").click().run()
    no_exception(at)
    assert len(at.error) == 1 and fragment in plain(at.error[0].value), [e.value for e in at.error]


def test_unknown_anchor_in_link_shows_error(page, predictor):
    at = page("anchor")
    at.query_params["anchor"] = "x9.megalarge"
    at.run()
    no_exception(at)
    assert len(at.error) == 1 and "x9.megalarge" in plain(at.error[0].value)
    assert at.selectbox(key="anchor").value == predictor.instances[0]


def test_known_anchor_in_link_is_preselected(page, predictor):
    at = page("anchor")
    at.query_params["anchor"] = predictor.instances[-1]
    at.run()
    assert not at.error
    assert at.selectbox(key="anchor").value == predictor.instances[-1]


def _upload_example_file(page, name="profile_g3s.json"):
    """The Anchor page after uploading ``examples/<name>`` (no Predict yet)."""
    at = page("anchor").run()
    at.radio(key="source").set_value("Upload a file").run()
    data = (Path(common.__file__).resolve().parents[1] / "examples" / name).read_bytes()
    at.file_uploader(key="profile_file").upload(name, data, "application/json")
    return at.run(), data


def test_uploaded_file_prefills_its_sizes_steps_anchor_and_latency(page, predictor):
    """A file taken at input 128 was predicted (and scaled) as 224."""
    at, data = _upload_example_file(page)
    no_exception(at)
    meta = json.loads(data)
    assert at.selectbox(key="anchor").value == meta["instance"]
    assert _widget(at.number_input, "Batch size").value == meta["batch_size"]
    assert _widget(at.number_input, "Input size").value == meta["input_size"] == 128
    assert at.number_input(key="steps").value == meta["steps"]
    assert _known(at).value
    assert _latency_input(at).value == pytest.approx(1000 * meta["batch_latency_s"])
    # still editable, and what is typed is what is used
    _widget(at.number_input, "Input size").set_value(160).run()
    at.button(key="predict").click().run()
    no_exception(at)
    kept = at.session_state[common.ANCHOR_RESULT]
    assert (kept.anchor, kept.batch_size, kept.input_size) == (meta["instance"], 32, 160)


def _upload_bytes(at, name: str, data: bytes):
    at.radio(key="source").set_value("Upload a file").run()
    at.file_uploader(key="profile_file").upload(name, data, "application/json")
    return at.run()


def test_the_files_values_outlive_an_anchor_change(page, predictor):
    """Picking another anchor after an upload emptied the latency and put the
    input size back to 224; picking the first anchor again did not restore them."""
    doc = json.loads(
        (Path(common.__file__).resolve().parents[1] / "examples/profile_g3s.json").read_text()
    )
    anchor = doc.pop("instance")
    at = _upload_bytes(page("anchor").run(), "no_instance.json", json.dumps(doc).encode())
    at.selectbox(key="anchor").set_value(anchor).run()
    others = [a for a in predictor.instances if a != anchor]
    for chosen in (others[0], anchor, others[-1]):
        at.selectbox(key="anchor").set_value(chosen).run()
        no_exception(at)
        assert _known(at).value, chosen
        assert _latency_input(at).value == pytest.approx(1000 * doc["batch_latency_s"])
        assert _widget(at.number_input, "Batch size").value == doc["batch_size"] == 32
        assert _widget(at.number_input, "Input size").value == doc["input_size"] == 128
        assert at.number_input(key="steps").value == doc["steps"]
    # The user's edit stays too; a new file replaces what the old one said.
    _widget(at.number_input, "Input size").set_value(160).run()
    at.selectbox(key="anchor").set_value(anchor).run()
    assert _widget(at.number_input, "Input size").value == 160
    bare = json.dumps(doc["ops"]).encode()
    at.file_uploader(key="profile_file").upload("bare.json", bare, "application/json").run()
    assert _widget(at.number_input, "Input size").value == 224
    assert not _known(at).value and at.number_input(key="steps").value is None


def test_steps_the_file_does_not_give_are_shown_as_assumed(page, predictor):
    """The parser's default of 2 was copied into the Steps box, so the app
    never said that 2 steps were assumed."""
    data = (
        Path(common.__file__).resolve().parents[1] / "examples/profile_g3s_10steps.json"
    ).read_bytes()
    at = page("anchor").run()
    at.selectbox(key="anchor").set_value("g3s.xlarge").run()
    at = _upload_bytes(at, "profile_g3s_10steps.json", data)
    steps = at.number_input(key="steps")
    assert steps.value is None and "2 assumed" in steps.placeholder
    at.button(key="predict").click().run()
    no_exception(at)
    shown = [plain(w.value) for w in at.warning]
    assert sum("were assumed" in w for w in shown) == 1
    assert not any("says it covers 2 step" in w for w in shown), shown


def test_csv_download_is_the_clis_document(page, predictor, monkeypatch):
    """The download had an extra ``anchor`` column, another column order and
    full precision where ``profet predict --format csv`` rounds to 4 decimals."""
    import contextlib
    import io

    from streamlit.delta_generator import DeltaGenerator

    from profet_core.cli._main import main

    path = Path(common.__file__).resolve().parents[1] / "examples" / "profile_g3s.json"
    run = ["--dataset-images", "50000", "--batch-size", "32", "--epochs", "10"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["predict", "--profile", str(path), *run, "--format", "csv"]) == 0
    saved = {}
    real = DeltaGenerator.download_button

    def keep(self, label, data, file_name=None, *args, **kwargs):
        # The page defers its documents (made on click): what a click would deliver.
        saved[file_name] = data() if callable(data) else data
        return real(self, label, data, file_name, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", keep)
    at, _ = _upload_example_file(page)
    at.number_input(key="dataset_images").set_value(50000)
    at.button(key="predict").click().run()
    no_exception(at)
    csv = next(data for name, data in saved.items() if name and name.startswith("profet_g3s"))
    assert csv.decode("utf-8") == out.getvalue()
    assert "anchor" not in out.getvalue().splitlines()[0].split(",")


def test_messages_read_as_plain_text(page, predictor):
    """Errors showed literal backticks and ``1.92e+03x``."""
    at = _predict(page, "g3s.xlarge", latency=0.113)  # seconds typed as milliseconds
    no_exception(at)
    text = " ".join(plain(e.value) for e in at.error)
    assert "seconds given as milliseconds" in text
    assert "`" not in text and not re.search(r"\de[+-]\d", text), text
    at = page("anchor").run()
    at.radio(key="source").set_value("Paste JSON").run()
    at.text_area(key="profile_text").input(json.dumps({"Host_Conv2D": 5000.0}))
    at.button(key="predict").click().run()
    text = " ".join(plain(e.value) for e in at.error)
    assert "'profet profile'" in text and "`" not in text, text


def test_unknown_fit_shows_a_dash_in_a_header_that_fits(page, predictor):
    """Without the anchor latency the "Fits in memory" cells read "None", and the
    header was cut."""
    at = _predict(page, predictor.instances[0], latency=None)
    no_exception(at)
    frame = next(d for d in at.dataframe if "p_fit" in d.value.columns and "cloud" not in d.value)
    assert set(frame.value["p_fit"]) == {"—"}  # an em dash, not "None"
    config = json.loads(frame.proto.columns)["p_fit"]
    assert config["label"] == "Fits (P)"
    assert config["width"] >= 7 * len(config["label"])


def test_no_none_in_any_shown_cell_and_the_result_goes_stale(page, predictor):
    """Spec-model rows showed "None" in the member columns; a result stayed on screen,
    unmarked, after the anchor or the profile changed."""
    at = _predict(page, predictor.instances[0])
    no_exception(at)
    table = _shown_table(at)
    members = at.session_state[common.ANCHOR_RESULT].prediction.member_columns
    spec = table[table["basis"] != "measured"]
    assert members and not spec.empty
    for col in members:
        assert set(spec[col]) == {"—"}, col  # an em dash, as in the other cells
    assert not table[["p_fit", "latency_range", *members]].isna().any().any()
    assert not [w for w in at.warning if "Stale" in w.value]
    at.selectbox(key="anchor").set_value(predictor.instances[1]).run()
    stale = [w.value for w in at.warning if w.value.startswith("Stale")]
    assert len(stale) == 1 and "the anchor, " in stale[0], stale
    at.button(key="predict").click().run()
    assert not [w for w in at.warning if "Stale" in w.value]
    at.radio(key="source").set_value("Paste JSON").run()
    stale = [w.value for w in at.warning if w.value.startswith("Stale")]
    assert len(stale) == 1 and stale[0].startswith("Stale: the profile"), stale


def test_latency_chart_has_a_spec_model_legend_and_dollar_ticks(page, predictor):
    """No legend said that hatched bars rest on GPU specs; the cost axis had ticks
    synced to the latency grid (0.0201, 0.0402)."""
    at = _predict(page, predictor.instances[0])
    spec = plotly_spec(at)
    hatched = [
        d
        for d in spec["data"]
        if d.get("showlegend", True) and d.get("marker", {}).get("pattern", {}).get("shape") == "/"
    ]
    assert len(hatched) == 1 and "spec" in hatched[0]["name"]
    cost_axis = spec["layout"]["yaxis2"]
    assert cost_axis["tickmode"] == "auto" and cost_axis["tickformat"].startswith("$")


def test_breakdown_bars_rise_and_fall_from_one_with_readable_ticks(page, predictor):
    """The log axis labelled 0.3..0.9 as "3 .. 9" and the bars rose from the bottom,
    so slowdowns looked like speed-ups."""
    at = _predict(page, predictor.instances[0])
    spec = plotly_spec(at, 1)
    for bar in spec["data"]:
        assert bar["base"] == 1.0
        speedup = values(bar["customdata"])[:, 2]
        np.testing.assert_allclose(1.0 + values(bar["y"]), speedup, rtol=1e-9)
    axis = spec["layout"]["yaxis"]
    assert axis["type"] == "log"
    assert all(t.endswith("x") for t in axis["ticktext"]) and "1x" in axis["ticktext"]
    assert "0.5x" in axis["ticktext"]


def test_the_example_is_two_steps_and_pasted_text_without_steps_is_noted(page, predictor):
    # The built-in example is a training profile (2 steps by construction): no "2 steps
    # assumed" note. Pasted op times that do not say their steps get the note, once.
    anchor = predictor.instances[0]
    at = _predict(page, anchor)
    assert not any("steps" in w.value and "assumed" in w.value for w in at.warning)
    at = page("anchor").run()
    at.radio(key="source").set_value("Paste JSON").run()
    at.text_area(key="profile_text").input(json.dumps(predictor.examples[anchor]["profile"]))
    at.button(key="predict").click().run()
    no_exception(at)
    assert sum("assumed" in w.value for w in at.warning) == 1


def test_precision_and_gpus_controls_equal_core(page, predictor):
    """AMP on every GPU of each instance, as the core answers it, images/s shown."""
    anchor = "p3.2xlarge" if "p3.2xlarge" in predictor.instances else predictor.instances[0]
    at = page("anchor").run()
    at.selectbox(key="anchor").set_value(anchor).run()
    at.radio(key="precision").set_value("amp")
    at.radio(key="gpus").set_value("all")
    at.button(key="predict").click().run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    example = predictor.examples[anchor]
    expected = predictor.predict(
        anchor,
        example_profile(predictor, anchor),
        anchor_latency_s=example["batch_latency_s"],
        batch_size=int(example["batch_size"]),
        input_size=int(example["input_size"]),
        precision="amp",
        gpus="all",
    ).table
    expected = expected[expected["row"] == 0].reset_index(drop=True)
    shown = _shown_table(at)
    _assert_same(shown, expected, ("batch_latency_ms", "low_ms", "high_ms", "images_per_s"))
    assert list(shown["gpus"]) == list(expected["gpus"]) and (shown["precision"] == "amp").all()


def test_chart_shows_images_per_s_and_whole_instance_cost(page, predictor):
    """The chart's bars can show the images/s of the GPUs used on each instance (all
    of them here) and its markers the whole instance's cost per 1,000 steps or of the run, each
    as the core predicts it, with units on the axes."""
    anchor = "p3.2xlarge" if "p3.2xlarge" in predictor.instances else predictor.instances[0]
    at = page("anchor").run()
    at.selectbox(key="anchor").set_value(anchor).run()
    at.radio(key="gpus").set_value("all")
    at.number_input(key="dataset_images").set_value(50_000)
    at.button(key="predict").click().run()
    no_exception(at)
    example = predictor.examples[anchor]
    batch = int(example["batch_size"])
    expected = predictor.predict(
        anchor,
        example_profile(predictor, anchor),
        anchor_latency_s=example["batch_latency_s"],
        batch_size=batch,
        input_size=int(example["input_size"]),
        gpus="all",
    ).table
    expected = estimate_run(expected[expected["row"] == 0], 50_000, batch, 10)
    expected = expected.reset_index(drop=True)
    assert (expected["gpus"] > 1).any()  # whole multi-GPU instances are among the targets
    everything = expected
    # By default: step time bars, run cost markers (a run is described); the chart draws the
    # picks and the fastest rows up to its cap, in the table's order (the table has them all).
    spec = plotly_spec(at)
    drawn = list(spec["data"][0]["x"])
    assert len(drawn) == min(len(expected), target_chart.TOP)
    expected = expected[expected["configuration"].isin(drawn)].reset_index(drop=True)
    assert list(expected["configuration"]) == drawn
    np.testing.assert_allclose(values(spec["data"][0]["y"]), expected["batch_latency_ms"])
    assert spec["layout"]["yaxis"]["title"]["text"] == "Predicted batch latency (ms)"
    assert spec["layout"]["yaxis2"]["title"]["text"] == "Run cost, whole instance (USD)"
    cost = next(d for d in spec["data"] if d.get("mode") == "markers")
    np.testing.assert_allclose(values(cost["y"]), expected["run_usd"], rtol=1e-9)

    at.radio(key="chart_bars").set_value("Images/s (instance)").run()
    at.radio(key="chart_cost_True").set_value("Cost per 1,000 steps").run()
    no_exception(at)
    spec = plotly_spec(at)
    bars = spec["data"][0]
    ips = expected["images_per_s"].to_numpy(float)
    np.testing.assert_allclose(values(bars["y"]), ips, rtol=1e-9)
    # images/s = GPUs x batch / step time: an 8-GPU instance counts all eight
    lat = expected["batch_latency_ms"].to_numpy(float)
    np.testing.assert_allclose(ips, expected["gpus"] * batch / lat * 1e3, rtol=1e-9)
    # its interval is the step time's turned over: the slowest step, the fewest images/s
    low = ips - values(bars["error_y"]["arrayminus"])
    np.testing.assert_allclose(low, ips * lat / expected["high_ms"], rtol=1e-9)
    assert spec["layout"]["yaxis"]["title"]["text"] == "Images/s, every GPU of the instance"
    assert spec["layout"]["yaxis2"]["title"]["text"] == "USD per 1,000 steps, whole instance"
    cost = next(d for d in spec["data"] if d.get("mode") == "markers")
    np.testing.assert_allclose(values(cost["y"]), expected["usd_per_1000_steps"], rtol=1e-9)
    # The arrows mark the one set of picks (here by the whole run, which the labels
    # name) whatever the bars and markers show; "most images/s" once named another target.
    marks = {
        what: a["x"]
        for a in spec["layout"]["annotations"]
        for what in a["text"].removesuffix(" (whole run)").split(", ")
    }
    assert set(marks) == {"fastest", "cheapest", "best value"}
    by = everything.set_index("configuration")  # each GPU configuration once
    assert marks["fastest"] == by["run_hours"].idxmin()
    assert marks["cheapest"] == by["run_usd"].idxmin()
    assert marks["best value"] == (by["run_hours"] * by["run_usd"]).idxmin()
    assert at.metric[0].label == "Fastest target (whole run)"
    assert at.metric[0].value == marks["fastest"]


def test_chart_without_a_run_offers_the_cost_per_1000_steps_only(page, predictor):
    at = _predict(page, predictor.instances[0])
    no_exception(at)
    assert at.radio(key="chart_cost_False").options == ["Cost per 1,000 steps"]
    spec = plotly_spec(at)
    assert spec["layout"]["yaxis2"]["title"]["text"] == "USD per 1,000 steps, whole instance"


def _example_kwargs(predictor, anchor) -> dict:
    example = predictor.examples[anchor]
    return {
        "anchor_latency_s": example["batch_latency_s"],
        "batch_size": int(example["batch_size"]),
        "input_size": int(example["input_size"]),
    }


@pytest.mark.parametrize("gpus", [2, 4, 8, 16], ids=["two", "four", "eight", "sixteen"])
def test_the_gpus_control_takes_n_as_the_cli_does(page, predictor, gpus):
    """The page offered 1 or all where the CLI's --gpus takes N (16: gcp
    a2-megagpu-16g, the most GPUs an offering rents)."""
    anchor = "g3s.xlarge"
    at = page("anchor").run()
    at.selectbox(key="anchor").set_value(anchor).run()
    at.radio(key="gpus").set_value(str(gpus))
    at.button(key="predict").click().run()
    no_exception(at)
    shown = _shown_table(at)
    kw = _example_kwargs(predictor, anchor)
    expected = predictor.predict(anchor, example_profile(predictor, anchor), gpus=gpus, **kw)
    assert set(shown["gpus"]) == {gpus} and len(shown) >= (2 if gpus < 16 else 1)
    _assert_same(shown, expected.table.reset_index(drop=True), ("batch_latency_ms", "usd_per_hour"))


def test_the_anchor_amp_latency_field_corrects_the_amp_gain_as_the_cli_does(page, predictor):
    """The page had no field for --anchor-amp-latency-ms."""
    anchor = "p3.2xlarge"  # a tensor-core anchor: its measured AMP gain corrects the others'
    at = page("anchor").run()
    at.selectbox(key="anchor").set_value(anchor).run()
    assert not [n for n in at.number_input if n.key == "amp_latency_ms"]  # fp32: not asked
    at.radio(key="precision").set_value("amp").run()
    at.number_input(key="amp_latency_ms").set_value(20.0)
    at.button(key="predict").click().run()
    no_exception(at)
    profile, kw = example_profile(predictor, anchor), _example_kwargs(predictor, anchor)
    given = predictor.predict(anchor, profile, precision="amp", anchor_amp_latency_s=0.02, **kw)
    plain_amp = predictor.predict(anchor, profile, precision="amp", **kw)
    shown = _shown_table(at)
    _assert_same(shown, given.table.reset_index(drop=True))
    assert not np.allclose(shown["batch_latency_ms"], plain_amp.table["batch_latency_ms"])


def test_one_predict_click_evaluates_each_target_once(page, predictor, monkeypatch):
    """The page makes one core call: the table, the offerings and the breakdown share the
    engine's work (it ran three times a click when each view was its own call)."""
    from profet_core.prediction import _blocks

    seen, real = [], _blocks.Blocks._evaluate

    def counted(self, pred, method, targets):
        seen.extend((method, t) for t in targets)
        return real(self, pred, method, targets)

    monkeypatch.setattr(_blocks.Blocks, "_evaluate", counted)
    anchor = predictor.instances[0]
    at = page("anchor").run()
    at.selectbox(key="anchor").set_value(anchor).run()
    at.radio(key="gpus").set_value("all")
    at.button(key="predict").click().run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert seen and len(seen) == len(set(seen)), sorted(seen)
    assert {t for _, t in seen} == set(predictor.targets(anchor))


_TRACES = Path(common.__file__).resolve().parents[1] / "tests/core/inputs/data/torch_traces"


def test_a_gzipped_pytorch_trace_is_uploaded_and_answered(page, predictor):
    """A torch.profiler trace (.pt.trace.json.gz) answers on the page as in the CLI: its GPU
    picks the anchor, its profiled step prefills the latency, the spec family model answers."""
    data = (_TRACES / "resnet50_v100_train.pt.trace.json.gz").read_bytes()
    at = _upload_bytes(page("anchor").run(), "run.pt.trace.json.gz", data)
    no_exception(at)
    assert at.selectbox(key="anchor").value == "gpu-v100-sxm2-32gb"
    assert _latency_input(at).value == pytest.approx(95.717, rel=1e-3)
    at.button(key="predict").click().run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    table = at.session_state[common.ANCHOR_RESULT].table
    assert table["basis"].astype(str).str.startswith("spec family model").all()
    assert any("PyTorch step" in w.value for w in at.warning)


def test_a_cpu_only_trace_is_refused_in_one_line(page):
    data = (_TRACES / "cpu_only_rank34.pt.trace.json.gz").read_bytes()
    at = _upload_bytes(page("anchor").run(), "cpu.pt.trace.json.gz", data)
    at.button(key="predict").click().run()
    no_exception(at)
    assert [e for e in at.error if "holds no GPU kernels" in e.value], [e.value for e in at.error]
