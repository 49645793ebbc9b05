"""One cross-instance model over all anchor -> target pairs, driven by the GPUs' spec sheets.

Each op family's device time moves from the anchor to the target as a product of spec ratios
raised to family-specific exponents, times an efficiency per GPU generation:

    t_f(target) = t_f(anchor) * prod_k (spec_k(anchor) / spec_k(target)) ** theta[f, k]
                  * exp(eta[gen(target), class(f)] - eta[gen(anchor), class(f)] + delta_t - delta_a)

with specs k = (peak FP32-training TFLOPS, memory bandwidth, boost clock) and the classes
compute (conv, matmul) and memory (the rest of the GPU work); transfers and device idle time
get no efficiency and a prior exponent of 0 (they follow the host more than the GPU). The target
latency is the anchor latency times the ratio of summed family times. Exponents lie in [0, 1]
and are pulled toward the roofline prior (compute families scale with peak FLOPS, memory
families with bandwidth), efficiencies toward 0, so a GPU never seen falls back to the roofline
with learned exponents; ``delta`` is a per-instance efficiency learned from a few runs
(:meth:`CrossInstanceModel.calibrate`). A small boosted-tree learner corrects the residual.
"""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd

from ..._base import Estimator, check_is_fitted
from ...errors import ProfetValueError
from ...inputs._dataset import Dataset
from ...inputs._gpu_specs import spec_matrix, validate_specs
from ...models._estimators import BoostingRegressor
from ._basis import BasisMixin, bounded_delta, spec_positions
from ._efficiency import (
    TENSOR_RULES,
    published_eta,
    published_state,
    set_published_state,
    tensor_flags,
)
from ._pairs import FAM_COLS, MODEL_FAMILIES, WORKLOAD, all_pairs, median_table, model_family_times
from ._targets import predict_targets

COMPUTE = ("conv", "matmul")
FIXED = ("transfer", "idle")
#: Roofline prior of the exponents: compute families follow peak FLOPS, memory ones bandwidth.
PRIOR = np.array(
    [
        (1.0, 0.0, 0.0) if f in COMPUTE else (0.0, 0.0, 0.0) if f in FIXED else (0.0, 1.0, 0.0)
        for f in MODEL_FAMILIES
    ]
)
CLASS = np.array([0 if f in COMPUTE else 1 for f in MODEL_FAMILIES])
SCALES = np.array([f not in FIXED for f in MODEL_FAMILIES], dtype=float)


