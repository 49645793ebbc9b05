"""``profet predict``: an anchor profile's batch latency (and cost) on every other instance."""

from __future__ import annotations

import sys
from dataclasses import replace

from ._common import ARTIFACTS_HELP, CATALOG_HELP, load_predictor, table_text, warn

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


def add_parser(subparsers) -> None:
    """Register ``predict`` on the ``profet`` subcommand parsers."""
    from ..models._methods import METHODS

    pr = subparsers.add_parser("predict", help="predict batch latency on every other instance")
    pr.add_argument(
        "--anchor", help="instance the profile was taken on (default: the profile's own)"
    )
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
    pr.add_argument("--artifacts", help=ARTIFACTS_HELP)
    pr.add_argument("--catalog", help=CATALOG_HELP)
    pr.add_argument(
        "--format",
        choices=["table", "json", "csv"],
        default="table",
        help="table: aligned text for people, numbers to 4 significant digits (default); "
        "json: one document with the warnings and every record; csv: one row per (profile "
        "row, target), numbers to 4 decimals",
    )
    run = pr.add_argument_group("the workload: whole-run time and cost, will it fit")
    run.add_argument("--batch-size", type=int, help="images per step, as profiled")
    run.add_argument("--input-size", type=int, help="input image side (px), as profiled")
    run.add_argument("--dataset-images", type=int, help="training images per epoch")
    run.add_argument("--epochs", type=int, help="epochs of the run")


def run(args) -> int:
    """Predict ``--profile`` on every target; print it as a table, CSV or JSON."""
    from .. import estimate_run, latency_seconds, read_profile
    from ..inputs._profile import profile_instance

    _check_run_args(args)
    predictor = load_predictor(args.artifacts, args.catalog)
    profiles = read_profile(args.profile, steps=args.steps)
    lat = latency_seconds(args.anchor_latency_ms, "ms", "--anchor-latency-ms")
    result = predictor.predict(
        args.anchor or profile_instance(profiles),
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
        warn(warning)
    if args.format == "csv":
        replace(result, table=table).write_csv(sys.stdout)  # the app's download, too
    elif args.format == "json":
        replace(result, table=table).write_json(sys.stdout)
    else:
        _print_table(result, table)
    return 0


def _check_run_args(args) -> None:
    given = [args.dataset_images, args.epochs]
    if any(v is not None for v in given) and not all(v is not None for v in given):
        from .. import ProfetValueError

        raise ProfetValueError(
            "whole-run cost needs --dataset-images, --batch-size and --epochs together"
        )


def _print_table(result, table) -> None:
    cols = [c for c in _TABLE_COLUMNS if c in table.columns]
    level = int(round(result.interval_level * 100))
    print(f"anchor {result.anchor}, method {result.method}: {result.table['ensemble'].iloc[0]}")
    print(f"latency in ms per training step, {level}% interval low_ms..high_ms; prices in USD")
    # Significant digits, not fixed decimals: 0.0089 USD stays 0.0089, a 0.05 ms end not 0.000.
    print(table_text(table[cols].rename(columns=_TABLE_COLUMNS)))
