"""One answer everywhere: for GPUs 1 and all, fp32 and amp, with and without a run,
every instance's USD/h, cost and pick agree between the CLI's table, CSV and JSON and the Anchor
page's table, metrics, chart and time-cost front; each pick names its criterion on screen.

The per-target table (GPU configurations, each priced by the offering renting it cheapest) and
the offerings (SkyPilot's catalog) are compared each with its own CLI command (``profet
predict``, ``profet predict --offerings``), and with each other and ``profet instances``: one
price source, so an instance type (p5.48xlarge) has one USD/h wherever it appears."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pandas as pd
import pytest

from profet_core import format_number
from tests._utils import run
from tests.app._utils import no_exception, plotly_spec
from tests.app.test_anchor_offerings import _front, _grid

#: Each case drives the CLI and the page several times: about 5 s or more.
pytestmark = pytest.mark.slow

ANCHOR = "g3s.xlarge"
RUN = {"dataset_images": 50_000, "epochs": 10}
CASES = [
    pytest.param(gpus, precision, with_run, id=f"gpus-{gpus}-{precision}-{'run' if with_run else 'steps'}")
    for gpus in ("1", "all")
    for precision in ("fp32", "amp")
    for with_run in (False, True)
]  # fmt: skip
CRITERIA = {  # (criterion, time column, cost column) by (GPUs differ, run)
    (False, False): ("per step", "batch_latency_ms", "usd_per_1000_steps"),
    (True, False): ("per image", "ms_per_batch", "usd_per_1000_batches"),
    (False, True): ("whole run", "run_hours", "run_usd"),
    (True, True): ("whole run", "run_hours", "run_usd"),
}


def _cli(predictor, tmp_path, gpus, precision, with_run, *more) -> dict:
    """``profet predict`` of the page's built-in example as table, CSV and JSON."""
    example = predictor.examples[ANCHOR]
    path = tmp_path / "example.json"
    path.write_text(json.dumps(example["profile"]))
    args = ["predict", "--anchor", ANCHOR, "--profile", path, "--precision", precision]
    args += ["--gpus", gpus, "--anchor-latency-ms", repr(1000 * example["batch_latency_s"])]
    args += ["--batch-size", int(example["batch_size"]), "--input-size", int(example["input_size"])]
    if with_run:
        args += ["--dataset-images", RUN["dataset_images"], "--epochs", RUN["epochs"]]
    out = {}
    for fmt in ("table", "csv", "json"):
        code, text, err = run(*args, *more, "--format", fmt)
        assert code == 0, err
        out[fmt] = text
    out["stderr"] = err
    return out


def _page(page, gpus, precision, with_run):
    at = page("anchor").run()
    at.selectbox(key="anchor").set_value(ANCHOR).run()
    at.radio(key="precision").set_value(precision)
    at.radio(key="gpus").set_value(gpus)
    if with_run:
        at.number_input(key="dataset_images").set_value(RUN["dataset_images"])
        at.number_input(key="epochs").set_value(RUN["epochs"])
    at.button(key="predict").click().run(timeout=60)
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    return at


