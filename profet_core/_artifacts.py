"""Training, saving and loading artifacts, and the :class:`Predictor` that serves them.

Artifacts are JSON, CSV and one ``.npz`` of plain arrays (loaded with ``allow_pickle=False``),
listed with their sha256 in ``manifest.json``; nothing is ever unpickled.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ._breakdown import BreakdownRegressor, breakdown_change, breakdown_pairs
from ._catalog import validate_catalog
from ._clustering import OpClusterer
from ._data import Dataset, make_pairs, op_columns
from ._families import family_times
from ._methods import DEFAULT_METHOD, METHODS, method_factory
from ._profile import LATENCY_COLUMN
from ._scaler import CurveScaler, fit_scaler, scaling_curves
from ._validate import (
    INTERVAL_COLUMNS,
    Progress,
    cross_validate,
    interval_quantiles,
    interval_scale,
    member_spread,
    noise_floor,
    novelty_errors,
    summarize,
    validate_scalers,
)
from .errors import ArtifactError, ProfetValueError

FORMAT_VERSION = 2
DEFAULT_ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
INTERVAL_LEVEL = 0.8
#: Scaler settings per variant; "profet" is the paper's, "default" is what predictions use.
SCALER_VARIANTS = {
    "profet": {"batch": {"degree": 2}, "input": {"degree": 2}},
    # Latency linear in the work: batch size, or pixel count (side length squared). It has
    # nothing fitted to the 12 training CNNs, and on leave-one-architecture-out it had the
    # lowest worst-instance error in both dimensions (docs/accuracy.md; the learned,
    # ratio-aware shape that was the input default before missed by 3.9-8.6% / 7.9-10.2%).
    "default": {
        "batch": {"degree": 1, "through_ends": True},
        "input": {"degree": 1, "through_ends": True, "size_power": 2.0},
    },
}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("numpy", "pandas", "scikit-learn", "scipy", "rapidfuzz", "tensorflow"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = None
    return out


def pair_name(anchor: str, target: str) -> str:
    return f"{anchor}->{target}"


@dataclass(frozen=True)
class Prediction:
    """Result of :meth:`Predictor.predict`.

    Attributes
    ----------
    table : pandas.DataFrame
        Long format, one row per (input row, target): ``row`` (0-based input row), ``anchor``,
        ``target``, ``gpu``, ``batch_latency_ms``, ``low_ms``, ``high_ms`` (the calibrated
        interval), ``novelty`` (how unlike the training profiles the row's profile is, relative to
        the typical architecture held out in cross-validation: 1 = as unusual as that, higher =
        expect larger errors; NaN if the method does not measure it or was not calibrated),
        ``usd_per_hour``, ``method``, ``ensemble`` and one ``<member>_ms`` column per ensemble
        member.
    unknown_ops : tuple of str
        Ops in the input that no trained feature covers (their time was not used).
    method : str
    interval_level : float
        Nominal coverage of ``low_ms``..``high_ms``.
    """

    table: pd.DataFrame
    unknown_ops: tuple
    method: str
    interval_level: float


@dataclass(frozen=True)
class Predictor:
    """Trained PROFET models loaded from an artifacts folder (see :func:`load_artifacts`)."""

    models: dict
    clusterer: OpClusterer
    scalers: dict
    intervals: pd.DataFrame
    catalog: pd.DataFrame
    metadata: dict
    path: Path
    validation: dict = field(default_factory=dict)
    #: ``{instance: {"label", "profile" (op -> us), "batch_latency_s", "model", ...}}``
    examples: dict = field(default_factory=dict)
    #: ``{(anchor, target): BreakdownRegressor}``: per-op-family time on the target.
    breakdowns: dict = field(default_factory=dict)

    @property
    def instances(self) -> list[str]:
        """Every instance the artifacts know (each is an anchor and a target)."""
        return list(self.metadata["instances"])

    @property
    def methods(self) -> list[str]:
        return list(self.metadata["methods"])

    @property
    def interval_level(self) -> float:
        """Nominal coverage of the prediction intervals (``low_ms``..``high_ms``)."""
        return float(self.metadata.get("interval_level", INTERVAL_LEVEL))

    @property
    def default_method(self) -> str:
        return self.metadata["default_method"]

    def targets(self, anchor: str) -> list[str]:
        self._check_instance(anchor, "anchor")
        return [t for t in self.instances if t != anchor]

    def _check_instance(self, name: str, role: str) -> None:
        if name not in self.instances:
            raise ProfetValueError(
                f"unknown {role} instance {name!r}; known: {', '.join(self.instances)}"
            )

    def predict(
        self,
        anchor: str,
        profiles: pd.DataFrame,
        anchor_latency_s=None,
        method: str | None = None,
        targets=None,
    ) -> Prediction:
        """Predict the batch latency of each profile on every other instance.

        Parameters
        ----------
        anchor : str
            Instance the profiles were taken on.
        profiles : pandas.DataFrame
            Shape (n, n_ops): ``Host_*``/``Device_*`` op times in microseconds (as returned by
            ``parse_profile``); a ``batch_latency_s`` column, if present, gives each row's
            measured anchor latency (seconds, NaN where unknown).
        anchor_latency_s : float or array of shape (n,), optional
            Measured anchor batch latency in seconds; overrides the column.
        method : str, optional
            One of :attr:`methods` (default: :attr:`default_method`).
        targets : list of str, optional
            Target instances (default: every instance but the anchor).

        Returns
        -------
        Prediction
        """
        self._check_instance(anchor, "anchor")
        method = method or self.default_method
        if method not in self.methods:
            raise ProfetValueError(f"unknown method {method!r}; allowed: {', '.join(self.methods)}")
        targets = list(targets) if targets is not None else self.targets(anchor)
        for t in targets:
            self._check_instance(t, "target")
        if (
            not isinstance(profiles, pd.DataFrame)
            or profiles.empty
            or not op_columns(profiles.columns)
        ):
            raise ProfetValueError(
                "profiles must be a non-empty table of Host_<Op>/Device_<Op> columns"
            )
        n = len(profiles)
        lat = None
        if anchor_latency_s is not None:
            lat = np.broadcast_to(np.asarray(anchor_latency_s, dtype=float), (n,)).copy()
        elif LATENCY_COLUMN in profiles.columns:
            lat = profiles[LATENCY_COLUMN].to_numpy(dtype=float)
        if lat is not None:
            bad = ~np.isnan(lat) & ~(np.isfinite(lat) & (lat > 0))
            if bad.any():
                raise ProfetValueError(
                    f"anchor latency {lat[bad][0]!r} s is not allowed; it must be > 0"
                )
            if np.isnan(lat).all():
                lat = None
        ops = profiles[op_columns(profiles.columns)].reset_index(drop=True)
        unknown = tuple(self.clusterer.unknown_ops(ops.columns[ops.to_numpy().any(axis=0)]))
        price = self.catalog.set_index("instance")
        parts = []
        for target in [t for t in targets if t != anchor]:
            model = self.models[(pair_name(anchor, target), method)]
            res = model.predict(ops, lat)
            p = res.latency_s
            q, novelty = self._interval(anchor, target, method, lat, res.members, res.novelty)
            part = pd.DataFrame(
                {
                    "row": np.arange(n),
                    "anchor": anchor,
                    "target": target,
                    "gpu": price["gpu"].get(target, ""),
                    "batch_latency_ms": 1000 * p,
                    "low_ms": 1000 * p * np.exp(q[0]),
                    "high_ms": 1000 * p * np.exp(q[1]),
                    "novelty": novelty,
                    "usd_per_hour": float(price["usd_per_hour"].get(target, np.nan)),
                    "method": method,
                    "ensemble": res.ensemble,
                }
            )
            for member, values in res.members.items():
                part[f"{member}_ms"] = 1000 * values
            parts.append(part)
        table = pd.concat(parts, ignore_index=True).sort_values(
            ["row", "target"], ignore_index=True
        )
        return Prediction(table, unknown, method, INTERVAL_LEVEL)

    def _interval(self, anchor, target, method, lat, members: dict, novelty=None):
        """Log-space bounds per row (see :func:`interval_quantiles`), NaN where uncalibrated; and
        each row's novelty relative to the calibration's median (NaN where not measured)."""
        iv = self.intervals
        n = len(next(iter(members.values())))
        has = np.zeros(n, dtype=bool) if lat is None else ~np.isnan(lat)
        spread = member_spread(np.column_stack(list(members.values())))
        lo, hi, rel = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
        for with_lat, rows in ((True, has), (False, ~has)):
            sel = iv[
                (iv["anchor"] == anchor)
                & (iv["target"] == target)
                & (iv["estimator"] == method)
                & (iv["with_latency"] == with_lat)
            ]
            if sel.empty or not rows.any():
                continue
            cal = sel.iloc[0]
            eps, n_ref = cal.get("eps", np.nan), cal.get("novelty_ref", np.nan)
            s = spread[rows] if np.isfinite(eps) else None
            nov = novelty[rows] if novelty is not None and np.isfinite(n_ref) else None
            if nov is not None:
                rel[rows] = nov / n_ref
            # The same scale the calibration used (interval_quantiles).
            scale = interval_scale(s, eps, nov, n_ref)
            lo[rows], hi[rows] = cal["q_lo"] * scale, cal["q_hi"] * scale
        return (lo, hi), rel

    def novelty_band(
        self, novelty: float, with_latency: bool, method: str | None = None
    ) -> dict | None:
        """How a method did in validation on held-out profiles about as unusual as this one.

        Parameters
        ----------
        novelty : float
            Relative novelty, as in the ``novelty`` column of :meth:`predict`.
        with_latency : bool
            Whether the anchor latency was given.
        method : str, optional
            Default: :attr:`default_method`.

        Returns
        -------
        dict or None
            ``band`` (label), ``share_pct`` (share of held-out rows in the band) and ``mape_pct``
            (their MAPE, %), or None where validation did not measure novelty.
        """
        bands = self.validation.get("novelty")
        if bands is None or bands.empty or not np.isfinite(novelty):
            return None
        sel = bands[
            (bands["estimator"] == (method or self.default_method))
            & (bands["with_latency"] == with_latency)
            & (bands["novelty_lo"] <= novelty)
            & (novelty < bands["novelty_hi"])
        ]
        if sel.empty:
            return None
        row = sel.iloc[0]
        return {
            "band": str(row["band"]),
            "share_pct": float(row["share_pct"]),
            "mape_pct": float(row["mape_pct"]),
        }

    def breakdown(self, anchor: str, profile: pd.DataFrame, targets=None) -> pd.DataFrame:
        """Predicted device time per op family on each target: which kinds of work get faster.

        Parameters
        ----------
        anchor : str
        profile : pandas.DataFrame
            Op columns (us); the first row is used.
        targets : list of str, optional
            Default: every instance but the anchor.

        Returns
        -------
        pandas.DataFrame
            ``target, family, anchor_us, target_us, speedup`` (``anchor_us / target_us``).
        """
        self._check_instance(anchor, "anchor")
        if (
            not isinstance(profile, pd.DataFrame)
            or profile.empty
            or not op_columns(profile.columns)
        ):
            raise ProfetValueError(
                "profile must be a non-empty table of Host_<Op>/Device_<Op> columns"
            )
        fam = family_times(profile.iloc[[0]], "Device")
        parts = []
        for target in targets if targets is not None else self.targets(anchor):
            self._check_instance(target, "target")
            model = self.breakdowns.get((anchor, target))
            if model is None:
                continue
            parts.append(breakdown_change(fam, model.predict(fam)).assign(target=target))
        if not parts:
            return pd.DataFrame(columns=["target", "family", "anchor_us", "target_us", "speedup"])
        out = pd.concat(parts, ignore_index=True)
        return out[["target", "family", "anchor_us", "target_us", "speedup"]]

    def scaler(self, target: str, by: str) -> CurveScaler:
        self._check_instance(target, "target")
        if by not in ("batch", "input"):
            raise ProfetValueError(f"scale by {by!r}; allowed: batch, input")
        return self.scalers[(target, by)]

    def scale(
        self,
        target: str,
        by: str,
        latency_min_ms: float,
        latency_max_ms: float,
        size,
        size_min: float | None = None,
        size_max: float | None = None,
        points: dict | None = None,
    ) -> np.ndarray:
        """Latency (ms) at ``size`` from latencies measured at two (or more) sizes.

        Parameters
        ----------
        target : str
            Instance the latencies are for.
        by : {"batch", "input"}
            Scale by batch size or by input image side length (pixels).
        latency_min_ms, latency_max_ms : float
            Latencies (ms, > 0) at ``size_min`` and ``size_max``.
        size : float or array
            Size(s) to predict, within the trained range.
        size_min, size_max : float, optional
            Sizes of the two given latencies (default: the trained range's ends, 16..256 for
            batch and 32..256 for input).
        points : dict of float to float, optional
            More measured points, ``{size: latency_ms}``, with sizes strictly between
            ``size_min`` and ``size_max``: the scaler then runs through every point (on
            left-out architectures a middle point cut the error at the other sizes between the
            ends by 30-45%: docs/accuracy.md).

        Returns
        -------
        ndarray
            Predicted latency in ms, same shape as ``size``.
        """
        s = self.scaler(target, by)
        lo, hi = s.size_range_
        size_min = lo if size_min is None else float(size_min)
        size_max = hi if size_max is None else float(size_max)
        points = dict(points or {})
        given = [("latency_min_ms", latency_min_ms), ("latency_max_ms", latency_max_ms)]
        given += [(f"latency at {by} size {k:g}", v) for k, v in points.items()]
        for name, v in given:
            if not (isinstance(v, (int, float, np.floating)) and np.isfinite(v) and v > 0):
                raise ProfetValueError(f"{name} is {v!r}; it must be a number of milliseconds > 0")
        size_arr = np.asarray(size, dtype=float)
        for name, v in (("size", size_arr), ("size_min", size_min), ("size_max", size_max)):
            v = np.asarray(v)
            if not np.all(np.isfinite(v)) or np.any(v < lo) or np.any(v > hi):
                raise ProfetValueError(
                    f"{name} {v.tolist()!r} is outside the trained {by} range {lo:g}..{hi:g}"
                )
        if size_min >= size_max:
            raise ProfetValueError(f"size_min ({size_min:g}) must be below size_max ({size_max:g})")
        for k in points:
            if not (
                isinstance(k, (int, float, np.integer, np.floating)) and size_min < k < size_max
            ):
                raise ProfetValueError(
                    f"measured {by} size {k!r} must lie strictly between "
                    f"size_min {size_min:g} and size_max {size_max:g}"
                )
        if not points:
            return s.predict(latency_min_ms, latency_max_ms, size_arr, size_min, size_max)
        sizes = [size_min, *map(float, points), size_max]
        return s.predict_points(sizes, [latency_min_ms, *points.values(), latency_max_ms], size_arr)


# --------------------------------------------------------------------------------------------
# Training and persistence


def _write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=1, sort_keys=True, default=float))


def train(
    dataset: Dataset,
    catalog: pd.DataFrame,
    out_dir,
    *,
    methods=None,
    threshold: float = 6.0,
    calibrate: bool = True,
    calibrate_methods=None,
    validation=None,
    method_params: dict | None = None,
    progress: Progress | None = None,
) -> Path:
    """Train every method for every anchor -> target pair, the scalers, and write artifacts.

    Parameters
    ----------
    dataset : Dataset
    catalog : pandas.DataFrame
        Instance catalog (``instance, gpu, usd_per_hour``); instances of the dataset that it
        lacks are kept with an unknown GPU and price.
    out_dir : path-like
        Folder to write. It is replaced only once everything was trained and written, so a
        failure leaves an existing folder as it was.
    methods : list of str, optional
        Methods to train (default: all). The default method of the artifacts is
        ``DEFAULT_METHOD`` if trained, else the first listed.
    threshold : float
        Op-clustering distance threshold.
    calibrate : bool
        Run leave-one-architecture-out validation to calibrate the prediction intervals and
        write the accuracy report into the artifacts (``validation/``).
    calibrate_methods : list of str, optional
        Methods to cross-validate (default: the default method only; the reference's DNN makes
        its cross-validation take ~25 minutes, see ``profet validate``). Methods not calibrated
        predict without an interval.
    validation : path-like, optional
        Folder written by ``profet validate`` on the same data with the same settings: its
        intervals and report are used instead of running the cross-validation again (the full
        comparison, PROFET reference included, takes ~30 minutes).
    method_params : dict, optional
        ``{method: {param: value}}`` passed to the method constructors (e.g. fewer DNN epochs).
    progress : callable, optional
        ``progress(done, total, message)``.

    Returns
    -------
    pathlib.Path
        The artifacts folder.
    """
    methods = list(methods or METHODS)
    method_params = method_params or {}
    factories = {m: method_factory(m, method_params.get(m)) for m in methods}
    default = DEFAULT_METHOD if DEFAULT_METHOD in methods else methods[0]
    catalog = validate_catalog(catalog)
    instances = dataset.instances
    if len(instances) < 2:
        raise ProfetValueError(f"training needs at least 2 instances; the dataset has {instances}")
    known = set(catalog["instance"])
    extra = pd.DataFrame(
        {
            "instance": [i for i in instances if i not in known],
            "gpu": "unknown",
            "usd_per_hour": np.nan,
        }
    )
    catalog = pd.concat([catalog[catalog["instance"].isin(instances)], extra], ignore_index=True)

    ops = [c for c in dataset.ops if dataset.profiles[c].to_numpy().any()]
    clusterer = OpClusterer(threshold=threshold).fit(dataset.profiles[ops])
    jobs = [(a, t) for a in instances for t in instances if a != t]
    total = len(jobs) * len(methods)
    meta_models, arrays, done = {}, {}, 0
    for anchor, target in jobs:
        pairs = make_pairs(dataset, anchor, target)
        for m in methods:
            model = factories[m](clusterer).fit(pairs)
            meta, arr = model.to_state()
            key = f"{pair_name(anchor, target)}|{m}"
            meta_models[key] = meta
            arrays.update({f"{key}|{k}": v for k, v in arr.items()})
            done += 1
            if progress:
                progress(done, total, f"trained {m} {anchor} -> {target}")
    meta_breakdowns = {}
    have_profiles = set(dataset.profiles["instance"])
    for anchor, target in jobs:
        if target not in have_profiles:
            continue
        X, Y, _, _ = breakdown_pairs(dataset, anchor, target, median=True)
        meta, arr = BreakdownRegressor().fit(X, Y).to_state()
        key = pair_name(anchor, target)
        meta_breakdowns[key] = meta
        arrays.update({f"breakdown|{key}|{k}": v for k, v in arr.items()})
    meta_scalers = {}
    for by in ("batch", "input"):
        curves = scaling_curves(dataset.latencies, by)
        size_range = (float(curves["size"].min()), float(curves["size"].max()))
        for inst in instances:
            c = curves[curves["instance"] == inst]
            if c.empty:
                continue
            s = fit_scaler(c, size_range, **SCALER_VARIANTS["default"][by])
            meta, arr = s.to_state()
            meta_scalers[f"{inst}|{by}"] = meta
            arrays.update({f"scaler|{inst}|{by}|{k}": v for k, v in arr.items()})

    Path(out_dir).resolve().parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".profet-train-", dir=Path(out_dir).resolve().parent))
    tmp.chmod(0o755)  # mkdtemp makes it private; artifacts are meant to be read by the app's user
    try:
        (tmp / "validation").mkdir()
        if validation is not None:
            intervals = _reuse_validation(
                Path(validation),
                tmp / "validation",
                dataset,
                methods,
                {"threshold": threshold, "method_params": method_params},
            )
        elif calibrate:
            chosen = list(calibrate_methods or [default])
            oof = cross_validate(
                dataset, {m: factories[m] for m in chosen}, threshold=threshold, progress=progress
            )
            intervals = interval_quantiles(oof, INTERVAL_LEVEL)
            write_validation(
                tmp / "validation",
                oof,
                intervals,
                dataset,
                {"threshold": threshold, "method_params": method_params},
            )
        else:
            intervals = pd.DataFrame(columns=INTERVAL_COLUMNS)
        intervals.to_csv(tmp / "intervals.csv", index=False)
        _write_json(tmp / "examples.json", _examples(dataset))
        catalog.to_csv(tmp / "instances.csv", index=False)
        np.savez_compressed(tmp / "arrays.npz", **{k: np.asarray(v) for k, v in arrays.items()})
        _write_json(
            tmp / "model.json",
            {
                "format": FORMAT_VERSION,
                "instances": instances,
                "methods": methods,
                "default_method": default,
                "clustering": clusterer.to_state(),
                "models": meta_models,
                "scalers": meta_scalers,
                "breakdowns": meta_breakdowns,
                "interval_level": INTERVAL_LEVEL,
            },
        )
        files = sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file())
        _write_json(
            tmp / "manifest.json",
            {
                "format": FORMAT_VERSION,
                "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                "data_fingerprint": dataset.fingerprint,
                "n_profiles": len(dataset.profiles),
                "architectures": dataset.architectures,
                "threshold": threshold,
                "calibrated": calibrate and (calibrate_methods or [default]),
                "method_params": method_params,
                "versions": _versions(),
                "files": {f: _sha256(tmp / f) for f in files},
            },
        )
        out = Path(out_dir)
        if out.exists():
            backup = out.with_name(out.name + ".old")
            shutil.rmtree(backup, ignore_errors=True)
            out.rename(backup)
            tmp.rename(out)
            shutil.rmtree(backup, ignore_errors=True)
        else:
            tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return Path(out_dir)


def _reuse_validation(
    src: Path, dst: Path, dataset: Dataset, methods, settings: dict
) -> pd.DataFrame:
    """Copy a ``profet validate`` report after checking it fits these models; return intervals."""
    try:
        run = json.loads((src / "run.json").read_text())
        metrics = pd.read_csv(src / "metrics.csv")
    except (OSError, json.JSONDecodeError, pd.errors.ParserError) as exc:
        raise ProfetValueError(
            f"{str(src)!r} is not a `profet validate` output folder: {exc}"
        ) from None
    if run.get("data_fingerprint") != dataset.fingerprint:
        raise ProfetValueError(
            f"validation in {str(src)!r} was run on other data (fingerprint differs)"
        )
    for key, value in settings.items():
        if json.loads(json.dumps(run.get(key), default=float)) != json.loads(
            json.dumps(value, default=float)
        ):
            raise ProfetValueError(
                f"validation in {str(src)!r} used {key}={run.get(key)!r}, training uses {value!r}"
            )
    missing = [m for m in methods if m not in run.get("estimators", [])]
    if missing:
        raise ProfetValueError(f"validation in {str(src)!r} does not cover method(s) {missing}")
    if not set(INTERVAL_COLUMNS) <= set(metrics.columns):
        raise ProfetValueError(
            f"validation in {str(src)!r} predates the current interval calibration "
            f"(metrics.csv lacks {sorted(set(INTERVAL_COLUMNS) - set(metrics.columns))}); "
            "run `profet validate` again"
        )
    shutil.copytree(src, dst, dirs_exist_ok=True)
    return metrics.dropna(subset=["q_lo"])[INTERVAL_COLUMNS].reset_index(drop=True)


def _examples(dataset: Dataset) -> dict:
    """One example profile per instance, for the app: the median of the repetitions of a
    mid-sized workload (so the example is an aggregate, not a copy of a measured row)."""
    key = ["model", "input_size", "batch_size"]
    out = {}
    for inst in dataset.instances:
        prof = dataset.profiles[dataset.profiles["instance"] == inst]
        lat = dataset.latencies[dataset.latencies["instance"] == inst]
        med_lat = lat.groupby(key)["batch_latency_s"].median()
        common = med_lat.index.intersection(prof.set_index(key).index.unique())
        if common.empty:
            continue
        med_lat = med_lat.loc[common].sort_values()
        pick = med_lat.index[len(med_lat) // 2]
        rows = prof.set_index(key).loc[[pick]]
        ops = rows[[c for c in dataset.ops if rows[c].to_numpy().any()]].median()
        out[inst] = {
            "label": f"{pick[0]}, {pick[1]} px, batch {pick[2]} (median of {len(rows)} runs)",
            "model": pick[0],
            "input_size": int(pick[1]),
            "batch_size": int(pick[2]),
            "batch_latency_s": float(med_lat.loc[pick]),
            "profile": {k: round(float(v), 3) for k, v in ops.items()},
        }
    return out


def write_validation(
    folder: Path,
    oof: pd.DataFrame,
    intervals: pd.DataFrame,
    dataset: Dataset,
    settings: dict | None = None,
) -> None:
    """Write the accuracy report (CSV + Markdown) of a cross-validation run into ``folder``.

    ``settings`` (``threshold``, ``method_params``) go into ``run.json`` with the data's
    fingerprint, so that ``train(validation=folder)`` can reuse the run for the same models.
    """
    from ._report import accuracy_markdown

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    _write_json(
        folder / "run.json",
        {
            "data_fingerprint": dataset.fingerprint,
            "estimators": sorted(oof["estimator"].unique()),
            "pairs": sorted(
                {pair_name(a, t) for a, t in zip(oof["anchor"], oof["target"], strict=True)}
            ),
            **(settings or {}),
        },
    )
    metrics = summarize(oof).merge(
        intervals, on=["anchor", "target", "estimator", "with_latency"], how="left"
    )
    from ._breakdown import LEARNERS, cross_validate_breakdown

    breakdown = cross_validate_breakdown(
        dataset, anchors=sorted(oof["anchor"].unique()), targets=sorted(oof["target"].unique())
    )
    breakdown.to_csv(folder / "breakdown.csv", index=False)
    # The per-op regressors predict latency too (anchor latency x predicted/anchor device time),
    # so they enter the same comparison, with the anchor latency only.
    learned = breakdown[breakdown["learner"].isin(LEARNERS)]
    metrics = pd.concat(
        [
            metrics,
            pd.DataFrame(
                {
                    "anchor": learned["anchor"],
                    "target": learned["target"],
                    "estimator": "per-op:" + learned["learner"],
                    "with_latency": True,
                    "mape_pct": learned["latency_mape_pct"],
                    "n": learned["n"],
                }
            ),
        ],
        ignore_index=True,
    )
    noise = noise_floor(dataset.latencies)
    scalers = validate_scalers(dataset.latencies, SCALER_VARIANTS)
    per_arch = (
        oof.assign(ape=lambda d: 100 * (d["predicted_s"] - d["measured_s"]).abs() / d["measured_s"])
        .groupby(["anchor", "target", "estimator", "with_latency", "architecture"])["ape"]
        .mean()
        .rename("mape_pct")
        .reset_index()
    )
    metrics.to_csv(folder / "metrics.csv", index=False)
    noise.to_csv(folder / "noise.csv", index=False)
    scalers.to_csv(folder / "scalers.csv", index=False)
    per_arch.to_csv(folder / "per_architecture.csv", index=False)
    novelty = novelty_errors(oof)
    novelty.to_csv(folder / "novelty.csv", index=False)
    # Keep one repetition's out-of-fold predictions of the main estimators for parity plots
    # (the full table is large and repetitions differ by ~1.5%).
    main = oof[oof["estimator"].isin(METHODS) & (oof["exp"] == oof["exp"].min())]
    main.to_csv(folder / "predictions.csv.gz", index=False, float_format="%.6g")
    (folder / "report.md").write_text(
        accuracy_markdown(metrics, noise, scalers, breakdown, novelty)
    )


def _read_flagged(path: Path) -> pd.DataFrame:
    """Read a CSV whose ``with_latency`` column (if any) is a bool written as text."""
    df = pd.read_csv(path)
    if "with_latency" in df:
        df["with_latency"] = df["with_latency"].astype(str).str.lower() == "true"
    return df


def load_artifacts(path=None) -> Predictor:
    """Load and verify trained artifacts.

    Parameters
    ----------
    path : path-like, optional
        Artifacts folder; default: ``$PROFET_ARTIFACTS`` or the project's ``artifacts/``.

    Raises
    ------
    ArtifactError
        If the folder, its manifest or a file is missing, or a checksum does not match.
    """
    path = Path(path or os.environ.get("PROFET_ARTIFACTS") or DEFAULT_ARTIFACTS)
    manifest_path = path / "manifest.json"
    if not manifest_path.is_file():
        raise ArtifactError(
            f"no trained artifacts in {str(path)!r} (manifest.json missing); "
            "run `profet train --data DIR --out DIR` first"
        )
    try:
        manifest = json.loads(manifest_path.read_text())
        files = manifest["files"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ArtifactError(f"manifest {str(manifest_path)!r} is unreadable: {exc}") from None
    if manifest.get("format") != FORMAT_VERSION:
        raise ArtifactError(
            f"artifacts format {manifest.get('format')!r} is not the supported {FORMAT_VERSION}"
        )
    for name, digest in files.items():
        f = path / name
        if not f.is_file():
            raise ArtifactError(
                f"artifact file {name!r} listed in the manifest is missing from {str(path)!r}"
            )
        if _sha256(f) != digest:
            raise ArtifactError(
                f"artifact file {name!r} does not match its sha256 in the manifest; "
                "retrain or restore the artifacts"
            )
    examples = json.loads((path / "examples.json").read_text()) if "examples.json" in files else {}
    for required in ("model.json", "arrays.npz", "instances.csv", "intervals.csv"):
        if required not in files:
            raise ArtifactError(f"manifest does not list {required!r}")
    model = json.loads((path / "model.json").read_text())
    with np.load(path / "arrays.npz", allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    clusterer = OpClusterer.from_state(model["clustering"])
    models = {}
    for key, meta in model["models"].items():
        pair, method = key.split("|")
        prefix = f"{key}|"
        arr = {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
        models[(pair, method)] = METHODS[method].from_state(meta, arr, clusterer)
    scalers = {}
    for key, meta in model["scalers"].items():
        inst, by = key.split("|")
        prefix = f"scaler|{key}|"
        scalers[(inst, by)] = CurveScaler.from_state(
            meta, {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
        )
    breakdowns = {}
    for key, meta in model.get("breakdowns", {}).items():
        prefix = f"breakdown|{key}|"
        anchor, target = key.split("->")
        breakdowns[(anchor, target)] = BreakdownRegressor.from_state(
            meta, {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
        )
    intervals = _read_flagged(path / "intervals.csv")
    catalog = pd.read_csv(path / "instances.csv")
    validation = {}
    for name in ("metrics", "noise", "scalers", "per_architecture", "novelty"):
        f = path / "validation" / f"{name}.csv"
        if f.is_file() and f"validation/{name}.csv" in files:
            validation[name] = _read_flagged(f)
    f = path / "validation" / "predictions.csv.gz"
    if f.is_file() and "validation/predictions.csv.gz" in files:
        validation["predictions"] = _read_flagged(f)
    metadata = {
        **{k: v for k, v in manifest.items() if k != "files"},
        "instances": model["instances"],
        "methods": model["methods"],
        "default_method": model["default_method"],
        "interval_level": model["interval_level"],
    }
    return Predictor(
        models,
        clusterer,
        scalers,
        intervals,
        catalog,
        metadata,
        path,
        validation,
        examples,
        breakdowns,
    )
