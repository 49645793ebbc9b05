"""The ``profet`` command line: a thin layer over profet_core's public functions."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

DEFAULT_DATA = "../shared/data/profet"
DEFAULT_CATALOG = "../shared/instances.csv"
_CATALOG_HELP = (
    "instance catalog CSV (instance,gpu,usd_per_hour) overriding the artifacts' prices and GPU "
    "names without retraining"
)
#: Options whose value may be a negative number or -inf (argparse would take it for an option).
_NUMERIC_OPTIONS = (
    "--anchor-latency-ms",
    "--latency-min-ms",
    "--latency-max-ms",
    "--size",
    "--size-min",
    "--size-max",
    "--seed",
    "--batch-size",
    "--dataset-images",
    "--epochs",
    "--steps",
)


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
    from . import load_catalog, load_dataset, train

    dataset = load_dataset(args.data)
    catalog_path = args.catalog or _find_catalog(Path(args.data))
    catalog = load_catalog(catalog_path)
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


def _find_catalog(data: Path) -> Path:
    for candidate in (
        data / "instances.csv",
        data.parent.parent / "instances.csv",
        Path(DEFAULT_CATALOG),
    ):
        if candidate.is_file():
            return candidate
    from . import ProfetFileNotFoundError

    raise ProfetFileNotFoundError(f"no instances.csv next to {str(data)!r}; pass --catalog PATH")


def _load_predictor(args):
    from . import load_artifacts, load_catalog

    catalog = load_catalog(args.catalog) if getattr(args, "catalog", None) else None
    return load_artifacts(args.artifacts, catalog=catalog)


def _cmd_predict(args) -> int:
    from . import estimate_run, read_profile

    _check_run_args(args)
    predictor = _load_predictor(args)
    profiles = read_profile(args.profile, steps=args.steps)
    lat = None if args.anchor_latency_ms is None else args.anchor_latency_ms / 1000
    result = predictor.predict(args.anchor, profiles, anchor_latency_s=lat, method=args.method)
    table = result.table
    if args.dataset_images is not None:
        table = estimate_run(table, args.dataset_images, args.batch_size, args.epochs)
    for warning in result.warnings():
        print(f"profet: warning: {warning}", file=sys.stderr)
    if args.format == "csv":
        first = ["row", "target", "batch_latency_ms", "low_ms", "high_ms", "novelty"]
        cols = first + [c for c in table.columns if c not in (*first, "anchor")]
        table[cols].to_csv(sys.stdout, index=False, float_format="%.4f")
    elif args.format == "json":
        if table is not result.table:
            result = type(result)(**{**result.__dict__, "table": table})
        result.write_json(sys.stdout)
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
    "run_hours": "run_hours",
    "run_usd": "run_usd",
}


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
    rows = [
        {
            "instance": i,
            "gpu": cat["gpu"].get(i, ""),
            "usd_per_hour": cat["usd_per_hour"].get(i),
            "basis": "measured" if i in predictor.instances else cross.basis(i),
        }
        for i in predictor.all_instances
    ]
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return 0


def _cmd_calibrate(args) -> int:
    import pandas as pd

    from . import make_dataset
    from ._calibrate import calibrate_artifacts
    from ._data import load_dataset
    from ._specs import load_specs

    parts = [load_dataset(d) for d in args.data]
    dataset = make_dataset(
        pd.concat([d.profiles for d in parts], ignore_index=True),
        pd.concat([d.latencies for d in parts], ignore_index=True),
    )
    specs = load_specs(args.specs) if args.specs else None
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
    from . import load_artifacts
    from .errors import ProfetValueError

    sizes = [size for size, _ in args.point or []]
    dup = sorted({s for s in sizes if sizes.count(s) > 1})
    if dup:
        raise ProfetValueError(f"--point gives size {dup[0]:g} more than once; give each size once")
    predictor = load_artifacts(args.artifacts)
    value = predictor.scale(
        args.target,
        args.by,
        args.latency_min_ms,
        args.latency_max_ms,
        args.size,
        size_min=args.size_min,
        size_max=args.size_max,
        points=dict(args.point or []),
    )
    unit = "images" if args.by == "batch" else "px"
    print(
        f"{float(value):.3f} ms per training step on {args.target} at {args.by} size {args.size:g} {unit}"
    )
    return 0


def _cmd_validate(args) -> int:
    from . import load_dataset
    from ._evaluate import cross_validate
    from ._intervals import interval_quantiles
    from ._methods import METHODS, method_factory
    from ._report import write_validation

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
    return 0


def build_parser() -> argparse.ArgumentParser:
    from ._methods import METHODS

    p = argparse.ArgumentParser(
        prog="profet",
        description="Predict CNN training-step latency and "
        "cost on GPU instances from a profile taken on one anchor instance.",
    )
    sub = p.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train all models and write artifacts")
    t.add_argument("--data", default=DEFAULT_DATA, help=f"dataset folder (default {DEFAULT_DATA})")
    t.add_argument(
        "--out", default="artifacts", help="artifacts folder to write (default artifacts)"
    )
    t.add_argument("--catalog", help="instance catalog CSV (default: instances.csv near the data)")
    t.add_argument(
        "--threshold", type=float, default=6.0, help="op-clustering distance (default 6)"
    )
    t.add_argument(
        "--methods",
        nargs="+",
        choices=list(METHODS),
        default=list(METHODS),
        help="methods to train (default all)",
    )
    t.add_argument(
        "--dnn-epochs", type=int, help="cap the reference DNN's epochs (faster, less accurate)"
    )
    t.add_argument(
        "--no-calibrate",
        action="store_true",
        help="skip the cross-validation that calibrates intervals (faster; no intervals)",
    )
    t.add_argument(
        "--calibrate-all",
        action="store_true",
        help="calibrate intervals for every trained method (the reference adds ~25 min)",
    )
    t.add_argument(
        "--validation",
        help="reuse a `profet validate --out DIR` folder (same data and "
        "settings) for intervals and the report instead of cross-validating again",
    )
    t.set_defaults(func=_cmd_train)

    pr = sub.add_parser("predict", help="predict batch latency on every other instance")
    pr.add_argument("--anchor", required=True, help="instance the profile was taken on")
    pr.add_argument(
        "--profile", required=True, help="profile: PROFET JSON, TensorBoard CSV, or table"
    )
    pr.add_argument(
        "--anchor-latency-ms", type=float, help="measured batch latency on the anchor (ms)"
    )
    pr.add_argument(
        "--method", choices=list(METHODS), help="prediction method (default: the artifacts')"
    )
    pr.add_argument(
        "--steps",
        type=int,
        help="training steps the profile covers (default: the file's own, else 2, PROFET's "
        "convention: two consecutive steps traced); op times are rescaled to 2 steps",
    )
    pr.add_argument("--artifacts", help="artifacts folder (default: the shipped ones)")
    pr.add_argument("--catalog", help=_CATALOG_HELP)
    pr.add_argument("--format", choices=["table", "json", "csv"], default="table")
    run = pr.add_argument_group("whole-run time and cost (all three or none)")
    run.add_argument("--dataset-images", type=int, help="training images per epoch")
    run.add_argument("--batch-size", type=int, help="images per step, as profiled")
    run.add_argument("--epochs", type=int, help="epochs of the run")
    pr.set_defaults(func=_cmd_predict)

    cal = sub.add_parser(
        "calibrate", help="adapt the cross-instance model to a new instance from a few runs"
    )
    cal.add_argument("--instance", required=True, help="the new instance (in the spec catalog)")
    cal.add_argument(
        "--data",
        action="append",
        required=True,
        help="dataset folder with the new instance's rows (repeatable; the measured instances' "
        "rows of the same workloads are needed too, e.g. --data new --data ../shared/data/profet)",
    )
    cal.add_argument("--specs", help="spec catalog CSV with the instance's line (if not shipped)")
    cal.add_argument("--artifacts", help="artifacts folder to update (default: the shipped ones)")
    cal.set_defaults(func=_cmd_calibrate)

    ins = sub.add_parser("instances", help="list the instances the artifacts know, with prices")
    ins.add_argument("--artifacts", help="artifacts folder (default: the shipped ones)")
    ins.add_argument("--catalog", help=_CATALOG_HELP)
    ins.set_defaults(func=_cmd_instances)

    s = sub.add_parser(
        "scale", help="latency at any batch or input size from latencies at two sizes"
    )
    s.add_argument("--target", required=True, help="instance the latencies are for")
    s.add_argument("--by", choices=["batch", "input"], required=True)
    s.add_argument(
        "--latency-min-ms", type=float, required=True, help="latency at the smaller size (ms)"
    )
    s.add_argument(
        "--latency-max-ms", type=float, required=True, help="latency at the larger size (ms)"
    )
    s.add_argument("--size", type=float, required=True, help="size to predict")
    s.add_argument(
        "--size-min", type=float, help="size of --latency-min-ms (default: 16 batch / 32 px)"
    )
    s.add_argument("--size-max", type=float, help="size of --latency-max-ms (default: 256)")
    s.add_argument(
        "--point",
        type=_size_latency,
        action="append",
        metavar="SIZE=MS",
        help="another measured point between the two (repeatable), e.g. --point 64=41.5",
    )
    s.add_argument("--artifacts", help="artifacts folder (default: the shipped ones)")
    s.set_defaults(func=_cmd_scale)

    v = sub.add_parser("validate", help="leave-one-architecture-out cross-validation report")
    v.add_argument("--data", default=DEFAULT_DATA)
    v.add_argument("--out", default="validation", help="folder for report.md and CSVs")
    v.add_argument("--methods", nargs="+", choices=list(METHODS))
    v.add_argument("--anchors", nargs="+")
    v.add_argument("--targets", nargs="+")
    v.add_argument("--architectures", nargs="+", help="left-out architectures (default all)")
    v.add_argument("--threshold", type=float, default=6.0)
    v.add_argument("--dnn-epochs", type=int)
    v.set_defaults(func=_cmd_validate)

    try:
        from ._doe_cli import add_doe_parser
    except ImportError:  # the experiment-design feature is optional
        pass
    else:
        add_doe_parser(sub)
    return p


def _join_numeric(argv: list) -> list:
    """``--size -1`` -> ``--size=-1``, so a bad number gets its own message, not argparse's
    "expected one argument"."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] in _NUMERIC_OPTIONS and i + 1 < len(argv) and argv[i + 1].startswith("-"):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def _check_run_args(args) -> None:
    given = [args.dataset_images, args.batch_size, args.epochs]
    if any(v is not None for v in given) and not all(v is not None for v in given):
        from .errors import ProfetValueError

        raise ProfetValueError(
            "whole-run cost needs --dataset-images, --batch-size and --epochs together"
        )


def main(argv=None) -> int:
    from .errors import ProfetError

    argv = _join_numeric(list(sys.argv[1:] if argv is None else argv))
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ProfetError as exc:
        print(f"profet: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("profet: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
