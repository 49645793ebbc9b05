"""The ``profet`` command line: a thin layer over profet_core's public functions."""

from __future__ import annotations

import argparse
import json
import sys
import time
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
    from . import load_catalog, load_dataset, train
    from ._data import combine_datasets

    folders = args.data or [DEFAULT_DATA]
    dataset = combine_datasets([load_dataset(d) for d in folders])
    catalog = load_catalog(args.catalog or _find_catalog(Path(folders[0])))
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

    from ._catalog import load_catalog, validate_catalog

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
    from . import ProfetFileNotFoundError

    raise ProfetFileNotFoundError(f"no instances.csv next to {str(data)!r}; pass --catalog PATH")


def _cmd_predict(args) -> int:
    from . import load_artifacts, read_profile
    from ._validate import NOVELTY_WARN

    predictor = load_artifacts(args.artifacts)
    profiles = read_profile(args.profile)
    lat = None if args.anchor_latency_ms is None else args.anchor_latency_ms / 1000
    result = predictor.predict(args.anchor, profiles, anchor_latency_s=lat, method=args.method)
    table = result.table
    if result.unknown_ops:
        print(
            f"profet: warning: ops not seen in training were left out: {', '.join(result.unknown_ops)}",
            file=sys.stderr,
        )
    novelty = table["novelty"].max()
    if novelty >= NOVELTY_WARN:
        band = predictor.novelty_band(novelty, lat is not None, result.method)
        seen = (
            f"; held-out CNNs this unusual were missed by {band['mape_pct']:.0f}% on average"
            if band
            else ""
        )
        print(
            f"profet: warning: the profile is unlike the training profiles (novelty {novelty:.2f}, "
            f"1 = a typical held-out CNN){seen}; intervals are widened",
            file=sys.stderr,
        )
    if args.format == "csv":
        cols = [
            "row",
            "target",
            "batch_latency_ms",
            "low_ms",
            "high_ms",
            "novelty",
            "gpu",
            "usd_per_hour",
            "method",
            "ensemble",
        ] + [
            c
            for c in table.columns
            if c.endswith("_ms") and c not in ("batch_latency_ms", "low_ms", "high_ms")
        ]
        table[cols].to_csv(sys.stdout, index=False, float_format="%.4f")
    elif args.format == "json":
        json.dump(
            {
                "anchor": args.anchor,
                "method": result.method,
                "interval_level": result.interval_level,
                "unknown_ops": list(result.unknown_ops),
                "predictions": json.loads(table.to_json(orient="records")),
            },
            sys.stdout,
            indent=1,
        )
        print()
    else:
        show = table[
            [
                "row",
                "target",
                "gpu",
                "batch_latency_ms",
                "low_ms",
                "high_ms",
                "novelty",
                "usd_per_hour",
                "ensemble",
            ]
        ]
        print(
            f"anchor {args.anchor}, method {result.method}, "
            f"{int(result.interval_level * 100)}% interval low..high"
        )
        print(show.to_string(index=False, float_format=lambda v: f"{v:,.2f}"))
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
    print(f"{float(value):.3f}")
    return 0


def _cmd_validate(args) -> int:
    from . import load_dataset
    from ._artifacts import write_validation
    from ._methods import METHODS, method_factory
    from ._validate import cross_validate, interval_quantiles

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
    t.add_argument(
        "--data",
        action="append",
        help=f"dataset folder (repeatable: folders are concatenated; default {DEFAULT_DATA})",
    )
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
    pr.add_argument("--artifacts", help="artifacts folder (default: the shipped ones)")
    pr.add_argument("--format", choices=["table", "json", "csv"], default="table")
    pr.set_defaults(func=_cmd_predict)

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
    try:
        from .capture._cli import add_capture_parsers
    except ImportError:  # the capture feature is optional
        pass
    else:
        add_capture_parsers(sub)
    return p


def main(argv=None) -> int:
    from .errors import ProfetError

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
