"""The engine's work for one question: each target's prediction block (latency, interval,
novelty, members, basis), from its trained pair's ensemble or from the cross-instance model,
evaluated once per method and target however many answers of the question ask for it."""

from __future__ import annotations

import numpy as np

from ..features._profile_features import ProfileFeatures


def _measured(predictor, anchor, target, method, ops, lat, features, used) -> dict:
    """One trained pair's prediction block (ms): latency, interval, novelty, members."""
    model = predictor.model(anchor, target, method)
    res = model.predict(ops, lat, features=features)
    (qlo, qhi), rel = predictor.interval(anchor, target, method, lat, res.members, res.novelty)
    p = 1000 * res.latency_s
    return {
        "p": p,
        "lo": p * np.exp(qlo),
        "hi": p * np.exp(qhi),
        "novelty": rel,
        "members": {name: 1000 * v for name, v in res.members.items()},
        "ensemble": res.ensemble,
        "basis": "measured",
        "ignored": model.ignored_ops(used),
    }


class Blocks:
    """The engine's work for one question (profiles, anchor, latency): each target's block
    (:func:`_measured` or the cross-instance model's), computed once per method and target
    however many answers of that question ask for it (the per-configuration table, the spec
    order among every target, the offerings). ``evaluations`` counts the targets evaluated."""

    def __init__(self, anchor, ops, lat, parts=None):
        self.anchor, self.ops, self.lat = anchor, ops, lat
        #: The steps' parts where the spec family model answers (``prediction/_kind.py``).
        self.parts = parts
        # Ops with some time in some row: each method names those it does not use, and those
        # it took for a known op by their spelling.
        self.used = ops.columns[ops.to_numpy().any(axis=0)]
        self._done: dict = {}
        self._features = None
        self.evaluations = 0

    def answers(self, anchor, ops, lat) -> bool:
        """Whether this is the work of the question ``(anchor, ops, lat)``."""
        same_lat = (lat is None and self.lat is None) or (
            lat is not None
            and self.lat is not None
            and np.array_equal(np.asarray(lat), np.asarray(self.lat), equal_nan=True)
        )
        return anchor == self.anchor and same_lat and ops.equals(self.ops)

    def get(self, predictor, method: str, targets) -> list[dict]:
        """Each target's block, in ``targets`` order (evaluating only those not yet done)."""
        key = lambda t: (id(predictor.cross), method, t)  # noqa: E731
        todo = [t for t in targets if key(t) not in self._done]
        if todo:
            for t, block in zip(todo, self._evaluate(predictor, method, todo), strict=True):
                self._done[key(t)] = block
        return [self._done[key(t)] for t in targets]

    def _evaluate(self, predictor, method, targets) -> list[dict]:
        anchor, ops, lat = self.anchor, self.ops, self.lat
        self.evaluations += len(targets)
        if self.parts is not None:  # one model answers every target, measured pairs too
            from ..crossgpu.spec._family_model import family_blocks

            blocks = family_blocks(predictor.cross, anchor, list(targets), self.parts)
            return [blocks[t] for t in targets]
        if self._features is None:  # the features do not depend on the target: made once
            self._features = ProfileFeatures.from_ops(ops)
        features = self._features
        measured = {t: predictor.has_pair(anchor, t, method) for t in targets}
        crossed = {}
        if not all(measured.values()):
            from ..crossgpu.spec._pairs import model_families
            from ..crossgpu.spec._targets import target_blocks

            fam = model_families(features.device_families)
            crossed = target_blocks(
                predictor.cross, anchor, [t for t in targets if not measured[t]], fam, lat
            )
        return [
            _measured(predictor, anchor, t, method, ops, lat, features, self.used)
            if measured[t]
            else crossed[t]
            for t in targets
        ]