class CrossInstanceModel(BasisMixin, Estimator):
    """Spec-driven latency model over all anchor/target instance pairs.

    Parameters
    ----------
    prior_sd_exponent : float
        Prior standard deviation of each exponent around the roofline :data:`PRIOR`.
    prior_sd_efficiency : float
        Prior standard deviation (log units) of a generation's or an instance's efficiency.
    noise_sd : float
        Assumed log-latency error of one architecture on one pair; sets how strongly data
        outweighs the priors (each (pair, architecture) group counts once).
    bounded : bool
        Keep every exponent in [0, 1] (physics: see :meth:`fit_pairs`); ``False`` lets the data
        push them anywhere (fits these 4 FP32-only GPUs slightly better, extrapolates worse).
    residual : bool
        Whether a boosted-tree learner corrects the physical model's log residual.
    n_trees : int
        Size of that learner.
    random_state : int
    share_arch : bool
        Whether a tensor-core GPU without published pairs takes its architecture's mean offset
        (docs/arch_efficiency_rule.md, adopted); ``False``: the shared ``mu`` alone.
    compute_z : {"gpu", "none", "arch"}
        The compute class's bandwidth credit: the GPU's own (shipped), none, or its arch's mean.
    """

    def __init__(
        self,
        prior_sd_exponent=0.5,
        prior_sd_efficiency=0.3,
        noise_sd=0.1,
        bounded=True,
        residual=True,
        n_trees=100,
        random_state=0,
        share_arch=True,
        compute_z="gpu",
    ):
        self.prior_sd_exponent = prior_sd_exponent
        self.prior_sd_efficiency = prior_sd_efficiency
        self.noise_sd = noise_sd
        self.bounded = bounded
        self.residual = residual
        self.n_trees = n_trees
        self.random_state = random_state
        self.share_arch = share_arch
        self.compute_z = compute_z

    # ----------------------------------------------------------------- physical part
    def _spec_rows(self, names) -> np.ndarray:
        return self.spec_values_[spec_positions(self, names)]

    def _eta(self, names) -> np.ndarray:
        """(n, 2) generation efficiency plus per-instance calibration, per class."""
        rows = spec_positions(self, names)
        gens = self.spec_arch_[rows]
        gi = np.array([self.generations_.index(g) if g in self.generations_ else -1 for g in gens])
        eta = np.where(gi[:, None] >= 0, self.eta_[np.maximum(gi, 0)], 0.0)
        eta = eta + published_eta(self, names, gens, gi, rows)
        delta = np.array([self.calibration_.get(n, {"delta": 0.0})["delta"] for n in names])
        return eta + delta[:, None]

    def _log_ratio(self, fam, d_spec, d_eta, theta=None) -> np.ndarray:
        """log(sum target family times / sum anchor family times) per row."""
        theta = self.theta_ if theta is None else theta
        expo = d_spec @ theta.T + d_eta[:, CLASS] * SCALES  # (n, families)
        tot_a = np.maximum(fam.sum(axis=1), 1e-9)
        return np.log(np.maximum((fam * np.exp(expo)).sum(axis=1), 1e-9) / tot_a)

    def _design(self, pairs: pd.DataFrame):
        fam = pairs[list(FAM_COLS)].to_numpy(dtype=float)
        d_spec = self._spec_rows(pairs["anchor"]) - self._spec_rows(pairs["target"])
        return fam, d_spec

    def _res_features(self, fam, d_spec) -> np.ndarray:
        tot = np.maximum(fam.sum(axis=1, keepdims=True), 1e-9)
        return np.column_stack([fam / tot, d_spec, np.log(tot)])

    def _set_specs(self, specs: pd.DataFrame) -> None:
        specs = validate_specs(specs)
        self.spec_index_ = pd.Index(specs["instance"])
        self._spec_pos_ = {n: i for i, n in enumerate(self.spec_index_)}
        self.spec_values_ = spec_matrix(specs).to_numpy()
        self.spec_arch_ = specs["arch"].to_numpy(dtype=object)
        # GPUs whose FP32 training runs on TF32 tensor cores (the GeForce Ampere / Ada cards too)
        self.spec_tensor_ = tensor_flags(specs, getattr(self, "tensor_rule_", TENSOR_RULES[0]))
        self.specs_ = specs

    def fit(self, dataset: Dataset, specs: pd.DataFrame):
        """Fit on every anchor/target pair of a dataset.

        Parameters
        ----------
        dataset : Dataset
            Profiles and latencies of several instances (shared schema).
        specs : pandas.DataFrame
            Spec catalog (:func:`profet_core.inputs._gpu_specs.load_specs`) listing every instance.
        """
        return self.fit_pairs(all_pairs(median_table(dataset)), specs)

    def fit_pairs(self, pairs: pd.DataFrame, specs: pd.DataFrame):
        """Fit on a table from :func:`profet_core.crossgpu.spec._pairs.all_pairs`."""
        self.tensor_rule_ = TENSOR_RULES[0]
        self._set_specs(specs)
        if pairs.empty:
            raise ProfetValueError("no anchor/target pairs to fit: need two instances or more")
        self.calibration_ = {}
        self.instances_ = sorted(set(pairs["anchor"]) | set(pairs["target"]))
        self.generations_ = sorted(
            set(self.spec_arch_[self.spec_index_.get_indexer(self.instances_)])
        )
        fam, d_spec = self._design(pairs)
        y = np.log(pairs["target_latency_s"].to_numpy() / pairs["anchor_latency_s"].to_numpy())
        # Rows of one architecture on one pair err together: each such group weighs 1 in total.
        grp = pairs.groupby(["anchor", "target", "model"]).ngroup().to_numpy()
        w = np.sqrt(1.0 / np.bincount(grp)[grp]) / self.noise_sd
        gen_a = pd.Index(self.generations_).get_indexer(
            self.spec_arch_[self.spec_index_.get_indexer(pairs["anchor"])]
        )
        gen_t = pd.Index(self.generations_).get_indexer(
            self.spec_arch_[self.spec_index_.get_indexer(pairs["target"])]
        )
        n_th, n_g = PRIOR.size, len(self.generations_)

        def resid(p):
            theta = p[:n_th].reshape(PRIOR.shape)
            eta = p[n_th:].reshape(n_g, 2)
            r = (self._log_ratio(fam, d_spec, eta[gen_t] - eta[gen_a], theta) - y) * w
            prior = np.concatenate(
                [
                    (p[:n_th] - PRIOR.ravel()) / self.prior_sd_exponent,
                    p[n_th:] / self.prior_sd_efficiency,
                ]
            )
            return np.concatenate([r, prior])

        p0 = np.concatenate([np.clip(PRIOR.ravel(), 0.01, 0.99), np.zeros(2 * n_g)])
        # Physics bounds each exponent to [0, 1]: a faster spec never slows a family down, and no
        # family speeds up more than its spec ratio. Unbounded fits on 3-4 GPUs of FP32-only
        # generations reach 1.3 on peak FLOPS, which would promise tensor-core GPUs far too much.
        lo = np.concatenate([np.zeros(n_th), np.full(2 * n_g, -np.inf)])
        hi = np.concatenate([np.ones(n_th), np.full(2 * n_g, np.inf)])
        if not self.bounded:
            lo, hi = np.full_like(lo, -np.inf), np.full_like(hi, np.inf)
        from scipy.optimize import least_squares

        sol = least_squares(resid, p0, bounds=(lo, hi), method="trf")
        self.theta_ = sol.x[:n_th].reshape(PRIOR.shape)
        self.eta_ = sol.x[n_th:].reshape(n_g, 2)
        phys = self._log_ratio(fam, d_spec, self._eta(pairs["target"]) - self._eta(pairs["anchor"]))
        # Without the anchor latency the summed family time (about two profiled steps) stands in.
        self.latency_per_us_ = float(
            np.exp(np.median(np.log(pairs["anchor_latency_s"]) - np.log(fam.sum(axis=1))))
        )
        self.residual_sd_ = float(np.std(y - phys))
        self.residual_model_ = self._fit_residual(fam, d_spec, y - phys) if self.residual else None
        self.interval_log_, self.source_calibration_ = {}, {}
        self.tensor_eta_, self.published_eta_, self.published_n_ = None, {}, {}
        self.published_arch_ = {}
        self.tensor_beta_, self.bw_centre_, self.roof_ = np.zeros(2), None, None
        return self

    def _fit_residual(self, fam, d_spec, residual) -> BoostingRegressor:
        """A small boosted-tree learner on what the physical model leaves (log units)."""
        gb = BoostingRegressor(
            n_estimators=self.n_trees,
            learning_rate=0.05,
            max_depth=2,
            subsample=0.8,
            min_samples_leaf=20,
            random_state=self.random_state,
        )
        return gb.fit(self._res_features(fam, d_spec), residual)

    # ----------------------------------------------------------------- prediction
    def _spec_value(self, name: str, col: str) -> float:
        return float(self.specs_.loc[self.spec_index_.get_loc(name), col])

    def predict(self, anchor: str, target: str, ops: pd.DataFrame, anchor_latency_s=None):
        """Predict the target's batch latency from profiles taken on the anchor.

        Parameters
        ----------
        anchor, target : str
            Instances in the spec catalog (neither needs training rows).
        ops : pandas.DataFrame
            Shape (n, any): ``Device_<Op>`` times in microseconds, one profile per row.
        anchor_latency_s : float or array of shape (n,), optional
            Measured anchor batch latency (s); NaN or None falls back to the profile's time.

        Returns
        -------
        latency_s : ndarray of shape (n,)
            Predicted target batch latency in seconds (the ``cross`` member).
        members : dict of str to ndarray of shape (n,)
            ``physical`` (spec model without the residual learner), ``cross``, and the
            baselines ``fp32-ratio``, ``bandwidth-ratio`` and ``roofline``.
        """
        return self.predict_families(anchor, target, model_family_times(ops), anchor_latency_s)

    def predict_families(self, anchor: str, target: str, fam: np.ndarray, anchor_latency_s=None):
        """:meth:`predict` from anchor device times per family, shape (n, 10) in :data:`FAM_COLS`
        order (us)."""
        return self.predict_targets(anchor, [target], fam, anchor_latency_s)[0]

    def predict_targets(self, anchor: str, targets, fam: np.ndarray, anchor_latency_s=None):
        """:meth:`predict_families` for several targets at once: ``[(latency_s, members)]`` in
        ``targets`` order, each as one target's call returns it (the residual learner walks
        every target's rows in one pass; the numbers are the same)."""
        return predict_targets(self, anchor, targets, fam, anchor_latency_s, CLASS, SCALES)

    def with_specs(self, specs: pd.DataFrame):
        """Copy that predicts with another spec catalog (it must list the trained instances)."""
        check_is_fitted(self, "theta_")
        new = copy.deepcopy(self)
        new._set_specs(specs)
        missing = sorted(set(self.instances_) - set(new.spec_index_))
        if missing:
            raise ProfetValueError(f"spec catalog lacks the trained instance(s) {missing}")
        return new

    # ----------------------------------------------------------------- few-shot calibration
    def calibrate(self, instance: str, dataset: Dataset):
        """Adapt to a new instance from a few of its runs (no refit of anything else).

        Parameters
        ----------
        instance : str
            An instance in the spec catalog without training rows.
        dataset : Dataset
            Rows (shared schema) of ``instance`` and of known instances for the same workloads:
            pairs known -> instance (and instance -> known where it was profiled) are used.

        Returns
        -------
        CrossInstanceModel
            A copy whose ``instance`` has an efficiency ``delta`` (log units) shrunk toward 0,
            the spec prior, by ``prior_sd_efficiency``; :meth:`basis` says
            ``calibrated (k runs)`` with k its distinct workloads.
        """
        check_is_fitted(self, "theta_")
        if instance in self.instances_:
            raise ProfetValueError(f"instance {instance!r} already has training rows")
        self._spec_rows([instance])
        known = set(self.instances_) | (set(self.calibration_) - {instance})
        pairs = all_pairs(median_table(dataset))
        pairs = pairs[
            ((pairs["target"] == instance) & pairs["anchor"].isin(known))
            | ((pairs["anchor"] == instance) & pairs["target"].isin(known))
        ]
        if pairs.empty:
            raise ProfetValueError(
                f"no workload of {instance!r} is also measured on a known instance "
                f"{sorted(known)}; calibration needs the same workloads on both"
            )
        lat = dataset.latencies
        runs = int(lat.loc[lat["instance"] == instance, list(WORKLOAD)].drop_duplicates().shape[0])
        return self.calibrate_pairs(instance, pairs, runs)

    def calibrate_pairs(self, instance: str, pairs: pd.DataFrame, runs: int):
        """:meth:`calibrate` on a ready :func:`all_pairs` table involving ``instance``."""
        delta = self._fit_delta(instance, pairs)
        new = copy.deepcopy(self)
        new.calibration_ = {**self.calibration_, instance: {"delta": delta, "runs": runs}}
        return new

    def _fit_delta(self, instance: str, pairs: pd.DataFrame) -> float:
        fam, d_spec = self._design(pairs)
        base = self._calibration_free(pairs)
        d_eta0 = base._eta(pairs["target"]) - base._eta(pairs["anchor"])
        sign = np.where(pairs["target"] == instance, 1.0, -1.0)[:, None]
        res = 0.0
        if self.residual_model_ is not None:
            res = self.residual_model_.predict(self._res_features(fam, d_spec))
        y = np.log(pairs["target_latency_s"].to_numpy() / pairs["anchor_latency_s"].to_numpy())
        grp = pairs.groupby(["anchor", "target", "model"]).ngroup().to_numpy()
        w = 1.0 / np.bincount(grp)[grp]

        def loss(delta):
            r = self._log_ratio(fam, d_spec, d_eta0 + sign * delta) + res - y
            return np.sum(w * r**2) / self.noise_sd**2 + delta**2 / self.prior_sd_efficiency**2

        excess = lambda: sign[:, 0] * (y - self._log_ratio(fam, d_spec, d_eta0) - res)  # noqa: E731
        return bounded_delta(instance, loss, excess)

    def _calibration_free(self, pairs: pd.DataFrame):
        """View of self whose listed instances carry no calibration (others keep theirs)."""
        names = set(pairs["anchor"]) | set(pairs["target"])
        view = copy.copy(self)
        view.calibration_ = {k: v for k, v in self.calibration_.items() if k not in names}
        return view

    # ----------------------------------------------------------------- persistence
    def to_state(self):
        """``(meta, arrays)``: JSON-able parameters and plain float arrays, no pickle."""
        check_is_fitted(self, "theta_")
        specs = self.specs_.astype(object).where(self.specs_.notna(), None)
        meta = {
            "params": self.get_params(),
            "specs": specs.to_dict(orient="records"),
            "instances": list(self.instances_),
            "generations": list(self.generations_),
            "calibration": self.calibration_,
            "interval_log": self.interval_log_,
            "source_calibration": getattr(self, "source_calibration_", {}),
            "spec_exceptions": [
                [*k, v] for k, v in (getattr(self, "spec_exceptions_", None) or {}).items()
            ],
            "latency_per_us": self.latency_per_us_,
            "residual_sd": self.residual_sd_,
            "residual_meta": None,
            "published": published_state(self),
            "amp": getattr(self, "amp_state_", None),
            "dataparallel": getattr(self, "dp_state_", None),
        }
        arrays = {"theta": self.theta_, "eta": self.eta_}
        if self.residual_model_ is not None:
            rmeta, rarr = self.residual_model_.to_state()
            meta["residual_meta"] = rmeta
            arrays.update({f"residual/{k}": v for k, v in rarr.items()})
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict):
        """Rebuild a fitted model from :meth:`to_state` output."""
        model = cls(**meta["params"])
        model._set_specs(pd.DataFrame(meta["specs"]))
        model.instances_ = list(meta["instances"])
        model.generations_ = list(meta["generations"])
        model.calibration_ = {k: dict(v) for k, v in meta["calibration"].items()}
        model.interval_log_ = dict(meta["interval_log"])
        model.source_calibration_ = dict(meta.get("source_calibration", {}))  # {}: GPU-out only
        exc = meta.get("spec_exceptions")  # None: older artifacts (read the package's)
        model.spec_exceptions_ = None if exc is None else {tuple(e[:3]): e[3] for e in exc}
        model.latency_per_us_ = float(meta["latency_per_us"])
        model.residual_sd_ = float(meta["residual_sd"])
        model.theta_ = np.asarray(arrays["theta"], dtype=float)
        model.eta_ = np.asarray(arrays["eta"], dtype=float).reshape(-1, 2)
        model.residual_model_ = None
        set_published_state(model, meta.get("published"))
        model.amp_state_, model.dp_state_ = meta.get("amp"), meta.get("dataparallel")
        if meta["residual_meta"] is not None:
            rarr = {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith("residual/")}
            model.residual_model_ = BoostingRegressor.from_state(meta["residual_meta"], rarr)
        return model
