"""``profet train``: train every method on dataset folders and write artifacts."""

from __future__ import annotations

import time

from ._argtypes import EPOCHS, THRESHOLD
from ._common import (
    DEFAULT_DATA,
    Progress,
    add_trees_flag,
    method_params,
    need_dnn,
    old_flag,
)


def add_parser(subparsers) -> None:
    """Register ``train`` on the ``profet`` subcommand parsers."""
    from ..models._methods import METHODS

    t = subparsers.add_parser("train", help="train all models and write artifacts")
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
        "--threshold", type=THRESHOLD, default=6.0, help="op-clustering distance (default 6)"
    )
    t.add_argument(
        "--methods",
        nargs="+",
        choices=list(METHODS),
        default=list(METHODS),
        help="methods to train (default all)",
    )
    t.add_argument(
        "--dnn-epochs", type=EPOCHS, help="cap the reference DNN's epochs (faster, less accurate)"
    )
    add_trees_flag(t)
    t.add_argument(
        "--no-intervals",
        action="store_true",
        help="skip the cross-validation that calibrates intervals (faster; no intervals)",
    )
    t.add_argument("--no-calibrate", dest="no_intervals", action=old_flag("--no-intervals"))
    t.add_argument(
        "--intervals-all",
        action="store_true",
        help="calibrate intervals for every trained method (the reference adds ~25 min)",
    )
    t.add_argument("--calibrate-all", dest="intervals_all", action=old_flag("--intervals-all"))
    t.add_argument(
        "--validation",
        help="reuse a `profet validate --out DIR` folder (same data and "
        "settings) for intervals and the report instead of cross-validating again",
    )


def run(args) -> int:
    """Train on ``--data`` (with its catalog) into ``--out``; print the one-line summary."""
    from .. import train
    from ..training._folders import training_data

    if "profet" in args.methods:
        need_dnn("profet train")
    folders = args.data or [DEFAULT_DATA]
    dataset, catalog = training_data(folders, args.out, args.catalog, args.validation)
    start = time.monotonic()
    out = train(
        dataset,
        catalog,
        args.out,
        methods=args.methods,
        threshold=args.threshold,
        intervals=not args.no_intervals,
        method_params=method_params(args.dnn_epochs, args.trees),
        progress=Progress(),
        interval_methods=args.methods if args.intervals_all else None,
        validation=args.validation,
    )
    print(f"trained {len(dataset.instances)} instances in {time.monotonic() - start:.0f}s -> {out}")
    return 0
