"""Property-based fuzzing of the CLI: for any input, `profet predict`, `profet scale`
and `profet train` exit 0 with finite numbers or exit 2 with one `profet: error:` line; never a
traceback. Runs in process (``main(argv)``) so hundreds of examples take seconds."""

from __future__ import annotations

import contextlib
import io
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profet_core.cli._main import main
from tests._utils import make_synthetic, synthetic_catalog

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["nan", "-inf", "inf", "1e308", "-1", "0", "1" + "0" * 400, "abc", ""]),
    st.integers(-(10**6), 10**6),
)


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse's own usage errors
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def _check(code, out, err) -> None:
    assert "Traceback" not in err
    if code == 0:
        numbers = [float(t) for t in out.replace(",", " ").split() if _is_number(t)]
        assert all(math.isfinite(v) for v in numbers), out[:500]
    else:
        assert code == 2, (code, err[-500:])
        lines = [line for line in err.splitlines() if line.strip()]
        assert lines and (lines[-1].startswith("profet: error: ") or "usage:" in err), err


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


@FUZZ
@given(lat_min=NUMBERS, lat_max=NUMBERS, size=NUMBERS, point=st.none() | NUMBERS)
def test_scale_any_numbers(trained, lat_min, lat_max, size, point):
    argv = [
        "scale",
        "--by",
        "batch",
        "--latency-min-ms",
        lat_min,
        "--latency-max-ms",
        lat_max,
        "--size",
        size,
        "--artifacts",
        trained,
    ]
    if point is not None:
        argv += ["--point", f"32={point}"]
    _check(*run(*argv))


@FUZZ
@given(latency=NUMBERS, size_from=NUMBERS, size=NUMBERS, other=NUMBERS)
def test_scale_one_point_any_numbers(trained, latency, size_from, size, other):
    argv = ["scale", "--by", "input", "--target", "gpu-c", "--latency-ms", latency]
    argv += ["--size-from", size_from, "--size", size, "--other-size", other]
    _check(*run(*argv, "--artifacts", trained))


OPS = st.dictionaries(
    st.sampled_from(["Device_Conv2D", "Device_Relu", "Host_IDLE", "Device_IDLE", "Device_X"]),
    st.one_of(st.floats(0, 1e13), st.integers(0, 10**20), st.sampled_from([-1, 1e308, 0])),
    min_size=1,
)


@FUZZ
@given(ops=OPS, latency=st.none() | NUMBERS, steps=st.none() | NUMBERS)
def test_predict_any_profile_and_options(trained, tmp_path_factory, ops, latency, steps):
    path = tmp_path_factory.mktemp("fz") / "p.json"
    path.write_text(json.dumps(ops))
    argv = ["predict", "--anchor", "gpu-a", "--profile", path, "--artifacts", trained]
    if latency is not None:
        argv += ["--anchor-latency-ms", latency]
    if steps is not None:
        argv += ["--steps", steps]
    for fmt in ("csv", "json"):
        code, out, err = run(*argv, "--format", fmt)
        _check(code, out if fmt == "csv" else "", err)
        if code == 0 and fmt == "json":
            doc = json.loads(out)
            assert all(math.isfinite(r["batch_latency_ms"]) for r in doc["predictions"])


MUTATIONS = (
    "nan-cell",
    "drop-latency-column",
    "one-row-per-instance",
    "keys-never-join",
    "bool-column",
    "one-architecture",
    "huge-time",
)


