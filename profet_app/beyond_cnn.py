"""The Model accuracy page's section on models beyond CNNs and PyTorch traces: the spec family
model against PROFET's notebook rows and published PyTorch ratios.

Every number comes from ``validation/beyond_cnn.csv`` (written into the artifacts by
``python bench/claims/beyond_cnn.py --record``); nothing is computed here but its selection.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from profet_app import common

INTRO = (
    "Profiles unlike the training CNNs (recurrent layers, attention, embeddings, text "
    "preprocessing) and every PyTorch trace are answered by the **spec family model**: each op "
    "family's time moves by the GPU resource it runs on, and what the step spends beyond device "
    "work (host, launches, synchronisation) is kept. Few measurements exist to judge it: these "
    "are all the project has."
)
REUTERS = (
    "**PROFET's notebook rows** (Reuters, batch 128, TensorFlow): profiled on g4dn.xlarge "
    "(T4), measured on g5.xlarge (A10G). The whole step scaled by the FP32-rate or "
    "bandwidth ratio is the baseline."
)
TRACES = (
    "**Real PyTorch ResNet-50 training traces** (a V100 one, and one rank of a two-A100 DDP "
    "run) against published PyTorch ResNet-50 throughput (Lambda's and NVIDIA's tables, one "
    "GPU): each GPU's step time as a ratio to the V100 SXM2 16GB's, predicted from the trace "
    "and measured. MAPE % per trace and precision:"
)
KINDS = (
    "**Other model kinds** (Lambda's PyTorch tables: BERT, GNMT, Transformer-XL, Tacotron 2, "
    "NCF, WaveGlow; TF32, one GPU): no profile of these models is at hand. Where a profile of "
    "the same kind of work stands in, its predicted ratios are judged; otherwise only the "
    "baselines are shown. A small recurrent profile standing in for large LSTMs (GNMT, "
    "Tacotron 2) is 2-4x off: large recurrent layers run compute-bound, small ones do not."
)
MAPE = ("spec family model", "FP32-rate ratio", "bandwidth ratio")


def beyond_cnn(val) -> None:
    """The beyond-CNN validation (``beyond_cnn.csv``), or how to make it."""
    st.subheader("Models beyond CNNs and PyTorch traces")
    bc = common.recorded_table(
        val, "beyond_cnn", "beyond-CNN validation", "bench/claims/beyond_cnn.py"
    )
    if bc is None:
        return
    st.markdown(INTRO)
    _reuters(bc[bc["section"] == "reuters"])
    _traces(bc[bc["section"] == "trace"], bc[bc["section"] == "trace_mape"])
    _mape_table(bc[bc["section"] == "kinds"], KINDS, "Model (profile standing in)", "kinds")
    st.caption("Made by `python bench/claims/beyond_cnn.py --record`; see docs/beyond_cnn.md.")


def _reuters(rows: pd.DataFrame) -> None:
    if rows.empty:
        return
    st.markdown(REUTERS)
    inside = rows["inside"].astype(str).str.lower() == "true"
    st.dataframe(
        pd.DataFrame(
            {
                "Model": rows["item"].to_numpy(),
                "Measured (ms per step)": rows["measured"].round(2).to_numpy(),
                "Predicted (ms per step)": rows["predicted"].round(2).to_numpy(),
                "80% interval (ms per step)": [
                    f"{lo:.2f}–{hi:.2f}" for lo, hi in zip(rows["low"], rows["high"], strict=True)
                ],
                "Error (%)": rows["error_pct"].round(1).to_numpy(),
                "Inside": inside.map({True: "yes", False: "no"}).to_numpy(),
                "FP32-rate ratio error (%)": rows["fp32_error_pct"].round(1).to_numpy(),
                "Bandwidth ratio error (%)": rows["bandwidth_error_pct"].round(1).to_numpy(),
            }
        ),
        hide_index=True,
        key="beyond_reuters",
    )


def _traces(rows: pd.DataFrame, mape: pd.DataFrame) -> None:
    if mape.empty:
        return
    _mape_table(mape, TRACES, "Trace, precision", "trace_mape")
    if rows.empty:
        return
    fig = go.Figure()
    for item, part in rows.groupby("item", sort=False):
        fig.add_trace(
            go.Scatter(
                x=part["measured"],
                y=part["predicted"],
                mode="markers",
                name=item,
                text=part["gpu"],
                hovertemplate="%{text}<br>measured %{x:.3f}<br>predicted %{y:.3f}<extra></extra>",
            )
        )
    top = float(max(rows["measured"].max(), rows["predicted"].max())) * 1.05
    fig.add_trace(
        go.Scatter(
            x=[0, top], y=[0, top], mode="lines", name="predicted = measured",
            line={"dash": "dot", "color": "grey"},
        )
    )  # fmt: skip
    fig.update_layout(
        xaxis_title="Measured step time / V100 SXM2 16GB's (ratio)",
        yaxis_title="Predicted step time / V100 SXM2 16GB's (ratio)",
        height=420,
        margin={"t": 20},
    )
    st.plotly_chart(fig, key="beyond_traces")


def _mape_table(rows: pd.DataFrame, text: str, label: str, key: str) -> None:
    """MAPE % of the spec family model and the two ratio baselines, a dash where a model kind
    has no profile standing in (no prediction to judge)."""
    if rows.empty:
        return
    st.markdown(text)
    cols = [f"{name} (MAPE %)" for name in MAPE]
    table = pd.DataFrame(
        {
            label: rows["item"].to_numpy(),
            cols[0]: rows["error_pct"].round(1).to_numpy(),
            cols[1]: rows["fp32_error_pct"].round(1).to_numpy(),
            cols[2]: rows["bandwidth_error_pct"].round(1).to_numpy(),
        }
    )
    formats = dict.fromkeys(cols, "{:.1f}")
    shown = common.dashed(table, formats)
    st.dataframe(
        shown,
        hide_index=True,
        key=f"beyond_{key}",
        column_config={c: common.number_column(shown, c, c, formats[c]) for c in cols},
    )
