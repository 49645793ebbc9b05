"""Property suite of the input classes that once crashed, hung or injected: numbers at the edges, CSV structure, instance names,
injection and large tables. Each generator feeds every reader or writer of its class; the
property is a finite, plausible answer or one ProfetError naming the problem (short, without a
300-digit number), and user text that never comes out live."""

from __future__ import annotations

import json
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from profet_core import ProfetError, estimate_run, latency_seconds, parse_profile
from profet_core._schema import MIN_LATENCY_S, MIN_ROW_TOTAL_US
from profet_core.doe import analyze, doe_figures, read_results
from profet_core.features._profile_features import ProfileNovelty
from profet_core.inputs._catalog import validate_catalog
from profet_core.inputs._csv import check_csv_text, escape_formulas, escape_text
from profet_core.inputs._rules import INSTANCE_RE
from profet_core.models._intervals import novelty_band, novelty_bands
from profet_core.prediction._trained import pair_name

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
#: Numbers at the edges, as values and as the text a user would type.
EDGE = st.one_of(
    st.sampled_from([1e-320, 5e-324, 1e-300, 1e300, 1.7e308, -0.0, 0.0, 2.0**63, 1e-7, 1e12]),
    st.sampled_from([10**400, -(10**30), True, False, math.nan, math.inf, -math.inf]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**40), 10**40),
)
EDGE_TEXT = st.one_of(
    EDGE.map(repr), st.sampled_from(["1" + "0" * 400, "1e-320", "True", "nan", "-inf", " 5", ""])
)


def _short(exc: Exception) -> None:
    text = str(exc)
    assert len(text) < 600 and not re.search(r"\d{30}", text), text[:300]


