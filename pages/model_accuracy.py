"""Model accuracy: the artifacts' leave-one-architecture-out validation report."""

from __future__ import annotations

import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from profet_app import accuracy, beyond_cnn, common, spec_order
from profet_core import NOVELTY_WARN

ALL_PAIRS = "All pairs"

common.wide_layout()
predictor = common.predictor_or_stop()
st.title("Model accuracy")
st.caption(
    "How far to trust a prediction. Every number here is out-of-sample: each CNN architecture "
    "was predicted by models trained without it (leave-one-architecture-out), so these errors "
    "are what to expect for a network the models have never seen."
)

val = predictor.validation
metrics = val.get("metrics")
if metrics is None or metrics.empty:
    st.info(
        "These artifacts were trained without validation (`intervals=False`), so there is no "
        "accuracy report. Retrain with validation to see it here."
    )
    st.stop()


known = set(metrics["estimator"])
estimators = [m for m in predictor.methods if m in known] + sorted(known - set(predictor.methods))
c1, c2 = st.columns([1, 2])
estimator = c1.selectbox(
    "Method",
    estimators,
    help="Methods the app can use come first; others are baselines of the validation.",
)
given = {True: "given", False: "not given"}
with_latency = c2.radio(
    "Anchor batch latency", [True, False], horizontal=True, format_func=given.get
)
m = metrics[(metrics["estimator"] == estimator) & (metrics["with_latency"] == with_latency)].copy()
if m.empty:
    st.warning(
        f"No validation results for {estimator} with the anchor latency {given[with_latency]}."
    )
    st.stop()
m["pair"] = m["anchor"] + " → " + m["target"]

noise = val.get("noise")
k1, k2, k3, k4 = st.columns(4)
k1.metric("Mean MAPE over pairs", f"{m['mape_pct'].mean():.1f} %")
k2.metric(
    "Worst pair MAPE",
    f"{m['mape_pct'].max():.1f} %",
    m.loc[m["mape_pct"].idxmax(), "pair"],
    delta_color="off",
    delta_arrow="off",
)
k3.metric("Median R²", common.DASH if m["r2"].isna().all() else f"{m['r2'].median():.3f}")
if noise is not None and not noise.empty:
    k4.metric(
        "Noise floor (mean)",
        f"{noise['noise_pct'].mean():.1f} %",
        help="Spread between repetitions of the very same workload: no model can beat it.",
    )

#: The page's sections, one tab each. Only the open tab runs (and sends its charts): the page
#: drew every chart on every load, 24-30 s in the browser. The open tab is in the
#: URL (``?section=...``), so a section can be linked to.
SECTIONS = (
    "Per pair",
    "Predicted vs measured",
    "Per architecture",
    "Scalers and noise",
    "GPUs never measured",
    "Mixed precision and several GPUs",
    "Spec order",
    "Other models and PyTorch",
)
tabs = dict(zip(SECTIONS, st.tabs(SECTIONS, key="section", bind="query-params"), strict=True))


def _per_pair() -> None:
    st.subheader("Error per anchor → target pair")
    left, right = st.columns([5, 3], gap="large")
    with left:
        cols = ["anchor", "target", "mape_pct", "r2", "rmse_ms", "n"] + (
            ["coverage"] if "coverage" in m else []
        )
        shown = m[cols].assign(**({"coverage": 100 * m["coverage"]} if "coverage" in m else {}))
        # The per-op baselines have no R², RMSE or interval: an em dash, not the grid's "None".
        formats = {"r2": "{:.3f}", "rmse_ms": "{:.1f}", "coverage": "{:.0f}"}
        shown = common.dashed(shown, formats)
        st.dataframe(
            shown,
            hide_index=True,
            width="stretch",
            key="metrics_table",
            column_config={
                "anchor": "Anchor",
                "target": "Target",
                "mape_pct": st.column_config.NumberColumn("MAPE (%)", format="%.1f"),
                "r2": common.number_column(shown, "r2", "R²", formats["r2"]),
                "rmse_ms": common.number_column(shown, "rmse_ms", "RMSE (ms)", formats["rmse_ms"]),
                "n": st.column_config.NumberColumn("n", format="%d", help="Predictions"),
                "coverage": common.number_column(
                    shown,
                    "coverage",
                    f"{predictor.interval_level:.0%} coverage (%)",
                    formats["coverage"],
                    width=130,  # the whole header: the grid sizes columns to their cells
                    help=f"Measured latencies inside the {predictor.interval_level:.0%} interval",
                ),
            },
        )
    with right:
        heat = m.pivot_table(index="anchor", columns="target", values="mape_pct")
        fig = px.imshow(
            heat,
            text_auto=".1f",
            color_continuous_scale="Blues",
            aspect="auto",
            labels={"x": "Target instance", "y": "Anchor instance", "color": "MAPE (%)"},
        )
        fig.update_layout(height=360, margin={"t": 30})
        st.plotly_chart(fig, width="stretch", key="mape_heatmap")


