import io
import json
from contextlib import redirect_stderr

import pandas as pd
import pytest

from profet_core import NOVELTY_WARN, load_artifacts, parse_profile
from profet_core.cli._main import main
from tests._utils import run


@pytest.fixture(scope="module")
def profile_file(tmp_path_factory, synthetic_dataset):
    d = tmp_path_factory.mktemp("prof")
    row = synthetic_dataset.profiles.iloc[0][synthetic_dataset.ops]
    (d / "p.json").write_text(json.dumps([row.to_dict()]))
    return d / "p.json"


def test_predict_csv_matches_core(trained, profile_file):
    code, out, err = run(
        "predict",
        "--anchor",
        "gpu-a",
        "--profile",
        profile_file,
        "--anchor-latency-ms",
        12.5,
        "--artifacts",
        trained,
        "--format",
        "csv",
    )
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))
    assert list(got.columns[:4]) == ["row", "configuration", "target", "batch_latency_ms"]
    want = (
        load_artifacts(trained)
        .predict(
            "gpu-a", parse_profile(profile_file.read_bytes(), "p.json"), anchor_latency_s=0.0125
        )
        .table
    )
    assert got["target"].tolist() == want["target"].tolist()
    assert got["configuration"].tolist() == want["configuration"].astype(str).tolist()
    pd.testing.assert_series_equal(
        got["batch_latency_ms"], want["batch_latency_ms"], atol=1e-4, check_exact=False
    )


@pytest.mark.parametrize("factor", [1, 200], ids=["usual", "unusual"])
def test_predict_reports_novelty_and_warns_when_unusual(
    trained, synthetic_dataset, tmp_path, factor
):
    row = synthetic_dataset.profiles.iloc[20][synthetic_dataset.ops].copy()
    row["Device_MaxPool"] *= factor
    (tmp_path / "p.json").write_text(json.dumps([row.to_dict()]))
    code, out, err = run(
        "predict",
        "--anchor",
        "gpu-a",
        "--profile",
        tmp_path / "p.json",
        "--artifacts",
        trained,
        "--format",
        "csv",
    )
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))
    assert (got["novelty"] > 0).all()
    unusual = got["novelty"].max() >= NOVELTY_WARN
    assert unusual == (factor > 1)
    assert ("unlike the networks PROFET was trained on" in err) == unusual


@pytest.mark.parametrize("fmt", ["json", "table"], ids=["json", "table"])
def test_predict_other_formats(trained, profile_file, fmt):
    code, out, _ = run(
        "predict",
        "--anchor",
        "gpu-a",
        "--profile",
        profile_file,
        "--artifacts",
        trained,
        "--format",
        fmt,
    )
    assert code == 0
    if fmt == "json":
        doc = json.loads(out)
        assert [p["target"] for p in doc["predictions"]] == ["gpu-b", "gpu-c"]
        assert doc["interval_level"] == 0.8
    else:
        assert "gpu-b" in out and "gpu-c" in out


def test_scale_prints_the_core_value(trained):
    code, out, _ = run(
        "scale",
        "--target",
        "gpu-b",
        "--by",
        "batch",
        "--latency-min-ms",
        10,
        "--latency-max-ms",
        40,
        "--size",
        32,
        "--artifacts",
        trained,
    )
    assert code == 0
    assert out.split()[1:4] == ["ms", "per", "training"]
    assert float(out.split()[0]) == pytest.approx(
        float(load_artifacts(trained).scale("gpu-b", "batch", {16: 10.0, 64: 40.0}, 32)), abs=1e-3
    )


def test_scale_with_a_third_point(trained):
    argv = [
        "scale",
        "--target",
        "gpu-b",
        "--by",
        "batch",
        "--latency-min-ms",
        10,
        "--latency-max-ms",
        40,
        "--size",
        24,
        "--artifacts",
        trained,
    ]
    code, out, err = run(*argv, "--point", "32=12")
    assert code == 0, err
    want = load_artifacts(trained).scale("gpu-b", "batch", {16: 10.0, 32: 12.0, 64: 40.0}, 24)
    assert out.split()[1:4] == ["ms", "per", "training"]
    assert float(out.split()[0]) == pytest.approx(float(want), abs=1e-3)
    assert float(out.split()[0]) == pytest.approx(
        11.0, abs=1e-3
    )  # linear between (16, 10) and (32, 12)
    err = io.StringIO()
    # argparse rejects a malformed SIZE=MS itself: usage line, message, exit 2.
    with redirect_stderr(err), pytest.raises(SystemExit) as exc:
        main([*map(str, argv), "--point", "32:12"])
    assert exc.value.code == 2 and "'32:12' is not SIZE=MS" in err.getvalue()


