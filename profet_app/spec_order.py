"""The Model accuracy page's spec-order section: how often the answers contradict
the spec sheet without the spec order and with it, how well they rank GPUs against published
throughput, and the issue's repro.

Every number comes from ``validation/spec_order.csv`` (written into the artifacts by
``python bench/claims/validation.py --record``); nothing is computed here but its selection.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from profet_app import common

#: What each inversions row counts, in words.
COUNTS = {
    "inversions": "Inversions: a GPU with at least another's rates and 95% of its bandwidth "
    "predicted more than 10% slower",
    "spec-model": "… of them from the spec model",
    "between measured answers": "… of them between answers of trained pairs (the data's own)",
    "gpu pairs": "GPU pairs with an inversion",
    "out of roofline bounds": "Answers out of the roofline bounds by more than 10%",
    "the slower one measured": "… of them with a measured (trained-pair) answer the slower one",
}
BEFORE, AFTER = "Without the spec order", "With the spec order (as shipped)"
CAPTION = (
    "Counted over 97 of the data's CNN profiles, the four anchors, FP32 and AMP, one GPU and "
    "every GPU of the instance. The spec order moves each answer into the roofline bounds: a "
    "step is never longer than another GPU's over the least ratio of its resources to that "
    "GPU's (convolution/matrix rate, FP32 rate, memory bandwidth; the link with several GPUs), "
    "nor shorter than it over the largest; the answer with less evidence moves (specs only, "
    "then published, never a measured one). The data measures some small host-bound CNNs "
    "slower on the V100 than on the T4, and the K80 and T4 below their rated resources: those "
    "answers are kept."
)


def spec_order(val) -> None:
    """The spec-order validation (``spec_order.csv``), or how to make it."""
    st.subheader("Predictions against the spec sheet")
    so = common.recorded_table(
        val, "spec_order", "spec-order validation", "bench/claims/validation.py"
    )
    if so is None:
        return
    inv = so[so["section"] == "inversions"].set_index("item")
    k1, k2 = st.columns(2)
    for col, key in ((k1, "inversions"), (k2, "out of roofline bounds")):
        if key in inv.index:
            before, after = int(inv.loc[key, "before"]), int(inv.loc[key, "after"])
            col.metric(
                COUNTS[key].split(":")[0] + " (pairs)",
                f"{after:,}",
                f"{after - before:+,} from {before:,} without the spec order",
                delta_color="inverse",
            )
    counts = pd.DataFrame(
        {
            "What is counted": [COUNTS.get(i, i) for i in inv.index],
            f"{BEFORE} (pairs)": inv["before"].astype(int).to_numpy(),
            f"{AFTER} (pairs)": inv["after"].astype(int).to_numpy(),
        }
    )
    st.dataframe(counts, hide_index=True, key="spec_order_counts")
    st.caption(CAPTION)
    _spearman(so[so["section"] == "spearman"])
    _example(so[so["section"] == "repro"])
    st.caption("Made by `python bench/claims/validation.py --record`.")


def _spearman(rho: pd.DataFrame) -> None:
    """Spearman rho per published table, before and after."""
    if not rho.empty:
        st.markdown(
            "**Rank agreement with published throughput** (Spearman ρ between predicted and "
            "published one-GPU FP32 images/s across the GPUs of each published table; 1 = same "
            "order)"
        )
        st.dataframe(
            pd.DataFrame(
                {
                    "Published table (CNN, source)": rho["item"].to_numpy(),
                    "GPUs compared": rho["unit"]
                    .str.replace("rho over ", "")
                    .str.replace("rho", "—")
                    .to_numpy(),
                    f"{BEFORE} (ρ)": rho["before"].round(3).to_numpy(),
                    f"{AFTER} (ρ)": rho["after"].round(3).to_numpy(),
                }
            ),
            hide_index=True,
            key="spec_order_spearman",
        )


def _example(rep: pd.DataFrame) -> None:
    """The example profile's steps on the GPUs the spec order moves most, before and after."""
    if not rep.empty:
        st.markdown(
            "**An example** (examples/profile_g3s.json from g3s.xlarge, one GPU; with "
            "another method its own trained-pair answers are kept and the others are the "
            "default method's)"
        )
        st.dataframe(
            pd.DataFrame(
                {
                    "GPU, precision": rep["item"].to_numpy(),
                    f"{BEFORE} (ms per step)": rep["before"].round(2).to_numpy(),
                    f"{AFTER} (ms per step)": rep["after"].round(2).to_numpy(),
                }
            ),
            hide_index=True,
            key="spec_order_repro",
        )