def _parity() -> None:
    st.subheader("Predicted vs measured")
    pred = val.get("predictions")
    if pred is None or pred.empty:
        st.info("The artifacts hold no out-of-fold predictions for a parity plot.")
    else:
        pred = pred[(pred["estimator"] == estimator) & (pred["with_latency"] == with_latency)]
        pairs = [ALL_PAIRS, *sorted((pred["anchor"] + " → " + pred["target"]).unique())]
        pair = st.selectbox("Pair", pairs, key="parity_pair")
        if pair != ALL_PAIRS:
            a, t = pair.split(" → ")
            pred = pred[(pred["anchor"] == a) & (pred["target"] == t)]
        if pred.empty:
            st.info(f"No out-of-fold predictions of {estimator} for this choice.")
        else:
            p = pred.assign(
                measured_ms=1000 * pred["measured_s"], predicted_ms=1000 * pred["predicted_s"]
            )
            fig = px.scatter(
                p,
                x="measured_ms",
                y="predicted_ms",
                color="architecture",
                symbol="architecture",  # and a colour each: common.PALETTE
                color_discrete_sequence=common.PALETTE,
                log_x=True,
                log_y=True,
                opacity=0.7,
                render_mode="webgl",
                hover_data=["anchor", "target", "batch_size", "input_size"],
                labels={
                    "measured_ms": "Measured batch latency (ms)",
                    "predicted_ms": "Predicted batch latency (ms)",
                    "architecture": "Architecture (left out)",
                },
            )
            both = p[["measured_ms", "predicted_ms"]]
            lim = [float(both.min().min()), float(both.max().max())]
            fig.add_trace(
                go.Scatter(
                    x=lim,
                    y=lim,
                    mode="lines",
                    name="perfect",
                    line={"color": "black", "dash": "dash"},
                )
            )
            fig.update_layout(height=520)
            st.plotly_chart(fig, width="stretch", key="parity_plot")
            st.caption(f"{len(p):,} out-of-fold predictions (one repetition), log axes.")


def _per_architecture() -> None:
    st.subheader("Error per architecture")
    per_arch = val.get("per_architecture")
    if per_arch is None or per_arch.empty:
        st.info("The artifacts hold no per-architecture errors.")
    else:
        pa = per_arch[
            (per_arch["estimator"] == estimator) & (per_arch["with_latency"] == with_latency)
        ]
        summary = (
            pa.groupby("architecture")["mape_pct"]
            .agg(["mean", "max"])
            .reset_index()
            .sort_values("mean", ascending=False)
        )
        fig = go.Figure(
            go.Bar(
                x=summary["architecture"],
                y=summary["mean"],
                name="mean over pairs",
                error_y=common.error_bars(summary["mean"], summary["mean"], summary["max"]),
            )
        )
        fig.update_layout(
            xaxis_title="Architecture (left out of training)",
            yaxis_title="MAPE (%), mean over pairs; whisker: worst pair",
            height=400,
        )
        st.plotly_chart(fig, width="stretch", key="arch_chart")

    nov = val.get("novelty")
    if nov is not None:
        nov = nov[(nov["estimator"] == estimator) & (nov["with_latency"] == with_latency)]
    if nov is not None and not nov.empty:
        st.subheader("Error by novelty of the left-out profile")
        st.dataframe(
            nov[["band", "share_pct", "mape_pct", "n"]],
            hide_index=True,
            key="novelty_table",
            column_config={
                "band": "Novelty (1 = typical left-out CNN)",
                "share_pct": st.column_config.NumberColumn("Share of rows (%)", format="%.1f"),
                "mape_pct": st.column_config.NumberColumn("MAPE (%)", format="%.1f"),
                "n": st.column_config.NumberColumn("Rows (n)", format="%d"),
            },
        )
        st.caption(
            "Novelty is a profile's distance from the profiles trained on. Unusual networks are "
            "predicted worse; the Anchor page shows each profile's novelty and warns above "
            f"{NOVELTY_WARN:g}."
        )


