"""A whole run's predicted time per accelerator configuration (SkyPilot's name x count) from one
profile, and why none is given where PROFET cannot answer.

The answer is the offerings' own (:func:`~profet_core.predict_offerings`): one prediction per GPU
configuration, the accelerator name mapped to a spec line as every offering's is
(``offerings/_gpus.py``), data-parallel at the profile's per-GPU batch on all the configuration's
GPUs (``--gpus all``), the run's steps at the global batch (GPUs x batch). Each configuration is
priced as an offering of its own; its price is never read (SkyPilot has the real one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._messages import quote, show_number
from ..errors import ProfetValueError
from ..offerings import GPU_OF_ACCELERATOR, SNAPSHOT_COLUMNS, OfferingFilter, predict_offerings
from ..offerings._gpus import NOT_GPUS, OTHER_HOST

#: Seconds returned for a configuration PROFET cannot answer: about 32 years, large and finite,
#: so that SkyPilot's optimizer never prefers it to one with a prediction (its reason is recorded
#: and warned about; never SkyPilot's silent one-hour guess).
UNANSWERED_S = 1e9
#: Largest GPU count the data-parallel model answers for (one instance's GPUs).
MAX_GPUS = 64
#: Counts predicted ahead for every accelerator with a spec line (others when first asked).
COMMON_COUNTS = (1, 2, 4, 8)
#: Columns of :func:`estimate_runs`' table (ms per training step, hours per run).
RUN_COLUMNS = (
    "accelerator",
    "gpus",
    "gpu",
    "target",
    "basis",
    "batch_latency_ms",
    "low_ms",
    "high_ms",
    "p_fit",
    "steps",
    "run_hours",
    "run_hours_low",
    "run_hours_high",
    "reason",
)
#: The unit price each configuration is given so that the offerings keep it (never shown).
_UNIT_PRICE = 1.0
_LIMITS = {"dataset_images": 10**11, "epochs": 10**5, "batch_size": 10**6, "run_steps": 10**12}


@dataclass(frozen=True)
class RunSpec:
    """The work of one training run: ``dataset_images`` per epoch, ``epochs``, ``batch_size``
    images per step on one GPU (the profile's). On N GPUs data-parallel a step takes N batches,
    so the run takes ``ceil(dataset_images / (N x batch_size)) x epochs`` steps. ``run_steps``:
    the steps on one GPU it was given as, if it was."""

    dataset_images: int
    epochs: int
    batch_size: int
    run_steps: int | None = None

    def text(self) -> str:
        """The run in words, with units."""
        if self.run_steps is not None:
            return f"{self.run_steps:,} steps on one GPU at batch {self.batch_size} (N GPUs: 1/N)"
        return (
            f"{self.dataset_images:,} images x {self.epochs:,} epochs at batch {self.batch_size} "
            "per GPU"
        )


def _whole(name: str, value) -> int:
    top = _LIMITS[name]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= top:
        raise ProfetValueError(
            f"{name} is {show_number(value)}; it must be a whole number 1..{top:,}"
        )
    return int(value)


def run_spec(
    profiles: pd.DataFrame, dataset_images=None, epochs=None, run_steps=None, batch_size=None
) -> RunSpec:
    """The run a time estimate is for: ``dataset_images`` and ``epochs``, or ``run_steps``
    (training steps on one GPU, i.e. ``run_steps x batch_size`` images of work); ``batch_size``
    defaults to the profile's own ``batch_size`` column.

    Raises
    ------
    ProfetValueError
        Neither or both ways given, one of a pair missing, a number out of range, or no batch
        size anywhere.
    """
    by_data = dataset_images is not None or epochs is not None
    if by_data == (run_steps is not None):
        raise ProfetValueError(
            "a run time needs the run's length: dataset_images and epochs, or run_steps "
            "(training steps on one GPU), not both"
        )
    if by_data and (dataset_images is None or epochs is None):
        raise ProfetValueError("dataset_images and epochs go together; give both")
    if batch_size is None and "batch_size" in profiles and len(profiles):
        given = pd.to_numeric(profiles["batch_size"], errors="coerce").iloc[0]
        batch_size = int(given) if pd.notna(given) and float(given).is_integer() else None
    if batch_size is None:
        raise ProfetValueError(
            "the profile does not say its batch size; give batch_size (images per step, as "
            "profiled)"
        )
    batch = _whole("batch_size", batch_size)
    if by_data:
        return RunSpec(_whole("dataset_images", dataset_images), _whole("epochs", epochs), batch)
    steps = _whole("run_steps", run_steps)
    if steps * batch > _LIMITS["dataset_images"]:
        raise ProfetValueError(
            f"run_steps {steps:,} x batch {batch} is over {_LIMITS['dataset_images']:,} images"
        )
    return RunSpec(steps * batch, 1, batch, steps)


def config_label(name, count) -> str:
    """``H100:8``: an accelerator configuration as SkyPilot writes it."""
    return f"{name}:{show_number(count)}"


def not_a_gpu(name) -> str:
    """Why an accelerator is no GPU PROFET predicts (a TPU, Inferentia, Gaudi...), or ""."""
    text = str(name)
    if text.lower().startswith("tpu"):
        return f"{quote(text)} is a TPU: PROFET predicts NVIDIA GPUs only"
    if NOT_GPUS.search(text):
        return f"{quote(text)} is not a GPU: PROFET predicts NVIDIA GPUs only"
    return ""


def reason_for(name, count) -> str:
    """Why PROFET gives no run time for ``count`` x ``name`` ("" where it can predict one).

    ``name`` None is a resource without an accelerator. The reasons: no accelerator, a TPU or
    another non-GPU accelerator, a count that is no number of GPUs (NaN, infinite, 0 or less),
    a fraction of a GPU, more GPUs than one instance has, an accelerator without a spec line
    (AMD GPUs, RTX PRO 6000, B300) or unknown to PROFET.
    """
    if name is None:
        return "no accelerator: PROFET predicts GPU training steps"
    text = str(name)
    other = not_a_gpu(text)
    if other:
        return other
    if not isinstance(count, (int, float, np.integer, np.floating)) or isinstance(count, bool):
        return f"GPU count {quote(count)} is not a number"
    if (isinstance(count, (float, np.floating)) and not math.isfinite(count)) or count <= 0:
        return f"GPU count {show_number(count)} of {quote(text)} is not a number of GPUs"
    if count > MAX_GPUS:  # compared as given: 10**400 is no float
        return f"{show_number(count)} GPUs: the data-parallel model answers for 1..{MAX_GPUS}"
    if not float(count).is_integer():
        return (
            f"{show_number(count)} x {text} is a fraction of a GPU: PROFET predicts whole GPUs "
            "(data-parallel on 1 or more)"
        )
    if text in OTHER_HOST:
        return f"{quote(text)}: {OTHER_HOST[text]}"
    if not GPU_OF_ACCELERATOR.get(text):
        return (
            f"{quote(text)} has no spec model in PROFET (the GPUs it predicts: "
            "profet_core/offerings/_gpus.py)"
        )
    return ""


def _offerings(configs: list[tuple[str, int]]) -> pd.DataFrame:
    """One offering per configuration (cloud ``skypilot``, instance its label), unit priced."""
    rows = {
        "cloud": "skypilot",
        "instance": [config_label(n, c) for n, c in configs],
        "region": "-",
        "gpu": [GPU_OF_ACCELERATOR[n] for n, _ in configs],
        "accelerator": [n for n, _ in configs],
        "gpus": [int(c) for _, c in configs],
        "vcpus": np.nan,
        "memory_gib": np.nan,
        "usd_per_hour": _UNIT_PRICE,
        "spot_usd_per_hour": np.nan,
        "zones": 1,
        "note": "",
    }
    return pd.DataFrame(rows, columns=list(SNAPSHOT_COLUMNS))


def estimate_runs(
    predictor, profiles: pd.DataFrame, configs, run: RunSpec, request
) -> tuple[pd.DataFrame, list[str]]:
    """Predicted run time per accelerator configuration.

    Parameters
    ----------
    predictor : Predictor
    profiles : pandas.DataFrame
        One profile row (op times in us, as :func:`~profet_core.read_profile` returns it).
    configs : list of (str or None, number)
        ``(accelerator name, GPU count)`` pairs, SkyPilot's names (``A100-80GB``, ``H100``).
    run : RunSpec
    request : PredictRequest
        Its anchor (the instance the profile was taken on), latency, precision, params, method
        and input size, as for :meth:`~profet_core.Predictor.predict` (its run and GPU count
        are ``run``'s and each configuration's own).

    Returns
    -------
    table : pandas.DataFrame
        :data:`RUN_COLUMNS`, one row per configuration in ``configs`` order: ``batch_latency_ms``
        (one step on all its GPUs, with the 80% interval ``low_ms``..``high_ms``), ``steps``,
        ``run_hours`` (and ``run_hours_low``/``_high`` from the interval), ``reason`` why there
        is no prediction (NaN times then).
    warnings : list of str
        The prediction's warnings about the profile (ops, novelty, fit, several GPUs).
    """
    configs = [(n, c) for n, c in configs]
    reasons = [reason_for(n, c) for n, c in configs]
    ok = list(dict.fromkeys(cfg for cfg, r in zip(configs, reasons, strict=True) if not r))
    got, warnings = pd.DataFrame(), []
    if ok:
        asked = request.replace(
            gpus="all",
            batch_size=run.batch_size,
            dataset_images=run.dataset_images,
            epochs=run.epochs,
            run_steps=None,
            targets=None,
        )
        done = predict_offerings(
            predictor,
            None,
            profiles,
            asked,
            offerings=_offerings(_with_another_gpu(ok, request.anchor)),
            filter=OfferingFilter(),
        )
        got = done.table.set_index("instance")
        p = done.prediction
        # The per-GPU prediction's pick and price notes are about instances, not these runs.
        skip = {p.basis_warning()}
        warnings = [w for w in p.warnings() if w not in skip and "of the instance's GPUs" not in w]
    rows = [_row(n, c, r, got) for (n, c), r in zip(configs, reasons, strict=True)]
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS)), warnings


def _with_another_gpu(configs: list, anchor: str) -> list:
    """``configs``, and one of another GPU where all are the anchor's own: the offerings'
    prediction needs one target besides the anchor (its row is never read)."""
    from ..offerings._join import spec_key_of_gpu

    key = spec_key_of_gpu()
    if any(key.get(GPU_OF_ACCELERATOR[n]) != anchor for n, _ in configs):
        return configs
    other = next(n for n, gpu in GPU_OF_ACCELERATOR.items() if gpu and key.get(gpu) != anchor)
    return [*configs, (other, 1)]


def _row(name, count, reason: str, got: pd.DataFrame) -> dict:
    """One configuration's row of :func:`estimate_runs` (NaN times and a reason without one)."""
    row = {c: np.nan for c in RUN_COLUMNS}
    row.update(accelerator=name, gpus=count, gpu="", target="", basis="", reason=reason)
    if reason:
        return row
    r = got.loc[config_label(name, count)]
    row.update({c: r[c] for c in RUN_COLUMNS if c in r.index and c not in ("gpus", "reason")})
    row["basis"] = str(r["basis"])
    if not np.isfinite(r["run_hours"]):
        # The anchor's own GPU without its measured latency, or no spec line after all.
        row["reason"] = (
            "the anchor's own GPU: give its measured step latency (anchor_latency_s)"
            if str(r["basis"]).startswith("anchor")
            else f"no prediction ({r['basis']})"
        )
        return row
    for side in ("low", "high"):
        row[f"run_hours_{side}"] = r["run_hours"] * r[f"{side}_ms"] / r["batch_latency_ms"]
    return row
