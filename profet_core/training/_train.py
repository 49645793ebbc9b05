"""``train()``: every method for every anchor -> target pair, the scalers, written as artifacts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ProfetValueError
from ..features._anchor import fit_anchor_classifier
from ..features._clustering import OpClusterer
from ..inputs._args import frame_arg, path_arg
from ..inputs._catalog import validate_catalog
from ..inputs._dataset import Dataset, dataset_arg, make_pairs
from ..inputs._outputs import MARKER, folder_lock
from ..inputs._overhead import learn_step_reference
from ..inputs._sanity import device_busy_us
from ..models._breakdown import BreakdownRegressor, breakdown_pairs
from ..models._curve_scaler import SCALER_VARIANTS, fit_scaler, scaling_curves
from ..models._intervals import INTERVAL_COLUMNS, interval_quantiles
from ..models._methods import DEFAULT_METHOD, METHODS, method_factory
from ..onepoint import fit_one_point
from ..prediction._store import FORMAT_VERSION, PRICES_FILE, write_json, write_manifest
from ..prediction._trained import INTERVAL_LEVEL, pair_name
from ._cross_validate import Progress, cross_validate
from ._report import write_validation
from ._swap import (
    check_out_folder,
    check_validation_folder,
    new_temp_folder,
    remove_temp,
    replace_folder,
)

#: Fewest joined rows a pair needs to be trained.
MIN_PAIR_ROWS = 4


def check_trainable(dataset: Dataset, methods, intervals: bool) -> None:
    """Refuse, before any fitting, data that cannot be trained (or cross-validated).

    Raises
    ------
    ProfetValueError
        Fewer than 2 instances, a pair whose keys never join (or join fewer than
        :data:`MIN_PAIR_ROWS` rows), or intervals asked with fewer than 2 architectures.
    """
    for m in methods:
        if m not in METHODS:
            raise ProfetValueError(f"unknown method {m!r}; allowed: {', '.join(METHODS)}")
    instances = dataset.instances
    if len(instances) < 2:
        raise ProfetValueError(f"training needs at least 2 instances; the dataset has {instances}")
    if intervals and len(dataset.architectures) < 2:
        raise ProfetValueError(
            "calibrating intervals (leave-one-architecture-out) needs at least 2 architectures; "
            f"the dataset has {dataset.architectures} (pass --no-intervals to skip it)"
        )
    for anchor in instances:
        for target in instances:
            if anchor != target:
                n = len(make_pairs(dataset, anchor, target))
                if n < MIN_PAIR_ROWS:
                    raise ProfetValueError(
                        f"pair {anchor} -> {target} joins {n} rows on (exp, model, input_size, "
                        f"batch_size); training needs at least {MIN_PAIR_ROWS}"
                    )


def _train_methods(dataset, clusterer, factories, progress) -> tuple[dict, dict]:
    instances = dataset.instances
    jobs = [(a, t) for a in instances for t in instances if a != t]
    meta, arrays, done = {}, {}, 0
    for anchor, target in jobs:
        pairs = make_pairs(dataset, anchor, target)
        for m, factory in factories.items():
            m_meta, m_arrays = factory(clusterer).fit(pairs).to_state()
            key = f"{pair_name(anchor, target)}|{m}"
            meta[key] = m_meta
            arrays.update({f"{key}|{k}": v for k, v in m_arrays.items()})
            done += 1
            if progress:
                progress(done, len(jobs) * len(factories), f"trained {m} {anchor} -> {target}")
    return meta, arrays


def _train_breakdowns(dataset) -> tuple[dict, dict]:
    instances = dataset.instances
    have = set(dataset.profiles["instance"])
    meta, arrays = {}, {}
    for anchor in instances:
        for target in instances:
            if anchor == target or target not in have:
                continue
            X, Y, _, _ = breakdown_pairs(dataset, anchor, target, median=True)
            if len(X) < 2:
                continue
            m, a = BreakdownRegressor().fit(X, Y).to_state()
            key = pair_name(anchor, target)
            meta[key] = m
            arrays.update({f"breakdown|{key}|{k}": v for k, v in a.items()})
    return meta, arrays


def _train_scalers(dataset) -> tuple[dict, dict]:
    meta, arrays = {}, {}
    for by in ("batch", "input"):
        curves = scaling_curves(dataset.latencies, by)
        if curves.empty:
            continue
        size_range = (float(curves["size"].min()), float(curves["size"].max()))
        for inst, c in curves.groupby("instance"):
            m, a = fit_scaler(c, size_range, **SCALER_VARIANTS["default"][by]).to_state()
            meta[f"{inst}|{by}"] = m
            arrays.update({f"scaler|{inst}|{by}|{k}": v for k, v in a.items()})
    return meta, arrays


def _fit_everything(dataset, threshold, factories, progress) -> tuple[dict, dict]:
    """``model.json``'s content (but the method list) and the arrays of every trained part."""
    ops = [c for c in dataset.ops if dataset.profiles[c].to_numpy().any()]
    clusterer = OpClusterer(threshold=threshold).fit(dataset.profiles[ops])
    model_meta, arrays = _train_methods(dataset, clusterer, factories, progress)
    breakdown_meta, a = _train_breakdowns(dataset)
    arrays.update(a)
    scaler_meta, a = _train_scalers(dataset)
    arrays.update(a)
    # Which instance a profile was taken on, from its op mix: a profile naming none is checked.
    anchor_meta, a = fit_anchor_classifier(dataset.profiles)
    arrays.update({f"anchor|{k}": v for k, v in a.items()})
    model = {
        "format": FORMAT_VERSION,
        "instances": dataset.instances,
        "clustering": clusterer.to_state(),
        "models": model_meta,
        "scalers": scaler_meta,
        "breakdowns": breakdown_meta,
        "interval_level": INTERVAL_LEVEL,
        "device_busy_range_us": _busy_range(dataset),
        # Per-step overhead references: a profile over more steps than it says is flagged.
        "steps_reference": learn_step_reference(dataset.profiles),
        "anchor_signal": anchor_meta,
    }
    return model, arrays