ONE_POINT = ["scale", "--target", "gpu-b", "--by", "batch", "--size", 64]


@pytest.mark.parametrize("with_profile", [True, False], ids=["profile", "latency-only"])
def test_scale_from_one_point_prints_the_core_value_and_interval(
    trained, profile_file, synthetic_dataset, with_profile
):
    argv = [*ONE_POINT, "--latency-ms", 8, "--size-from", 16, "--other-size", 32]
    argv += ["--artifacts", trained]
    profile = None
    if with_profile:
        argv += ["--profile", profile_file]
        profile = synthetic_dataset.profiles.iloc[[0]][synthetic_dataset.ops]
    code, out, err = run(*argv)
    assert code == 0, err
    want = load_artifacts(trained).scale_from_point("gpu-b", "batch", 8.0, 16, 64, 32, profile)
    words = out.split()
    assert words[1:4] == ["ms", "per", "training"] and "on gpu-b" in out
    assert float(words[0]) == pytest.approx(float(want.latency_ms[0]), abs=1e-3)
    assert f"80% interval {want.low_ms[0]:.3f}..{want.high_ms[0]:.3f} ms" in out
    assert ("profet: note: no anchor profile" in err) is not with_profile
    assert "profet: warning:" not in err  # what the curve rests on is a note


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--latency-ms", 8, "--size-from", 16], "needs --other-size too"),
        (
            ["--latency-ms", 8, "--size-from", 16, "--other-size", 32, "--latency-min-ms", 3],
            "not both",
        ),
        ([], "give one point"),
        (
            [
                "--latency-ms",
                8,
                "--size-from",
                16,
                "--other-size",
                32,
                "--profile",
                "{prof}",
                "--row",
                3,
            ],
            "--row 3 is not in the profile file; it has rows 0..0",
        ),
    ],
    ids=["missing-other-size", "both-modes", "no-latency", "bad-row"],
)
def test_scale_one_point_misuse_is_named(trained, profile_file, extra, match):
    extra = [profile_file if a == "{prof}" else a for a in extra]
    code, out, err = run(*ONE_POINT, *extra, "--artifacts", trained)
    assert code == 2 and not out
    assert match in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (
            ["predict", "--anchor", "p9.huge", "--profile", "{prof}", "--artifacts", "{art}"],
            "unknown anchor instance 'p9.huge'",
        ),
        (
            ["predict", "--anchor", "gpu-a", "--profile", "{bad}", "--artifacts", "{art}"],
            "not valid JSON",
        ),
        (
            ["predict", "--anchor", "gpu-a", "--profile", "/no/such.json", "--artifacts", "{art}"],
            "does not exist",
        ),
        (
            ["predict", "--anchor", "gpu-a", "--profile", "{prof}", "--artifacts", "/no/art"],
            "no trained artifacts",
        ),
        (
            [
                "predict",
                "--anchor",
                "gpu-a",
                "--profile",
                "{prof}",
                "--anchor-latency-ms",
                "-3",
                "--artifacts",
                "{art}",
            ],
            # in the unit typed (it once said "-0.003 s")
            "--anchor-latency-ms -3 ms is not allowed; one training step takes 0.001 to",
        ),
        (
            [
                "scale",
                "--target",
                "gpu-a",
                "--by",
                "input",
                "--latency-min-ms",
                "1",
                "--latency-max-ms",
                "2",
                "--size",
                "1000",
                "--artifacts",
                "{art}",
            ],
            "outside the trained input range",
        ),
        (
            [
                "scale",
                "--target",
                "gpu-a",
                "--by",
                "batch",
                "--latency-min-ms",
                "1",
                "--latency-max-ms",
                "2",
                "--size",
                "20",
                "--point",
                "64=1.5",
                "--artifacts",
                "{art}",
            ],
            "size 64 must lie strictly between",
        ),
        (
            [
                "scale",
                "--target",
                "gpu-a",
                "--by",
                "batch",
                "--latency-min-ms",
                "1",
                "--latency-max-ms",
                "2",
                "--size",
                "20",
                "--point",
                "32=-1",
                "--artifacts",
                "{art}",
            ],
            "latency at batch size 32 is -1;",
        ),
        (["train", "--data", "/no/data"], "dataset folder '/no/data' does not exist"),
    ],
    ids=[
        "unknown-anchor",
        "bad-json",
        "missing-profile",
        "missing-artifacts",
        "negative-latency",
        "size-out-of-range",
        "point-outside-ends",
        "negative-point-latency",
        "missing-data",
    ],
)
def test_bad_input_exits_2_with_one_line(trained, profile_file, tmp_path, argv, match):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    argv = [a.format(prof=profile_file, art=trained, bad=bad) for a in argv]
    code, out, err = run(*argv)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("profet: error: ")
    assert pytest.importorskip("re").search(match, err)


