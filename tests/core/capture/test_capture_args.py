"""``profet profile`` / ``profet collect`` arguments beyond what the capture can run, tampered
resume files, oversized ``.keras`` members, deep ``convention.json`` and model files that exit:
each one line and exit 2 before any work. None of these starts TensorFlow."""

from __future__ import annotations

import json
import zipfile

import pandas as pd
import pytest

from profet_core._schema import KEY
from profet_core.capture._check import check_capture_args, check_keras_archive, check_resume
from profet_core.capture._load import _load_py
from profet_core.cli._main import main
from profet_core.errors import ProfetValueError
from profet_core.inputs._convention import folder_convention


def _one_line_exit_2(capsys, argv, match):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's refusals exit from the parser
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("profet: error:"), err
    assert pytest.importorskip("re").search(match, err[0]), err[0]


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--batch-size", "0"], "batch size 0 is not allowed"),
        (["--classes", "1000000"], "1000000 is not allowed"),
        (["--input-size", "3"], "input size 3 is not allowed"),
        (["--input-size", "100000"], "input size 100000 is not allowed"),
        (["--batch-size", "3000", "--input-size", "224"], "larger than the synthetic training"),
        (["--input-size", "1024"], "GiB of memory"),
        (["--latency-steps", "0"], "latency steps 0 is not allowed"),
        (["--steps-per-epoch", "1"], "steps per epoch 1 is not allowed"),
    ],
    ids=[
        "batch-0",
        "classes-1e6",
        "input-3",
        "input-1e5",
        "batch-beyond-dataset",
        "memory",
        "latency-steps-0",
        "steps-per-epoch-1",
    ],
)
def test_profile_arguments_are_refused_before_any_work(tmp_path, capsys, extra, match):
    out = tmp_path / "p.json"
    argv = ["profile", "LeNet5", "--batch-size", "32", "--input-size", "32", "--out", str(out)]
    _one_line_exit_2(capsys, [*argv, *extra], match)
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_a_batch_larger_than_the_dataset_says_what_is_wrong():
    # it once said "steps per epoch 1 is too few"
    with pytest.raises(ProfetValueError, match=r"2,000 images.*at most 1,999"):
        check_capture_args(3000, 224)


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--repeats", "100000000"], "100,000,000 is not allowed|100000000 is not allowed"),
        (["--latency-steps", "0"], "0 is not allowed"),
        (["--gpu", "", "--usd-per-hour", "1"], "GPU name"),
        (["--gpu", "T4", "--usd-per-hour", "1e9"], "1e9 is not allowed"),
        (["--input-sizes", "3"], "input size 3 is not allowed"),
        (["--batch-sizes", "0"], "batch size 0 is not allowed"),
    ],
    ids=["repeats-1e8", "latency-steps-0", "gpu-empty", "price-1e9", "input-3", "batch-0"],
)
def test_collect_arguments_are_refused_before_any_work(tmp_path, capsys, extra, match):
    out = tmp_path / "d"
    argv = ["collect", "--instance", "x1", "--out", str(out), "--models", "LeNet5", *extra]
    _one_line_exit_2(capsys, argv, match)
    assert not out.exists()


def test_a_price_is_echoed_as_given(tmp_path, capsys):
    # 10000.01 was reported as "10000"
    out = tmp_path / "d"
    argv = ["collect", "--instance", "x1", "--out", str(out), "--models", "LeNet5"]
    _one_line_exit_2(capsys, [*argv, "--gpu", "T4", "--usd-per-hour", "10000.01"], "10000.01 is")


def _status(d, **override):
    row = {"exp": "exp01", "instance": "x1", "model": "LeNet5", "input_size": 32}
    row |= {"batch_size": 16, "status": "ok", "error_kind": "", "message": ""} | override
    d.mkdir(exist_ok=True)
    pd.DataFrame([row]).to_csv(d / "status.csv", index=False)


