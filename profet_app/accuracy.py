"""The Model accuracy page's sections on GPUs beyond the data: the cross-instance model left one
GPU out, tensor-core GPUs against published speed-ups, mixed precision (AMP) gains and N-GPU
scaling against their baselines, and will-it-fit.

Every number comes from the artifacts' validation tables (written by ``profet train``); nothing
is computed here but their selection.
"""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from profet_app import common

#: Folds of the AMP and N-GPU validation tables, as the radio names them.
FOLDS = {
    "gpu": "One GPU left out",
    "source": "One source left out",
    "gpu count": "Per GPU count (one GPU left out)",
    "held-out": "VGG16, Inception-v3 (never fitted)",
}
#: What to run where a table is missing (artifacts trained before it).
RETRAIN = (
    "retrain with `profet train --data DIR --out DIR` (validation on, the default) to see it here"
)
#: The two models judged against published measurements: their validation table (name in
#: ``Predictor.validation``), headings, baselines (column: label) and what the page says.
AMP = {
    "name": "amp_gain",
    "title": "Mixed precision (AMP) gain against published measurements",
    "what": "The AMP gain validation",
    "baselines": {
        "mape_constant_pct": "Constant factor",
        "mape_constant_source_pct": "Constant, same source",
        "mape_tensor_peak_pct": "Tensor-peak ratio",
    },
    "caption": (
        "AMP gain = FP32 step time / AMP step time on one GPU, from published pairs (same "
        "repository, framework, GPU and CNN). The model is refitted without the left-out GPU "
        "(or source) and predicts its pairs; baselines: the median gain of the other pairs "
        "(constant), of the other pairs of the same source, and the GPU's FP16 tensor over "
        "FP32 peak ratio. MAPE and coverage in %; coverage: published gains inside the 80% "
        "interval set on the other groups' errors (never-fitted CNNs: the interval a "
        "prediction uses). — where a baseline has nothing to go on (a left-out source)."
    ),
}
SCALING = {
    "name": "gpu_scaling",
    "title": "Several GPUs (data-parallel) against published measurements",
    "what": "The N-GPU scaling validation",
    "baselines": {"mape_linear_pct": "Linear scaling"},
    "caption": (
        "Scaling = N-GPU images/s over N x one-GPU images/s of the same GPU, source, CNN and "
        "precision (2, 4 and 8 GPUs). The model (compute plus the all-reduce not hidden by "
        "it) is refitted without the left-out GPU (or source) and predicts its rows; linear "
        "scaling predicts 1. The 80% interval is set apart for GPUs without peer-to-peer "
        "(the spec sheet's p2p 0, GeForce cards) and grows with log2 of the GPU count. MAPE "
        "and coverage in %, as above."
    ),
}


def _headline(part: pd.DataFrame, spec: dict) -> None:
    """Mean MAPE (%) of the model and each baseline over the fold, and its coverage."""
    total = part[part["group"] == "all"]
    if len(total):
        row = total.iloc[0]
    else:  # the never-fitted CNNs: every row weighs the same, as in an "all" row
        w = part["rows"] / part["rows"].sum()
        row = part.select_dtypes("number").mul(w, axis=0).sum(min_count=1)
    cols = st.columns(len(spec["baselines"]) + 2)
    cols[0].metric("MAPE, model", f"{row['mape_pct']:.1f} %")
    for col, (key, label) in zip(cols[1:], spec["baselines"].items(), strict=False):
        col.metric(label, common.DASH if pd.isna(row[key]) else f"{row[key]:.1f} %")
    cov = row["coverage_pct"]
    cols[-1].metric("80% coverage", common.DASH if pd.isna(cov) else f"{cov:.0f} %")


def _table(part: pd.DataFrame, spec: dict) -> None:
    cols = ["group", "rows", "mape_pct", *spec["baselines"], "coverage_pct"]
    formats = {c: "{:.1f}" for c in cols[2:]}
    shown = common.dashed(part[cols], formats)
    config = {
        "group": "Left out",
        "rows": st.column_config.NumberColumn("Rows (n)", format="%d"),
        "mape_pct": common.number_column(shown, "mape_pct", "MAPE (%)", formats["mape_pct"]),
        **{
            c: common.number_column(shown, c, f"{label} (%)", formats[c], width=7 * len(label) + 30)
            for c, label in spec["baselines"].items()
        },
        "coverage_pct": common.number_column(
            shown, "coverage_pct", "80% coverage (%)", "{:.1f}", width=130
        ),
    }
    st.dataframe(
        shown, hide_index=True, width="stretch", key=f"{spec['name']}_table", column_config=config
    )


