"""The handlers of the ``profet`` subcommands: parse nothing, call the public core, print."""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

DEFAULT_DATA = "../shared/data/profet"
DEFAULT_CATALOG = "../shared/instances.csv"


class _Progress:
    """Prints ``[done/total] message (elapsed, ~left)`` on one stderr line."""

    def __init__(self):
        self.start = None

    def __call__(self, done: int, total: int, message: str) -> None:
        if self.start is None or done == 1:  # a new phase (training, then validation)
            self.start = time.monotonic()
        elapsed = time.monotonic() - self.start
        eta = elapsed / done * (total - done) if done else 0
        print(
            f"\r[{done}/{total}] {message} ({elapsed:.0f}s, ~{eta:.0f}s left)".ljust(90),
            end="\n" if done == total else "",
            file=sys.stderr,
            flush=True,
        )


def _cmd_train(args) -> int:
    from .. import load_catalog, load_dataset, train
    from ..inputs._dataset import combine_datasets
    from ..training._swap import check_paths

    folders = args.data or [DEFAULT_DATA]
    check_paths(folders, args.out, args.validation)
    catalog = load_catalog(args.catalog or _find_catalog(Path(folders[0])))
    dataset = combine_datasets([load_dataset(d) for d in folders])
    if not args.catalog:  # other folders' catalog lines (e.g. a collected instance) join in
        catalog = _merge_catalogs(catalog, [Path(d) / "instances.csv" for d in folders[1:]])
    params = {"profet": {"dnn_params": {"epochs": args.dnn_epochs}}} if args.dnn_epochs else {}
    start = time.monotonic()
    out = train(
        dataset,
        catalog,
        args.out,
        methods=args.methods,
        threshold=args.threshold,
        calibrate=not args.no_calibrate,
        method_params=params,
        progress=_Progress(),
        calibrate_methods=args.methods if args.calibrate_all else None,
        validation=args.validation,
    )
    print(f"trained {len(dataset.instances)} instances in {time.monotonic() - start:.0f}s -> {out}")
    return 0


def _merge_catalogs(catalog, paths):
    import pandas as pd

    from ..inputs._catalog import load_catalog, validate_catalog

    for path in paths:
        if path.is_file():
            extra = load_catalog(path)
            extra = extra[~extra["instance"].isin(catalog["instance"])]
            catalog = validate_catalog(pd.concat([catalog, extra], ignore_index=True))
    return catalog


def _find_catalog(data: Path) -> Path:
    for candidate in (
        data / "instances.csv",
        data.parent.parent / "instances.csv",
        Path(DEFAULT_CATALOG),
    ):
        if candidate.is_file():
            return candidate
    from .. import ProfetFileNotFoundError

    raise ProfetFileNotFoundError(f"no instances.csv next to {str(data)!r}; pass --catalog PATH")


def _load_predictor(args):
    from .. import load_artifacts, load_catalog

    catalog = load_catalog(args.catalog) if getattr(args, "catalog", None) else None
    return load_artifacts(args.artifacts, catalog=catalog)


def _cmd_predict(args) -> int:
    from .. import estimate_run, read_profile
    from ..inputs._rules import latency_seconds

    _check_run_args(args)
    predictor = _load_predictor(args)
    profiles = read_profile(args.profile, steps=args.steps)
    lat = latency_seconds(args.anchor_latency_ms, "ms", "--anchor-latency-ms")
    anchor = args.anchor or _profile_instance(profiles)
    result = predictor.predict(
        anchor,
        profiles,
        anchor_latency_s=lat,
        method=args.method,
        batch_size=args.batch_size,
        input_size=args.input_size,
    )
    table = result.table
    if args.dataset_images is not None:
        table = estimate_run(table, args.dataset_images, args.batch_size, args.epochs)
    for warning in result.warnings():
        print(f"profet: warning: {warning}", file=sys.stderr)
    if args.format == "csv":
        first = ["row", "target", "batch_latency_ms", "low_ms", "high_ms", "novelty"]
        cols = first + [c for c in table.columns if c not in (*first, "anchor")]
        replace(result, table=table).write_csv(sys.stdout, cols)
    elif args.format == "json":
        replace(result, table=table).write_json(sys.stdout)
    else:
        _print_table(result, table)
    return 0


#: Columns of `profet predict --format table` with their headers (units included).
_TABLE_COLUMNS = {
    "row": "row",
    "target": "target",
    "gpu": "gpu",
    "basis": "basis",
    "batch_latency_ms": "latency_ms",
    "low_ms": "low_ms",
    "high_ms": "high_ms",
    "novelty": "novelty",
    "usd_per_hour": "usd_per_hour",
    "usd_per_1000_steps": "usd_per_1000_steps",
    "p_fit": "p_fit",
    "run_hours": "run_hours",
    "run_usd": "run_usd",
}


