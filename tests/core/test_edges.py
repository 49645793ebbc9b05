"""Numbers at the edges, CSV structure, instance names and wrong messages.

Each case is refused by name (exit 2, one `profet: error:` line, no 300-digit number) or
answered with finite, plausible numbers; none raises, warns on stderr or prints 0.000 ms.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from profet_core import ProfetError, estimate_run, latency_seconds, make_dataset, parse_profile
from profet_core._messages import quote, show_number
from profet_core.cli._main import main
from profet_core.inputs._catalog import load_catalog, validate_catalog
from tests._utils import make_synthetic, synthetic_catalog

GOOD = {"Device_Conv2D": 5000.0, "Device_Relu": 800.0, "Host_IDLE": 100.0}
BIG = "1" + "0" * 400


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("error")  # a RuntimeWarning is a failure, not noise on stderr
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def refused(code, err, *words) -> None:
    assert code == 2, err
    assert err.startswith("profet: error: ") and err.count("\n") == 1, err
    assert not re.search(r"\d{30}", err), err  # no 300-digit number echoed
    for w in words:
        assert w in err, err


@pytest.fixture()
def profile_file(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(GOOD))
    return path


# ----------------------------------------------------------------------------- numbers
@pytest.mark.parametrize(
    "value",
    ["1e-320", "1e-300", "1e300", BIG, "0.0000001"],
    ids=["den", "tiny", "huge", "400d", "sub-us"],
)
def test_anchor_latency_at_the_edges_is_refused(trained, profile_file, value):
    # 1e-320 ms once raised OverflowError in the sense checks, 1e-300 printed 0.000 ms
    code, _, err = run(
        "predict", "--anchor", "gpu-a", "--profile", profile_file, "--artifacts", trained,
        "--anchor-latency-ms", value,
    )  # fmt: skip
    refused(code, err, "--anchor-latency-ms", "ms is not allowed")


@pytest.mark.parametrize(
    ("ops", "meta"),
    [
        ({"Device_Conv2D": 1e-320, "Device_Relu": 1e-320}, {}),
        (GOOD, {"batch_latency_s": 1e-320}),
        (GOOD, {"batch_latency_s": 1e7}),
        (GOOD, {"batch_size": 10**20}),
    ],
    ids=["denormal-ops", "denormal-latency", "latency-116-days", "batch-1e20"],
)
def test_profile_numbers_at_the_edges_are_refused(ops, meta):
    with pytest.raises(ProfetError) as exc:
        parse_profile(json.dumps({"ops": ops, **meta}), "p.json")
    assert len(str(exc.value)) < 400


def test_denormal_profile_table_is_refused_naming_the_row():
    text = "Device_Conv2D,Device_Relu\n5000,800\n1e-320,1e-320\n"
    with pytest.raises(ProfetError, match=r"row 1's op times add up to 2e-320 us"):
        parse_profile(text, "p.csv")


@pytest.mark.parametrize(
    ("images", "batch", "epochs"),
    [(10**18, 1, 10**9), (1000, 10**9, 1), (1000, 32, 10**7)],
    ids=["images", "batch", "epochs"],
)
def test_run_cost_is_bounded(images, batch, epochs):
    table = pd.DataFrame({"batch_latency_ms": [50.0], "usd_per_hour": [1.0]})
    with pytest.raises(ProfetError, match="it must be a whole number 1.."):
        estimate_run(table, images, batch, epochs)


@pytest.mark.parametrize(
    "argv",
    [
        ["--latency-ms", "1e-320", "--size-from", "32", "--other-size", "32"],
        ["--latency-ms", "10", "--size-from", "32.5", "--other-size", "32"],
        ["--latency-ms", "10", "--size-from", "32", "--other-size", "31.5"],
        ["--latency-min-ms", "1e-320", "--latency-max-ms", "1e-300"],
        ["--latency-min-ms", "10", "--latency-max-ms", "30", "--point", "40.5=20"],
    ],
    ids=["one-denormal", "one-frac-from", "one-frac-other", "two-denormal", "frac-point"],
)
def test_scale_numbers_at_the_edges_are_refused(trained, argv):
    size = "48.5" if "--point" not in argv and "frac" in " ".join(argv) else "48"
    code, out, err = run(
        "scale", "--target", "gpu-a", "--by", "batch", "--size", size, *argv,
        "--artifacts", trained,
    )  # fmt: skip
    refused(code, err)
    assert "0.000 ms" not in out


def test_fractional_scale_size_is_refused_not_truncated(trained):
    code, _, err = run(
        "scale", "--by", "batch", "--latency-min-ms", "10", "--latency-max-ms", "30",
        "--size", "40.5", "--artifacts", trained,
    )  # fmt: skip
    refused(code, err, "40.5", "whole numbers")


@pytest.mark.parametrize(
    ("price", "word"),
    [("True", "True"), ("1e300", "1e+300"), ("1e-320", "1e-320"), (BIG, "1e+400")],
    ids=["bool", "huge", "denormal", "400-digits"],
)
def test_catalog_prices_at_the_edges_are_refused(tmp_path, price, word):
    path = tmp_path / "c.csv"
    path.write_text(f"instance,gpu,usd_per_hour\ngpu-b,GB,{price}\n")
    with pytest.raises(ProfetError, match="prices are 0 or") as exc:
        load_catalog(path)
    assert word in str(exc.value) and len(str(exc.value)) < 300


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ([10**29], "[1.00e+29 (a 30-digit number)]"),
        ("1" + "0" * 25, "'1.00e+25 (a 26-digit number)'"),
        ([0.12345678901234568], "[0.12345678901234568]"),  # a float's repr stays as it is
    ],
    ids=["int-in-list", "digits-in-text", "float-repr"],
)
def test_quote_never_echoes_a_long_digit_run(value, shown):
    # Hypothesis found `profiles: steps [100000000000000000000000000000] at row 0 ...`
    assert quote(value) == shown
    assert show_number(value) == shown


def test_show_number_abbreviates():
    assert show_number(10**400) == "1e+400 (a 401-digit number)"
    assert show_number(-(10**400)).startswith("-1e+400")
    assert show_number(1e-320) == "1e-320"  # the number given
    assert show_number(10000.01) == "10000.01"
    assert show_number(True) == "True" and show_number(32) == "32"


def test_latency_is_refused_in_the_unit_typed():
    with pytest.raises(ProfetError, match="latency -5 µs is not allowed; .* 1 to 1e\\+12 µs"):
        latency_seconds(-5, "µs", "latency")
    with pytest.raises(ProfetError, match="latency -5 ms is not allowed"):
        latency_seconds(-5.0, "ms", "latency")
    assert latency_seconds(12.5, "ms") == pytest.approx(0.0125)


# ----------------------------------------------------------------------------- CSV structure
@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("Device_A,Device_B\n5,6,7\n", r"line 2: 3 fields, more than the header's 2"),
        ("Device_A,Device_B,steps\n5,6,2\n5,6\n", r"line 3: 2 fields, fewer than the header's 3"),
        ("Device_A, Device_B\n5, 6\n", r"column name ' Device_B' has spaces around it"),
        ('Device_A,Device_B\n"5",6\n7,"8",9\n', r"line 3: 3 fields, more"),
    ],
    ids=["extra-field", "shifted-row", "comma-space", "quoted-extra"],
)
def test_profile_csv_structure_is_refused_naming_the_line(text, match):
    with pytest.raises(ProfetError, match=match):
        parse_profile(text, "p.csv")


def _write_data(tmp_path, prof, lat):
    # The data get their own folder: --out may not lie inside --data.
    data = tmp_path / "data"
    data.mkdir()
    prof.to_csv(data / "profiles.csv", index=False)
    lat.to_csv(data / "latencies.csv", index=False)
    synthetic_catalog().to_csv(data / "instances.csv", index=False)
    return data


def test_training_csv_with_an_extra_field_is_refused(tmp_path):
    prof, lat = make_synthetic(n_arch=2, n_exp=1)
    data = _write_data(tmp_path, prof, lat)
    path = data / "latencies.csv"
    lines = path.read_text().splitlines()
    lines[3] += ",0.5"  # pandas would make the first column the index, shifting every value
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run("train", "--data", data, "--out", tmp_path / "art")
    refused(code, err, "line 4", "more than the header")
    assert not (tmp_path / "art").exists()


def test_fractional_training_size_is_refused_not_truncated():
    prof, lat = make_synthetic(n_arch=2, n_exp=1)
    prof["batch_size"] = prof["batch_size"].astype(float)
    prof.loc[0, "batch_size"] = 32.5
    with pytest.raises(ProfetError, match="batch_size.*32.5.*whole numbers"):
        make_dataset(prof, lat)


@pytest.mark.parametrize("kind", ["timedelta", "datetime", "bool-objects"])
def test_non_numeric_training_op_columns_are_refused(kind):
    prof, lat = make_synthetic(n_arch=2, n_exp=1)
    n = len(prof)
    if kind == "timedelta":
        prof["Device_Conv2D"] = pd.to_timedelta(np.arange(n), unit="us")
    elif kind == "datetime":
        prof["Device_Conv2D"] = pd.Timestamp("2024-01-01")
    else:
        prof["Device_Conv2D"] = pd.Series([True] * n, dtype=object)
    with pytest.raises(ProfetError, match="Device_Conv2D.*op times are numbers of microseconds"):
        make_dataset(prof, lat)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("instance,gpu,usd_per_hour,usd_per_hour\ngpu-b,GB,1,2\n", "repeats the column name"),
        ("instance,gpu,usd_per_hour\ngpu-b,GB,1,2\n", "line 2: 4 fields"),
        ("instance, gpu, usd_per_hour\ngpu-b, GB, 1\n", "spaces around it"),
    ],
    ids=["duplicate-column", "extra-field", "comma-space"],
)
def test_catalog_csv_structure_is_refused(tmp_path, text, match):
    path = tmp_path / "c.csv"
    path.write_text(text)
    with pytest.raises(ProfetError, match=match):
        load_catalog(path)


# ----------------------------------------------------------------------------- instance names
@pytest.mark.parametrize("name", ["a->b", "a>b", "x,y", "a b", "=cmd", "a/b", "", "é"])
def test_reserved_characters_in_catalog_instance_names_are_refused(name):
    table = pd.DataFrame({"instance": [name], "gpu": ["G"], "usd_per_hour": [1.0]})
    with pytest.raises(ProfetError, match="instance name .* is not allowed"):
        validate_catalog(table)


def test_training_two_instances_whose_pair_keys_collide_is_refused(tmp_path):
    from profet_core.prediction._trained import pair_name

    names = {"gpu-a": "a", "gpu-b": "a->b", "gpu-c": "b->a"}
    # the premise: ("a", "b->a") and ("a->b", "a") would share one key in the artifacts
    assert pair_name("a", "b->a") == pair_name("a->b", "a")
    prof, lat = make_synthetic(n_arch=2, n_exp=1)
    prof["instance"] = prof["instance"].map(names)
    lat["instance"] = lat["instance"].map(names)
    data = _write_data(tmp_path, prof, lat)
    cat = synthetic_catalog().assign(instance=lambda d: d["instance"].map(names))
    cat.to_csv(data / "instances.csv", index=False)
    code, _, err = run("train", "--data", data, "--out", tmp_path / "art")
    refused(code, err, "instance name 'a->b' is not allowed")
    assert not (tmp_path / "art").exists()


def test_collect_refuses_a_reserved_instance_name_before_any_run(tmp_path):
    from profet_core.capture._collect import collect

    with pytest.raises(ProfetError, match="--instance name 'g4->x' is not allowed"):
        collect("g4->x", tmp_path / "data", models=["no-such-model"])
    assert not (tmp_path / "data").exists()


def test_profile_json_instance_with_a_separator_is_refused():
    with pytest.raises(ProfetError, match="instance name 'a->b'"):
        parse_profile(json.dumps({"ops": GOOD, "instance": "a->b"}), "p.json")


# ----------------------------------------------------------------------------- wrong messages
@pytest.mark.parametrize("kind", ["folder", "dev-zero", "fifo"])
def test_catalog_path_is_named_for_what_it_is(trained, profile_file, tmp_path, kind):
    if kind == "folder":  # a folder is read as a SkyPilot catalog folder
        path, word = tmp_path, "no <cloud>/vms.csv in"
    elif kind == "dev-zero":
        path, word = "/dev/zero", "is a character device"
    else:
        path, word = tmp_path / "fifo.csv", "is a named pipe (FIFO)"
        os.mkfifo(path)
    code, _, err = run(
        "predict", "--anchor", "gpu-a", "--profile", profile_file, "--artifacts", trained,
        "--catalog", path,
    )  # fmt: skip
    refused(code, err, word)
    assert "does not exist" not in err


def test_boolean_anchor_latency_is_refused_in_the_library(trained):
    from profet_core import load_artifacts

    profile = parse_profile(json.dumps(GOOD), "p.json")
    with pytest.raises(ProfetError, match="True/False is not a number of seconds"):
        load_artifacts(trained).predict("gpu-a", profile, anchor_latency_s=True)


def test_a_long_path_keeps_its_file_name_in_messages():
    # Under a deep folder the file name was cut off ('/tmp/.../test_x0/none.cs...').
    path = "/tmp/" + "d" * 120 + "/none.csv"
    said = quote(path)
    assert said.startswith("'/tmp/dd") and "none.csv'" in said and "(134 characters)" in said
    assert len(said) < 120
    assert quote("9" * 400).endswith("'... (400 characters)")  # not a path: its start only
