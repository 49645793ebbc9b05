"""Which models answer a profile: the trained ones (a TensorFlow CNN step in PROFET's
convention) or the spec family model (another kind of model, or another framework), and what
the latter needs of the profile.

A TensorFlow profile is a CNN step for the trained models while at most ``UNKNOWN_REFUSE`` of
its device time is in op types they never saw (as they were judged: ``inputs/_sanity.py``);
beyond, and for every PyTorch trace, the spec family model answers
(``crossgpu/spec/_family_model.py``): never refused for being unlike the training CNNs, refused only
where most of its device time is in op types no family rule names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import ProfetValueError
from ..features._families import FINE_FAMILIES, MEASURED, RESOURCE, fine_family_times
from ._request import FRAMEWORKS

#: Share of device busy time in op types no family rule names from which a profile is refused.
UNRULED_REFUSE = 0.5
#: ... and from which the answer says which they are (their time moves as elementwise work).
UNRULED_WARN = 0.02
#: Canonical op of each spec-model family: the AMP and data-parallel models read a profile of the
#: spec family model through these (their families are the trained models' own).
CANONICAL = {
    "conv": "Device_Conv2D",
    "depthwise": "Device_DepthwiseConv2dNative",
    "matmul": "Device_MatMul",
    "norm": "Device_FusedBatchNormV3",
    "pool": "Device_MaxPool",
    "activation": "Device_Relu",
    "elementwise": "Device_AddV2",
    "optimizer": "Device_ResourceApplyGradientDescent",
    "transfer": "Device__Send",
}


@dataclass(frozen=True)
class Question:
    """What kind of step a profile is, and how it is answered.

    Attributes
    ----------
    kind : {"cnn", "family"}
        ``cnn``: the trained models; ``family``: the spec family model.
    framework : {"tensorflow", "pytorch"}
    parts : StepParts or None
        The steps' parts per row (``family`` only).
    canonical : pandas.DataFrame or None
        The profile as the spec model's families (canonical op columns, us over 2 steps: the
        device work per family and the overhead as idle) for the AMP and GPU-count models.
    notes : tuple of str
        What the answer rests on, said on every view.
    """

    kind: str
    framework: str
    parts: object = None
    canonical: pd.DataFrame | None = None
    notes: tuple = field(default=())


def framework_of(profiles: pd.DataFrame, given: str | None) -> str:
    """The profile's framework: ``given`` (the request's), else its ``framework`` column's,
    else TensorFlow; a request that contradicts the profile is refused."""
    said = None
    if "framework" in profiles.columns:
        values = {str(v).lower() for v in profiles["framework"].dropna() if str(v).strip()}
        if len(values) > 1:
            raise ProfetValueError(f"the profile's rows come from several frameworks {values}")
        said = values.pop() if values else None
        if said is not None and said not in FRAMEWORKS:
            raise ProfetValueError(
                f"the profile's framework {said!r} is not one PROFET reads; allowed: "
                f"{', '.join(FRAMEWORKS)}"
            )
    if given is not None and said is not None and given != said:
        raise ProfetValueError(
            f"the request says framework {given!r} but the profile was taken with {said!r}"
        )
    return given or said or "tensorflow"


def classify(predictor, anchor, profiles, prepared, request, unknown_share) -> Question:
    """The :class:`Question` of ``profiles`` (as given) and ``prepared`` (their op times at 2
    steps and latency) taken on ``anchor``; ``unknown_share``: each row's device share in op
    types the trained models never saw."""
    cross = predictor.cross
    framework = framework_of(profiles, request.framework)
    if framework == "tensorflow" and not _beyond_cnn(prepared.ops, unknown_share):
        return Question("cnn", framework)
    if cross is None:  # artifacts without a spec model: the trained models' checks refuse it
        if framework == "pytorch":
            raise ProfetValueError(
                "these artifacts have no cross-instance spec model, which PyTorch traces need; "
                "use artifacts trained with GPU specs (the shipped ones)"
            )
        return Question("cnn", framework)
    from ..crossgpu.spec._family_model import step_parts

    fine = fine_family_times(prepared.ops)
    kernels = world = None
    if "kernels" in profiles.columns:
        steps = profiles["steps"].to_numpy(float) if "steps" in profiles else 2.0
        kernels = pd.to_numeric(profiles["kernels"], errors="coerce").to_numpy(float)
        kernels = kernels * 2.0 / steps  # over 2 steps, as the prepared op times
    if "world_size" in profiles.columns:
        world = pd.to_numeric(profiles["world_size"], errors="coerce").fillna(1).to_numpy(float)
    from .._schema import STEPS_ASSUMED

    assumed = np.isin(np.arange(len(profiles)), profiles.attrs.get(STEPS_ASSUMED, ()))
    parts = step_parts(
        fine[list(FINE_FAMILIES)].to_numpy(),
        fine["idle"].to_numpy(),
        prepared.latency_s,
        2.0,
        kernels,
        world,
        assumed,
    )
    notes = family_notes(parts, framework, profiles)
    amp = _autocast(profiles)
    if amp:
        from ..crossgpu.spec._family_model import fp32_equivalent

        parts = fp32_equivalent(parts, cross, anchor)
        notes = (
            *notes,
            f"The trace ran under autocast ({amp}): its step is a mixed-precision one; the "
            "FP32 step it stands for on its GPU is told by the AMP model's gains there, and "
            "the answer moves that to each target (--precision amp: each target's AMP gain "
            "again), its interval widened by the AMP model's.",
        )
    return Question("family", framework, parts, canonical_ops(parts), notes)


def _autocast(profiles) -> str:
    """The autocast dtype a trace ran under ("fp16", "bf16"), or ""."""
    if "autocast" not in profiles.columns:
        return ""
    said = {str(v) for v in profiles["autocast"].dropna() if str(v).strip()}
    return ", ".join(sorted(said))


#: Families no CNN step has: a TensorFlow profile with this share of its device time in them
#: (or any framework loop) is another kind of model, whatever else its op names say.
NON_CNN = ("recurrent", "loop", "attention", "embedding", "communication")
NON_CNN_SHARE = 0.02


def _beyond_cnn(ops, unknown_share) -> bool:
    """Whether a TensorFlow profile is not a CNN step for the trained models: a row with
    ``UNKNOWN_REFUSE`` of its device time in op types they never saw (they would refuse it),
    :data:`NON_CNN_SHARE` in families no CNN has, or a framework loop's ops."""
    from ..inputs._sanity import UNKNOWN_REFUSE

    if (np.asarray(unknown_share) >= UNKNOWN_REFUSE).any():
        return True
    fine = fine_family_times(ops)
    busy = fine[list(FINE_FAMILIES)].sum(axis=1).to_numpy()
    other = fine[list(NON_CNN)].sum(axis=1).to_numpy() / np.where(busy > 0, busy, np.inf)
    return bool((other >= NON_CNN_SHARE).any() or (fine["loop"] > 0).any())


