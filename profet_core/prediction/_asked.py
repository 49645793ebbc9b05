"""A question made ready to answer (its profile prepared and checked, its kind told, its notes
said once) and its answer on a list of targets (the engine's blocks, moved to the request's
precision and GPU count)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..inputs._prepare import prepare_profiles


@dataclass(frozen=True)
class Asked:
    """One question, ready: what :func:`answer_targets` needs for any list of targets."""

    anchor: str
    ops: object
    lat: object
    method: str
    notes: tuple
    sizes: object
    batch: np.ndarray
    options: tuple
    question: object

    @property
    def option_ops(self):
        """The op table the precision and GPU-count models read: a spec family model answer's
        canonical families, else the profile's own ops."""
        q = self.question
        return self.ops if q.canonical is None else q.canonical


def asked(predictor, anchor, profiles, request, blocks=None):
    """``(Asked, PreparedProfiles, Blocks)`` of a resolved question; ``blocks`` reused where
    they are this question's work."""
    from ..errors import ProfetValueError
    from ._blocks import Blocks
    from ._checks import sense_checks, unknown_shares
    from ._engine import batch_sizes, workload_sizes
    from ._kind import classify, unruled_findings
    from ._option_checks import batch_notes

    lat_given, batch_size = request.anchor_latency_s, request.batch_size
    method = predictor._check_method(request.method)
    prepared = prepare_profiles(profiles, lat_given, anchor)
    model = predictor.bundle.model
    shares = unknown_shares(model, profiles)
    question = classify(predictor, anchor, profiles, prepared, request, shares)
    errors, warnings = unruled_findings(profiles, prepared, question.kind)
    if errors:
        raise ProfetValueError(errors[0])
    checks = sense_checks(
        model, profiles, lat_given, anchor, predictor.bundle.arrays, question.kind
    )
    sizes = workload_sizes(profiles, batch_size, request.input_size)  # checks sizes first
    notes = (*predictor.catalog_notes, *checks, *warnings, *batch_notes(profiles, batch_size))
    if question.kind == "family":
        notes = (*notes, *question.notes, *_method_note(predictor, method))
        method = predictor.default_method  # one model answers: the method is not asked
        if sizes is not None:  # the memory model learned CNN activations (pixels, batches)
            sizes = None
            notes = (
                *notes,
                "P(fits) is left empty: the memory model learned CNN steps (images and "
                "pixels), not this kind of model.",
            )
    ops, lat = prepared.ops, prepared.latency_s
    if blocks is None or not blocks.answers(anchor, ops, lat):
        blocks = Blocks(anchor, ops, lat, question.parts)
    done = Asked(
        anchor,
        ops,
        lat,
        method,
        notes,
        sizes,
        batch_sizes(profiles, batch_size),
        request.options,
        question,
    )
    return done, prepared, blocks


def _method_note(predictor, method: str) -> tuple:
    if method == predictor.default_method:
        return ()
    return (
        f"method {method} answers CNN profiles in PROFET's convention; this profile is "
        "answered by the spec family model",
    )


def answer_targets(predictor, a: Asked, targets, blocks):
    """The question's :class:`Prediction` on ``targets``, moved to its precision and GPUs."""
    from ._engine import run_prediction
    from ._options import apply_options

    ops = a.option_ops
    pred = run_prediction(
        predictor, a.anchor, a.ops, a.lat, a.method, targets, a.notes, a.sizes, blocks
    )
    ref = None
    family = a.question.kind == "family"
    if predictor.cross is not None and a.method != predictor.default_method and not family:
        # another method's own answers neither move nor move others: the others are ordered
        # against the default method's answers
        dflt = run_prediction(
            predictor,
            a.anchor,
            a.ops,
            a.lat,
            predictor.default_method,
            targets,
            a.notes,
            a.sizes,
            blocks,
        )
        ref = apply_options(
            predictor,
            dflt,
            a.anchor,
            ops,
            a.lat,
            a.options,
            a.batch,
            framework=a.question.framework,
        )
    return apply_options(
        predictor,
        pred,
        a.anchor,
        ops,
        a.lat,
        a.options,
        a.batch,
        reference=ref,
        framework=a.question.framework,
    )