def _chart(part: pd.DataFrame, spec: dict) -> None:
    """Grouped bars: MAPE (%) of the model and each baseline per left-out group."""
    groups = part[part["group"] != "all"]
    if groups.empty:
        return
    fig = go.Figure()
    for col, label in {"mape_pct": "Model", **spec["baselines"]}.items():
        fig.add_trace(
            go.Bar(
                x=groups["group"],
                y=groups[col],
                name=label,
                hovertemplate="%{x}<br>%{y:.1f} %<extra>" + label + "</extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        yaxis_title="MAPE (%)",
        xaxis_title="Left out",
        legend={"orientation": "h", "y": 1.12},
        height=380,
        margin={"t": 40},
    )
    st.plotly_chart(fig, width="stretch", key=f"{spec['name']}_chart")


def model_vs_baselines(val: dict, spec: dict) -> None:
    """One validation table (:data:`AMP` or :data:`SCALING`) with a fold picker, headline
    metrics, the table and a chart; a note where the artifacts lack it."""
    st.subheader(spec["title"])
    table = val.get(spec["name"])
    if table is None or table.empty:
        st.info(f"{spec['what']} is not in these artifacts; {RETRAIN}.")
        return
    lacking = sorted({"fold", "group", "rows", "mape_pct", "coverage_pct", *spec["baselines"]})
    lacking = [c for c in lacking if c not in table.columns]
    if lacking:
        st.info(f"{spec['what']} in these artifacts lacks {', '.join(lacking)}; {RETRAIN}.")
        return
    present = set(table["fold"])
    folds = [f for f in FOLDS if f in present]
    fold = st.radio(
        "Left out", folds, format_func=FOLDS.get, horizontal=True, key=f"{spec['name']}_fold"
    )
    part = table[table["fold"] == fold]
    _headline(part, spec)
    _table(part, spec)
    _chart(part, spec)
    st.caption(spec["caption"])


def cross_instance(val: dict) -> None:
    """The cross-instance model, each measured GPU left out (``crossgpu.csv``)."""
    cross = val.get("crossgpu")
    st.subheader("GPUs never measured (leave-one-GPU-out)")
    if cross is None or cross.empty:
        st.info("The artifacts hold no cross-instance validation.")
        return
    show = cross[cross["direction"].isin(["both"])].copy()
    show["k"] = show["k"].map(lambda k: "all GPUs trained" if k < 0 else f"{k} run(s)")
    cols = [
        "basis",
        "k",
        "left_out",
        "mape_cross",
        "max_pair_cross",
        "mape_fp32-ratio",
        "mape_bandwidth-ratio",
        "mape_roofline",
        "r2_cross",
        "coverage_pct",
    ]
    num, text = st.column_config.NumberColumn, st.column_config.TextColumn
    # Widths that fit the page at 1440 px (its table was cut at the right: 1,022 px in 702).
    st.dataframe(
        show[cols],
        hide_index=True,
        width="stretch",
        key="crossgpu_table",
        column_config={
            "basis": text("Basis", width=95),
            "k": text("GPU runs", width=110, help="runs of the left-out GPU calibrated on"),
            "left_out": text("Left-out GPU", width=105),
            "mape_cross": num("MAPE (%)", format="%.1f", width=75),
            "max_pair_cross": num("Worst pair (%)", format="%.1f", width=95),
            "mape_fp32-ratio": num("FP32 ratio (%)", format="%.1f", width=95),
            "mape_bandwidth-ratio": num("Bandwidth (%)", format="%.1f", width=95),
            "mape_roofline": num("Roofline (%)", format="%.1f", width=90),
            "r2_cross": num("R2", format="%.3f", width=55),
            "coverage_pct": num("80% coverage (%)", format="%.1f", width=115),
        },
    )
    st.caption(
        "Each GPU removed as anchor and target and each CNN left out, the spec model predicts "
        "every pair involving the removed GPU from specs only or calibrated on 1 or 3 CNNs "
        "measured on it (MAPE per pair, mean over pairs; baselines scale the anchor latency by "
        "spec ratios): what to expect for basis 'specs only' or 'calibrated'."
    )


#: The published speed-up chart's predictors and the published table's columns, in words.
PREDICTORS = {
    "cross": "PROFET spec model",
    "fp32-ratio": "FP32 peak ratio",
    "bandwidth-ratio": "Memory bandwidth ratio",
}
HELD_OUT = {True: "VGG16 / Inception-v3 (never fitted)", False: "Fitted CNN"}
#: ``column -> (label, width in px, help)``: together they fit the page at 1440 px (the table
#: was cut at the right: 1,327 px in 702).
PUBLISHED_COLUMNS = {
    "scope": ("Scope", 70, None),
    "group": ("Left out", 210, None),
    "pairs": ("Pairs", 55, "published speed-up pairs (n)"),
    "mape_cross": ("Spec model (%)", 100, "the PROFET spec model's MAPE"),
    "mape_before": ("Before (%)", 75, "MAPE of the model before fitting published pairs"),
    "mape_fp32-ratio": ("FP32 ratio (%)", 95, "MAPE of the FP32 peak ratio"),
    "mape_bandwidth-ratio": ("Bandwidth (%)", 95, "MAPE of the memory bandwidth ratio"),
    "mape_roofline": ("Roofline (%)", 90, "MAPE of the roofline mix"),
    "half_width_log": ("Half-width", 80, "the 80% interval's half-width (log units)"),
    "coverage_pct": ("Coverage (%)", 95, "the 80% interval's coverage"),
}
#: Facets per row of the published speed-up chart: readable titles at 1440 px.
FACETS_PER_ROW = 4


def _speedup_figure(pub: pd.DataFrame) -> go.Figure:
    """Predicted against published speed-up, one facet per left-out GPU, in rows of
    :data:`FACETS_PER_ROW`."""
    long = pub.melt(["left_out", "model", "speedup", "held_out"], list(PREDICTORS), "predictor")
    long = long.rename(columns={"value": "predicted"}).assign(
        predictor=lambda d: d["predictor"].map(PREDICTORS),
        held_out=lambda d: d["held_out"].astype(bool).map(HELD_OUT),
    )
    rows = -(-long["left_out"].nunique() // FACETS_PER_ROW)
    fig = px.scatter(
        long,
        x="speedup",
        y="predicted",
        color="predictor",
        symbol="held_out",
        facet_col="left_out",
        facet_col_wrap=FACETS_PER_ROW,
        facet_row_spacing=0.5 / max(rows, 1) / 2,
        hover_data=["model"],
        log_x=True,
        log_y=True,
        labels={
            "speedup": "Published (x V100)",
            "predicted": "Predicted (x V100)",
            "predictor": "Predictor",
            "held_out": "CNN",
            "model": "CNN",
            "left_out": "Left-out GPU",
        },
    )
    # "left_out=NVIDIA A10" -> "A10": the facet title is the GPU, short enough for its column.
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1].replace("NVIDIA ", "")))
    fig.update_layout(
        height=260 * rows + 120,
        legend={"orientation": "h", "y": -0.08, "yanchor": "top", "title": None},
        margin={"t": 40},
    )
    return fig