def canonical_ops(parts) -> pd.DataFrame:
    """The steps as canonical op columns of the spec model's families (us over 2 steps): the
    work a faster GPU does not move (a generic loop's cell, the input pipeline) as transfers,
    the overhead as idle time."""
    from ..crossgpu.spec._family_model import LOOP_CELL
    from ..features._families import MODEL_FAMILY

    cols = dict.fromkeys([*CANONICAL.values(), "Device_IDLE"], None)
    out = {c: np.zeros(len(parts.latency)) for c in cols}
    for j, fam in enumerate(FINE_FAMILIES):
        row = MODEL_FAMILY[fam] or "transfer"
        if fam == "communication":
            continue
        times = parts.device[:, j] * 2e6
        loop_cell = parts.loop & (fam in LOOP_CELL)
        out[CANONICAL["transfer"]] += np.where(loop_cell, times, 0.0)
        out[CANONICAL[row]] += np.where(loop_cell, 0.0, times)
    out["Device_IDLE"] = parts.overhead * 2e6
    return pd.DataFrame(out)


def family_notes(parts, framework: str, profiles) -> tuple:
    """What a spec family model answer rests on: the families no training run measured (with
    their shares of the first row's device time and the resource they follow), the framework."""
    busy = parts.busy[0] if len(parts.busy) else 0.0
    shares = parts.device[0] / busy if busy > 0 else np.zeros(len(FINE_FAMILIES))
    new = [
        f"{fam} {shares[j]:.0%} ({RESOURCE.get(fam, 'as its spec-model family')})"
        for j, fam in enumerate(FINE_FAMILIES)
        if fam not in MEASURED and shares[j] >= 0.005 and fam != "communication"
    ]
    what = "a PyTorch step" if framework == "pytorch" else "a step unlike the training CNNs"
    notes = [
        f"Spec family model: {what} is moved to each GPU family by family (the spec model's "
        "exponents, fitted on TensorFlow CNN steps and published TensorFlow/PyTorch tables); "
        "what the step spends beyond device work (host, launches, synchronisation) is kept. "
        + (
            "Never measured on any GPU: " + "; ".join(new) + " (the interval is widened for them)."
            if new
            else "Every op family in it was measured in CNN training steps."
        )
    ]
    if parts.loop[:1].any():
        notes.append(
            "A framework loop (TensorList/While ops: Keras' generic RNN loop) runs its cell as "
            "small per-timestep kernels: launch-bound, taken as no faster on a faster GPU."
        )
    if not parts.one_gpu_told[:1].all():
        notes.append(
            "The trace ran on several GPUs: the one-GPU step is told from its device work alone "
            "(its idle time holds the collectives' waits); the data-parallel model adds them back."
        )
    return tuple(notes)


def unruled_findings(profiles, prepared, kind: str) -> tuple[list[str], list[str]]:
    """``(errors, warnings)`` about device time in op types no family rule names (a spec
    family model answer only): refused from :data:`UNRULED_REFUSE`, named from
    :data:`UNRULED_WARN`."""
    if kind != "family":
        return [], []
    from ..features._families import unruled_ops

    fine = fine_family_times(prepared.ops)
    busy = fine[[f for f in FINE_FAMILIES]].sum(axis=1).to_numpy()
    share = fine["other"].to_numpy() / np.where(busy > 0, busy, np.inf)
    errors, warnings = [], []
    for i in np.flatnonzero(share >= UNRULED_WARN)[:1]:
        named = ", ".join(f"{n} {s:.0%}" for n, s in unruled_ops(prepared.ops, int(i)))
        where = f" (row {i})" if len(share) > 1 else ""
        if share[i] >= UNRULED_REFUSE:
            from ..inputs._sanity import likely_cause

            cause = likely_cause([n for n, _ in unruled_ops(prepared.ops, int(i))])
            errors.append(
                f"{share[i]:.0%} of the device time{where} is in op types no family rule names "
                f"({named}); {cause}. PROFET cannot tell what they run on. Refused: a "
                "prediction from it would be a guess"
            )
        else:
            warnings.append(
                f"{share[i]:.0%} of the device time{where} is in op types no family rule names "
                f"({named}): moved as elementwise work (memory-bound), which may be wrong for them"
            )
    return errors, warnings
