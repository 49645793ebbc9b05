"""Sense checks of a question before it is answered: refusals (no device time, a latency in
the wrong unit, op types no model reads) and the warnings every view repeats."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import ProfetValueError
from ._engine import vocabulary


def known_ops(model: dict, profiles) -> set:
    """The op columns the trained models read: their vocabulary, and the ops they count as
    one of it by its spelling (``Conv2d`` as ``Conv2D``; the spelling warning names them)."""
    known, threshold = vocabulary(model)
    if known:
        from ..features._profile_features import lookalike_ops

        new = [c for c in profiles.columns if str(c).startswith("Device_") and c not in known]
        known |= set(lookalike_ops(new, known, threshold)) if new else set()
    return known


def unknown_shares(model: dict, profiles) -> np.ndarray:
    """Each row's share of device busy time in op types the trained models never saw (zeros
    for artifacts without a vocabulary)."""
    from ..inputs._sanity import unknown_share

    known = known_ops(model, profiles)
    return unknown_share(profiles, known) if known else np.zeros(len(profiles))


def sense_checks(
    model: dict, profiles, anchor_latency_s, anchor=None, arrays=None, kind: str = "cnn"
) -> tuple:
    """Refuse a profile that makes no sense (no device time, a latency in the wrong unit);
    return the warnings' texts: 2 steps assumed, then the sense checks', then the step count the
    per-step overhead ops suggest (``model["steps_reference"]``, learned in training), then the
    instance the op mix of a profile naming none looks taken on, where not the anchor
    (``model["anchor_signal"]`` and ``arrays``' ``anchor|*``; artifacts without: no check).
    ``kind``: the question's (``prediction/_kind.py``); a spec family model answer is not
    judged by the trained models' vocabulary, device time range or anchor classifier."""
    from ..features._anchor import anchor_findings
    from ..inputs._overhead import steps_assumed_note, steps_findings
    from ..inputs._sanity import profile_checks

    if not isinstance(profiles, pd.DataFrame) or profiles.empty:
        return ()
    cnn = kind == "cnn"
    known = known_ops(model, profiles) if cnn else set()
    findings = profile_checks(
        profiles,
        anchor_latency_s,
        device_range_us=model.get("device_busy_range_us") if cnn else None,
        vocabulary=known or None,
    )
    errors = [f.message for f in findings if f.level == "error"]
    if errors:
        raise ProfetValueError(errors[0])
    note = steps_assumed_note(profiles)
    findings = [note] * (note is not None) + findings
    given = "batch_latency_s" in profiles and profiles["batch_latency_s"].notna().all()
    measured = anchor_latency_s is not None or bool(given)
    findings += steps_findings(profiles, anchor, model.get("steps_reference"), measured)
    named = "instance" in profiles.columns and profiles["instance"].notna().all()
    if cnn and arrays is not None and not named:  # rows naming their instance: never flagged
        state = {k[len("anchor|") :]: arrays[k] for k in arrays if k.startswith("anchor|")}
        findings += anchor_findings(profiles, anchor, model.get("anchor_signal"), state)
    return tuple(f.message for f in findings)