def _fit_cross(dataset: Dataset, specs, intervals: bool):
    """States ``(meta, arrays)`` of the cross-instance model (with per-basis intervals when
    ``intervals``) and of the will-it-fit model, and their validation tables (leave-one-GPU-out x
    leave-one-architecture-out; will-it-fit leave-one-architecture-out); Nones without specs."""
    from ..crossgpu import CrossInstanceModel, median_table
    from ..crossgpu.configurations._validate import amp_dp_reports
    from ..crossgpu.spec._holdout import learn_published
    from ..crossgpu.spec._memory import FitModel, fit_table, validate_fit
    from ..crossgpu.spec._validate import cross_validate_gpus as cv_gpus
    from ..crossgpu.spec._validate import interval_log_quantiles, summarize_gpus
    from ..inputs._gpu_specs import load_specs

    specs = load_specs() if specs is None else specs
    if not set(dataset.instances) <= set(specs["instance"]) or len(dataset.instances) < 3:
        return None, None, None
    model = CrossInstanceModel().fit(dataset, specs)
    medians = median_table(dataset)
    table = fit_table(medians, specs)
    # Where every workload ran on every GPU there is nothing to learn about not fitting.
    fits = FitModel().fit(table, specs).to_state() if table["fits"].nunique() == 2 else None
    report, quantiles = None, None
    if intervals:
        oof = cv_gpus(medians, specs)
        quantiles = interval_log_quantiles(oof)
        fit_report = validate_fit(medians, specs) if fits is not None else pd.DataFrame()
        report = summarize_gpus(oof), fit_report
    # Tensor-core GPUs: efficiencies from published speed-ups (VGG16/Inception-v3 never fitted).
    model, published = learn_published(model, medians, specs, quantiles)
    if report is not None:  # AMP gains and N-GPU scaling against their baselines
        report = (*report, published | amp_dp_reports(model, medians))
    return model.to_state(), fits, report