@pytest.mark.parametrize(
    ("tamper", "match"),
    [
        (lambda d: _status(d, input_size="abc"), "input_size 'abc'"),
        (lambda d: _status(d, batch_size="1e400"), "batch_size '1e400'"),
        (lambda d: _status(d, batch_size=2.5), "batch_size '2.5'"),
        (lambda d: _status(d, status="maybe"), "status 'maybe'"),
        (lambda d: (d.mkdir(), (d / "status.csv").write_text("a,b\n1,2\n")), "lacks the col"),
        (lambda d: (d.mkdir(), (d / "status.csv").write_bytes(b"\xff\xfe\x00")), "cannot resume"),
        (lambda d: (d.mkdir(), (d / "status.csv").mkdir()), "a folder"),
        (lambda d: (_status(d), (d / "profiles.parquet").write_bytes(b"PAR1 junk")), "not read"),
        (
            lambda d: (_status(d), pd.DataFrame({"a": [1]}).to_parquet(d / "latencies.parquet")),
            "lacks the column",
        ),
    ],
    ids=[
        "size-text",
        "batch-400-digits",
        "batch-fraction",
        "status-word",
        "columns",
        "not-utf8",
        "folder",
        "corrupt-profiles",
        "latencies-columns",
    ],
)
def test_tampered_resume_files_are_refused_before_the_collection(tmp_path, tamper, match):
    d = tmp_path / "d"
    tamper(d)
    with pytest.raises(ProfetValueError, match=match):
        check_resume(d)


def test_tampered_status_through_the_cli_changes_nothing(tmp_path, capsys):
    d = tmp_path / "d"
    _status(d, input_size="abc")
    before = (d / "status.csv").read_bytes()
    argv = ["collect", "--instance", "x1", "--out", str(d), "--models", "LeNet5"]
    _one_line_exit_2(capsys, argv, "cannot resume")
    assert (d / "status.csv").read_bytes() == before and sorted(p.name for p in d.iterdir()) == [
        "status.csv"
    ]


def test_a_malformed_catalog_is_refused_before_the_collection(tmp_path, capsys):
    d = tmp_path / "d"
    d.mkdir()
    (d / "instances.csv").write_text("instance,gpu\n=cmd,\n")
    argv = ["collect", "--instance", "x1", "--out", str(d), "--models", "LeNet5"]
    _one_line_exit_2(capsys, [*argv, "--gpu", "T4", "--usd-per-hour", "1"], "instances.csv")
    assert sorted(p.name for p in d.iterdir()) == ["instances.csv"]


def test_a_good_resume_folder_passes(tmp_path):
    d = tmp_path / "d"
    _status(d)
    pd.DataFrame({k: ["exp01"] if k == "exp" else [1] for k in KEY}).to_parquet(
        d / "profiles.parquet"
    )
    check_resume(d)
    check_resume(tmp_path / "new")


def test_a_keras_zip_with_a_huge_member_is_refused_from_its_directory(tmp_path):
    path = tmp_path / "m.keras"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("metadata.json", "{}")
        z.writestr("config.json", "{}")
    # declare a 4 GiB config.json in the central directory without writing 4 GiB
    data = bytearray(path.read_bytes())
    start = data.rfind(b"PK\x01\x02")
    assert data[start + 46 : start + 57] == b"config.json"  # the last central-directory entry
    data[start + 24 : start + 28] = (4 * 2**30 - 1).to_bytes(4, "little")  # uncompressed size
    path.write_bytes(bytes(data))
    assert zipfile.ZipFile(path).getinfo("config.json").file_size == 4 * 2**30 - 1
    with pytest.raises(ProfetValueError, match="config.json.*MiB uncompressed"):
        check_keras_archive(path)


def test_a_deeply_nested_convention_file_is_refused(tmp_path):
    (tmp_path / "convention.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ProfetValueError, match="nests deeper"):
        folder_convention(tmp_path)
    (tmp_path / "convention.json").write_text(json.dumps({"convention": "c", "zoo": "z"}))
    assert folder_convention(tmp_path) == ("c", "z")


@pytest.mark.parametrize(
    ("source", "match"),
    [
        ("import sys\nsys.exit(0)\n", r"exits while loading \(SystemExit\(0\)\)"),
        ("raise SystemExit('bye')\n", r"SystemExit\('bye'\)"),
        (
            "def build_model(input_shape, classes):\n    raise SystemExit(3)\n",
            r"build_model .* exits \(SystemExit\(3\)\)",
        ),
    ],
    ids=["sys-exit-0", "system-exit-text", "build-model-exits"],
)
def test_a_model_file_that_exits_is_one_error(tmp_path, source, match):
    path = tmp_path / "m.py"
    path.write_text(source)
    with pytest.raises(ProfetValueError, match=match):
        _load_py(path, (16, 16, 3), 3)