def _profile_instance(profiles) -> str:
    """The anchor a profile file names (JSON ``"instance"``), when ``--anchor`` is not given."""
    from ..errors import ProfetValueError

    named = profiles["instance"].dropna().unique() if "instance" in profiles else []
    if len(named) != 1:
        raise ProfetValueError(
            "give --anchor INSTANCE: the profile does not name the one instance it was taken on"
        )
    return str(named[0])


def _print_table(result, table) -> None:
    cols = [c for c in _TABLE_COLUMNS if c in table.columns]
    show = table[cols].rename(columns=_TABLE_COLUMNS)
    level = int(round(result.interval_level * 100))
    print(f"anchor {result.anchor}, method {result.method}: {result.table['ensemble'].iloc[0]}")
    print(f"latency in ms per training step, {level}% interval low_ms..high_ms; prices in USD")
    print(show.to_string(index=False, float_format=lambda v: f"{v:,.3f}"))


def _cmd_instances(args) -> int:
    import pandas as pd

    predictor = _load_predictor(args)
    cat = predictor.catalog.set_index("instance")
    cross = predictor.cross
    # The price is the whole instance's: say how many GPUs it buys.
    gpus = pd.to_numeric(cat.get("gpu_count", pd.Series(dtype=float)), errors="coerce")
    rows = [
        {
            "instance": i,
            "gpu": cat["gpu"].get(i, ""),
            "gpus": int(gpus.get(i, 1)) if pd.notna(gpus.get(i, 1)) else 1,
            "usd_per_hour": cat["usd_per_hour"].get(i),
            "basis": "measured" if i in predictor.instances else cross.basis(i),
        }
        for i in predictor.all_instances
    ]
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return 0


def _cmd_calibrate(args) -> int:
    from ..inputs._dataset import combine_datasets, load_dataset
    from ..inputs._gpu_specs import load_specs
    from ..prediction._store import artifacts_path
    from ..training._add_instance import calibrate_artifacts
    from ..training._swap import check_paths

    check_paths(args.data, artifacts_path(args.artifacts))
    specs = load_specs(args.specs) if args.specs else None
    dataset = combine_datasets([load_dataset(d) for d in args.data])
    basis = calibrate_artifacts(args.artifacts, args.instance, dataset, specs)
    print(f"{args.instance}: predictions now rest on {basis}")
    return 0


def _size_latency(text: str) -> tuple[float, float]:
    """``SIZE=MS`` of ``profet scale --point``."""
    try:
        size, ms = text.split("=")
        return float(size), float(ms)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not SIZE=MS (e.g. 64=41.5)") from None


def _cmd_scale(args) -> int:
    from ..errors import ProfetValueError

    one = [args.latency_ms, args.size_from, args.other_size]
    two = [args.latency_min_ms, args.latency_max_ms]
    if any(v is not None for v in one) and any(v is not None for v in two):
        raise ProfetValueError(
            "give one point (--latency-ms, --size-from, --other-size) or two "
            "(--latency-min-ms, --latency-max-ms), not both"
        )
    if any(v is not None for v in one) or args.profile:
        return _scale_one_point(args)
    if None in two:
        raise ProfetValueError(
            "give one point (--latency-ms, --size-from, --other-size, --target) or two "
            "(--latency-min-ms and --latency-max-ms)"
        )
    return _scale_two_points(args)


def _scale_one_point(args) -> int:
    from .. import load_artifacts
    from ..errors import ProfetValueError

    profile = _one_profile(args) if args.profile else None
    missing = [
        f"--{n.replace('_', '-')}"
        for n in ("latency_ms", "size_from", "other_size", "target")
        if getattr(args, n) is None
    ]
    if missing:
        raise ProfetValueError(f"scaling from one point needs {', '.join(missing)} too")
    result = load_artifacts(args.artifacts).scale_from_point(
        args.target, args.by, args.latency_ms, args.size_from, args.size, args.other_size, profile
    )
    for note in result.notes:
        print(f"profet: warning: {note}", file=sys.stderr)
    unit = "images" if args.by == "batch" else "px"
    row = result.table().iloc[0]
    interval = (
        f"{result.interval_level:.0%} interval {row['low_ms']:.3f}..{row['high_ms']:.3f} ms"
        if math.isfinite(row["low_ms"])
        else "no interval (not calibrated)"
    )
    print(
        f"{row['latency_ms']:.3f} ms per training step at {args.by} size {args.size:g} {unit} "
        f"on {args.target} ({interval}; from {args.latency_ms:g} ms at {args.size_from:g} "
        f"{unit}, curve shaped by "
        f"{'the anchor profile' if result.basis == 'profile' else 'the latency alone'})"
    )
    return 0