def _scalers_and_noise() -> None:
    c1, c2 = st.columns(2, gap="large")
    with c1:
        st.subheader("Noise floor")
        if noise is None or noise.empty:
            st.info("The artifacts hold no noise-floor measurement.")
        else:
            st.dataframe(
                noise,
                hide_index=True,
                key="noise_table",
                column_config={
                    "instance": "Instance",
                    "noise_pct": st.column_config.NumberColumn(
                        "Repetition spread (%)", format="%.2f"
                    ),
                },
            )
            st.caption(
                "The same workload measured repeatedly varies by this much; a MAPE near it "
                "is as good as a prediction can be."
            )
    with c2:
        st.subheader("Scalers")
        sc = val.get("scalers")
        if sc is None or sc.empty:
            st.info("The artifacts hold no scaler validation.")
        else:
            st.dataframe(
                sc,
                hide_index=True,
                key="scaler_table",
                column_config={
                    "instance": "Instance",
                    "by": "Scale by",
                    "variant": "Variant",
                    "mape_pct": st.column_config.NumberColumn("MAPE (%)", format="%.2f"),
                    "n": st.column_config.NumberColumn("Points (n)", format="%d"),
                    "mape_all_pct": st.column_config.NumberColumn(
                        "MAPE incl. ends (%)", format="%.2f"
                    ),
                    "mape_3pt_pct": st.column_config.NumberColumn(
                        "MAPE, middle size given (%)", format="%.2f"
                    ),
                },
            )
            st.caption(
                "Error of the latency between the two given ends; `default` is what the "
                "Scaler page uses. With a third measured size in the middle, the error at the "
                "other sizes drops to the last column."
            )


def _one_point_scaler() -> None:
    st.subheader("Scaler from one latency (leave-one-architecture-out)")
    one = val.get("onepoint")
    if one is None or one.empty:
        st.info("The artifacts hold no one-point scaler validation.")
    else:
        wide = one.pivot_table(index=["by", "variant"], columns="instance", values="mape_pct")
        st.dataframe(
            wide.reset_index(),
            hide_index=True,
            key="onepoint_table",
            column_config={
                "by": "Scale by",
                "variant": "Variant",
                **{
                    c: st.column_config.NumberColumn(f"{c} MAPE (%)", format="%.1f")
                    for c in wide.columns
                },
            },
        )
        st.caption(
            "Mean absolute error (%) at every other trained size from one latency on the instance "
            "and (variant `profile`, the Scaler page's after an anchor prediction) the anchor "
            "profile, each CNN left out in turn. `latency only`: without a profile; the rest are "
            "baselines (linear in the work, the median training ratio, PROFET's quadratic through "
            "the point). Errors grow with the distance from the given size (median and 90th "
            "percentile, sizes at most 2x away: validation/onepoint.csv)."
        )


def _scalers_noise_and_one_point() -> None:
    _scalers_and_noise()
    _one_point_scaler()


def _gpus_never_measured() -> None:
    accuracy.cross_instance(val)
    accuracy.published_speedups(val)
    accuracy.will_it_fit(val)


def _mixed_precision_and_gpus() -> None:
    accuracy.model_vs_baselines(val, accuracy.AMP)
    accuracy.model_vs_baselines(val, accuracy.SCALING)


DRAW = dict(
    zip(
        SECTIONS,
        (
            _per_pair,
            _parity,
            _per_architecture,
            _scalers_noise_and_one_point,
            _gpus_never_measured,
            _mixed_precision_and_gpus,
            lambda: spec_order.spec_order(val),
            lambda: beyond_cnn.beyond_cnn(val),
        ),
        strict=True,
    )
)
for name, tab in tabs.items():
    if tab.open:
        with tab:
            DRAW[name]()

meta = predictor.metadata
st.caption(
    f"Artifacts created {meta.get('created', '?')}, data fingerprint "
    f"`{str(meta.get('data_fingerprint', '?'))[:12]}`, "
    f"{meta.get('n_profiles', '?')} profiles."
)
