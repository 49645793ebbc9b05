"""About PROFET, and how to take a profile on the anchor instance."""

from __future__ import annotations

import streamlit as st

from profet_app import common
from profet_core import ProfetError, price_source

common.wide_layout()
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

The **Scaler** page moves a latency along batch size (16–256) or input size (32–256 pixels).
From **one** latency (the Anchor page's prediction, or one measurement) it follows a curve
learned per instance from the training networks, each measured at five sizes: how much of a step
is fixed overhead depends on the instance, the size and the profile's mix of work, so the
target matters and the anchor profile sharpens the curve. From latencies measured at two or
three sizes it runs through them, linearly in the work (the batch size, or the pixel count),
which is more accurate still. The **Model accuracy** page shows how well all this works for
architectures left out of training.
"""
)

st.header("Which models the measurements cover")
st.markdown(
    """
The trained models learned from **TensorFlow CNN training steps** (12 CNNs on four GPUs) and
published CNN speed-ups of newer GPUs. A profile of **another kind of model** (recurrent layers,
attention, embeddings, text preprocessing) or a **PyTorch trace** (`torch.profiler`'s
`.pt.trace.json(.gz)`) is answered by the **spec family model**: each kind of work in the step
(convolutions, matrix products and attention on the tensor or FP32 rate; normalisation,
element-wise work, recurrent kernels and embeddings on memory bandwidth; a framework loop's small
per-timestep kernels on kernel launches; collectives on the interconnect) is moved to the target
GPU by the spec model's fitted exponents, and what the step spends beyond device work (host,
launches, synchronisation) is kept. Its basis reads `spec family model (...)`, and the answer's
note names the kinds of work no training run measured, with their share of the step: their
interval is wider. Checked against PROFET's own notebook (RNN, LSTM and BiLSTM on Reuters, g4dn ->
g5: within 7%) and published PyTorch ResNet-50 ratios (`python bench/claims/beyond_cnn.py`, which
prints both); large recurrent models (GNMT-sized LSTMs) run compute-bound and are predicted too
slow by it.
"""
)

st.header("How to profile on the anchor instance")
st.markdown(
    """
PROFET's models were trained on profiles taken one way; a profile taken another way is out of
distribution and gets silently wrong answers. The convention:

* TensorFlow with **Keras 2** (TF 2.5's tf.keras; today the `tf-keras` package), the
  original's CNNs, `compile(optimizer="SGD", loss="categorical_crossentropy",
  metrics=["accuracy"])` (the legacy SGD), FP32 and no XLA, `model.fit` on numpy arrays with
  validation data and TensorBoard (`histogram_freq=1`) tracing **two consecutive training steps
  at 1.5 epochs** (so each op's total covers **2 steps**; device time is then about 1.7-2.7x one
  step's latency);
* the profiler's `tensorflow_stats` table with IDLE rows kept, summed per host/device and op
  type (*Total time (us)*, not self-time);
* the batch latency measured in a separate, unprofiled run: the median step time over an epoch.

**Trained with Keras 3, XLA (`jit_compile`) or mixed precision?** Those runs emit op types the
training data lacks (XLA's fused kernels, other batch-norm and optimizer ops); a profile with
20% or more of its device time in unseen op types is refused. Profile the architecture with
`profet profile` (it follows the convention), then give your own measured step latency as the
anchor latency.

**The easy way**: on the anchor instance, `profet profile MODEL --batch-size B --input-size PX`
(MODEL: a saved `.keras` file, a Python file with `build_model(input_shape, classes)`, or a
benchmark-zoo name) does all of this and prints the `profet predict` command to run next.

**By hand**, with the TensorBoard callback tracing two steps of epoch 2:
"""
)
st.code(
    """import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # before TensorFlow: tf.keras is Keras 2 (tf-keras)
import tensorflow as tf

steps = 40  # steps per epoch (len(x) / 32); trace steps 20 and 21 of epoch 2 (1.5 epochs)
tb = tf.keras.callbacks.TensorBoard(log_dir="logs/profile", histogram_freq=1,
                                    profile_batch=(steps + 20, steps + 21))
model.compile(optimizer=tf.keras.optimizers.legacy.SGD(), loss="categorical_crossentropy",
              metrics=["accuracy"], jit_compile=False)
model.fit(x, y, batch_size=32, epochs=2, validation_data=(x_val, y_val), callbacks=[tb])""",
    language="python",
)
st.markdown(
    """
Then open TensorBoard (`tensorboard --logdir logs/profile`), **Profile → tensorflow_stats**
(newer versions: *framework_op_stats*), **Export as CSV**, and upload that CSV as it is. Or write
PROFET JSON: an object mapping `Host_<Op>` / `Device_<Op>` to total microseconds.

**Traced another number of steps?** Enter it as *Steps covered by the profile* (or
`--steps N` on the command line, or `"steps": N` in the JSON object form
`{"ops": {...}, "steps": N}`): op times are rescaled to two steps. Given the anchor latency, a
profile whose device time does not fit its step count is flagged.

**The anchor latency** is one training step's wall time (e.g. Keras' `ms/step` of an unprofiled
epoch); predictions are more accurate with it. Profile the batch and image size you will train
with; enter dataset size and epochs on the Anchor page for the cost of the whole run.
"""
)

st.header("What is in scope")
st.markdown(
    """
* **Workloads**: training steps of CNNs like those in the training data, profiled on one of the
  measured instances (the anchors, basis *measured* in the table below). Very different
  workloads (transformers, language models) are out of scope.
* **Targets**: every GPU of the spec sheet and every GPU offering of SkyPilot's catalog (six
  clouds, on-demand and spot); a GPU the data never measured is predicted from its specs (basis
  *specs only*, *calibrated* or *published (n)*, with a wider interval). AMD GPUs and GPUs
  without a spec line are listed, not predicted.
* **Precision**: FP32 (the profile's) or mixed precision (AMP) on tensor-core GPUs, with your
  measured AMP step time on the anchor where you have it.
* **GPUs**: 1, N or all of an instance's GPUs, data-parallel on one machine at the profiled
  per-GPU batch (global batch = GPUs x batch; the run's steps shrink accordingly), at the
  whole instance's price. Several machines (multi-node), model or pipeline parallelism are out
  of scope.
* **Picks**: the fastest, the cheapest and the best value (least cost x time) are chosen once,
  by one criterion that each pick names: per step, per image (where GPU counts differ) or the
  whole run (where a run is given).
* **Prices**: a prediction is made for a GPU configuration (GPU, GPU count, precision); a price
  belongs to an offering (cloud, instance type, region, market), and SkyPilot's catalog
  snapshot is the one source of prices. The per-target table prices each configuration of N
  GPUs by the offering that rents at least N of its GPU cheapest on demand (named in its
  Offering column). An instance type has one price wherever it is named (this page's list, the
  anchor list, the front): where a configuration predicted as an instance type (p5.48xlarge:
  8 x H100 SXM5 80GB) is rented cheaper by another offering, its row says so in its note, with
  the instance type's own price. Every view of a price says what it needs said (a catalog price
  to check, regions at the same price). The time-cost front prices every offering (on-demand
  and spot). An
  instance no cloud rents any more (p2.xlarge, g3s.xlarge) is predicted without a price. The
  spec sheet holds specs and their sources only.
"""
)

st.header("Where prices come from")
st.markdown(common.safe(price_source()))
st.markdown(
    "Each cloud's commit is in `profet_core/data/offerings_meta.json`; `profet offerings "
    "refresh --catalog ~/.sky/catalogs/v8 --out DIR` re-derives the snapshot from a newer copy "
    "and says what changed. Spot capacity can be taken back at any time."
)

try:
    predictor = common.get_predictor()
except ProfetError as exc:
    st.warning(common.safe(f"The trained models are not available: {exc}"))
else:
    st.header("Instances and models")
    catalog = predictor.catalog.copy()
    if predictor.cross is not None:  # instances never measured: their spec sheet's values
        specs = predictor.cross.specs_.set_index("instance")
        for col in ("gpu_memory_gb", "vcpus"):
            if col in specs and col in catalog:
                catalog[col] = catalog[col].fillna(catalog["instance"].map(specs[col]))
    # What no sheet gives (host memory of the spec-only instances) shows as an em dash.
    numbers = {
        "gpu_count": "{:.0f}",
        "gpu_memory_gb": "{:g}",
        "vcpus": "{:.0f}",
        "memory_gib": "{:g}",
        "usd_per_hour": "{:.3f}",  # an instance no offering rents (p2.xlarge): a dash
    }
    shown = common.dashed(catalog, numbers)
    st.dataframe(
        shown,
        hide_index=True,
        key="catalog",
        column_config={
            "instance": "Instance",
            "gpu": "GPU",
            **{
                col: common.number_column(shown, col, label, numbers[col])
                for col, label in (
                    ("gpu_count", "GPUs"),
                    ("gpu_memory_gb", "GPU memory (GB, per GPU)"),
                    ("vcpus", "vCPUs"),
                    ("memory_gib", "Memory (GiB)"),
                    ("usd_per_hour", "Price (USD/h)"),
                )
            },
            "offering": st.column_config.TextColumn(
                "Offering", help="the offering renting it cheapest on demand: where the price is"
            ),
        },
    )
    meta = predictor.metadata
    st.caption(
        f"Methods: {', '.join(predictor.methods)} (default {predictor.default_method}). "
        f"Artifacts created {meta.get('created', '?')}; data fingerprint "
        f"`{str(meta.get('data_fingerprint', '?'))[:12]}`."
    )