def published_speedups(val: dict) -> None:
    """Tensor-core GPUs' FP32 speed-ups, each GPU left out (``published*.csv``)."""
    pub = val.get("published_pairs")
    if pub is not None and "fold" in pub:  # the other folds set the intervals; plot per GPU
        pub = pub[pub["fold"] == "gpu"]
    if pub is None or pub.empty:
        return
    st.subheader("Tensor-core GPUs against published speed-ups (leave-one-GPU-out)")
    st.plotly_chart(_speedup_figure(pub), width="stretch", key="published_chart")
    summary = val.get("published")
    if summary is not None:
        table = summary[summary["scope"] != "source"]
        floats = table.select_dtypes("float").columns
        shown = common.dashed(table, dict.fromkeys(floats, "{:.3g}"))
        st.dataframe(
            shown,
            hide_index=True,
            width="stretch",
            key="published_table",
            column_config={
                c: st.column_config.Column(label, width=width, help=help)
                for c, (label, width, help) in PUBLISHED_COLUMNS.items()
                if c in table
            },
        )
    st.caption(
        "Each GPU's efficiency refitted without its own pairs, then its published speed-ups "
        "predicted (the PROFET spec model; the FP32 peak and memory bandwidth ratios to "
        "compare; the diagonal is perfect); MAPE in %. Scope basis: the 80% interval "
        "(half-width in log units) and its coverage, one CNN or one generation left out."
    )


def will_it_fit(val: dict) -> None:
    """The will-it-fit model, each CNN left out (``fits.csv``)."""
    fits = val.get("fits")
    if fits is None or fits.empty:
        return
    st.subheader("Will it fit in the target's memory?")
    # a GPU where every workload fitted has no non-fitting one to catch: a dash, not "None"
    fits = common.dashed(fits, {"recall_not_fit_pct": "{:.0f}"})
    num = st.column_config.NumberColumn
    st.dataframe(
        fits,
        hide_index=True,
        key="fits_table",
        column_config={
            "target": "Target",
            "rows": num("Workloads", format="%d"),
            "not_fit": num("Did not fit", format="%d"),
            "accuracy_pct": num("Accuracy (%)", format="%.1f"),
            "brier": num("Brier score", format="%.4f"),
            "brier_base_rate": num("Brier, base rate", format="%.4f"),
            "recall_not_fit_pct": common.number_column(
                fits, "recall_not_fit_pct", "Non-fitting caught (%)", "{:.0f}", width=160
            ),
        },
    )
    st.caption(
        "Leave-one-architecture-out: the probability that a workload fits (from the anchor "
        "latency, sizes and the target's memory) against what ran; a workload missing on a GPU "
        "did not fit. Lower Brier than the base rate = informative."
    )
