"""What ``sky_plan`` refuses before SkyPilot starts (no child process, no seconds of imports): task
files that are no regular file, YAML nested or aliased past its bounds, tasks that ask for no GPU
or for too many candidates, GPU counts no instance has, catalog files that are no SkyPilot
catalog; and the child itself bounded in time, its folder removed whatever happens."""

from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profet_core import ProfetError, ProfetValueError, read_profile
from profet_core.sky import _offline, _task, sky_plan
from tests.core.sky._utils import ROOT, needs_sky, task_yaml, write_catalog

pytestmark = needs_sky  # SkyPilot's YAML library (its own dependency) reads the task
RUN = {"dataset_images": 50_000, "epochs": 10}
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\n"


@pytest.fixture(scope="module")
def profile():
    return read_profile(ROOT / "examples" / "profile_g3s.json")


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    return write_catalog(tmp_path_factory.mktemp("catalogs") / "v8")


@pytest.fixture
def no_child(monkeypatch):
    """SkyPilot's child process must not start: the refusal comes before it."""

    def never(*_args, **_kwargs):
        raise AssertionError("the SkyPilot child was started")

    monkeypatch.setattr(_offline, "run_child", never)
    monkeypatch.setattr("profet_core.sky._plan.run_child", never)


def _refused(path, profile, catalog, match, **kwargs) -> str:
    with pytest.raises(ProfetError) as got:
        sky_plan(path, profile, catalog=catalog, **{**RUN, **kwargs})
    text = str(got.value)
    assert "\n" not in text and "Traceback" not in text
    assert match in text, text
    return text


def test_task_paths_that_are_no_file_say_what_they_are(tmp_path, profile, catalog, no_child):
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.yaml"
    loop.symlink_to(loop)
    for path, match in (
        ("/dev/zero", "a character device"),
        (fifo, "a named pipe (FIFO)"),
        (tmp_path, "a folder"),
        (loop, "a symlink loop"),
        ("", "path is empty"),
    ):
        _refused(path, profile, catalog, match)


def test_an_alias_bomb_is_refused_before_skypilot_reads_it(tmp_path, profile, catalog, no_child):
    # 341 bytes that expand to 9**10 nodes: SkyPilot's duplicate-key walk never ended on it
    text, prev = "a: &a [x,x,x,x,x,x,x,x,x]\n", "a"
    for name in "bcdefghij":
        text += f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]\n"
        prev = name
    (tmp_path / "bomb.yaml").write_text(text)
    _refused(tmp_path / "bomb.yaml", profile, catalog, "aliases")


def test_deep_nesting_is_refused_without_a_recursion_error(tmp_path, profile, catalog, no_child):
    (tmp_path / "deep.yaml").write_text("resources: " + "[" * 50_000 + "]" * 50_000 + "\n")
    _refused(tmp_path / "deep.yaml", profile, catalog, "nests deeper than")


@pytest.mark.parametrize(
    "resources",
    [
        "resources: {cpus: 4+}\n",
        "run: echo\n",
        "resources: {accelerators: null}\n",
        "resources: {any_of: []}\n",
        "resources: {ordered: []}\n",
        "resources: {any_of: [{cpus: 4}, {memory: 16}]}\n",
    ],
    ids=["cpus", "no-resources", "accelerators-null", "any_of-empty", "ordered-empty", "cpus-only"],
)
def test_a_task_without_a_gpu_is_refused_in_one_line(
    tmp_path, profile, catalog, no_child, resources
):
    (tmp_path / "t.yaml").write_text("name: cpu\n" + resources)
    _refused(tmp_path / "t.yaml", profile, catalog, "the task asks for no GPU")


def test_a_task_of_tpus_only_is_refused_naming_them(tmp_path, profile, catalog, no_child):
    (tmp_path / "t.yaml").write_text("resources: {accelerators: [tpu-v4-8, tpu-v5-lite:4]}\n")
    text = _refused(tmp_path / "t.yaml", profile, catalog, "asks for no GPU PROFET predicts")
    assert "'tpu-v4-8' is a TPU: PROFET predicts NVIDIA GPUs only" in text
    assert "'tpu-v5-lite' is a TPU" in text


def test_too_many_candidates_are_refused_with_the_cap(tmp_path, profile, catalog, no_child):
    path = task_yaml(tmp_path / "t.yaml", [f"T4:{1 + i % 8}" for i in range(500)])
    text = _refused(path, profile, catalog, "500 candidate resources")
    assert f"at most {_task.MAX_CANDIDATES}" in text


