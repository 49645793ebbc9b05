"""Model accuracy page: the shown numbers are the artifacts' validation report."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from profet_app.common import DASH
from tests.app._utils import no_exception, plain, plotly_spec, values


def opened(at, section):
    """``at`` with the page's tab ``section`` open (only the open tab runs), run."""
    at.session_state["section"] = section
    return at.run()


def _metrics_shown(at):
    return next(
        d.value for d in at.dataframe if "mape_pct" in d.value.columns and "r2" in d.value.columns
    )


def _expected(predictor, estimator, with_latency):
    m = predictor.validation["metrics"]
    m = m[
        (m["estimator"] == estimator)
        & (m["with_latency"].astype(str).str.lower() == str(with_latency).lower())
    ]
    return m.reset_index(drop=True)


@pytest.mark.parametrize("with_latency", [True, False], ids=["with-latency", "without-latency"])
def test_metrics_equal_validation_report(page, predictor, with_latency):
    if "metrics" not in predictor.validation:
        pytest.fail("the default artifacts have no validation report; train with calibration")
    at = page("accuracy").run()
    no_exception(at)
    assert at.selectbox[0].value == predictor.default_method
    at.radio[0].set_value(with_latency).run()
    no_exception(at)
    expected = _expected(predictor, predictor.default_method, with_latency)
    shown = _metrics_shown(at).reset_index(drop=True)
    assert list(shown["anchor"] + shown["target"]) == list(expected["anchor"] + expected["target"])
    for col in ("mape_pct", "r2", "rmse_ms"):
        np.testing.assert_allclose(shown[col], expected[col], rtol=1e-9, err_msg=col)
    assert at.metric[0].value == f"{expected['mape_pct'].mean():.1f} %"
    noise = predictor.validation["noise"]
    assert at.metric[3].value == f"{noise['noise_pct'].mean():.1f} %"
    heat = plotly_spec(at, 0)["data"][0]
    np.testing.assert_allclose(np.nanmean(values(heat["z"])), expected["mape_pct"].mean())


def test_every_estimator_and_pair_renders(page, predictor):
    at = page("accuracy").run()
    for estimator in at.selectbox[0].options:
        at.selectbox[0].set_value(estimator).run()
        no_exception(at)
    at.selectbox[0].set_value(predictor.default_method).run()
    opened(at, "Predicted vs measured")
    pairs = at.selectbox(key="parity_pair").options
    assert (
        pairs[0] == "All pairs"
        and len(pairs) == len(predictor.instances) * (len(predictor.instances) - 1) + 1
    )
    at.selectbox(key="parity_pair").set_value(pairs[1]).run()
    no_exception(at)
    a, t = pairs[1].split(" → ")
    p = predictor.validation["predictions"]
    p = p[
        (p["anchor"] == a)
        & (p["target"] == t)
        & (p["estimator"] == predictor.default_method)
        & (p["with_latency"].astype(str).str.lower() == "true")
    ]
    parity = plotly_spec(at, 0)
    n_points = sum(len(values(tr["x"])) for tr in parity["data"] if tr.get("mode") == "markers")
    assert n_points == len(p)