def _table_lines(text: str, records: pd.DataFrame) -> dict:
    """The CLI table's lines by the configuration each shows (in the JSON records' order)."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:2] == ["row", "configuration"])
    body = lines[at + 1 :]
    assert len(body) == len(records)
    out = {}
    for line, (config, target) in zip(body, records[["configuration", "target"]].to_numpy(), strict=True):  # fmt: skip
        assert f" {config} " in line and f" {target} " in line, (config, line)
        out[config] = line
    return out


def _assert_line_shows(line: str, values: dict) -> None:
    for col, v in values.items():  # no price (a GPU no offering rents): a dash, as the page
        shown = "-" if pd.isna(v) else format_number(v)
        assert f" {shown} " in f" {line} ", (col, v, line)


@pytest.mark.parametrize(("gpus", "precision", "with_run"), CASES)
def test_every_target_and_offering_agrees_across_cli_and_page(
    page, predictor, tmp_path, gpus, precision, with_run
):
    at = _page(page, gpus, precision, with_run)
    cli = _cli(predictor, tmp_path, gpus, precision, with_run)
    csv = pd.read_csv(io.StringIO(cli["csv"]), keep_default_na=False, na_values=[""])
    csv["pick"] = csv["pick"].fillna("")  # an empty cell
    doc = json.loads(cli["json"])
    records = pd.DataFrame(doc["predictions"])
    differ = records["gpus"].nunique() > 1
    name, time_col, cost_col = CRITERIA[(differ, with_run)]
    assert doc["picks"] == {"criterion": name, "time": time_col, "cost": cost_col}
    assert f"picks ({name}): fastest = least" in cli["table"]

    # The per-target table: CLI table, CSV, JSON and the page's grid, row by row.
    shown = next(d.value for d in at.dataframe if "batch_latency_ms" in d.value.columns)
    shown = shown.reset_index(drop=True)
    for col in ("configuration", "target"):
        assert list(csv[col]) == list(records[col]) == list(shown[col].astype(str)), col
    assert records["configuration"].is_unique  # one row per GPU configuration
    lines = _table_lines(cli["table"], records)
    for i, r in records.iterrows():
        for col in ("usd_per_hour", cost_col, time_col):
            assert csv.at[i, col] == pytest.approx(r[col], rel=1e-3, nan_ok=True), (
                r["target"],
                col,
            )
            # the JSON's 10 decimals
            assert shown.at[i, col] == pytest.approx(r[col], rel=1e-6, nan_ok=True), (
                r["target"],
                col,
            )
        assert csv.at[i, "pick"] == r["pick"] == shown.at[i, "pick"]
        line = lines[r["configuration"]]
        _assert_line_shows(line, {c: r[c] for c in ("usd_per_hour", cost_col)})
        assert line.rstrip().endswith(r["pick"] or "-")
    picks = {p: records.loc[records["pick"].str.contains(p), "configuration"] for p in ("fastest", "cheapest", "best value")}  # fmt: skip
    assert all(len(v) == 1 for v in picks.values()), picks
    # ... its metrics and chart arrows name the same targets, with the criterion
    metrics = {m.label: m.value for m in at.metric}
    for what, target in picks.items():
        assert metrics[f"{what.capitalize()} target ({name})"] == target.iloc[0]
    marks = {  # every pick marked, a row picked twice labelled once with both
        what: a["x"]
        for a in plotly_spec(at)["layout"]["annotations"]
        for what in a["text"].removesuffix(f" ({name})").split(", ")
    }
    assert marks == {what: target.iloc[0] for what, target in picks.items()}

    # The offerings: CLI table, CSV and JSON and the page's front (on-demand, as the CLI's).
    off = _cli(predictor, tmp_path, gpus, precision, with_run, "--offerings")
    ocsv = pd.read_csv(io.StringIO(off["csv"]), keep_default_na=False, na_values=[""])
    ojson = pd.DataFrame(json.loads(off["json"])["offerings"])
    grid = _grid(at)
    key = ["cloud", "instance", "region", "market"]
    ocsv, ojson, grid = (frame.set_index(key) for frame in (ocsv, ojson, grid))
    assert set(ocsv.index) == set(ojson.index) == set(grid.index)
    _assert_one_price(records, shown, lines, ojson)
    _assert_front_picks_the_same_configurations(records, ojson, name, time_col, cost_col)
    o_differ = ojson["gpus_used"].nunique() > 1
    o_name, o_time, o_cost = CRITERIA[(o_differ, with_run)]
    assert f"Picks ({o_name}): fastest = least" in off["stderr"]
    grid = grid.loc[ojson.index]
    ocsv = ocsv.loc[ojson.index]
    for col, g in (("usd_per_hour", "usd_per_hour"), (o_cost, o_cost), (o_time, o_time)):
        np.testing.assert_allclose(grid[g].to_numpy(float), ojson[col].to_numpy(float), rtol=1e-6)
        np.testing.assert_allclose(ocsv[col].to_numpy(float), ojson[col].to_numpy(float), rtol=1e-3)
    assert (ocsv["pick"].fillna("") == ojson["pick"]).all()
    assert (grid["pick"] == ojson["pick"]).all()
    # The CLI table shows the columns its picks rest on, and each pick beside them.
    head = next(line for line in off["table"].splitlines() if line.split()[:2] == ["row", "cloud"])
    assert {o_time, o_cost} <= set(head.split())
    o_picks = ojson[ojson["pick"] != ""]
    spec = _front(at)
    texts = [a["text"] for a in spec["layout"]["annotations"]]
    for (cloud, instance, _, _), r in o_picks.iterrows():
        line = next(
            x
            for x in off["table"].splitlines()
            if f" {instance} " in x and x.rstrip().endswith(r["pick"])
        )
        _assert_line_shows(line, {"usd_per_hour": r["usd_per_hour"], o_cost: r[o_cost]})
        label = f"{r['pick']} ({o_name}): {cloud} {instance}"
        check = f" (price to check: {r['price_check']})" if r["price_check"] else ""
        assert label + check in texts  # a flagged catalog price is said on the chart too


def _instances_prices() -> pd.DataFrame:
    """``profet instances --format csv``: each type at its cheapest region, by cloud and type."""
    code, text, err = run("instances", "--format", "csv")
    assert code == 0, err
    listed = pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""])
    return listed.set_index(["cloud", "instance"])


def _assert_one_price(records, shown, lines, offerings) -> None:
    """Every per-target row names the offering its USD/h is from (in the CLI's table, CSV and
    JSON and the page's grid); that offering has the same USD/h in the offerings view (CLI and
    page front, compared above) and in ``profet instances``."""
    listed = _instances_prices()
    assert list(shown["offering"].fillna("")) == list(records["offering"])
    priced = records[records["offering"] != ""]
    assert set(records.loc[records["offering"] == "", "target"]) <= {"p2.xlarge"}  # retired
    for _, r in priced.iterrows():
        assert r["offering"] in lines[r["configuration"]], (r["configuration"], r["offering"])
        cloud, instance, region = re.fullmatch(r"(\S+) (\S+) \((.*)\)", r["offering"]).groups()
        there = offerings.loc[(cloud, instance, region, "on-demand")]
        assert there["usd_per_hour"] == pytest.approx(r["usd_per_hour"], rel=1e-9), r["target"]
        assert listed.at[(cloud, instance), "region"] == region
        assert listed.at[(cloud, instance), "usd_per_hour"] == pytest.approx(
            r["usd_per_hour"], rel=1e-3
        )
    # Each configuration at the least USD/h of the front's offerings renting at least as many
    # of its GPU (never above one renting more: 4 x V100 cost 11.81 beside 8 x V100 at 6.32)
    front = offerings[offerings["target"].ne("") & offerings["target"].ne(ANCHOR)]
    configs = front.groupby(["target", "gpus_used"]).size().index
    least = {
        (t, n): front.loc[front["target"].eq(t) & front["gpus_used"].ge(n), "usd_per_hour"].min()
        for t, n in configs
    }
    mine = priced.set_index(["target", "gpus"])["usd_per_hour"]
    assert set(mine.index) == set(least)
    for key, usd in least.items():
        assert mine[key] == pytest.approx(usd, rel=1e-9), key


def _assert_front_picks_the_same_configurations(records, offerings, name, time_col, cost_col):
    """The per-target table's fastest, cheapest and best value are the front's: the same
    configuration (GPU as predicted, GPUs used), criterion, USD/h, time and cost."""
    o_name = CRITERIA[(offerings["gpus_used"].nunique() > 1, time_col == "run_hours")][0]
    assert o_name == name
    for what in ("fastest", "cheapest", "best value"):
        mine = records[records["pick"].str.contains(what)].iloc[0]
        theirs = offerings[offerings["pick"].str.contains(what)].iloc[0]
        assert (mine["target"], mine["gpus"]) == (theirs["target"], theirs["gpus_used"]), what
        for col in ("usd_per_hour", time_col, cost_col):
            assert mine[col] == pytest.approx(theirs[col], rel=1e-9), (what, col)
