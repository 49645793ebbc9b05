"""ANOVA of a two-level factorial experiment: main effects and two-factor interactions.

Fitting and the ANOVA come from statsmodels (OLS with sum-to-zero contrasts, type III sums of
squares); the normality check from scipy.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm

from .._messages import quote_list
from ..errors import ProfetValueError
from ._diagnostics import ShapiroResult, _residuals, _shapiro
from ._factors import LETTERS as _LETTERS
from ._factors import RUN_COLUMNS, Factor, code_factor
from ._results import cell_float, check_magnitude, default_factors, numeric_values
from ._terms import estimable_groups, group_name, select_terms

# patsy's Sum omits the *last* level by default, which would code the high level as -1 and flip
# every effect's sign; omitting level 0 (the -1 level) keeps high = +1.
_SUM = "Sum(omit=0)"


@dataclass(frozen=True, eq=False)
class AnalysisResult:
    """Result of :func:`analyze`.

    Attributes
    ----------
    response : str
        Name of the analysed response column.
    factors : tuple of Factor
        Factors with the level labels found in the data (low is coded -1).
    terms : tuple of str
        Model terms in model order; aliased terms are named together, e.g. ``"A:B = C:D"``.
    formula : str
        The statsmodels formula fitted (on internal column names ``f0``, ``f1``, ... and ``y``).
    n_runs : int
        Number of observations used.
    df_resid : int
        Residual degrees of freedom; 0 means no error term (no F tests).
    anova : pandas.DataFrame
        Type III ANOVA indexed by term (plus ``Intercept`` and ``Residual``): ``sum_sq``, ``df``,
        ``mean_sq``, ``F``, ``p_value`` (F and p are NaN without an error term).
    coefficients : pandas.DataFrame
        Indexed by term: ``coef``, ``std_err``, ``t``, ``p_value``, ``ci_low``, ``ci_high``.
    effects : pandas.DataFrame
        One row per term: ``term``, ``letters`` (e.g. ``"AB = CD"``), ``effect`` (2 x coef),
        ``coef``, ``sum_sq``, ``pct_contribution`` (of the corrected total SS), ``p_value``.
    residuals : pandas.DataFrame
        ``run_order``, ``observed``, ``fitted``, ``residual``.
    shapiro : ShapiroResult or None
        Shapiro-Wilk test of the residuals, None without an error term.
    r_squared, adj_r_squared : float
        Fit statistics (adjusted is NaN without an error term).
    alpha : float
        Level of the confidence intervals (1 - alpha).
    notes : tuple of str
        What the analysis decided on the user's behalf (level order, dropped or added terms).
    data : pandas.DataFrame
        Factor columns as level labels and the response, as used for plots.
    """

    response: str
    factors: tuple[Factor, ...]
    terms: tuple[str, ...]
    formula: str
    n_runs: int
    df_resid: int
    anova: pd.DataFrame
    coefficients: pd.DataFrame
    effects: pd.DataFrame
    residuals: pd.DataFrame
    shapiro: ShapiroResult | None
    r_squared: float
    adj_r_squared: float
    alpha: float
    notes: tuple[str, ...]
    data: pd.DataFrame

    @property
    def has_error(self) -> bool:
        """Whether an error term exists (replicates or spare runs), so F tests are possible."""
        return self.df_resid > 0

    @property
    def interaction_pairs(self) -> tuple[tuple[str, str], ...]:
        """Factor-name pairs of the two-factor interactions in the model (first of each chain)."""
        pairs = []
        for t in self.terms:
            first = t.split(" = ")[0].lstrip("-")
            parts = first.split(":")
            if len(parts) == 2:
                pairs.append((parts[0], parts[1]))
        return tuple(pairs)


def _response_values(results: pd.DataFrame, response: str) -> np.ndarray:
    """The response as floats (NaN where empty); refuses text, inf and numbers beyond 1e15."""
    raw = results[response]
    values = numeric_values(raw)
    if values is None:
        cells = raw.tolist()
        row = next(i for i, v in enumerate(cells) if cell_float(v) is None)
        text = str(cells[row])
        shown = repr(text) if len(text) <= 40 else f"{text[:30]!r}... ({len(text)} characters)"
        raise ProfetValueError(
            f"response {response!r} must be numeric; it holds {shown} (row {row + 1})"
        )
    check_magnitude(values, raw, f"response {response!r}")
    finite = values[np.isfinite(values)]
    if finite.size:
        spread, size = float(np.ptp(finite)), float(np.abs(finite).max())
        if 0 < spread <= 1e-9 * size:
            raise ProfetValueError(
                f"response {response!r} varies by {spread:.3g} around {size:.3g}, below the "
                "precision of the arithmetic (1e-9 of its size); subtract a baseline first"
            )
    return values


def _factor_names(
    results: pd.DataFrame, response: str, factors: Sequence[str] | None, notes: list[str]
) -> list[str]:
    cols = list(results.columns)
    names = list(factors) if factors is not None else list(default_factors(results, response))
    if factors is None:
        skipped = [c for c in cols if c not in names and c != response and c not in RUN_COLUMNS]
        if skipped:
            notes.append(
                f"column(s) {quote_list(skipped, 12)} have more than two numeric values and were "
                "treated as other responses, not factors"
            )
    if not names:
        raise ProfetValueError("no factor columns: name them, e.g. factors=['cpu', 'memory']")
    missing = [n for n in names if n not in cols]
    if missing:
        raise ProfetValueError(
            f"factor column(s) {quote_list(missing, 12)} not in the results; columns are {quote_list(cols, 12)}"
        )
    if response in names:
        raise ProfetValueError(f"{response!r} cannot be both the response and a factor")
    if len(set(names)) != len(names):
        raise ProfetValueError("each factor may be named once")
    if len(names) > 26:
        raise ProfetValueError(f"at most 26 factors can be analysed; got {len(names)}")
    return names


def _code_factors(
    data: pd.DataFrame,
    names: list[str],
    levels: Mapping[str, tuple[str, str]] | Sequence[Factor] | None,
    notes: list[str],
) -> tuple[list[Factor], np.ndarray]:
    """Factors with their low/high labels and the coded matrix, shape (n_runs, n_factors)."""
    hints: dict[str, Factor] = {}
    if levels is not None:
        items = levels.items() if isinstance(levels, Mapping) else ((f.name, f) for f in levels)
        for name, lv in items:
            hints[name] = lv if isinstance(lv, Factor) else Factor(name, *lv)
    coded_cols, fac_objs = [], []
    for name in names:
        coded, fac, note = code_factor(name, data[name], hints.get(name))
        coded_cols.append(coded)
        fac_objs.append(fac)
        if note:
            notes.append(note)
    return fac_objs, np.column_stack(coded_cols).astype(int)


def _model_groups(
    x: np.ndarray, names: list[str], terms: Sequence[str] | None, notes: list[str]
) -> list[dict]:
    """Alias groups that enter the model (inestimable ones dropped, ``terms`` applied)."""
    groups = estimable_groups(x, names)
    dropped = [g for g in groups if g["dropped"]]
    groups = [g for g in groups if not g["dropped"]]
    if dropped:
        notes.append(
            "interaction(s) "
            + ", ".join(":".join(names[i] for i in g["terms"][0][0]) for g in dropped)
            + " cannot be estimated from these runs and were left out"
        )
    if terms is not None:
        groups = select_terms(groups, terms, names, notes)
    return groups


def _term_formula(idx: tuple[int, ...]) -> str:
    # internal names f0, f1, ... keep user column names (spaces, "C", ...) out of the formula
    return ":".join(f"C(f{i}, {_SUM})" for i in idx)


def _col_term(col: str) -> str:
    return col if col == "Intercept" else col.replace("[S.1]", "")


def _exact_fit(model) -> bool:
    """The model fits every run up to rounding: residuals below 1e-10 of the variation.

    Rounding leaves a residual sum of squares of about 1e-30 where the fit is exact; testing
    against it gives F = 1e30 and p = 1e-60, numbers that mean nothing. A constant response has
    no variation to compare with (its centred sum of squares is rounding too), so residuals are
    also judged against the response's own size: below 1e-10 of its root mean square.
    """
    variation = max(float(model.centered_tss), 1e-10 * float(model.uncentered_tss), 0.0)
    return bool(model.ssr <= 1e-10 * variation)


def _anova(model, alpha: float) -> tuple[pd.DataFrame, pd.DataFrame, tuple]:
    """Type III ANOVA, confidence intervals and (std err, t, p) of a fitted OLS model."""
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if round(model.df_resid) > 0 and not _exact_fit(model):
            anova = anova_lm(model, typ=3).rename(columns={"PR(>F)": "p_value"})
            anova["mean_sq"] = anova["sum_sq"] / anova["df"]
            return anova, model.conf_int(alpha), (model.bse, model.tvalues, model.pvalues)
        # anova_lm cannot test without residual df or variance (its sums of squares come out
        # NaN); each term has one df, so its type III SS is the Wald numerator, which needs no
        # error variance
        ss = model.params**2 / np.diag(model.normalized_cov_params)
        anova = pd.DataFrame(
            {"sum_sq": ss.to_numpy(), "df": 1.0},
            index=[_col_term(c) for c in model.params.index],
        )
        anova.loc["Residual"] = [float(model.ssr), float(round(model.df_resid))]
        anova["mean_sq"] = np.nan
        anova["F"] = np.nan
        anova["p_value"] = np.nan
        nan = pd.Series(np.nan, index=model.params.index)
        return anova, pd.DataFrame({0: nan, 1: nan}), (nan, nan, nan)


def _tables(
    model, groups: list[dict], names: list[str], y: np.ndarray, alpha: float
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(anova, coefficients, effects) indexed by the user's term names."""
    display = {_term_formula(g["terms"][0][0]): group_name(g, names) for g in groups}
    letters = {_term_formula(g["terms"][0][0]): group_name(g, _LETTERS) for g in groups}
    anova, conf, (bse, tval, pval) = _anova(model, alpha)
    anova = anova[["sum_sq", "df", "mean_sq", "F", "p_value"]]
    anova = anova.rename(index=lambda t: display.get(t, t))
    anova.index.name = "term"
    coefficients = pd.DataFrame(
        {
            "coef": model.params.to_numpy(),
            "std_err": np.asarray(bse, dtype=float),
            "t": np.asarray(tval, dtype=float),
            "p_value": np.asarray(pval, dtype=float),
            "ci_low": conf.iloc[:, 0].to_numpy(dtype=float),
            "ci_high": conf.iloc[:, 1].to_numpy(dtype=float),
        },
        index=pd.Index([display.get(_col_term(c), c) for c in model.params.index], name="term"),
    )
    term_cols = [c for c in model.params.index if c != "Intercept"]
    effects = pd.DataFrame(
        {
            "term": [display[_col_term(c)] for c in term_cols],
            "letters": [letters[_col_term(c)] for c in term_cols],
            # with -1/+1 coding a coefficient is half the change from low to high
            "effect": [2 * model.params[c] for c in term_cols],
            "coef": [model.params[c] for c in term_cols],
        }
    )
    ss_total = float(np.sum((y - y.mean()) ** 2))
    effects["sum_sq"] = anova.loc[effects["term"], "sum_sq"].to_numpy()
    effects["pct_contribution"] = 100 * effects["sum_sq"] / ss_total if ss_total > 0 else np.nan
    effects["p_value"] = anova.loc[effects["term"], "p_value"].to_numpy()
    return anova, coefficients, effects