def test_without_validation_shows_info(page, predictor, tmp_path, use_artifacts):
    # Artifacts whose manifest lists no validation files load with an empty report.
    copy = tmp_path / "artifacts"
    shutil.copytree(predictor.path, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["files"] = {
        k: v for k, v in manifest["files"].items() if not k.startswith("validation/")
    }
    (copy / "manifest.json").write_text(json.dumps(manifest))
    use_artifacts(copy)
    at = page("accuracy").run()
    no_exception(at)
    assert at.info and "without validation" in at.info[0].value


def test_broken_artifacts_show_error(page, tmp_path, use_artifacts):
    use_artifacts(tmp_path)
    at = page("accuracy").run()
    no_exception(at)
    assert at.error and "manifest.json missing" in plain(at.error[0].value)


@pytest.mark.parametrize("with_latency", [True, False], ids=["with-latency", "without-latency"])
def test_novelty_table_equals_validation(page, predictor, with_latency):
    bands = predictor.validation["novelty"]
    expected = bands[
        (bands["estimator"] == predictor.default_method) & (bands["with_latency"] == with_latency)
    ].reset_index(drop=True)
    at = opened(page("accuracy").run(), "Per architecture")
    at.radio[0].set_value(with_latency).run()
    no_exception(at)
    shown = [d.value for d in at.dataframe if "share_pct" in d.value.columns]
    assert len(shown) == 1
    assert list(shown[0]["band"]) == list(expected["band"])
    np.testing.assert_allclose(shown[0]["mape_pct"], expected["mape_pct"], rtol=1e-9)


def test_cross_instance_table_equals_validation(page, predictor):
    """Leave-one-GPU-out accuracy per basis is on the page, as validation measured it."""
    cross = predictor.validation.get("crossgpu")
    assert cross is not None, "the default artifacts hold no cross-instance validation"
    at = opened(page("accuracy").run(), "GPUs never measured")
    no_exception(at)
    shown = next(d.value for d in at.dataframe if "mape_cross" in d.value.columns)
    want = cross[cross["direction"] == "both"].reset_index(drop=True)
    np.testing.assert_allclose(shown["mape_cross"].to_numpy(), want["mape_cross"].to_numpy())
    assert set(shown["basis"]) == {"measured", "specs only", "calibrated"}


def test_fit_table_equals_validation(page, predictor):
    fits = predictor.validation.get("fits")
    assert fits is not None, "the default artifacts hold no will-it-fit validation"
    at = opened(page("accuracy").run(), "GPUs never measured")
    no_exception(at)
    shown = next(d.value for d in at.dataframe if "brier" in d.value.columns)
    np.testing.assert_allclose(shown["brier"].to_numpy(), fits["brier"].to_numpy())


def test_one_point_scaler_table_equals_validation(page, predictor):
    """The one-point Scaler's leave-one-architecture-out errors are on the page."""
    one = predictor.validation.get("onepoint")
    assert one is not None, "the default artifacts hold no one-point scaler validation"
    at = opened(page("accuracy").run(), "Scalers and noise")
    no_exception(at)
    shown = next(
        d.value
        for d in at.dataframe
        if "variant" in d.value.columns
        and "by" in d.value.columns
        and predictor.instances[0] in d.value.columns
    )
    for r in one.itertuples():
        row = shown[(shown["by"] == r.by) & (shown["variant"] == r.variant)]
        assert row[r.instance].iloc[0] == pytest.approx(r.mape_pct)
    assert {"profile", "latency only", "median ratio", "PROFET quadratic"} <= set(shown["variant"])


def test_published_speedups_plot_equals_validation(page, predictor):
    """Predicted vs published speed-up per GPU, the model and both baselines, as the
    leave-one-GPU-out validation over published pairs measured them."""
    pub = predictor.validation.get("published_pairs")
    assert pub is not None, "the default artifacts hold no published-pairs validation"
    # The other folds set the per-basis intervals; the plot is the leave-one-GPU-out one.
    assert set(pub["fold"]) == {"gpu", "published", "specs only"}
    pub = pub[pub["fold"] == "gpu"]
    at = opened(page("accuracy").run(), "GPUs never measured")
    no_exception(at)
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    fig = next(c for c in charts if "Published (x V100)" in json.dumps(c["layout"]))
    traces = fig["data"]
    shown = {}
    for t in traces:
        shown.setdefault(t["legendgroup"].split(",")[0].strip(), []).append(t)
    # The legend in words, not column values ("cross, False")
    words = {"PROFET spec model": "cross", "FP32 peak ratio": "fp32-ratio"}
    words["Memory bandwidth ratio"] = "bandwidth-ratio"
    assert set(shown) == set(words)
    assert not any("False" in t["name"] or "True" in t["name"] for t in traces)
    # facet titles are GPU names, wrapped in rows so they do not overprint at 1440 px
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    assert len(titles) == pub["left_out"].nunique() and not any("=" in t for t in titles)
    assert len({a["y"] for a in fig["layout"]["annotations"]}) >= 3
    for label, parts in shown.items():
        member = words[label]
        x = np.sort(np.concatenate([values(t["x"]) for t in parts]))
        y = np.sort(np.concatenate([values(t["y"]) for t in parts]))
        np.testing.assert_allclose(x, np.sort(pub["speedup"].to_numpy(dtype=float)))
        np.testing.assert_allclose(y, np.sort(pub[member].to_numpy(dtype=float)))
    assert pub["held_out"].any()  # the VGG16 / Inception-v3 check is on the plot too
    frame = next(d for d in at.dataframe if "mape_before" in d.value.columns)
    headers = json.loads(frame.proto.columns)
    assert headers["mape_cross"]["label"] == "Spec model (%)", headers  # words, not names
    assert "MAPE" in headers["mape_cross"]["help"]
    assert headers["half_width_log"]["label"] == "Half-width"
    assert headers["half_width_log"]["help"] == "the 80% interval's half-width (log units)"
    table = frame.value
    want = predictor.validation["published"]
    want = want[want["scope"] != "source"].reset_index(drop=True)
    np.testing.assert_allclose(table["mape_cross"].to_numpy(), want["mape_cross"].to_numpy())
    assert {"gpu", "basis", "held-out"} <= set(table["scope"])


def test_no_none_cells_and_headers_that_fit(page, predictor):
    """ "None" in the memory-fit table (and the baselines' R², RMSE, coverage), and
    the "80% interval coverage" header cut."""
    at = page("accuracy").run()
    no_exception(at)
    # fits and published (GPUs never measured), metrics (Per pair, the tab that opens first)
    sections = {"recall_not_fit_pct": "GPUs never measured", "scope": "GPUs never measured"}
    for marker, section in [*sections.items(), ("mape_pct", "Per pair")]:
        opened(at, section)
        frames = [d for d in at.dataframe if marker in d.value.columns]
        assert frames, marker
        for frame in frames:
            assert not frame.value.isna().any().any(), (marker, frame.value)
    at.selectbox[0].set_value("per-op:linear").run()
    metrics = next(d for d in at.dataframe if "mape_pct" in d.value.columns)
    assert not metrics.value.isna().any().any()
    for column in ("coverage",):
        config = json.loads(metrics.proto.columns)[column]
        assert config["width"] >= 7 * len(config["label"]), config


def _luminance(color: str) -> float:
    r, g, b = (int(color.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_parity_plot_gives_every_architecture_its_own_readable_colour(page, predictor):
    """12 architectures on a 10-colour palette (AlexNet and VGG16 shared one, VGG11
    was nearly white)."""
    at = opened(page("accuracy").run(), "Predicted vs measured")
    no_exception(at)
    spec = next(
        s
        for s in (plotly_spec(at, i) for i in range(len(at.get("plotly_chart"))))
        if any(d.get("name") == "perfect" for d in s["data"])
    )
    points = [d for d in spec["data"] if d.get("name") != "perfect"]
    names = {d["name"] for d in points}
    assert len(names) == len(points) >= 12
    colours = {d["marker"]["color"] for d in points}
    assert len(colours) == len(points), colours
    assert max(_luminance(c) for c in colours) < 0.7, colours


#: The AMP and N-GPU validation files and their tables' names in ``validation``.
AMP_DP = {"amp_gain": "amp_gain.csv", "gpu_scaling": "gpu_scaling.csv"}


def _with_validation_files(src, dst, files: dict) -> None:
    """A copy of the artifacts ``src`` at ``dst`` whose validation/ holds ``files`` ({name:
    DataFrame or None to drop}), the manifest's checksums updated."""
    from profet_core.prediction._store import sha256

    shutil.copytree(src, dst)
    manifest = json.loads((dst / "manifest.json").read_text())
    for name, table in files.items():
        path = dst / "validation" / name
        manifest["files"].pop(f"validation/{name}", None)
        path.unlink(missing_ok=True)
        if table is not None:
            table.to_csv(path, index=False)
            manifest["files"][f"validation/{name}"] = sha256(path)
    (dst / "manifest.json").write_text(json.dumps(manifest))


@pytest.fixture(scope="module")
def amp_dp_tables():
    """The AMP gain and N-GPU scaling validation of the published table (each CNN's op mix from
    a small p3.2xlarge median table), as train() writes it."""
    import pandas as pd

    from profet_core.crossgpu.configurations._validate import amp_dp_validation
    from profet_core.crossgpu.spec._gpuref import gpu_table
    from profet_core.crossgpu.spec._model import PRIOR
    from profet_core.crossgpu.spec._pairs import FAM_COLS
    from profet_core.crossgpu.spec._published import load_published
    from profet_core.inputs._gpu_specs import load_specs

    times = np.array([60.0, 5, 0, 10, 3, 8, 6, 4, 2, 2])
    rows = [
        {"instance": "p3.2xlarge", "model": m, "input_size": 224, "batch_size": 64}
        | dict(zip(FAM_COLS, times * (1 + i / 10), strict=True))
        for i, m in enumerate(("ResNet50", "InceptionResNetV2", "AlexNet", "VGG16"))
    ]
    medians = pd.DataFrame(rows)
    return amp_dp_validation(load_published(), gpu_table(load_specs()), medians, PRIOR)


def _shown(at, column):
    """The shown table that has ``column``."""
    return next(d.value for d in at.dataframe if column in d.value.columns).reset_index(drop=True)


def test_amp_and_gpu_scaling_tables_equal_validation(
    page, predictor, tmp_path, use_artifacts, amp_dp_tables
):
    """Leave-one-GPU-out and leave-one-source-out MAPE of the AMP gain and of N-GPU
    scaling against their baselines, with coverage, as train() wrote them; units on all."""
    copy = tmp_path / "artifacts"
    _with_validation_files(predictor.path, copy, amp_dp_tables)
    use_artifacts(copy)
    at = opened(page("accuracy").run(), "Mixed precision and several GPUs")
    no_exception(at)
    amp, sc = amp_dp_tables["amp_gain.csv"], amp_dp_tables["gpu_scaling.csv"]
    fold = at.radio(key="amp_gain_fold")
    assert fold.value == "gpu" and fold.options == [
        "One GPU left out",
        "One source left out",
        "VGG16, Inception-v3 (never fitted)",
    ]
    assert at.radio(key="gpu_scaling_fold").options[2] == "Per GPU count (one GPU left out)"
    for value in ("gpu", "source", "held-out"):
        at.radio(key="amp_gain_fold").set_value(value).run()
        no_exception(at)
        want = amp[amp["fold"] == value].reset_index(drop=True)
        shown = _shown(at, "mape_constant_pct")
        assert list(shown["group"]) == list(want["group"])
        np.testing.assert_allclose(shown["mape_pct"].astype(float), want["mape_pct"])
        # no "None" cells: a baseline with nothing to go on is a dash
        assert not shown.isna().any().any()
        headers = next(d for d in at.dataframe if "mape_constant_pct" in d.value).proto.columns
        headers = json.loads(headers)
        assert all("%" in headers[c]["label"] for c in headers if "pct" in c), headers
    held = amp[amp["fold"] == "held-out"]  # no "all" row: the headline weighs rows alike
    mean = (held["mape_pct"] * held["rows"]).sum() / held["rows"].sum()
    assert f"{mean:.1f} %" == next(m.value for m in at.metric if m.label == "MAPE, model")
    src = _shown(at.radio(key="amp_gain_fold").set_value("source").run(), "mape_constant_pct")
    assert set(src["mape_constant_source_pct"]) == {"—"}
    labels = [m.label for m in at.metric]
    assert {"MAPE, model", "Constant factor", "Tensor-peak ratio", "Linear scaling"} <= set(labels)
    all_src = amp[(amp["fold"] == "source") & (amp["group"] == "all")].iloc[0]
    assert f"{all_src['mape_pct']:.1f} %" in [m.value for m in at.metric]
    at.radio(key="gpu_scaling_fold").set_value("gpu count").run()
    no_exception(at)
    want = sc[sc["fold"] == "gpu count"].reset_index(drop=True)
    shown = _shown(at, "mape_linear_pct")
    np.testing.assert_allclose(shown["mape_linear_pct"].astype(float), want["mape_linear_pct"])
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    bars = [
        c for c in charts if c["layout"].get("yaxis", {}).get("title", {}).get("text") == "MAPE (%)"
    ]
    assert len(bars) == 2  # one chart per model: the model and each baseline per left-out group
    scaling = bars[1]["data"]
    assert [t["name"] for t in scaling] == ["Model", "Linear scaling"]
    np.testing.assert_allclose(values(scaling[0]["y"]), want["mape_pct"][want["group"] != "all"])


def test_artifacts_without_amp_and_gpu_scaling_say_how_to_get_them(
    page, predictor, tmp_path, use_artifacts, amp_dp_tables
):
    """Artifacts trained before the AMP / N-GPU validation (or with a table of another
    format): the page says so, never fails."""
    copy = tmp_path / "artifacts"
    _with_validation_files(predictor.path, copy, dict.fromkeys(AMP_DP.values()))
    use_artifacts(copy)
    at = opened(page("accuracy").run(), "Mixed precision and several GPUs")
    no_exception(at)
    notes = [i.value for i in at.info if "not in these artifacts" in i.value]
    assert len(notes) == 2 and all("retrain with `profet train" in n for n in notes), notes
    assert not [d for d in at.dataframe if "mape_constant_pct" in d.value.columns]
    other = tmp_path / "other"
    odd = amp_dp_tables["gpu_scaling.csv"].drop(columns="mape_linear_pct")
    _with_validation_files(predictor.path, other, {"gpu_scaling.csv": odd})
    use_artifacts(other)
    at = opened(page("accuracy").run(), "Mixed precision and several GPUs")
    no_exception(at)
    assert any("lacks mape_linear_pct; retrain with" in i.value for i in at.info)


SECTION_CHARTS = {
    "Per pair": 1,
    "Predicted vs measured": 1,
    "Per architecture": 1,
    "Scalers and noise": 0,
    "GPUs never measured": 1,
    "Mixed precision and several GPUs": 2,
    "Other models and PyTorch": 1,
}


def test_only_the_open_section_runs(page):
    """The page drew every chart on every load (24-30 s); now the tab that is open
    runs, and each tab draws its own charts when opened."""
    at = page("accuracy").run()
    no_exception(at)
    assert at.session_state["section"] == "Per pair"
    assert len(at.get("plotly_chart")) == 1
    assert not [s for s in at.subheader if "published" in s.value]
    for section, charts in SECTION_CHARTS.items():
        opened(at, section)
        no_exception(at)
        assert len(at.get("plotly_chart")) == charts, section


def _section_frames(page, predictor, name, section):
    """The validation table ``name`` and the tab ``section``'s tables by first column, the
    page run with that tab open."""
    table = predictor.validation.get(name)
    assert table is not None, f"the artifacts hold no validation/{name}.csv: run the bench"
    at = opened(page("accuracy").run(), section)
    no_exception(at)
    return table, at, {tuple(d.value.columns)[0]: d.value for d in at.dataframe}


def test_spec_order_section_equals_its_validation_file(page, predictor):
    """The spec-order validation (inversions before/after, Spearman per published
    table, the issue's repro) as bench/claims/validation.py --record wrote it, in words with
    units."""
    so, at, frames = _section_frames(page, predictor, "spec_order", "Spec order")
    counts = frames["What is counted"]
    inv = so[so["section"] == "inversions"]
    assert len(counts) == len(inv)
    np.testing.assert_array_equal(counts.iloc[:, 1], inv["before"].astype(int))
    np.testing.assert_array_equal(counts.iloc[:, 2], inv["after"].astype(int))
    assert all("(pairs)" in c for c in counts.columns[1:])
    rho = frames["Published table (CNN, source)"]
    want = so[so["section"] == "spearman"]
    np.testing.assert_allclose(rho.iloc[:, 3], want["after"].round(3))
    rep = frames["GPU, precision"]
    want = so[so["section"] == "repro"]
    np.testing.assert_allclose(rep.iloc[:, 2], want["after"].round(2))
    assert all("(ms per step)" in c for c in rep.columns[1:])
    after = int(inv.set_index("item").loc["inversions", "after"])
    assert at.metric[-2].value == f"{after:,}"


@pytest.mark.parametrize(
    ("name", "section", "bench"),
    [
        ("spec_order", "Spec order", "bench/claims/validation.py --record"),
        ("beyond_cnn", "Other models and PyTorch", "bench/claims/beyond_cnn.py --record"),
    ],
)
def test_a_section_without_its_file_says_how_to_make_it(
    page, predictor, tmp_path, use_artifacts, name, section, bench
):
    copy = tmp_path / "artifacts"
    shutil.copytree(predictor.path, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["files"].pop(f"validation/{name}.csv", None)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    use_artifacts(copy)
    at = opened(page("accuracy").run(), section)
    no_exception(at)
    assert any(bench in i.value for i in at.info)


def test_beyond_cnn_section_equals_its_validation_file(page, predictor):
    """The notebook's Reuters rows, the PyTorch traces' ratios and the other model kinds as
    bench/claims/beyond_cnn.py --record wrote them, each column with its unit."""
    bc, at, frames = _section_frames(page, predictor, "beyond_cnn", "Other models and PyTorch")
    reuters = frames["Model"]
    want = bc[bc["section"] == "reuters"]
    assert list(reuters["Model"]) == list(want["item"])
    np.testing.assert_allclose(reuters.iloc[:, 1], want["measured"].round(2))
    np.testing.assert_allclose(reuters.iloc[:, 2], want["predicted"].round(2))
    np.testing.assert_allclose(reuters["Error (%)"], want["error_pct"].round(1))
    units = [c for c in reuters.columns if c not in ("Model", "Inside")]
    assert all(c.endswith(("(ms per step)", "(%)")) for c in units), units
    for label, section in (
        ("Trace, precision", "trace_mape"),
        ("Model (profile standing in)", "kinds"),
    ):
        shown, want = frames[label], bc[bc["section"] == section]
        assert list(shown[label]) == list(want["item"])
        for col, key in ((1, "error_pct"), (3, "bandwidth_error_pct")):
            # a model kind no profile stands in for has no prediction: a dash, never "None"
            expected = [DASH if pd.isna(v) else float(f"{v:.1f}") for v in want[key]]
            got = [v if v == DASH else float(v) for v in shown.iloc[:, col]]
            assert got == expected, key
        assert all("(MAPE %)" in c for c in shown.columns[1:])
    points = sum(len(values(t["x"])) for t in plotly_spec(at, 0)["data"][:-1])
    assert points == int((bc["section"] == "trace").sum())
