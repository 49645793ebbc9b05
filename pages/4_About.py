"""About PROFET, and how to take a profile on the anchor instance."""

from __future__ import annotations

import streamlit as st

import ui
from profet_core import ProfetError

st.title("About PROFET")
st.markdown(
    """
PROFET predicts how long **one training step** (one batch) of a CNN takes on GPU cloud instances
you have not tried, from a profile of that step on the one instance you have (the **anchor**).
It then turns the latencies into the time and cost of a whole training run (cost = price per hour
× run time), so you can pick the fastest or the cheapest instance before renting it.

**How it works.** The profile lists the total time of every TensorFlow op on the host (CPU) and
on the device (GPU). PROFET groups the ops into kinds of work by name (convolutions, matrix
products, element-wise, pooling, normalisation, ...), so ops it never saw still count with their
kind, and describes the step by scale-free numbers: each kind's share of the device time, idle
shares and log times. For each anchor → target pair the default method (**hybrid**) predicts the
target/anchor latency ratio with extra trees and gradient boosting, adds a non-negative linear
model of the per-kind device times (it extrapolates to networks larger than any seen), and takes
the geometric mean. With your measured anchor latency it predicts the ratio to that, which is
more accurate; without it, the ratio to the profile's device time. PROFET's original ensemble (a
neural network, a random forest and a linear model on clustered op times) stays available as
method **profet**.

Every prediction comes with an 80% interval, calibrated on architectures left out of training.
It widens where the models disagree and where the profile is **novel**: unlike the profiles
trained on (distance to the nearest ones). Novelty 1 means as unusual as a typical left-out
network; above 1.25 the page warns, because such networks were missed about twice as badly.

The **Scaler** page moves a latency along batch size (16–256) or input size (32–256 pixels) from
the latencies at two sizes (or three, which is more accurate), linearly in the work: the batch
size, or the pixel count. The **Model accuracy** page shows how well all this works for
architectures left out of training.
"""
)

st.header("How to profile on the anchor instance")
st.markdown(
    """
1. Train your model on the anchor instance for a few steps with TensorFlow's profiler on. With
   Keras, the TensorBoard callback profiles a range of batches (skip the first ones, which include
   graph tracing and warm-up):
"""
)
st.code(
    """import tensorflow as tf

tb = tf.keras.callbacks.TensorBoard(log_dir="logs/profile", profile_batch=(10, 20))
model.fit(dataset, epochs=1, steps_per_epoch=30, callbacks=[tb])""",
    language="python",
)
st.markdown(
    """
   Or, around any training loop:
"""
)
st.code(
    """tf.profiler.experimental.start("logs/profile")
for step, (x, y) in enumerate(dataset.take(20)):
    train_step(x, y)
tf.profiler.experimental.stop()""",
    language="python",
)
st.markdown(
    """
2. Open TensorBoard (`pip install tensorboard tensorboard-plugin-profile`, then
   `tensorboard --logdir logs/profile`), go to **Profile → tools → tensorflow_stats**, and click
   **Export as CSV**. That CSV (columns `Host/device`, `Type`, `Total time (us)`, …) can be uploaded
   as it is: the app sums the time per host/device and op type.
3. Or write the PROFET JSON yourself: one object mapping `Host_<Op>` / `Device_<Op>` to total
   microseconds, e.g. `{"Host_IteratorGetNext": 1520.0, "Device_Conv2D": 40211.5}`. A list of such
   objects, or a CSV with one profile per row (optionally with a `batch_latency_s` column), predicts
   several profiles at once.
4. Optionally note the mean wall time of one training step (e.g. from Keras' progress bar,
   `ms/step`) and enter it as the anchor batch latency: predictions are more accurate with it.

Profile the batch size and image size you will train with; enter the batch size, dataset size and
epochs on the Anchor page to get the cost of the whole run.
"""
)

st.header("Limits")
st.markdown(
    """
* Only the instances in the table below are known, as anchors and as targets.
* Predictions are for single-GPU training steps of CNNs like those in the
  training data; very different workloads (transformers, multi-GPU) are out of scope.
* Prices are on-demand USD per hour from the artifacts' instance catalog.
"""
)

try:
    predictor = ui.get_predictor()
except ProfetError as exc:
    st.warning(ui.safe(f"The trained models are not available: {exc}"))
else:
    st.header("Instances and models")
    st.dataframe(
        predictor.catalog,
        hide_index=True,
        key="catalog",
        column_config={
            "instance": "Instance",
            "gpu": "GPU",
            "gpu_count": "GPUs",
            "gpu_memory_gb": "GPU memory (GB)",
            "vcpus": "vCPUs",
            "memory_gib": "Memory (GiB)",
            "usd_per_hour": st.column_config.NumberColumn("Price (USD/h)", format="%.3f"),
        },
    )
    meta = predictor.metadata
    st.caption(
        f"Methods: {', '.join(predictor.methods)} (default {predictor.default_method}). "
        f"Artifacts created {meta.get('created', '?')}; data fingerprint "
        f"`{str(meta.get('data_fingerprint', '?'))[:12]}`."
    )
