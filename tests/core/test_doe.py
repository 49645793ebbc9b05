"""Tests of two-level factorial design and analysis (profet_core._doe, _doe_plots, _doe_cli)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm

from profet_core._doe import (
    Factor,
    analyze,
    default_factors,
    demo_results,
    make_design,
    montgomery_filtration_example,
    parse_factor,
    read_results,
)
from profet_core._doe_cli import main
from profet_core._doe_plots import doe_figures
from profet_core.errors import ProfetFileNotFoundError, ProfetValueError

STUDY = [
    "cpu=750m,1500m",
    "memory=1.5Gi,3Gi",
    "network=FashionMNISTCNN,FashionMNISTResNet",
    "epochs=5,10",
]


@pytest.fixture(scope="module")
def montgomery():
    return analyze(montgomery_filtration_example(), "filtration_rate")


# ------------------------------------------------------------------------ published examples
# Montgomery, Design and Analysis of Experiments, Example 8.1 (2^(4-1), I = ABCD): data
# (1)=45, ad=100, bd=45, ab=65, cd=75, ac=60, bc=80, abcd=96 and the published effects.
@pytest.mark.parametrize(
    ("letters", "effect"),
    [
        ("A", 19.0),
        ("B", 1.5),
        ("C", 14.0),
        ("D", 16.5),
        ("AB = CD", -1.0),
        ("AC = BD", -18.5),
        ("AD = BC", 19.0),
    ],
    ids=["A", "B", "C", "D", "AB+CD", "AC+BD", "AD+BC"],
)
def test_montgomery_filtration_effects(montgomery, letters, effect):
    row = montgomery.effects.set_index("letters").loc[letters]
    assert row["effect"] == pytest.approx(effect)
    assert row["coef"] == pytest.approx(effect / 2)


def test_montgomery_example_data_is_the_published_fraction():
    df = montgomery_filtration_example()
    design = make_design(["A=-1,1", "B=-1,1", "C=-1,1", "D=-1,1"], "D=ABC", randomize=False)
    coded = design.coded().to_numpy()
    np.testing.assert_array_equal(
        coded, df[["temperature", "pressure", "concentration", "stirring_rate"]].to_numpy()
    )
    assert df["filtration_rate"].tolist() == [45, 100, 45, 65, 75, 60, 80, 96]


def test_montgomery_unreplicated_has_no_error_term(montgomery):
    assert montgomery.df_resid == 0
    assert not montgomery.has_error
    assert montgomery.shapiro is None
    assert montgomery.anova["F"].isna().all()
    assert "half_normal" in doe_figures(montgomery)
    assert "qq" not in doe_figures(montgomery)
    # orthogonal +/-1 design: SS = N * effect^2 / 4, and the terms use up the whole total SS
    eff = montgomery.effects
    np.testing.assert_allclose(eff["sum_sq"], 8 * eff["effect"] ** 2 / 4)
    assert eff["pct_contribution"].sum() == pytest.approx(100)
    assert montgomery.effects["term"].tolist()[4] == (
        "temperature:pressure = concentration:stirring_rate"
    )


# Montgomery Problem 8.1 (half of Problem 6.7, replicate 1), published Design-Expert output:
# effects A=-12, B=-1, C=4, D=-1, AB=6, AC=-1, AD=-5 with % contributions, and the ANOVA of the
# reduced model A, B, D, AB, AD (residual SS 34 on 2 df).
PROBLEM_8_1 = pd.DataFrame(
    {
        "A": [-1, 1, -1, 1, -1, 1, -1, 1],
        "B": [-1, -1, 1, 1, -1, -1, 1, 1],
        "C": [-1, -1, -1, -1, 1, 1, 1, 1],
        "D": [-1, 1, 1, -1, 1, -1, -1, 1],
        "yield": [90, 72, 87, 83, 99, 81, 88, 80],
    }
)


@pytest.mark.parametrize(
    ("letters", "effect", "pct"),
    [
        ("A", -12, 64.2857),
        ("B", -1, 0.446429),
        ("C", 4, 7.14286),
        ("D", -1, 0.446429),
        ("AB = CD", 6, 16.0714),
        ("AC = BD", -1, 0.446429),
        ("AD = BC", -5, 11.1607),
    ],
    ids=["A", "B", "C", "D", "AB", "AC", "AD"],
)
def test_problem_8_1_effects_and_percent_contribution(letters, effect, pct):
    row = analyze(PROBLEM_8_1, "yield").effects.set_index("letters").loc[letters]
    assert row["effect"] == pytest.approx(effect)
    assert row["pct_contribution"] == pytest.approx(pct, abs=1e-4)


@pytest.mark.parametrize(
    ("term", "ss", "f", "p"),
    [
        ("A", 288, 16.94, 0.0543),
        ("B", 2, 0.12, 0.7643),
        ("D", 2, 0.12, 0.7643),
        ("A:B = C:D", 72, 4.24, 0.1758),
        ("A:D = B:C", 50, 2.94, 0.2285),
    ],
    ids=["A", "B", "D", "AB", "AD"],
)
def test_problem_8_1_reduced_model_anova(term, ss, f, p):
    res = analyze(PROBLEM_8_1, "yield", terms=["A:B", "A:D"])
    assert res.df_resid == 2
    assert res.anova.loc["Residual", "sum_sq"] == pytest.approx(34)
    row = res.anova.loc[term]
    assert row["sum_sq"] == pytest.approx(ss)
    assert row["F"] == pytest.approx(f, abs=0.005)
    assert row["p_value"] == pytest.approx(p, abs=5e-5)
    assert any("hierarchical" in n for n in res.notes)


# -------------------------------------------------------------------- ANOVA against statsmodels
def _replicated(design_factors, generators, seed):
    design = make_design(design_factors, generators, replicates=2, seed=seed)
    rng = np.random.default_rng(seed)
    df = design.runs.copy()
    x = design.coded().to_numpy(dtype=float)
    df["y"] = (
        10 + x @ rng.normal(0, 2, x.shape[1]) + 1.5 * x[:, 0] * x[:, 1] + rng.normal(0, 1, len(df))
    )
    return design, df


@pytest.mark.parametrize(
    ("factors", "generators", "formula"),
    [
        (
            ["temp=20,40", "press=1,2", "conc=lo,hi"],
            "",
            "y ~ C(temp, Sum) + C(press, Sum) + C(conc, Sum) + C(temp, Sum):C(press, Sum)"
            " + C(temp, Sum):C(conc, Sum) + C(press, Sum):C(conc, Sum)",
        ),
        (
            ["temp=20,40", "press=1,2", "conc=lo,hi", "stir=slow,fast"],
            "D=ABC",
            "y ~ C(temp, Sum) + C(press, Sum) + C(conc, Sum) + C(stir, Sum)"
            " + C(temp, Sum):C(press, Sum) + C(temp, Sum):C(conc, Sum)"
            " + C(temp, Sum):C(stir, Sum)",
        ),
    ],
    ids=["2^3x2", "2^(4-1)x2"],
)
def test_anova_matches_statsmodels(factors, generators, formula):
    _, df = _replicated(factors, generators, seed=3)
    res = analyze(df, "y")
    ref = anova_lm(smf.ols(formula, data=df).fit(), typ=3)
    ours = res.anova
    assert res.df_resid == ref.loc["Residual", "df"]
    np.testing.assert_allclose(ours["sum_sq"].to_numpy(), ref["sum_sq"].to_numpy())
    np.testing.assert_allclose(ours["F"].to_numpy()[:-1], ref["F"].to_numpy()[:-1])
    np.testing.assert_allclose(ours["p_value"].to_numpy()[:-1], ref["PR(>F)"].to_numpy()[:-1])
    assert res.shapiro is not None and 0 < res.shapiro.p_value <= 1


def test_coefficients_and_confidence_intervals_match_statsmodels():
    _, df = _replicated(["temp=20,40", "press=1,2", "conc=lo,hi"], "", seed=5)
    res = analyze(df, "y", alpha=0.1)
    # +/-1 numeric columns give the same coefficients as sum-to-zero contrasts with high = +1
    num = pd.DataFrame(
        {
            "a": np.where(df["temp"] == "40", 1, -1),
            "b": np.where(df["press"] == "2", 1, -1),
            "c": np.where(df["conc"] == "hi", 1, -1),
            "y": df["y"],
        }
    )
    ref = smf.ols("y ~ a + b + c + a:b + a:c + b:c", data=num).fit()
    np.testing.assert_allclose(res.coefficients["coef"], ref.params)
    np.testing.assert_allclose(res.coefficients["ci_low"], ref.conf_int(0.1)[0])
    np.testing.assert_allclose(res.coefficients["ci_high"], ref.conf_int(0.1)[1])
    np.testing.assert_allclose(res.effects["effect"], 2 * ref.params.iloc[1:])


# ---------------------------------------------------------------------------------- designs
def test_alias_structure_of_half_fraction_abcd():
    d = make_design(STUDY, "D=ABC", randomize=False)
    assert d.label == "2^(4-1)"
    assert d.defining_relation == ("ABCD",)
    assert d.defining_relation_text == "I = ABCD"
    assert d.resolution == 4 and d.resolution_label == "IV"
    assert set(d.aliases) == {
        "A = BCD",
        "B = ACD",
        "C = ABD",
        "D = ABC",
        "AB = CD",
        "AC = BD",
        "AD = BC",
    }
    two = d.alias_table(max_order=2)
    assert two["aliases"].tolist() == [
        "A = BCD",
        "B = ACD",
        "C = ABD",
        "D = ABC",
        "AB = CD",
        "AC = BD",
        "AD = BC",
    ]
    assert two["factors"].iloc[4] == "cpu:memory = network:epochs"


def test_negative_generator_gives_the_other_half_with_signed_aliases():
    d = make_design(STUDY, "D = -ABC", randomize=False)
    assert d.defining_relation == ("-ABCD",)
    assert "A = -BCD" in d.aliases and "AB = -CD" in d.aliases
    plus = make_design(STUDY, "D=ABC", randomize=False).coded()
    assert (d.coded()["epochs"] == -plus["epochs"]).all()


def test_quarter_fraction_resolution_three():
    d = make_design(
        ["a=0,1", "b=0,1", "c=0,1", "d=0,1", "e=0,1"], ["D=AB", "E=AC"], randomize=False
    )
    assert d.n_runs == 8
    assert d.defining_relation == ("ABD", "ACE", "BCDE")
    assert d.resolution == 3
    assert "A = BD = CE = ABCDE" in d.aliases


def test_full_factorial_standard_order_and_no_aliases():
    d = make_design(["a=lo,hi", "b=lo,hi", "c=lo,hi"], randomize=False)
    assert d.label == "2^3" and d.resolution is None and d.aliases == ()
    # Yates' order: A changes fastest
    assert d.runs["a"].tolist() == ["lo", "hi"] * 4
    assert d.runs["c"].tolist() == ["lo"] * 4 + ["hi"] * 4


def test_run_sheet_replicates_labels_and_seeded_order():
    d1 = make_design(STUDY, "D=ABC", replicates=4, seed=7)
    d2 = make_design(STUDY, "D=ABC", replicates=4, seed=7)
    d3 = make_design(STUDY, "D=ABC", replicates=4, seed=8)
    assert d1.n_runs == 32 and d1.seed == 7
    assert d1.runs["run"].tolist() == list(range(1, 33))
    pd.testing.assert_frame_equal(d1.runs, d2.runs)
    assert d1.runs["std_order"].tolist() != d3.runs["std_order"].tolist()
    assert (d1.runs.groupby("std_order").size() == 4).all()
    assert set(d1.runs["cpu"]) == {"750m", "1500m"}
    assert set(d1.runs["network"]) == {"FashionMNISTCNN", "FashionMNISTResNet"}
    # each std_order row always has the same levels, in every replicate
    assert (
        (d1.runs.groupby("std_order")[["cpu", "memory", "network", "epochs"]].nunique() == 1)
        .all()
        .all()
    )


def test_unseeded_design_records_its_seed():
    d = make_design(STUDY, "D=ABC", replicates=2)
    again = make_design(STUDY, "D=ABC", replicates=2, seed=d.seed)
    pd.testing.assert_frame_equal(d.runs, again.runs)


def test_run_sheet_csv_round_trip_is_analysable(tmp_path):
    d = make_design(STUDY, "D=ABC", replicates=2, seed=1)
    results = demo_results(d, seed=2)
    path = tmp_path / "results.csv"
    results.to_csv(path, index=False)
    df = read_results(path)
    assert default_factors(df, ["accuracy", "train_time_s"]) == (
        "cpu",
        "memory",
        "network",
        "epochs",
    )
    res = analyze(df, "train_time_s", default_factors(df, ["accuracy", "train_time_s"]))
    # k8s quantities are ordered as numbers, not as text ("1500m" < "750m" alphabetically)
    assert res.factors[0] == Factor("cpu", "750m", "1500m")
    assert res.factors[1] == Factor("memory", "1.5Gi", "3Gi")
    assert res.factors[3] == Factor("epochs", "5", "10")
    assert res.df_resid == 16 - 8
    assert res.terms[4] == "cpu:memory = network:epochs"


# ------------------------------------------------------------------------------ level coding
@pytest.mark.parametrize(
    ("values", "low", "high"),
    [
        (["-", "+"], "-", "+"),
        (["+", "-"], "-", "+"),
        (["high", "low"], "low", "high"),
        ([10, 5], "5", "10"),
        (["512Mi", "1Gi"], "512Mi", "1Gi"),
        ([1, -1], "-1", "1"),
    ],
    ids=["signs", "signs-reversed", "low-high", "numbers", "k8s-units", "coded"],
)
def test_level_order_is_inferred(values, low, high):
    df = pd.DataFrame(
        {"f": values * 2, "g": [values[0]] * 2 + [values[1]] * 2, "y": [1.0, 2.0, 3.0, 5.0]}
    )
    res = analyze(df, "y", ["f", "g"])
    assert (res.factors[0].low, res.factors[0].high) == (low, high)


def test_levels_argument_fixes_effect_sign():
    df = pd.DataFrame(
        {"model": ["cnn", "resnet"] * 2, "bs": [32, 32, 64, 64], "y": [1.0, 3.0, 2.0, 4.0]}
    )
    auto = analyze(df, "y", ["model", "bs"])
    assert any("alphabetically" in n for n in auto.notes)
    flipped = analyze(df, "y", ["model", "bs"], levels={"model": ("resnet", "cnn")})
    assert auto.effects.loc[0, "effect"] == pytest.approx(2.0)
    assert flipped.effects.loc[0, "effect"] == pytest.approx(-2.0)


# ------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("cpu=750m", r"'cpu' has 1 level"),
        ("cpu=1,2,3", r"'cpu' has 3 level"),
        ("cpu=1,1", r"'cpu' has one level"),
        ("750m,1500m", r"NAME=LOW,HIGH"),
    ],
    ids=["one-level", "three-levels", "same-levels", "no-name"],
)
def test_parse_factor_rejects(spec, match):
    with pytest.raises(ProfetValueError, match=match):
        parse_factor(spec)


@pytest.mark.parametrize(
    ("factors", "generators", "kwargs", "match"),
    [
        (STUDY, "E=ABC", {}, r"letter\(s\) E.*only A, B, C, D"),
        (STUDY, "D=D", {}, r"in terms of itself"),
        (STUDY, "D=A", {}, r"at least two letters"),
        (STUDY, "D=ABC, D=AB", {}, r"D has more than one generator"),
        (STUDY, ["C=AB", "D=AC"], {}, r"uses generated factor\(s\) C"),
        (STUDY, "D equals ABC", {}, r"must look like D=ABC"),
        (STUDY, "", {"replicates": 0}, r"replicates must be.*got 0"),
        (["a=0,1", "a=1,2"], "", {}, r"unique; repeated: a"),
        (["run=0,1"], "", {}, r"reserved"),
        (["cpu:mem=0,1"], "", {}, r"may not contain ':'"),
        ([f"f{i}=0,1" for i in range(13)], "", {}, r"1 to 12 factors; got 13"),
    ],
    ids=[
        "unknown-letter",
        "self",
        "single-letter",
        "twice",
        "generated-source",
        "syntax",
        "zero-replicates",
        "duplicate",
        "reserved",
        "colon-in-name",
        "too-many",
    ],
)
def test_make_design_rejects(factors, generators, kwargs, match):
    with pytest.raises(ProfetValueError, match=match):
        make_design(factors, generators, **kwargs)


def _bad(**changes):
    df = montgomery_filtration_example()
    for col, values in changes.items():
        df[col] = values
    return df


@pytest.mark.parametrize(
    ("df", "response", "factors", "match"),
    [
        (_bad(filtration_rate=["fast"] * 8), "filtration_rate", None, r"must be numeric.*'fast'"),
        (_bad(), "rate", None, r"response 'rate' is not a column"),
        (
            _bad(pressure=[1, 2, 3, 1, 2, 3, 1, 2]),
            "filtration_rate",
            ["temperature", "pressure"],
            r"'pressure' has 3 level",
        ),
        (_bad(pressure=["x"] * 8), "filtration_rate", None, r"'pressure' has 1 level"),
        (
            _bad().iloc[[0, 1, 2, 4]],
            "filtration_rate",
            None,
            r"4 run\(s\) but the model needs at least 5",
        ),
        (
            _bad(pressure=montgomery_filtration_example()["temperature"] * -1),
            "filtration_rate",
            None,
            r"'temperature' and 'pressure' are confounded",
        ),
        (_bad(), "filtration_rate", ["temperature", "nope"], r"nope not in the results"),
        (_bad(), "filtration_rate", ["filtration_rate"], r"both the response and a factor"),
    ],
    ids=[
        "text-response",
        "missing-response",
        "three-levels",
        "one-level",
        "too-few-runs",
        "confounded",
        "missing-factor",
        "response-as-factor",
    ],
)
def test_analyze_rejects(df, response, factors, match):
    with pytest.raises(ProfetValueError, match=match):
        analyze(df, response, factors)


def test_analyze_rejects_unknown_term():
    with pytest.raises(ProfetValueError, match=r"'speed', which is not a factor"):
        analyze(PROBLEM_8_1, "yield", terms=["A:speed"])


def test_read_results_errors(tmp_path):
    with pytest.raises(ProfetFileNotFoundError, match=r"does not exist"):
        read_results(tmp_path / "missing.csv")
    with pytest.raises(ProfetValueError, match=r"no rows"):
        read_results(b"a,b,y\n")


def test_irregular_runs_drop_inestimable_interaction():
    # 2^3 full factorial minus one run: all effects estimable, but not all are orthogonal
    design = make_design(["a=0,1", "b=0,1", "c=0,1"], randomize=False)
    df = design.runs.iloc[:7].copy()
    df["y"] = [1.0, 2.0, 3.0, 5.0, 4.0, 6.0, 7.0]
    res = analyze(df, "y", ["a", "b", "c"])
    assert res.df_resid == 0 and len(res.terms) == 6
    df4 = design.runs.iloc[[0, 1, 2, 4, 7]].copy()
    df4["y"] = [1.0, 2.0, 3.0, 4.0, 6.0]
    res4 = analyze(df4, "y", ["a", "b", "c"])
    assert len(res4.terms) == 4
    assert any("cannot be estimated" in n for n in res4.notes)


# ---------------------------------------------------------------------------------- figures
def test_figures_for_replicated_design():
    _, df = _replicated(["temp=20,40", "press=1,2", "conc=lo,hi"], "", seed=1)
    res = analyze(df, "y")
    figs = doe_figures(res)
    assert set(figs) == {
        "half_normal",
        "main_effects",
        "interactions",
        "boxplots",
        "qq",
        "residuals_vs_fitted",
        "residuals_vs_order",
    }
    np.testing.assert_allclose(
        sorted(figs["half_normal"].data[0].x), sorted(res.effects["effect"].abs())
    )
    assert "Shapiro-Wilk" in figs["qq"].layout.title.text
    # main-effects plot: means at low and high of the first factor
    means = df.groupby("temp")["y"].mean()
    np.testing.assert_allclose(figs["main_effects"].data[0].y, [means["20"], means["40"]])


# ------------------------------------------------------------------------------------- CLI
def test_cli_design_prints_and_writes(tmp_path, capsys):
    argv = [
        "design",
        *[a for f in STUDY for a in ("--factor", f)],
        "--generator",
        "D=ABC",
        "--replicates",
        "4",
        "--seed",
        "1",
        "--out",
        str(tmp_path),
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Defining relation: I = ABCD" in out and "Resolution: IV" in out
    assert "AB = CD" in out
    sheet = pd.read_csv(tmp_path / "run_sheet.csv")
    assert len(sheet) == 32
    assert list(sheet.columns) == [
        "run",
        "std_order",
        "replicate",
        "cpu",
        "memory",
        "network",
        "epochs",
    ]
    assert set(sheet["memory"]) == {"1.5Gi", "3Gi"}


def test_cli_analyze_prints_and_writes(tmp_path, capsys):
    path = tmp_path / "mont.csv"
    montgomery_filtration_example().to_csv(path, index=False)
    out_dir = tmp_path / "out"
    assert main(["analyze", str(path), "--response", "filtration_rate", "--out", str(out_dir)]) == 0
    out = capsys.readouterr().out
    assert "No error term" in out and "AC = BD" in out and "-18.5" in out
    effects = pd.read_csv(out_dir / "filtration_rate_effects.csv")
    assert effects["effect"].tolist() == pytest.approx([19, 1.5, 14, 16.5, -1, -18.5, 19])
    assert (out_dir / "filtration_rate_half_normal.html").is_file()
    assert (out_dir / "plotly.min.js").is_file()


def test_cli_analyze_two_responses_with_factor_list(tmp_path, capsys):
    d = make_design(STUDY, "D=ABC", replicates=2, seed=1)
    path = tmp_path / "r.csv"
    demo_results(d).to_csv(path, index=False)
    code = main(
        [
            "analyze",
            str(path),
            "--response",
            "accuracy",
            "--response",
            "train_time_s",
            "--factors",
            "cpu,memory,network,epochs",
            "--levels",
            "network=FashionMNISTCNN,FashionMNISTResNet",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "Response: accuracy" in out and "Response: train_time_s" in out
    assert "ANOVA (type III)" in out and "Shapiro-Wilk" in out
    assert "alphabetically" not in out


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["design", "--factor", "cpu=1"], "'cpu' has 1 level"),
        (
            ["design", "--factor", "a=0,1", "--factor", "b=0,1", "--generator", "C=AB"],
            "only A, B exist",
        ),
        (["analyze", "missing.csv", "--response", "y"], "does not exist"),
    ],
    ids=["one-level", "bad-generator", "missing-file"],
)
def test_cli_errors_exit_2_with_message(argv, match, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("profet: error:") and match in err