def _fit_side_models(dataset: Dataset, specs, intervals: bool, progress, model, arrays) -> dict:
    """Fit the cross-instance, will-it-fit and one-point scaler models into ``model`` (states)
    and ``arrays``; return their validation tables by file name."""
    cross, fits, cross_report = _fit_cross(dataset, specs, intervals)
    model["onepoint"], onepoint_arrays, onepoint_report = fit_one_point(
        dataset, intervals, progress
    )
    arrays.update(onepoint_arrays)
    for name, state in (("cross", cross), ("fits", fits)):
        if state is not None:
            model[name] = state[0]
            arrays.update({f"{name}|{k}": v for k, v in state[1].items()})
    reports = {}
    if cross_report is not None:
        reports.update({"crossgpu.csv": cross_report[0], "fits.csv": cross_report[1]})
        reports.update(cross_report[2])
    if onepoint_report is not None:
        reports["onepoint.csv"] = onepoint_report
    return reports


def _full_catalog(catalog: pd.DataFrame, instances) -> pd.DataFrame:
    catalog = validate_catalog(catalog)
    known = set(catalog["instance"])
    extra = pd.DataFrame(
        {
            "instance": [i for i in instances if i not in known],
            "gpu": "unknown",
            "usd_per_hour": np.nan,
        }
    )
    return pd.concat([catalog[catalog["instance"].isin(instances)], extra], ignore_index=True)


def train(
    dataset: Dataset,
    catalog: pd.DataFrame,
    out_dir,
    *,
    methods=None,
    threshold: float = 6.0,
    intervals: bool = True,
    interval_methods=None,
    validation=None,
    method_params: dict | None = None,
    progress: Progress | None = None,
    specs: pd.DataFrame | None = None,
) -> Path:
    """Train every method for every anchor -> target pair, the scalers, and write artifacts.

    Parameters
    ----------
    dataset : Dataset
    catalog : pandas.DataFrame
        Instance catalog (``instance, gpu, usd_per_hour``); instances of the dataset that it
        lacks are kept with an unknown GPU and price.
    out_dir : path-like
        Folder to write: new, or an artifacts folder PROFET wrote (anything else is refused
        before any training). It is replaced atomically only once everything was trained and
        written, so a failure or a kill leaves an existing folder as it was.
    methods : list of str, optional
        Methods to train (default: all). The artifacts' default method is ``DEFAULT_METHOD`` if
        trained, else the first listed.
    threshold : float
        Op-clustering distance threshold (reference method).
    intervals : bool
        Fit the prediction intervals (split-conformal, on a leave-one-architecture-out
        cross-validation) and write the accuracy report into ``validation/``.
    interval_methods : list of str, optional
        Methods to cross-validate (default: the default method only; the reference's DNN makes
        its cross-validation take ~25 minutes). Methods not calibrated have no interval.
    validation : path-like, optional
        A ``profet validate`` folder on the same data and settings, reused instead of running
        the cross-validation again.
    method_params : dict, optional
        ``{method: {param: value}}`` passed to the method constructors.
    progress : callable, optional
        ``progress(done, total, message)``.
    specs : pandas.DataFrame, optional
        GPU spec catalog (default: the package's, ``profet_core/data/gpu_specs.csv``). Where it
        lists every instance of the data, the cross-instance model is trained too, so
        predictions reach every instance of the catalog ("specs only" where unmeasured).

    Returns
    -------
    pathlib.Path
        The artifacts folder.
    """
    dataset_arg(dataset), frame_arg(catalog, "the instance catalog")  # type checks first
    path_arg(out_dir, "the artifacts folder (out_dir)")
    methods = list(methods or METHODS)
    method_params = method_params or {}
    check_out_folder(out_dir)
    check_trainable(dataset, methods, intervals and validation is None)
    settings = {"threshold": threshold, "method_params": method_params}
    if validation is not None:  # checked before the fitting, copied after it
        check_validation_folder(validation)
        quantiles = _reuse_validation(Path(validation), dataset, methods, settings)
    factories = {m: method_factory(m, method_params.get(m)) for m in methods}
    default = DEFAULT_METHOD if DEFAULT_METHOD in methods else methods[0]
    catalog = _full_catalog(catalog, dataset.instances)
    model, arrays = _fit_everything(dataset, threshold, factories, progress)
    model.update(methods=methods, default_method=default)
    validating = intervals or validation is not None
    reports = _fit_side_models(dataset, specs, validating, progress, model, arrays)
    calibrated = list(interval_methods or [default]) * bool(intervals)
    tmp = new_temp_folder(out_dir)
    try:
        (tmp / "validation").mkdir()
        if validation is not None:
            skip = shutil.ignore_patterns(MARKER)
            shutil.copytree(validation, tmp / "validation", dirs_exist_ok=True, ignore=skip)
        elif calibrated:
            chosen = {m: factories[m] for m in calibrated}
            oof = cross_validate(dataset, chosen, threshold=threshold, progress=progress)
            quantiles = interval_quantiles(oof, INTERVAL_LEVEL)
            write_validation(tmp / "validation", oof, quantiles, dataset, settings)
        else:
            quantiles = pd.DataFrame(columns=INTERVAL_COLUMNS)
        for name, table in reports.items():
            if len(table.columns):  # an empty report (no column) is no readable CSV: left out
                table.to_csv(tmp / "validation" / name, index=False)
        _write_artifacts(tmp, dataset, catalog, quantiles, model, arrays)
        _write_manifest(tmp, dataset, calibrated, settings)
        with folder_lock(out_dir):  # another writer's swap (add-instance's rewrite) waits
            replace_folder(tmp, Path(out_dir))
    finally:
        remove_temp(tmp)
    return Path(out_dir)