def _runs(
    results: pd.DataFrame, response: str, alpha: float, notes: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """(table with str column names, its runs that have a response value, those values)."""
    if not isinstance(results, pd.DataFrame) or results.empty:
        raise ProfetValueError("the results table is empty")
    if not 0 < alpha < 1:
        raise ProfetValueError(f"alpha must be between 0 and 1; got {alpha}")
    cols = [str(c) for c in results.columns]
    results = results.set_axis(cols, axis=1)
    if response not in cols:
        raise ProfetValueError(
            f"response {str(response)[:80]!r} is not a column of the results; columns are "
            f"{quote_list(cols, 12)}"
        )
    y = _response_values(results, response)
    keep = ~np.isnan(y)
    if not keep.all():
        notes.append(f"{int((~keep).sum())} run(s) without a {response!r} value were left out")
    if not keep.any():
        raise ProfetValueError(f"response {response!r} has no values")
    return results, results.loc[keep].reset_index(drop=True), y[keep]


def analyze(
    results: pd.DataFrame,
    response: str,
    factors: Sequence[str] | None = None,
    *,
    levels: Mapping[str, tuple[str, str]] | Sequence[Factor] | None = None,
    terms: Sequence[str] | None = None,
    alpha: float = 0.05,
) -> AnalysisResult:
    """Fit main effects and estimable two-factor interactions of a two-level experiment.

    The model is OLS with sum-to-zero contrasts (statsmodels, ``C(x, Sum)``); the ANOVA uses type
    III sums of squares. Two-factor interactions that are exactly aliased with each other enter
    once and are named together (``"A:B = C:D"``); those aliased with a main effect are left out
    and named with it (``"A = B:C"``).

    Parameters
    ----------
    results : pandas.DataFrame
        One row per run: factor columns (level labels, or -1/+1) and response columns.
    response : str
        Numeric response column to analyse; finite, magnitude at most 1e15 (empty cells are
        left out with a note).
    factors : sequence of str, optional
        Factor columns; default :func:`default_factors`.
    levels : mapping or sequence of Factor, optional
        Low and high label of some factors (``{"cpu": ("750m", "1500m")}`` or Factor objects).
        Without it, numbers (also with units such as 750m, 1.5Gi) are ordered numerically,
        ``-``/``+`` and ``low``/``high`` as written, anything else alphabetically.
    terms : sequence of str, optional
        Keep only these terms (``"A"``, ``"A:B"``; main effects of kept interactions are added).
        The rest is pooled into the error, e.g. after reading a half-normal plot.
    alpha : float, default 0.05
        Confidence intervals are at level 1 - alpha.

    Returns
    -------
    AnalysisResult

    Raises
    ------
    ProfetValueError
        If the response is missing, not numeric, infinite or beyond 1e15 in magnitude, a factor
        does not have exactly two levels, two factors are confounded, or there are fewer runs
        than model terms.
    """
    notes: list[str] = []
    results, data, y = _runs(results, response, alpha, notes)
    names = _factor_names(results, response, factors, notes)
    fac_objs, x = _code_factors(data, names, levels, notes)
    n, k = x.shape
    if n < k + 1:
        raise ProfetValueError(
            f"the results have {n} run(s) but the model needs at least {k + 1} (an intercept and "
            f"{k} main effects); add runs or analyse fewer factors"
        )
    groups = _model_groups(x, names, terms, notes)
    if n < 1 + len(groups):
        raise ProfetValueError(
            f"the results have {n} run(s) but the model has {1 + len(groups)} parameters; "
            "drop terms"
        )
    frame = pd.DataFrame({f"f{i}": x[:, i] for i in range(k)}).assign(y=y)
    formula = "y ~ " + " + ".join(_term_formula(g["terms"][0][0]) for g in groups)
    model = smf.ols(formula, data=frame).fit()
    df_resid = round(model.df_resid)
    if df_resid > 0 and _exact_fit(model):
        notes.append(
            "the model fits every run exactly (no residual variation), so there are no F tests "
            "or confidence intervals"
        )
    anova, coefficients, effects = _tables(model, groups, names, y, alpha)
    residuals = _residuals(data, y, model)
    plot_data = pd.DataFrame(
        {f.name: np.where(x[:, i] > 0, f.high, f.low) for i, f in enumerate(fac_objs)}
    ).assign(**{response: y, "run_order": residuals["run_order"]})
    return AnalysisResult(
        response=response,
        factors=tuple(fac_objs),
        terms=tuple(group_name(g, names) for g in groups),
        formula=formula,
        n_runs=n,
        df_resid=df_resid,
        anova=anova,
        coefficients=coefficients,
        effects=effects,
        residuals=residuals,
        shapiro=_shapiro(residuals, df_resid),
        # R^2 is undefined (NaN) when every run has the same response
        r_squared=float(model.rsquared) if model.centered_tss > 0 else float("nan"),
        adj_r_squared=(
            float(model.rsquared_adj) if df_resid > 0 and model.centered_tss > 0 else float("nan")
        ),
        alpha=float(alpha),
        notes=tuple(notes),
        data=plot_data,
    )
