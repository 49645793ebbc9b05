"""``profet scale``: latency at other batch or input sizes, from one latency (the learned curve)
or from latencies measured at two or three sizes."""

from __future__ import annotations

import math

from ._argtypes import measured, number, size_latency
from ._common import ARTIFACTS_HELP, note, warn

#: The flags of one point, by their ``args`` names.
_ONE_POINT = ("latency_ms", "size_from", "other_size", "target")


def add_parser(subparsers) -> None:
    """Register ``scale`` on the ``profet`` subcommand parsers."""
    s = subparsers.add_parser(
        "scale",
        help="latency at other batch or input sizes, from one latency (learned curve) or from "
        "latencies at two or three sizes",
    )
    s.add_argument(
        "--target",
        help="instance the latency is for: required from one point (the curve's shape depends "
        "on it); optional from two (scaling is then linear in the work on every instance)",
    )
    s.add_argument(
        "--by",
        choices=["batch", "input"],
        required=True,
        help="the size that changes: batch (images per step) or input (image side, px); the "
        "other stays as measured",
    )
    s.add_argument("--size", type=number, required=True, help="size to predict")
    one = s.add_argument_group(
        "from one point: a latency measured (or predicted by `profet predict`) at one size"
    )
    one.add_argument("--latency-ms", type=measured, help="the latency (ms) at --size-from")
    one.add_argument(
        "--size-from",
        type=number,
        help="its batch size (images) or input side (px) (default: the profile's, if it says)",
    )
    one.add_argument(
        "--other-size",
        type=number,
        help="the size held fixed: input side (px) when scaling the batch, batch size (images) "
        "when scaling the input (default: the profile's, if it says)",
    )
    one.add_argument(
        "--profile", help="anchor profile taken at --size-from (sharpens the curve's shape)"
    )
    one.add_argument("--row", type=int, default=0, help="row of a multi-profile file (from 0)")
    one.add_argument("--steps", type=int, help="training steps the profile covers (default 2)")
    two = s.add_argument_group("from two or three points: latencies measured at those sizes")
    two.add_argument("--latency-min-ms", type=measured, help="latency at the smaller size (ms)")
    two.add_argument("--latency-max-ms", type=measured, help="latency at the larger size (ms)")
    two.add_argument(
        "--size-min", type=number, help="size of --latency-min-ms (default: 16 batch / 32 px)"
    )
    two.add_argument("--size-max", type=number, help="size of --latency-max-ms (default: 256)")
    two.add_argument(
        "--point",
        type=size_latency,
        action="append",
        metavar="SIZE=MS",
        help="another measured point between the two (repeatable), e.g. --point 64=41.5",
    )
    s.add_argument("--artifacts", help=ARTIFACTS_HELP)


def run(args) -> int:
    """Scale from one point or from two or three; print the latency at ``--size``."""
    from .. import ProfetValueError

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
    from .. import ProfetValueError, load_artifacts

    profile, sizes = _one_profile(args) if args.profile else (None, {})
    # A flag given wins over the profile's own size.
    point = {
        n: getattr(args, n) if getattr(args, n) is not None else sizes.get(n) for n in _ONE_POINT
    }
    missing = [f"--{n.replace('_', '-')}" for n in _ONE_POINT if point[n] is None]
    if missing:
        raise ProfetValueError(f"scaling from one point needs {', '.join(missing)} too")
    result = load_artifacts(args.artifacts).scale_from_point(
        point["target"],
        args.by,
        point["latency_ms"],
        point["size_from"],
        args.size,
        point["other_size"],
        profile,
    )
    for text in result.warnings:
        warn(text)
    for text in result.notes:  # what the curve rests on: notes, not warnings
        note(text)
    unit = "images" if args.by == "batch" else "px"
    row = result.table().iloc[0]
    interval = (
        f"{result.interval_level:.0%} interval {row['low_ms']:.3f}..{row['high_ms']:.3f} ms"
        if math.isfinite(row["low_ms"])
        else "no interval (not calibrated)"
    )
    print(
        f"{row['latency_ms']:.3f} ms per training step at {args.by} size {args.size:g} {unit} "
        f"on {point['target']} ({interval}; from {point['latency_ms']:g} ms at "
        f"{point['size_from']:g} {unit}, curve shaped by "
        f"{'the anchor profile' if result.basis == 'profile' else 'the latency alone'})"
    )
    return 0


def _one_profile(args):
    """The ``--row`` of ``--profile`` (its op times) and the sizes its ``batch_size`` and
    ``input_size`` columns say, as ``{"size_from": ..., "other_size": ...}``."""
    from .. import ProfetValueError, read_profile

    table = read_profile(args.profile, steps=args.steps)
    if not 0 <= args.row < len(table):
        raise ProfetValueError(
            f"--row {args.row} is not in the profile file; it has rows 0..{len(table) - 1}"
        )
    row = table.iloc[[args.row]]
    size_col, other_col = ("batch_size", "input_size")[:: 1 if args.by == "batch" else -1]
    sizes = {
        name: float(row[col].iloc[0])
        for name, col in (("size_from", size_col), ("other_size", other_col))
        if col in row and row[col].notna().all()
    }
    ops = row.drop(
        columns=["batch_latency_s", "batch_size", "input_size", "instance"], errors="ignore"
    )
    return ops, sizes


def _scale_two_points(args) -> int:
    from .. import ProfetValueError, load_artifacts

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
    for warning in predictor.scale_warnings(args.by, points, args.target):
        warn(warning)
    for text in predictor.scale_notes(args.by, args.target):
        note(text)
    unit = "images" if args.by == "batch" else "px"
    on = args.target or "any instance (the curve is the same on every one)"
    print(
        f"{float(value):.3f} ms per training step at {args.by} size {args.size:g} {unit} on "
        f"{on} ({predictor.scale_interval_note(args.target, args.by)})"
    )
    return 0