@pytest.mark.parametrize("mutation", MUTATIONS, ids=MUTATIONS)
def test_train_on_malformed_folders_fails_cleanly_before_fitting(tmp_path, mutation):
    prof, lat = make_synthetic(n_arch=3, n_exp=1)
    op = "Device_Conv2D"
    if mutation == "nan-cell":
        prof.loc[0, op] = np.nan
        prof[op] = prof[op].astype(object)
        prof.loc[1, op] = "nan"
    elif mutation == "drop-latency-column":
        lat = lat.drop(columns="batch_latency_s")
    elif mutation == "one-row-per-instance":
        prof = prof.groupby("instance").head(1)
        lat = lat.groupby("instance").head(1)
    elif mutation == "keys-never-join":
        lat = lat.assign(exp="other")
    elif mutation == "bool-column":
        prof[op] = True
    elif mutation == "one-architecture":
        prof, lat = prof[prof["model"] == "Net0"], lat[lat["model"] == "Net0"]
    else:
        prof.loc[0, op] = 1e308
    prof.to_csv(tmp_path / "profiles.csv", index=False)
    lat.to_csv(tmp_path / "latencies.csv", index=False)
    synthetic_catalog().to_csv(tmp_path / "instances.csv", index=False)
    code, _, err = run(
        "train", "--data", tmp_path, "--out", tmp_path / "art", "--methods", "hybrid"
    )
    assert code == 2 and err.strip().startswith("profet: error: ") and err.count("\n") == 1, err
    assert not (tmp_path / "art").exists()


def test_train_checks_what_it_can_before_fitting(tmp_path, monkeypatch):
    """The 2-architecture rule fires before any model is fitted (it once took 107 s)."""
    import profet_core.training._train as train_module

    prof, lat = make_synthetic(n_arch=1, n_exp=1)
    data = tmp_path / "data"  # --out may not lie inside --data
    data.mkdir()
    prof.to_csv(data / "profiles.csv", index=False)
    lat.to_csv(data / "latencies.csv", index=False)
    synthetic_catalog().to_csv(data / "instances.csv", index=False)
    monkeypatch.setattr(train_module, "_fit_everything", lambda *a: pytest.fail("fitted first"))
    code, _, err = run("train", "--data", data, "--out", tmp_path / "art")
    assert code == 2 and "at least 2 architectures" in err


@pytest.fixture(scope="module")
def big_table(tmp_path_factory):
    prof, _ = make_synthetic(n_arch=2, n_exp=1)
    ops = [c for c in prof.columns if c.startswith(("Host_", "Device_"))]
    path = tmp_path_factory.mktemp("big") / "many.csv"
    pd.concat([prof[ops]] * 40, ignore_index=True).to_csv(path, index=False)
    return path


def test_json_output_streams_every_row(trained, big_table):
    code, out, err = run(
        "predict",
        "--anchor",
        "gpu-a",
        "--profile",
        big_table,
        "--artifacts",
        trained,
        "--format",
        "json",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert len(doc["predictions"]) == 2 * len(pd.read_csv(big_table))
    assert doc["units"]["latency"] == "ms"


# ------------------------------------------------------------- tampered collect resume files
STATUS_HEAD = "exp,instance,model,input_size,batch_size,status,error_kind,message\n"
CELL = st.one_of(
    st.sampled_from(["abc", "1" + "0" * 400, "2.5", "-1", "", "nan", "maybe", "ok", "failed"]),
    st.integers(-5, 300).map(str),
    st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=6),
)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    cells=st.lists(CELL, min_size=8, max_size=8),
    head=st.sampled_from([STATUS_HEAD, "a,b\n", ""]),
)
def test_collect_over_a_tampered_status_is_refused_before_any_work(tmp_path_factory, cells, head):
    from profet_core.inputs._convention import write_folder_convention

    d = tmp_path_factory.mktemp("resume")
    write_folder_convention(d)
    row = ",".join(json.dumps(c) if "," in c or '"' in c or "\n" in c else c for c in cells)
    (d / "status.csv").write_text(head + row + "\n")
    before = sorted((p.name, p.read_bytes()) for p in d.iterdir())
    # an empty grid (InceptionV3 needs >= 75 px): only the checks run, never a workload
    code, out, err = run(
        "collect", "--instance", "x1", "--out", d, "--models", "InceptionV3",
        "--input-sizes", "32", "--batch-sizes", "16",
    )  # fmt: skip
    assert code in (0, 2) and "Traceback" not in err
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("profet: error:")
        assert sorted((p.name, p.read_bytes()) for p in d.iterdir()) == before
