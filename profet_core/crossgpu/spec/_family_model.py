"""The spec family model: any training step, of any model and framework, moved to another GPU
family by family.

A CNN profile in PROFET's convention is answered by the trained models (the per-pair ensembles
and the cross-instance model, which learned from CNN steps as a whole). A step of another kind
(recurrent layers, attention, embeddings; or a PyTorch trace) is answered here, from what its
profile says per step:

    step_target = sum_f D_f * r_f  +  O * h,    O = max(L - sum_f D_f, 0)

- ``D_f``: device busy time per step of family ``f`` (:mod:`..features._families`);
- ``r_f``: the spec model's physical ratio target/anchor for the family whose exponents move it
  (its fitted exponents and efficiencies, without the residual trees, which learned CNN mixes);
  1 for launch-bound work: a framework loop's small per-timestep kernels (Keras' generic RNN
  loop, told by its ``TensorList``/``While`` ops) take their launch latency on any GPU;
- ``O``: what the step spends beyond device work (host work, kernel launches, synchronisation),
  ``L`` the anchor's step latency; ``h`` the host's speed ratio, 1: the spec sheet has no host
  CPU, so the interval carries it (:data:`W_HOST`);
- a PyTorch trace counts its kernels: no kernel takes less than :data:`KERNEL_MIN_S` on any GPU,
  and an anchor step that was launch-bound (its GPU busy under :data:`LAUNCH_BOUND_U` of the
  step) keeps its host time per kernel on the target.

The 80% interval, in log units, adds in quadrature the spec model's own (its pair basis) over the
device share, :data:`W_HOST` over the overhead share, and :data:`W_NEW` over the share of
families no training run measured (the answer's basis names them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...features._families import FINE_FAMILIES, MEASURED, MODEL_FAMILY
from ._pairs import MODEL_FAMILIES

#: 80% interval half-width (log units) of the host's part: AWS hosts of the data's four GPUs run
#: the same host-bound CNN steps 0.9-1.4x apart; without the host CPU in the spec sheet, +-16%.
W_HOST = 0.15
#: 80% interval half-width (log units) per unit share of time in families no training run
#: measured (recurrent, attention, embedding, loop...): their exponents are borrowed.
W_NEW = 0.30
#: Least time of one GPU kernel on any GPU (s): launch latency and the smallest kernel.
KERNEL_MIN_S = 2e-6
#: Below this device-busy share of its step, a traced anchor step is launch-bound.
LAUNCH_BOUND_U = 0.5
#: Least share of a step that a faster GPU leaves as it is (host work, launches, waits): the
#: median device idle share of the GPU-bound (device busy >= 80% of the step) training profiles,
#: 7.1% over the data's four GPUs (3.8-11.8% per GPU). The spec model's GPU efficiencies were
#: fitted on such steps; a traced step that shows less (PyTorch's GPU-bound steps idle ~1%) is
#: read with this share, or those efficiencies would be read in other terms than they were fitted
#: (its faster GPUs predicted ~20% too fast against published PyTorch ratios).
#: ``python bench/claims/beyond_cnn.py`` prints the comparison; ``--fixed-share`` varies it.
FIXED_SHARE = 0.071
#: Longest profiled span (busy plus idle time) a two-step profile of the generator shows, in
#: step latencies: 4.12 over the data's 9,036 profiles (median 2.1; host-bound CNN steps 3.3-3.7,
#: as the notebook's text rows). Beyond it a profile that does not say covers more steps.
WINDOW_TWO_STEPS = 4.2
#: Families a generic framework loop's cell runs per timestep (small, launch-bound kernels).
LOOP_CELL = frozenset(
    ("matmul", "attention", "elementwise", "activation", "norm", "pool", "fused", "other", "loop")
)
ENSEMBLE = "spec family model (each op family's time moved by the GPU resource it runs on)"


#: Families AMP runs on tensor cores, and those whose bytes it halves (``_amp``'s classes).
AMP_TENSOR = frozenset(("conv", "matmul", "attention"))
AMP_MEMORY = frozenset(
    ("depthwise", "norm", "pool", "activation", "elementwise", "recurrent", "embedding", "fused")
)


@dataclass(frozen=True)
class StepParts:
    """What a profile says of one step, per row (seconds, shapes (n,) or (n, families)).

    Attributes
    ----------
    device : ndarray of shape (n, len(FINE_FAMILIES))
        Device busy time per family and step (communication included, not summed in ``busy``).
    latency : ndarray of shape (n,)
        The anchor's step latency: measured, else device busy plus idle per step.
    overhead : ndarray of shape (n,)
        ``latency`` minus the busy time (not below 0).
    kernels : ndarray of shape (n,)
        Kernel launches per step (NaN where the profile does not count them).
    loop : ndarray of bool, shape (n,)
        Whether the row runs a framework loop of small per-step kernels.
    one_gpu_told : ndarray of bool, shape (n,)
        False where the step came from several GPUs (its idle time holds the collectives'
        waits, so the one-GPU step is told from its device time alone).
    extra : ndarray of shape (n,)
        Further 80% half-width (log units) of what was told, not measured (an FP32 step told
        from a mixed-precision trace).
    """

    device: np.ndarray
    latency: np.ndarray
    overhead: np.ndarray
    kernels: np.ndarray
    loop: np.ndarray
    one_gpu_told: np.ndarray
    extra: np.ndarray | None = None

    @property
    def busy(self) -> np.ndarray:
        comm = FINE_FAMILIES.index("communication")
        return np.delete(self.device, comm, axis=1).sum(axis=1)


def step_parts(
    fine, idle, lat, steps=2.0, kernels=None, world_size=None, assumed=None
) -> StepParts:
    """:class:`StepParts` from device time per fine family over ``steps`` steps.

    Parameters
    ----------
    fine : ndarray of shape (n, len(FINE_FAMILIES))
        Device time per family (us) over ``steps`` steps.
    idle : ndarray of shape (n,)
        Device idle time (us) over the same steps.
    lat : ndarray of shape (n,) or None
        Measured step latency (s, NaN where unknown).
    steps : float or ndarray of shape (n,)
    kernels, world_size : ndarray of shape (n,), optional
        Kernel launches over the steps, GPUs of the traced run.
    assumed : ndarray of bool, shape (n,), optional
        Rows whose step count the profile did not say (``steps`` assumed). Where such a
        row's profiled time (busy plus idle) spans more than :data:`WINDOW_TWO_STEPS` of its
        measured step, it covers more steps than two: its busy share of that time is taken as
        its steps' share (the window's idle is then its steps' own, not the profiler's).
    """
    fine = np.asarray(fine, dtype=float)
    n = len(fine)
    steps = np.broadcast_to(np.asarray(steps, dtype=float), (n,))
    device = fine / steps[:, None] * 1e-6
    comm = FINE_FAMILIES.index("communication")
    busy = np.delete(device, comm, axis=1).sum(axis=1)
    idle_step = np.asarray(idle, dtype=float) / steps * 1e-6
    lat = np.full(n, np.nan) if lat is None else np.broadcast_to(np.asarray(lat, float), (n,))
    latency = np.where(np.isfinite(lat), lat, busy + idle_step)
    if assumed is not None:
        window = (busy + idle_step) * steps  # the profiled span (s)
        long = np.asarray(assumed, bool) & np.isfinite(lat) & (window > WINDOW_TWO_STEPS * lat)
        share = np.where(window > 0, busy * steps / np.where(window > 0, window, 1.0), 0.0)
        scale = np.where(long & (busy > 0), share * latency / np.where(busy > 0, busy, 1.0), 1.0)
        device, busy = device * scale[:, None], busy * scale
    world = np.ones(n) if world_size is None else np.asarray(world_size, dtype=float)
    single = ~(world > 1)
    # Several GPUs: the step's idle time holds the collectives' waits, not one GPU's gaps; the
    # one-GPU step is its device work over the fixed share's complement.
    latency = np.where(single, latency, busy / (1.0 - FIXED_SHARE))
    overhead = np.maximum(latency - busy, FIXED_SHARE * latency)
    # where the device work fills more than the rest of the step, it is read as that rest
    device = (
        device
        * np.where(
            busy > 0, np.minimum(1.0, (latency - overhead) / np.where(busy > 0, busy, 1.0)), 1.0
        )[:, None]
    )
    kern = np.full(n, np.nan) if kernels is None else np.asarray(kernels, float) / steps
    loop = device[:, FINE_FAMILIES.index("loop")] > 0
    return StepParts(device, latency, overhead, kern, loop, single)


def family_ratios(cross, anchor: str, targets) -> np.ndarray:
    """Physical target/anchor time ratio per fine family: shape (len(targets), families)."""
    from ._model import CLASS, SCALES

    d_spec = cross._spec_rows([anchor] * len(targets)) - cross._spec_rows(list(targets))
    d_eta = cross._eta(list(targets)) - cross._eta([anchor])
    model = np.exp(d_spec @ cross.theta_.T + d_eta[:, CLASS] * SCALES)  # (k, model families)
    out = np.ones((len(targets), len(FINE_FAMILIES)))
    for j, fam in enumerate(FINE_FAMILIES):
        row = MODEL_FAMILY[fam]
        if row is not None:
            out[:, j] = model[:, MODEL_FAMILIES.index(row)]
    return out


def predict_step(parts: StepParts, ratios: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The target step (s) per row and its share of never-measured work, for one target's
    ``ratios`` (shape (families,))."""
    r = np.broadcast_to(ratios, parts.device.shape).copy()
    cell = np.array([f in LOOP_CELL for f in FINE_FAMILIES])
    r[np.ix_(parts.loop, cell)] = 1.0  # a generic loop's cell: launch-bound kernels
    comm = FINE_FAMILIES.index("communication")
    r[:, comm] = 0.0  # the one-GPU step: the data-parallel model adds the collectives
    moved = parts.device * r
    device = moved.sum(axis=1)
    # no kernel shorter than its launch, nor than it ran on the anchor where that was shorter;
    # NaN (no count) leaves the device time as it is
    floor = np.minimum(parts.kernels * KERNEL_MIN_S, parts.busy)
    device = np.where(floor > device, floor, device)
    # a launch-bound traced step keeps its host time per kernel on any GPU
    bound = np.isfinite(parts.kernels) & (parts.busy < LAUNCH_BOUND_U * parts.latency)
    step = np.where(bound, np.maximum(device + parts.overhead, parts.latency), device)
    step = np.where(bound, step, device + parts.overhead)
    new = np.array([f not in MEASURED for f in FINE_FAMILIES])
    new_share = moved[:, new].sum(axis=1) / np.maximum(step, 1e-12)
    return step, np.clip(new_share, 0.0, 1.0)


