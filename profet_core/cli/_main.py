"""The ``profet`` command line: a thin layer over profet_core's public functions."""

from __future__ import annotations

import errno
import os
import sys

from ._argtypes import OneLineParser, float_range, int_range
from ._commands import (
    DEFAULT_DATA,
    _cmd_calibrate,
    _cmd_instances,
    _cmd_predict,
    _cmd_scale,
    _cmd_train,
    _cmd_validate,
    _size_latency,
)

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
    "--input-size",
    "--threshold",
    "--dnn-epochs",
    "--classes",
    "--timeout",
    "--usd-per-hour",
)


#: Op-clustering distance (a Levenshtein distance) and DNN epochs: checked at parse time.
_THRESHOLD = float_range(0.0, 1000.0)
_EPOCHS = int_range(1, 100_000)


def build_parser() -> OneLineParser:
    from ..models._methods import METHODS

    p = OneLineParser(
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
        "--threshold", type=_THRESHOLD, default=6.0, help="op-clustering distance (default 6)"
    )
    t.add_argument(
        "--methods",
        nargs="+",
        choices=list(METHODS),
        default=list(METHODS),
        help="methods to train (default all)",
    )
    t.add_argument(
        "--dnn-epochs", type=_EPOCHS, help="cap the reference DNN's epochs (faster, less accurate)"
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
    pr.add_argument("--artifacts", help="artifacts folder (default: the shipped ones)")
    pr.add_argument("--catalog", help=_CATALOG_HELP)
    pr.add_argument("--format", choices=["table", "json", "csv"], default="table")
    run = pr.add_argument_group("the workload: whole-run time and cost, will it fit")
    run.add_argument("--batch-size", type=int, help="images per step, as profiled")
    run.add_argument("--input-size", type=int, help="input image side (px), as profiled")
    run.add_argument("--dataset-images", type=int, help="training images per epoch")
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
        "scale",
        help="latency at other batch or input sizes, from one latency (learned curve) or from "
        "latencies at two or three sizes",
    )
    s.add_argument(
        "--target",
        help="instance the latency is for: required from one point (the curve's shape depends "
        "on it); optional from two (scaling is then linear in the work on every instance)",
    )
    s.add_argument("--by", choices=["batch", "input"], required=True)
    s.add_argument("--size", type=float, required=True, help="size to predict")
    one = s.add_argument_group(
        "from one point: a latency measured (or predicted by `profet predict`) at one size"
    )
    one.add_argument("--latency-ms", type=float, help="the latency (ms) at --size-from")
    one.add_argument(
        "--size-from",
        type=float,
        help="its batch size (images) or input side (px) (default: the profile's, if it says)",
    )
    one.add_argument(
        "--other-size",
        type=float,
        help="the size held fixed: input side (px) when scaling the batch, batch size (images) "
        "when scaling the input (default: the profile's, if it says)",
    )
    one.add_argument(
        "--profile", help="anchor profile taken at --size-from (sharpens the curve's shape)"
    )
    one.add_argument("--row", type=int, default=0, help="row of a multi-profile file (from 0)")
    one.add_argument("--steps", type=int, help="training steps the profile covers (default 2)")
    two = s.add_argument_group("from two or three points: latencies measured at those sizes")
    two.add_argument("--latency-min-ms", type=float, help="latency at the smaller size (ms)")
    two.add_argument("--latency-max-ms", type=float, help="latency at the larger size (ms)")
    two.add_argument(
        "--size-min", type=float, help="size of --latency-min-ms (default: 16 batch / 32 px)"
    )
    two.add_argument("--size-max", type=float, help="size of --latency-max-ms (default: 256)")
    two.add_argument(
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
    v.add_argument("--threshold", type=_THRESHOLD, default=6.0)
    v.add_argument("--dnn-epochs", type=_EPOCHS)
    v.add_argument(
        "--cross",
        action="store_true",
        help="also validate the cross-instance model: each GPU left out (leave-one-GPU-out x "
        "leave-one-architecture-out, specs only and after 1 or 3 measured CNNs)",
    )
    v.add_argument("--specs", help="GPU spec catalog CSV (default: the package's)")
    v.set_defaults(func=_cmd_validate)

    try:
        from ..doe._cli import add_doe_parser
    except ImportError:  # the experiment-design feature is optional
        pass
    else:
        add_doe_parser(sub)
    try:
        from ..capture._cli import add_capture_parsers
    except ImportError:  # the capture feature is optional
        pass
    else:
        add_capture_parsers(sub)
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


def main(argv=None) -> int:
    from ..errors import ProfetError

    argv = _join_numeric(list(sys.argv[1:] if argv is None else argv))
    args = build_parser().parse_args(argv)
    try:
        code = args.func(args)
        sys.stdout.flush()  # here, so that a closed pipe or a full disk is caught below
        return code
    except ProfetError as exc:
        print(f"profet: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("profet: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `profet ... | head`: the reader left; nothing more to say
        _drop_stdout()
        return 141
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EIO):
            raise
        _drop_stdout()
        print(f"profet: error: cannot write: {exc.strerror}", file=sys.stderr)
        return 2


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of what could not be
    written raises nothing more at exit (Python's documented recipe for SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