@pytest.mark.parametrize(
    ("accelerators", "match"),
    [
        ("H100:nan", "GPU count nan of 'H100' is not a number of GPUs"),
        ("H100:inf", "GPU count inf of 'H100' is not a number of GPUs"),
        ("H100:1e400", "GPU count inf of 'H100' is not a number of GPUs"),
        ("H100:-2", "GPU count -2 of 'H100' is not a number of GPUs"),
        ("{T4: 9223372036854775808}", "GPU count 9.22337e+18 of 'T4': no instance"),
        ("{T4: 1" + "0" * 400 + "}", "(a 401-digit number) of 'T4': no instance"),
        ("''", "an accelerator name is empty"),
        ("':4'", "an accelerator name is empty"),
        ("'A100(:1'", "accelerator name 'A100(' is not allowed"),
        ('"\\e[31mT4"', "accelerator name '\\x1b[31mT4' is not allowed"),
    ],
    ids=[
        "nan",
        "inf",
        "1e400",
        "negative",
        "2^63",
        "10^400",
        "empty",
        "empty-name",
        "regex",
        "esc",
    ],
)
def test_counts_and_names_no_instance_has_are_refused(
    tmp_path, profile, catalog, no_child, accelerators, match
):
    (tmp_path / "t.yaml").write_text(f"resources:\n  accelerators: {accelerators}\n")
    _refused(tmp_path / "t.yaml", profile, catalog, match)


def _catalog_with(root, cloud: str, data: bytes | None = None, link: str | None = None):
    write_catalog(root)
    target = root / cloud / "vms.csv"
    target.unlink()
    if link is not None:
        target.symlink_to(link)
    elif data is None:
        os.mkfifo(target)
    else:
        target.write_bytes(data)
    return root


@pytest.mark.parametrize(
    ("kind", "match"),
    [
        (b"", "is empty"),
        (os.urandom(4096), "not UTF-8"),
        (b"a,b,c\n1,2,3\n", "lacks column(s)"),
        (None, "a named pipe (FIFO)"),
        ("/dev/zero", "is a character device, not a regular file"),
        ("/etc/shadow", "a link to '/etc/shadow', outside the catalog folder"),
        (HEADER.replace("Region", "Price,Region").encode(), "column(s) ['Price'] twice"),
    ],
    ids=["empty", "random-bytes", "wrong-columns", "fifo", "dev-zero", "link-out", "price-twice"],
)
def test_catalog_files_that_are_no_catalog_are_refused_before_anything_is_copied(
    tmp_path, profile, no_child, kind, match
):
    if isinstance(kind, str):
        folder = _catalog_with(tmp_path / "v8", "aws", link=kind)
    else:
        folder = _catalog_with(tmp_path / "v8", "aws", data=kind)
    path = task_yaml(tmp_path / "t.yaml", ["T4:1"])
    text = _refused(path, profile, folder, match)
    assert "aws" in text  # the file is named


def test_an_empty_catalog_path_is_refused(tmp_path, profile, no_child):
    path = task_yaml(tmp_path / "t.yaml", ["T4:1"])
    _refused(path, profile, "", "path is empty")


def test_a_timeout_is_a_profet_error_and_the_folder_is_removed(
    tmp_path, profile, catalog, monkeypatch
):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    path = task_yaml(tmp_path / "t.yaml", ["T4:1"])
    with pytest.raises(ProfetValueError, match=r"took over 0\.01 s"):
        sky_plan(path, profile, catalog=catalog, timeout_s=0.01, **RUN)
    assert list((tmp_path / "tmp").iterdir()) == []  # the child's folder is gone


def test_a_plan_priced_at_no_price_is_refused_and_a_year_long_one_warned():
    # SkyPilot composes GCP's prices from machine rows listed at 0: a plan at 0 USD/h (or a
    # price past any offering's) is no plan
    import pandas as pd

    from profet_core.sky._notes import check_prices, sense_warnings

    row = {"candidate": "A100:8", "cloud": "gcp", "instance": "a2-highgpu-8g", "region": "r"}
    for price in (0.0, -1.0, 1e308):
        with pytest.raises(ProfetValueError, match="outside the plausible 0.0001..1,000 USD/h"):
            check_prices(pd.DataFrame([{**row, "usd_per_hour": price}]))
    check_prices(pd.DataFrame([{**row, "usd_per_hour": 29.4}]))
    table = pd.DataFrame(
        [{**row, "run_hours": 5.3e9}, {**row, "candidate": "T4:1", "run_hours": 2}]
    )
    (said,) = sense_warnings(table)
    assert "more than a year on 1 of 2 candidate(s)" in said and "A100:8" in said


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["T4", "A100:8", "H100:nan", "tpu-v4-8", ":4", "A100(:1", "a\x1bb", ""]),
)
_KEYS = st.sampled_from(["accelerators", "any_of", "ordered", "cpus", "instance_type", "x"])
_RESOURCES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.one_of(_KEYS, st.text(max_size=5)), inner)
    ),
    max_leaves=12,
)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(resources=_RESOURCES)
def test_any_resources_are_checked_or_refused_in_one_line(tmp_path, resources):
    import yaml

    path = tmp_path / "t.yaml"  # rewritten by each example
    path.write_text(yaml.safe_dump({"resources": resources}, allow_unicode=True))
    try:
        _, doc = _task.read_task(path)
        _task.check_resources(doc)
    except ProfetError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 600
