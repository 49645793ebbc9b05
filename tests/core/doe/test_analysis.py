"""Analysis of two-level experiments (profet_core.doe.analyze) against published results and
statsmodels, level coding, bad input and figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm

from profet_core.doe import (
    Factor,
    analyze,
    default_factors,
    demo_results,
    doe_figures,
    make_design,
    montgomery_filtration_example,
    read_results,
)
from profet_core.errors import ProfetValueError
from tests.core.doe._utils import PROBLEM_8_1, STUDY, _replicated


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
        (_bad(), "filtration_rate", ["temperature", "nope"], r"'nope' not in the results"),
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


def test_constant_response_with_replicates_gives_finite_sums_of_squares():
    # found by the fuzz suite: with zero residual variance statsmodels' type III ANOVA is NaN
    df = pd.DataFrame({"A": [-1, 1, -1, 1], "y": [0.0, 0.0, 0.0, 0.0]})
    res = analyze(df, "y")
    assert res.df_resid == 2
    assert np.isfinite(res.anova["sum_sq"]).all() and res.anova.loc["A", "sum_sq"] == 0
    assert any("fits every run exactly" in n for n in res.notes)
    assert np.isnan(res.r_squared)