@pytest.mark.slow
def test_train_and_validate_commands(synthetic_dir, tmp_path):
    code, out, err = run(
        "train",
        "--data",
        synthetic_dir,
        "--out",
        tmp_path / "art",
        "--methods",
        "hybrid",
        "--no-intervals",
    )
    assert code == 0, err
    assert "[" in err  # progress
    assert load_artifacts(tmp_path / "art").instances == ["gpu-a", "gpu-b", "gpu-c"]
    code, out, err = run(
        "validate",
        "--data",
        synthetic_dir,
        "--out",
        tmp_path / "val",
        "--methods",
        "hybrid",
        "--anchors",
        "gpu-a",
        "--targets",
        "gpu-b",
    )
    assert code == 0, err
    metrics = pd.read_csv(tmp_path / "val" / "metrics.csv")
    assert set(metrics["anchor"]) == {"gpu-a"} and set(metrics["target"]) == {"gpu-b"}
    assert "MAPE" in (tmp_path / "val" / "report.md").read_text()
    # Training can reuse that validation run for the same data and settings, and only then.
    code, _, err = run(
        "train",
        "--data",
        synthetic_dir,
        "--out",
        tmp_path / "art2",
        "--methods",
        "hybrid",
        "--validation",
        tmp_path / "val",
    )
    assert code == 0, err
    reused = load_artifacts(tmp_path / "art2")
    assert set(reused.intervals["estimator"]) >= {"hybrid", "hybrid:boosting"}
    assert (tmp_path / "art2" / "validation" / "report.md").read_text() == (
        tmp_path / "val" / "report.md"
    ).read_text()
    code, _, err = run(
        "train",
        "--data",
        synthetic_dir,
        "--out",
        tmp_path / "art3",
        "--methods",
        "hybrid",
        "--threshold",
        5,
        "--validation",
        tmp_path / "val",
    )
    assert code == 2 and "used threshold=6.0" in err
    assert not (tmp_path / "art3").exists()


@pytest.mark.parametrize(
    ("old", "new", "dest"),
    [
        ("--no-calibrate", "--no-intervals", "no_intervals"),
        ("--calibrate-all", "--intervals-all", "intervals_all"),
    ],
)
def test_renamed_train_flags_work_and_warn(capsys, old, new, dest):
    from profet_core.cli._main import build_parser

    parse = build_parser().parse_args
    assert getattr(parse(["train"]), dest) is False
    assert capsys.readouterr().err == ""
    with_new = parse(["train", new])
    assert capsys.readouterr().err == ""
    with_old = parse(["train", old])
    assert with_old == with_new and getattr(with_old, dest) is True
    assert capsys.readouterr().err == (
        f"profet: warning: '{old}' is now '{new}'; the old name goes in the next release\n"
    )
    with pytest.raises(SystemExit):  # the old name is not offered any more
        parse(["train", "--help"])
    shown = capsys.readouterr().out
    assert new in shown and old not in shown


@pytest.mark.parametrize(
    ("command", "flag", "words"),
    [("predict", "--format", "significant digits"), ("scale", "--by", "images per step")],
    ids=["predict-format", "scale-by"],
)
def test_options_say_what_they_do(command, flag, words):
    """``--format`` and ``--by`` had no help text."""
    from profet_core.cli._main import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices[command]
    action = next(a for a in sub._actions if flag in a.option_strings)
    assert action.help and words in action.help
    assert words in " ".join(sub.format_help().split())