def _one_profile(args):
    """The ``--row`` of ``--profile``; its ``batch_size``/``input_size`` fill in ``--size-from``
    and ``--other-size`` where they were not given."""
    from .. import read_profile
    from ..errors import ProfetValueError

    table = read_profile(args.profile, steps=args.steps)
    if not 0 <= args.row < len(table):
        raise ProfetValueError(
            f"--row {args.row} is not in the profile file; it has rows 0..{len(table) - 1}"
        )
    row = table.iloc[[args.row]]
    size_col, other_col = ("batch_size", "input_size")[:: 1 if args.by == "batch" else -1]
    for name, col in (("size_from", size_col), ("other_size", other_col)):
        if getattr(args, name) is None and col in row and row[col].notna().all():
            setattr(args, name, float(row[col].iloc[0]))
    return row.drop(
        columns=["batch_latency_s", "batch_size", "input_size", "instance"], errors="ignore"
    )


def _scale_two_points(args) -> int:
    from .. import load_artifacts
    from ..errors import ProfetValueError

    sizes = [size for size, _ in args.point or []]
    dup = sorted({s for s in sizes if sizes.count(s) > 1})
    if dup:
        raise ProfetValueError(f"--point gives size {dup[0]:g} more than once; give each size once")
    predictor = load_artifacts(args.artifacts)
    lo, hi = predictor.size_range(args.by, args.target)
    a, b = args.size_min or lo, args.size_max or hi
    if a >= b:
        raise ProfetValueError(f"--size-min ({a:g}) must be below --size-max ({b:g})")
    for size in sizes:
        if not a < size < b:
            raise ProfetValueError(
                f"--point size {size:g} must lie strictly between the end sizes {a:g} and {b:g}"
            )
    points = {a: args.latency_min_ms, b: args.latency_max_ms, **dict(args.point or [])}
    value = predictor.scale(args.target, args.by, points, args.size)
    for warning in predictor.scale_warnings(args.by, points):
        print(f"profet: warning: {warning}", file=sys.stderr)
    unit = "images" if args.by == "batch" else "px"
    print(f"{float(value):.3f} ms per training step at {args.by} size {args.size:g} {unit}")
    return 0


def _cmd_validate(args) -> int:
    from .. import load_dataset
    from ..models._intervals import interval_quantiles
    from ..models._methods import METHODS, method_factory
    from ..training._cross_validate import cross_validate
    from ..training._report import write_validation

    if args.cross:
        from ..inputs._gpu_specs import load_specs

        load_specs(args.specs)  # refused now rather than after the cross-validation
    dataset = load_dataset(args.data)
    methods = args.methods or list(METHODS)
    params = {"profet": {"dnn_params": {"epochs": args.dnn_epochs}}} if args.dnn_epochs else {}
    factories = {m: method_factory(m, params.get(m)) for m in methods}
    oof = cross_validate(
        dataset,
        factories,
        threshold=args.threshold,
        anchors=args.anchors,
        targets=args.targets,
        architectures=args.architectures,
        progress=_Progress(),
    )
    out = Path(args.out)
    write_validation(
        out,
        oof,
        interval_quantiles(oof),
        dataset,
        {"threshold": args.threshold, "method_params": params},
    )
    print((out / "report.md").read_text())
    print(f"written: {out}/report.md, metrics.csv, per_architecture.csv, scalers.csv, noise.csv")
    if args.cross:
        _validate_cross(dataset, args.specs, out)
    return 0


def _validate_cross(dataset, specs_path, out: Path) -> None:
    """Leave-one-GPU-out x leave-one-architecture-out of the cross-instance model."""
    from ..crossgpu import median_table
    from ..crossgpu._validate import cross_validation, summarize
    from ..inputs._gpu_specs import load_specs

    specs = load_specs(specs_path)
    medians = median_table(dataset)
    table = summarize(cross_validation(medians, specs))
    table.to_csv(out / "crossgpu.csv", index=False)
    both = table[table["direction"] == "both"]
    cols = [
        "basis",
        "k",
        "left_out",
        "mape_cross",
        "max_pair_cross",
        "mape_fp32-ratio",
        "mape_roofline",
        "coverage_pct",
    ]
    print("\nGPUs left out (MAPE %, with the anchor latency; k = runs of the left-out GPU):")
    print(both[cols].to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    print(f"written: {out}/crossgpu.csv")


def _check_run_args(args) -> None:
    given = [args.dataset_images, args.epochs]
    if any(v is not None for v in given) and not all(v is not None for v in given):
        from ..errors import ProfetValueError

        raise ProfetValueError(
            "whole-run cost needs --dataset-images, --batch-size and --epochs together"
        )
