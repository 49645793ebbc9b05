"""Experiment design: two-level factorial designs and the ANOVA of their results."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from profet_app import common
from profet_core import escape_formulas
from profet_core.doe import (
    RUN_COLUMNS,
    AnalysisResult,
    Design,
    Factor,
    analyze,
    default_factors,
    demo_results,
    doe_figures,
    make_design,
    montgomery_filtration_example,
    read_results,
)
from profet_core.errors import ProfetError

# The factors of the federated-CNN study this feature comes from (2^(4-1), I = ABCD).
STUDY_FACTORS = pd.DataFrame(
    {
        "name": ["cpu", "memory", "network", "epochs"],
        "low": ["750m", "1.5Gi", "FashionMNISTCNN", "5"],
        "high": ["1500m", "3Gi", "FashionMNISTResNet", "10"],
    }
)
SOURCES = ("Montgomery filtration example", "Synthetic demo of the Design tab", "Upload CSV")
#: Headers of the ANOVA, effects and coefficients tables (effects and coefficients are in the
#: response's unit; the rest are statistics without one).
LABELS = {
    "term": "Term",
    "letters": "Letters",
    "sum_sq": "Sum of squares",
    "mean_sq": "Mean square",
    "p_value": "p-value",
    "effect": "Effect",
    "coef": "Coefficient",
    "std_err": "Std. error",
    "pct_contribution": "Share of total SS (%)",
    "ci_low": "CI low",
    "ci_high": "CI high",
}

common.wide_layout()
st.title("Experiment design")
st.caption(
    "Two-level full and fractional factorial designs for training-performance experiments, and "
    "the ANOVA of their results (main effects and two-factor interactions, sum-to-zero "
    "contrasts, type III sums of squares)."
)


def _csv(df: pd.DataFrame, index: bool = False) -> bytes:
    return escape_formulas(df).to_csv(index=index).encode()


def _factors_from_editor(table: pd.DataFrame) -> list[Factor]:
    rows = table.fillna("").astype(str)
    rows = rows[(rows != "").any(axis=1)]
    return [Factor(r["name"], r["low"], r["high"]) for _, r in rows.iterrows()]


def design_tab() -> Design | None:
    st.subheader("Factors")
    table = st.data_editor(
        STUDY_FACTORS,
        num_rows="dynamic",
        key="doe_factor_table",
        hide_index=True,
        column_config={
            "name": st.column_config.TextColumn("name", required=True),
            "low": st.column_config.TextColumn("low level (-1)", required=True),
            "high": st.column_config.TextColumn("high level (+1)", required=True),
        },
    )
    c1, c2, c3, c4 = st.columns([2, 1, 1, 1])
    generators = c1.text_input(
        "Generators (comma-separated; empty = full factorial)",
        value="D = ABC",
        key="doe_generators",
        help="Factors are lettered A, B, C, ... in table order. D = ABC gives the half fraction "
        "I = ABCD; D = -ABC the other half.",
    )
    replicates = c2.number_input(
        "Replicates", min_value=1, max_value=100, value=4, step=1, key="doe_replicates"
    )
    seed = c3.number_input("Seed", min_value=0, value=1, step=1, key="doe_seed")
    randomize = c4.checkbox("Randomise run order", value=True, key="doe_randomize")
    try:
        design = make_design(
            _factors_from_editor(table),
            generators,
            replicates=int(replicates),
            seed=int(seed),
            randomize=randomize,
        )
    except ProfetError as exc:
        common.show_error(exc)
        return None
    _show_design(design)
    return design


def _show_design(design: Design) -> None:
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Design", design.label)
    m2.metric("Resolution", design.resolution_label)
    m3.metric("Distinct runs", design.n_base_runs)
    m4.metric("Total runs", design.n_runs)
    if design.defining_relation:
        st.markdown(f"**Defining relation:** `{design.defining_relation_text}`")
    st.dataframe(design.factor_table(), hide_index=True)
    if design.aliases:
        st.markdown("**Alias structure**")
        st.dataframe(design.alias_table(), hide_index=True)
    else:
        st.info("Full factorial: every effect can be estimated separately (no aliasing).")
    st.markdown(
        "**Run sheet**"
        + (f" (randomised, seed {design.seed})" if design.seed is not None else " (standard order)")
    )
    st.dataframe(design.runs, hide_index=True)
    st.download_button(
        "Download run sheet (CSV)",
        _csv(design.runs),
        file_name="run_sheet.csv",
        mime="text/csv",
        key="doe_dl_runs",
    )


def _load_results(source: str, design: Design | None) -> pd.DataFrame | None:
    if source == SOURCES[0]:
        st.caption(
            "Montgomery, *Design and Analysis of Experiments*, Example 8.1: filtration rate of a "
            "chemical process, 2^(4-1) with I = ABCD, unreplicated."
        )
        return montgomery_filtration_example()
    if source == SOURCES[1]:
        if design is None:
            st.error("The Design tab has an error; fix it to generate demo results.")
            return None
        st.caption("Made-up responses for the run sheet of the Design tab, for demonstration only.")
        return demo_results(design, seed=int(st.session_state.get("doe_seed", 0)))
    upload = st.file_uploader(
        "Results CSV: factor columns (level labels or -1/+1) and numeric response columns",
        type=["csv"],
        key="doe_upload",
    )
    if upload is None:
        st.info("Upload a results CSV, e.g. the run sheet with your measured responses added.")
        return None
    try:
        return read_results(upload.getvalue())
    except ProfetError as exc:
        common.show_error(exc)
        return None


def _stats_table(df: pd.DataFrame, index: bool = False) -> None:
    """A statistics table as people read it: p-values as ``< 1e-6``, 4 significant digits, an
    em dash where a statistic does not exist (the residual row's F), readable headers."""
    df = df.reset_index().rename(columns={"index": "term"}) if index else df
    numbers = df.select_dtypes("number").columns
    formats = {c: common.fmt_p if c == "p_value" else "{:.4g}" for c in numbers}
    shown = common.dashed(df, formats)
    config = {c: common.number_column(shown, c, LABELS.get(c, c), formats[c]) for c in numbers}
    config.update({c: LABELS.get(c, c) for c in df.columns if c not in formats})
    st.dataframe(shown, hide_index=True, column_config=config, width="stretch")


def _level_choices(result: AnalysisResult, source: str) -> dict:
    """Which label of each factor is its low level (-1), chosen in the app: ``{name: (low,
    high)}`` for the factors whose choice differs from the analysis' (e.g. alphabetical)."""
    chosen = {}
    guessed = any("ordered alphabetically" in n for n in result.notes)
    with st.expander("Levels: which label of each factor is low (-1)", expanded=guessed):
        cols = st.columns(min(4, len(result.factors)) or 1)
        for i, f in enumerate(result.factors):
            low = cols[i % len(cols)].selectbox(
                f"Low level of {f.name}", [f.low, f.high], key=f"doe_low_{source}_{f.name}"
            )
            if low != f.low:
                chosen[f.name] = (f.high, f.low)
    return chosen


def _show_figures(figs: dict, response: str) -> None:
    titles = {
        "half_normal": "Half-normal plot of effects",
        "main_effects": "Main effects",
        "interactions": "Interaction plots",
        "boxplots": "Box plots per factor",
        "qq": "Normal Q-Q plot of residuals",
        "residuals_vs_fitted": "Residuals vs fitted",
        "residuals_vs_order": "Residuals vs run order",
    }
    for name, fig in figs.items():
        st.markdown(f"**{titles.get(name, name)}**")
        st.plotly_chart(fig, key=f"doe_fig_{name}")
        st.download_button(
            "Download figure (HTML)",
            fig.to_html(include_plotlyjs="cdn"),
            file_name=f"{response}_{name}.html",
            mime="text/html",
            key=f"doe_dl_fig_{name}",
        )


def analyze_tab(design: Design | None) -> None:
    source = st.radio("Results", SOURCES, horizontal=True, key="doe_source")
    df = _load_results(source, design)
    if df is None:
        return
    with st.expander(f"Results table ({len(df)} rows)"):
        st.dataframe(df, hide_index=True)

    factor_like = set(default_factors(df, ()))
    candidates = [c for c in df.columns if c not in factor_like and c not in RUN_COLUMNS]
    candidates = candidates or list(df.columns)
    response = st.selectbox("Response", candidates, key=f"doe_response_{source}")
    factor_options = [c for c in df.columns if c != response]
    factors = st.multiselect(
        "Factors",
        factor_options,
        default=list(default_factors(df, [c for c in candidates])),
        key=f"doe_factors_{source}_{response}",
    )
    alpha = st.number_input(
        "Significance level (alpha)",
        min_value=0.001,
        max_value=0.5,
        value=0.05,
        step=0.01,
        format="%.3f",
        key="doe_alpha",
    )
    # The synthetic demo's levels are the ones the Design tab set (low, high), not a guess.
    preset = {}
    if source == SOURCES[1] and design is not None:
        preset = {f.name: (f.low, f.high) for f in design.factors if f.name in factors}
        shown = "; ".join(f"{n}: low {lo}, high {hi}" for n, (lo, hi) in preset.items())
        st.caption(common.safe(f"Levels as the Design tab set them: {shown}."))
    try:
        result = analyze(df, response, factors, alpha=alpha, levels=preset or None)
        levels = {**preset, **_level_choices(result, source)}
        if levels != preset:
            result = analyze(df, response, factors, alpha=alpha, levels=levels)
        kept = st.multiselect(
            "Model terms (drop small ones to pool them into the error)",
            list(result.terms),
            default=list(result.terms),
            key=f"doe_terms_{source}_{response}_{'|'.join(factors)}",
        )
        if list(kept) != list(result.terms):
            result = analyze(df, response, factors, alpha=alpha, terms=kept, levels=levels or None)
    except ProfetError as exc:
        common.show_error(exc)
        return
    _show_result(result, response)


def _show_result(result: AnalysisResult, response: str) -> None:
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Runs", result.n_runs)
    m2.metric("Residual df", result.df_resid)
    m3.metric("R²", f"{result.r_squared:.4f}")
    if result.shapiro is not None:
        m4.metric(
            "Shapiro-Wilk p",
            f"{result.shapiro.p_value:.3g}",
            help=f"W = {result.shapiro.statistic:.4f}; a small p suggests non-normal residuals",
        )
    for note in result.notes:
        # The library's advice ("pass the levels") is done here in the Levels expander above.
        note = note.replace("pass the levels to choose", "choose the low level under Levels above")
        st.info(common.safe(note))  # notes quote level labels and names from the upload

    if result.has_error:
        st.markdown("**ANOVA (type III)**")
        _stats_table(result.anova, index=True)
    else:
        st.warning(
            "No error term (unreplicated, saturated model): no F tests. Judge the effects on "
            "the half-normal plot, or drop small terms above to pool them into the error."
        )
    st.markdown("**Effects** (effect = 2 x coefficient; % of the total sum of squares)")
    _stats_table(result.effects)
    ci = round(100 * (1 - result.alpha))
    st.markdown(f"**Coefficients** ({ci}% confidence intervals)")
    _stats_table(result.coefficients, index=True)
    d1, d2, d3 = st.columns(3)
    d1.download_button(
        "ANOVA (CSV)",
        _csv(result.anova, index=True),
        file_name=f"{response}_anova.csv",
        key="doe_dl_anova",
    )
    d2.download_button(
        "Effects (CSV)",
        _csv(result.effects),
        file_name=f"{response}_effects.csv",
        key="doe_dl_effects",
    )
    d3.download_button(
        "Coefficients (CSV)",
        _csv(result.coefficients, index=True),
        file_name=f"{response}_coefficients.csv",
        key="doe_dl_coef",
    )
    _show_figures(doe_figures(result), response)


tab_design, tab_analyze = st.tabs(["Design", "Analyze"])
with tab_design:
    current_design = design_tab()
with tab_analyze:
    analyze_tab(current_design)