def half_width(parts: StepParts, step, new_share, w_spec: float) -> np.ndarray:
    """80% interval half-width (log units) of each row's predicted ``step``."""
    over = np.clip(parts.overhead / np.maximum(step, 1e-12), 0.0, 1.0)
    dev = 1.0 - over
    unsure_one = np.where(parts.one_gpu_told, 0.0, W_HOST)  # gaps of one GPU not told
    extra = 0.0 if parts.extra is None else parts.extra
    return np.sqrt(
        (dev * w_spec) ** 2
        + (over * W_HOST) ** 2
        + (new_share * W_NEW) ** 2
        + unsure_one**2
        + extra**2
    )


def fp32_equivalent(parts: StepParts, cross, anchor: str) -> StepParts:
    """The FP32 step a mixed-precision (autocast) traced step stands for on its own GPU: each
    family's time times the AMP model's gain there (tensor-core families by the FP16 tensor
    rate's, memory-bound ones by the halved bytes'; the rest as it is), the latency by the time
    so added; the interval grows by the AMP model's own half-width over the moved share."""
    from dataclasses import replace

    from ..configurations._amp import DEFAULT_STATE, user_offset
    from ._gpuref import fp32_rate, gpu_table

    state = getattr(cross, "amp_state_", None) or DEFAULT_STATE
    gpus = gpu_table(cross.specs_)
    row = gpus.loc[cross.specs_.set_index("instance")["gpu"][anchor]]
    fp16 = float(row["fp16_tensor_tflops"])
    r = fp16 / float(fp32_rate(gpus.loc[[row.name]])[0]) if np.isfinite(fp16) else 0.0
    if r <= 0:  # no tensor cores: autocast gains nothing there
        return parts
    tf32 = float(row["tensor_tflops_fp32_training"] > row["fp32_tflops"])
    g_c = max(1.0, r ** state.get("alpha", 1.0) * np.exp(state["a"] + state["b"] * tf32))
    g_m = 2.0 ** state["beta"]
    # the AMP model's centre of the published sources' offsets: a user's own training
    centre = np.exp(user_offset(state))
    gain = np.array(
        [
            g_c * centre if f in AMP_TENSOR else g_m * centre if f in AMP_MEMORY else 1.0
            for f in FINE_FAMILIES
        ]
    )
    device = parts.device * gain
    added = (device - parts.device).sum(axis=1)
    moved = added / np.maximum(parts.latency + added, 1e-12)
    return replace(
        parts,
        device=device,
        latency=parts.latency + added,
        extra=moved * float(state.get("half_width", 0.28)),
    )


def family_blocks(cross, anchor: str, targets, parts: StepParts) -> dict:
    """``{target: block}`` (the engine's form: ms, interval, basis) for every target."""
    ratios = family_ratios(cross, anchor, targets)
    bases = cross.pair_bases(anchor, targets)
    blocks = {}
    for j, (target, basis) in enumerate(zip(targets, bases, strict=True)):
        step, new_share = predict_step(parts, ratios[j])
        w = float(cross.interval_log_.get(basis.split(" (")[0], max(cross.interval_log_.values())))
        hw = half_width(parts, step, new_share, w)
        p = 1000 * step
        blocks[target] = {
            "p": p,
            "lo": p * np.exp(-hw),
            "hi": p * np.exp(hw),
            "novelty": np.full(len(p), np.nan),
            "members": {},
            "ensemble": ENSEMBLE,
            "basis": f"spec family model ({basis})",
            "ignored": (),
        }
    return blocks