def _write_manifest(tmp: Path, dataset: Dataset, calibrated: list, settings: dict) -> None:
    write_manifest(
        tmp,
        data_fingerprint=dataset.fingerprint,
        n_profiles=len(dataset.profiles),
        architectures=dataset.architectures,
        calibrated=calibrated,
        # `profet add-instance` refuses data taken under another convention (or zoo).
        convention=dataset.convention,
        zoo=dataset.zoo,
        **settings,
    )


def _write_artifacts(tmp: Path, dataset, catalog, intervals, model: dict, arrays: dict) -> None:
    intervals.to_csv(tmp / "intervals.csv", index=False)
    write_json(tmp / "examples.json", _examples(dataset))
    catalog.to_csv(tmp / PRICES_FILE, index=False)
    np.savez_compressed(tmp / "arrays.npz", **{k: np.asarray(v) for k, v in arrays.items()})
    write_json(tmp / "model.json", model)


def _busy_range(dataset: Dataset) -> list[float]:
    """Smallest and largest device busy time of the training profiles (us, 2 steps)."""
    busy = device_busy_us(dataset.profiles)
    busy = busy[busy > 0]
    return [float(busy.min()), float(busy.max())] if busy.size else []


def _reuse_validation(src: Path, dataset: Dataset, methods, settings: dict) -> pd.DataFrame:
    """Check that a ``profet validate`` report fits these models; return its intervals."""
    try:
        run = json.loads((src / "run.json").read_text())
        metrics = pd.read_csv(src / "metrics.csv")
    except (OSError, ValueError, json.JSONDecodeError, pd.errors.ParserError) as exc:
        raise ProfetValueError(
            f"{str(src)!r} is not a `profet validate` output folder: {exc}"
        ) from None
    if run.get("data_fingerprint") != dataset.fingerprint:
        raise ProfetValueError(
            f"validation in {str(src)!r} was run on other data (fingerprint differs)"
        )
    for key, value in settings.items():
        ran = json.loads(json.dumps(run.get(key), default=float))
        if ran != json.loads(json.dumps(value, default=float)):
            raise ProfetValueError(
                f"validation in {str(src)!r} used {key}={run.get(key)!r}, training uses {value!r}"
            )
    missing = [m for m in methods if m not in run.get("estimators", [])]
    if missing:
        raise ProfetValueError(f"validation in {str(src)!r} does not cover method(s) {missing}")
    lacking = sorted(set(INTERVAL_COLUMNS) - set(metrics.columns))
    if lacking:
        raise ProfetValueError(
            f"validation in {str(src)!r} predates the current interval calibration (metrics.csv "
            f"lacks {lacking}); run `profet validate` again"
        )
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
