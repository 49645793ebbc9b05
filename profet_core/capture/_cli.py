"""``profet profile`` and ``profet collect`` (argparse only here; TensorFlow inside handlers)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from ..cli._argtypes import float_range, int_range


def _cmd_profile(args) -> int:
    from ._collect import check_out_dir
    from ._profile import profile_model, write_profile

    out = Path(args.out)
    check_out_dir(out.resolve().parent)  # before the run: a bad folder must not cost a run
    profile, meta = profile_model(
        args.model,
        args.batch_size,
        args.input_size,
        classes=args.classes,
        steps_per_epoch=args.steps_per_epoch,
        latency_steps=args.latency_steps,
        instance=args.instance,
    )
    path, meta_path = write_profile(profile, meta, out)
    device = sum(v for k, v in profile.iloc[0].items() if k.startswith("Device_"))
    print(
        f"profile: {path} ({profile.shape[1]} ops, device {device / 1e3:.1f} ms over "
        f"{meta.steps_traced} steps), metadata: {meta_path}; batch latency "
        f"{meta.batch_latency_s * 1e3:.2f} ms"
    )
    if not device:
        print(
            "profet: warning: no GPU device ops (taken on a CPU); predictions need a GPU anchor "
            "profile",
            file=sys.stderr,
        )
    anchor = args.instance or "INSTANCE"
    print(
        f"predict with: profet predict --anchor {shlex.quote(anchor)} --profile "
        f"{shlex.quote(str(path))} --anchor-latency-ms {meta.batch_latency_s * 1e3:.3f}"
    )
    return 0


def _cmd_collect(args) -> int:
    from ._collect import collect, write_catalog_line

    if (args.gpu is None) != (args.usd_per_hour is None):
        from ..errors import ProfetValueError

        raise ProfetValueError("--gpu and --usd-per-hour go together (the catalog line)")
    summary = collect(
        args.instance,
        args.out,
        models=args.models,
        input_sizes=args.input_sizes,
        batch_sizes=args.batch_sizes,
        repeats=args.repeats,
        quick=args.quick,
        steps_per_epoch=args.steps_per_epoch,
        latency_steps=args.latency_steps,
        timeout=args.timeout,
        retry_failed=args.retry_failed,
    )
    if args.gpu is not None:
        write_catalog_line(args.out, args.instance, args.gpu, args.usd_per_hour)
    print(
        f"collected {summary.ok} workloads, {summary.failed} failed (see {args.out}/status.csv), "
        f"{summary.skipped} already done, in {summary.seconds:.0f}s -> {args.out}"
    )
    return 0


def add_capture_parsers(subparsers) -> None:
    """Register ``profile`` and ``collect`` on the ``profet`` sub-command parsers."""
    p = subparsers.add_parser("profile", help="profile a Keras model in PROFET's convention")
    p.add_argument(
        "model", help=".keras file, .py file with build_model(input_shape, classes), or zoo name"
    )
    p.add_argument("--batch-size", type=int, required=True)
    p.add_argument("--input-size", type=int, required=True, help="square input, px")
    p.add_argument(
        "--classes", type=int_range(2, 1_000_000), help="label classes (default: the model's)"
    )
    p.add_argument("--steps-per-epoch", type=int, help="default: original data size / batch")
    p.add_argument("--latency-steps", type=int, default=50, help="timed steps (default 50)")
    p.add_argument("--instance", help="instance name for the metadata")
    p.add_argument("--out", default="profile.json", help="profile JSON (default profile.json)")
    p.set_defaults(func=_cmd_profile)

    c = subparsers.add_parser("collect", help="run the benchmark zoo here: add an instance as data")
    c.add_argument("--instance", required=True, help="this machine's instance type")
    c.add_argument("--out", required=True, help="dataset folder to create or extend")
    c.add_argument("--models", nargs="+", help="zoo names or .py/.keras files (default: zoo)")
    c.add_argument("--input-sizes", nargs="+", type=int)
    c.add_argument("--batch-sizes", nargs="+", type=int)
    c.add_argument("--repeats", type=int, default=1, help="repetitions exp01.. (default 1)")
    c.add_argument("--quick", action="store_true", help="small subset for a first calibration")
    c.add_argument("--steps-per-epoch", type=int)
    c.add_argument("--latency-steps", type=int, default=50)
    c.add_argument(
        "--timeout",
        type=float_range(0.0, low_open=True),
        default=3600,
        help="seconds per workload",
    )
    c.add_argument("--retry-failed", action="store_true", help="run failed workloads again")
    c.add_argument("--gpu", help="GPU name for the catalog line (with --usd-per-hour)")
    c.add_argument(
        "--usd-per-hour", type=float_range(0.0), help="on-demand price for the catalog line"
    )
    c.set_defaults(func=_cmd_collect)