def _quiet(fn, *args, **kwargs):
    """Call ``fn``; a RuntimeWarning (overflow, invalid value) is a failure."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        return fn(*args, **kwargs)


# ------------------------------------------------------------------------- numbers at the edges
@FUZZ
@given(ops=st.lists(EDGE, min_size=1, max_size=3), latency=st.none() | EDGE)
def test_edge_numbers_in_a_json_profile(ops, latency):
    body = {"ops": {f"Device_Op{i}": v for i, v in enumerate(ops)}}
    if latency is not None:
        body["batch_latency_s"] = latency
    try:
        df = _quiet(parse_profile, json.dumps(body, allow_nan=True), "p.json")
    except ProfetError as exc:
        _short(exc)
        return
    times = df[[c for c in df.columns if c.startswith("Device_")]].to_numpy(dtype=float)
    assert np.isfinite(times).all() and (times.sum(axis=1) >= MIN_ROW_TOTAL_US).all()
    if "batch_latency_s" in df:
        lat = df["batch_latency_s"].to_numpy(dtype=float)
        assert ((lat >= MIN_LATENCY_S) & (lat <= 1e6)).all()


@FUZZ
@given(cells=st.lists(EDGE_TEXT, min_size=2, max_size=2), latency=EDGE_TEXT)
def test_edge_numbers_in_a_csv_profile(cells, latency):
    text = f"Device_A,Device_B,batch_latency_s\n{cells[0]},{cells[1]},{latency}\n"
    try:
        df = _quiet(parse_profile, text, "p.csv")
    except ProfetError as exc:
        _short(exc)
        return
    assert np.isfinite(df[["Device_A", "Device_B"]].to_numpy(dtype=float)).all()


@FUZZ
@given(value=EDGE, unit=st.sampled_from(["s", "ms", "µs"]))
def test_edge_latencies_in_any_unit(value, unit):
    try:
        seconds = _quiet(latency_seconds, value, unit)
    except ProfetError as exc:
        _short(exc)
        assert f" {unit} is not allowed" in str(exc)
        return
    assert MIN_LATENCY_S <= seconds <= 1e6


@FUZZ
@given(images=EDGE, batch=EDGE, epochs=EDGE)
def test_edge_run_costs(images, batch, epochs):
    table = pd.DataFrame({"batch_latency_ms": [50.0], "usd_per_hour": [3.0]})
    try:
        out = _quiet(estimate_run, table, images, batch, epochs)
    except ProfetError as exc:
        _short(exc)
        return
    assert np.isfinite(out[["run_hours", "run_usd"]].to_numpy()).all()


@FUZZ
@given(price=st.one_of(EDGE, EDGE_TEXT))
def test_edge_catalog_prices(price):
    table = pd.DataFrame({"instance": ["g4dn.xlarge"], "gpu": ["T4"], "usd_per_hour": [price]})
    try:
        out = _quiet(validate_catalog, table)
    except ProfetError as exc:
        _short(exc)
        return
    p = float(out["usd_per_hour"].iloc[0])
    assert p == 0 or 1e-4 <= p <= 1e4


@FUZZ
@given(y=st.lists(EDGE_TEXT, min_size=8, max_size=8))
# hypothesis found it: one constant tiny response (its rounding residual ~1e-45) gave F = 1e31
@example(y=["1e-07"] * 5 + ["nan"] * 3)
def test_edge_doe_responses(y):
    rows = [
        f"{a},{b},{v}"
        for (a, b), v in zip([(-1, -1), (1, -1), (-1, 1), (1, 1)] * 2, y, strict=True)
    ]
    try:
        res = _quiet(analyze, read_results(("A,B,y\n" + "\n".join(rows)).encode()), "y")
    except ProfetError as exc:
        _short(exc)
        return
    f = res.anova["F"].to_numpy(dtype=float)
    assert not (np.isfinite(f) & (f > 1e12)).any(), res.anova  # no F = 2e32 from rounding
    assert np.isfinite(res.anova["sum_sq"].to_numpy(dtype=float)).all()


# ------------------------------------------------------------------------------ CSV structure
@FUZZ
@given(
    n_cols=st.integers(1, 5),
    n_rows=st.integers(1, 6),
    row=st.integers(0, 5),
    mutation=st.sampled_from(["extra", "missing", "comma-space", "quoted-extra", "none"]),
)
def test_csv_structure_mutations_are_found_on_their_line(n_cols, n_rows, row, mutation):
    header = [f"Device_Op{i}" for i in range(n_cols)]
    lines = [",".join(header)] + [",".join(["5"] * n_cols) for _ in range(n_rows)]
    at = 1 + row % n_rows
    if mutation == "extra":
        lines[at] += ",7"
    elif mutation == "missing" and n_cols > 1:
        lines[at] = ",".join(["5"] * (n_cols - 1))
    elif mutation == "comma-space" and n_cols > 1:
        lines[0] = ", ".join(header)
    elif mutation == "quoted-extra":
        lines[at] = '"5",' + lines[at]
    text = "\n".join(lines) + "\n"
    changed = text != "\n".join([",".join(header)] + [",".join(["5"] * n_cols)] * n_rows) + "\n"
    for reader in (lambda t: check_csv_text(t, "t"), lambda t: parse_profile(t, "p.csv")):
        if not changed:
            reader(text)
            continue
        with pytest.raises(ProfetError) as exc:
            reader(text)
        where = "spaces around it" if mutation == "comma-space" else f"line {at + 1}:"
        assert where in str(exc.value), (text, str(exc.value))


# ----------------------------------------------------------------------------- instance names
NAMES = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["a->b", "b->a", "a", "g4dn.xlarge", "x,y", "->", "a-", "-a", "é", "a\nb"]),
)


@FUZZ
@given(names=st.lists(NAMES, min_size=1, max_size=4, unique=True))
def test_accepted_instance_names_give_distinct_pair_keys(names):
    table = pd.DataFrame({"instance": names, "gpu": "G", "usd_per_hour": 1.0})
    try:
        out = validate_catalog(table)
    except ProfetError as exc:
        _short(exc)
        assert any(
            not INSTANCE_RE.fullmatch(str(n).strip()) for n in names
        ) or "more than once" in str(exc)
        return
    kept = out["instance"].tolist()
    assert all(INSTANCE_RE.fullmatch(n) for n in kept)
    keys = [pair_name(a, b) for a in kept for b in kept if a != b]
    assert len(keys) == len(set(keys))


# ---------------------------------------------------------------------------------- injection
HOSTILE = st.one_of(
    st.sampled_from(
        [
            '<a href="http://evil.example/">x</a>',
            '<img src="http://evil.example/i.png">',
            "[x](http://evil.example)",
            '=HYPERLINK("http://evil.example")',
            "+cmd",
            "@SUM(1)",
            "<b>bold</b>",
            "-1.5",
        ]
    ),
    st.text(alphabet="<>&\"'=+-@[]()!ab/:", min_size=1, max_size=12),
)
LIVE = re.compile(r"<\s*(a|img|b|i|br|span)\b", re.IGNORECASE)


@pytest.mark.slow
@FUZZ
@given(low=HOSTILE, high=HOSTILE, response=HOSTILE)
def test_hostile_labels_never_come_out_live(low, high, response):
    if low == high or response in ("A", "B"):
        return
    df = pd.DataFrame(
        {
            "A": [low, high] * 4,
            "B": ["u", "u", "v", "v"] * 2,
            response: [1, 2.5, 3, 4.5, 1.2, 2.2, 3.3, 4.4],
        }
    )
    try:
        res = analyze(df, response, ["A", "B"])
    except ProfetError as exc:
        _short(exc)
        return
    for fig in doe_figures(res).values():
        spec = fig.to_plotly_json()
        texts = [str(t.get("name", "")) for t in spec["data"]]
        texts += [str(x) for t in spec["data"] for x in (t.get("x") or []) if isinstance(x, str)]
        texts += [json.dumps(spec["layout"].get("title", ""))]
        texts += [json.dumps(a) for a in spec["layout"].get("annotations", [])]
        assert not [t for t in texts if LIVE.search(t)], texts
    for table in (res.anova, res.effects, res.coefficients, df):
        out = escape_formulas(table)
        cells = out.to_numpy().ravel().tolist() + list(out.columns) + list(out.index)
        assert all(escape_text(c) == c for c in cells if isinstance(c, str))


# ------------------------------------------------------------------------------- large tables
@FUZZ
@given(
    novelty=st.lists(
        st.one_of(st.floats(-1, 10), st.just(math.nan), st.just(math.inf)), max_size=40
    ),
    seed=st.integers(0, 10),
)
def test_vectorised_bands_equal_the_row_lookup(novelty, seed):
    bands = pd.DataFrame(
        {
            "estimator": "hybrid",
            "with_latency": [False, False, True, True],
            "band": ["lo", "hi", "lo", "hi"],
            "novelty_lo": [0.0, 1.5, 0.0, 2.0],
            "novelty_hi": [1.5, np.inf, 2.0, np.inf],
            "share_pct": 50.0,
            "mape_pct": [5.0, 15.0, 4.0, 14.0],
        }
    )
    lat = np.random.default_rng(seed).random(len(novelty)) < 0.5
    band, mape = novelty_bands(bands, np.array(novelty, dtype=float), lat, "hybrid")
    for i, n in enumerate(novelty):
        one = novelty_band(bands, n, bool(lat[i]), "hybrid")
        assert band[i] == (one["band"] if one else None)


@pytest.mark.parametrize("n", [1, 1999, 2000, 20_001], ids=lambda n: f"{n}-rows")
def test_novelty_brute_and_kd_tree_equal_the_plain_formula(n):
    rng = np.random.default_rng(n)
    score = ProfileNovelty(n_neighbors=3).fit(rng.normal(size=(40, 6)))
    X = rng.normal(size=(n, 6)) * 3
    Z, ref = score._z(X), score.reference_
    plain = np.sort(np.sqrt(((Z[:, None, :] - ref[None]) ** 2).sum(-1)), axis=1)[:, :3].mean(1)
    np.testing.assert_allclose(score.distance(X), plain, rtol=1e-9, atol=1e-9)


# --------------------------------------------------------------------- library type misuse
JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**400), 10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.binary(max_size=8),
    st.lists(st.one_of(st.integers(), st.text(max_size=5), st.none()), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    st.just(object()),
)


@pytest.fixture(scope="module")
def shipped():
    from profet_core import load_artifacts, read_profile
    from tests._utils import ROOT

    profile = read_profile(ROOT / "examples" / "profile_g3s.json")
    return load_artifacts(), profile


@FUZZ
@given(
    arg=st.sampled_from(["anchor_latency_s", "targets", "batch_size", "input_size", "method"]),
    value=JUNK,
)
def test_predict_with_any_argument_raises_only_profet_errors(shipped, arg, value):
    predictor, profile = shipped
    try:
        result = _quiet(predictor.predict, "g3s.xlarge", profile, **{arg: value})
    except ProfetError as exc:
        _short(exc)
        return
    table = result.table
    assert np.isfinite(table["batch_latency_ms"]).all() and (table["batch_latency_ms"] > 0).all()
    p_fit = table["p_fit"].dropna()
    assert ((p_fit >= 0) & (p_fit <= 1)).all()


@FUZZ
@given(cell=JUNK, column=st.sampled_from(["Device_Conv2D", "batch_latency_s", "steps"]))
def test_any_cell_in_a_profile_frame_raises_only_profet_errors(shipped, cell, column):
    predictor, profile = shipped
    frame = profile.astype(object)
    frame[column] = [cell]
    try:
        result = _quiet(predictor.predict, "g3s.xlarge", frame)
    except ProfetError as exc:
        _short(exc)
        return
    assert np.isfinite(result.table["batch_latency_ms"]).all()


@FUZZ
@given(
    func=st.sampled_from(["read_profile", "parse_profile", "load_artifacts", "estimate_run"]),
    value=JUNK,
)
def test_public_functions_with_any_first_argument_raise_only_profet_errors(func, value):
    import profet_core

    args = (value, 1000, 32, 1) if func == "estimate_run" else (value,)
    try:
        getattr(profet_core, func)(*args)
    except ProfetError as exc:
        _short(exc)


@FUZZ
@given(factor=st.floats(1e-12, 1e12), busy=st.floats(1e-3, 1e8))
def test_latency_far_off_the_profile_is_an_error_never_an_interval(factor, busy):
    # a latency 100,000x off once answered with an interval of 5.5e-10..200,080 ms
    from profet_core.inputs._sanity import RATIO_HIGH, RATIO_LOW, profile_checks

    profile = pd.DataFrame([{"Device_Conv2D": busy, "Host_IDLE": 10.0}])
    lat = busy / 1e6 / 1.9 * factor
    if not 1e-6 <= lat <= 1e6:
        return
    findings = profile_checks(profile, lat)
    ratio = busy / (lat * 1e6)
    if busy >= 1 and not RATIO_LOW / 1000 <= ratio <= RATIO_HIGH * 1000:
        assert any(f.level == "error" for f in findings)
