"""``profet profile`` and ``profet collect``: :func:`add_parser` registers both, :func:`run` runs
them (argparse only here; TensorFlow is imported by the handlers)."""

from __future__ import annotations

from pathlib import Path

from ..cli._argtypes import float_range, int_range
from ..cli._common import passed, require_extra, warn
from ._check import MAX_CLASSES, MAX_LATENCY_STEPS, MAX_PRICE, MAX_REPEATS, OPTIMIZERS

#: ``collect``'s options, given as the flags of the same names.
_COLLECT_OPTIONS = (
    "models input_sizes batch_sizes repeats quick steps_per_epoch latency_steps timeout "
    "retry_failed model_kind optimizer"
).split()


def run(args) -> int:
    """Run ``profet profile`` or ``profet collect``."""
    if args.command == "profile":
        return _profile_torch(args) if args.torch else _profile(args)
    return _collect(args)


#: ``profet profile`` options of a Keras model only.
_KERAS_ONLY = (
    ("model", "MODEL"),
    ("batch_size", "--batch-size"),
    ("input_size", "--input-size"),
    ("classes", "--classes"),
    ("steps_per_epoch", "--steps-per-epoch"),
    ("model_kind", "--model-kind"),
    ("vocab_size", "--vocab-size"),
    ("optimizer", "--optimizer"),
)
#: ... and of a torch model only (their defaults: not given).
_TORCH_ONLY = (("amp", "--amp"), ("channels_last", "--channels-last"), ("steps", "--steps"))


def _profile_torch(args) -> int:
    """``profet profile --torch MODULE:FACTORY``: the user's PyTorch training step."""
    from .._messages import printable
    from ..errors import ProfetValueError
    from ._collect import check_out_dir
    from ._torch import DEFAULT_STEPS, check_torch_out, load_factory, profile_torch, require_torch

    given = [flag for dest, flag in _KERAS_ONLY if getattr(args, dest)]
    if given:
        raise ProfetValueError(
            f"--torch profiles the factory's own model and batch; leave out {', '.join(given)}"
        )
    out = Path(args.out)
    if out.suffix != ".json":
        raise ProfetValueError(f"--out {str(out)!r}: give a .json file for the profile")
    check_torch_out(out.parent, out.stem)  # before the run: a refused --out must not cost a run
    check_out_dir(out.resolve().parent)
    require_torch()
    model, loss_fn, optimizer, batch = load_factory(args.torch)
    done = profile_torch(
        model, loss_fn, optimizer, batch,
        steps=args.steps or DEFAULT_STEPS, latency_steps=args.latency_steps, amp=args.amp,
        channels_last=args.channels_last, out_dir=out.parent, name=out.stem,
        instance=args.instance,
    )  # fmt: skip
    p = done.profile
    device = sum(v for k, v in p.ops if k.startswith("Device_") and k != "Device_IDLE")
    text = (
        f"profile: {done.profile_path} ({len(p.ops)} ops, GPU {device / 1e3:.1f} ms over "
        f"{p.steps} steps on {p.gpu_name or done.device}), trace: {done.trace_path}, metadata: "
        f"{done.meta_path}; batch latency {done.batch_latency_s * 1e3:.2f} ms unprofiled "
        f"({done.profiled_latency_s * 1e3:.2f} ms under the profiler)"
    )
    print(printable(text))
    for note in p.notes:
        print(printable(f"note: {note}"))
    return 0


def _profile(args) -> int:
    from ._check import check_capture_args, predict_suggestion
    from ._collect import check_out_dir
    from ._load import kind_hint
    from ._profile import (
        PROFILE_OPTIONS,
        check_profile_out,
        profile_model,
        write_profile,
    )

    _require_keras_args(args)
    require_extra("capture", "profet profile", "a Keras model; --torch profiles a PyTorch one")

    # what the capture cannot run is refused in the first second, before TensorFlow starts
    # (a .keras file's kind is known once it loads: profile_model checks it then)
    kind = args.model_kind or kind_hint(args.model)
    if kind:
        check_capture_args(args.batch_size, args.input_size, args.classes,
                           args.steps_per_epoch, args.latency_steps, kind, args.vocab_size)  # fmt: skip
    out = Path(args.out)
    check_profile_out(out, args.model)  # before the run: a refused --out must not cost a run
    check_out_dir(out.resolve().parent)
    options = passed(args, PROFILE_OPTIONS)
    profile, meta = profile_model(args.model, args.batch_size, args.input_size, **options)
    path, meta_path = write_profile(profile, meta, out, args.model)
    device = sum(v for k, v in profile.iloc[0].items() if k.startswith("Device_"))
    text = f", text model, {meta.seq_len} tokens" if meta.model_kind == "text" else ""
    print(
        f"profile: {path} ({profile.shape[1]} ops, device {device / 1e3:.1f} ms over "
        f"{meta.steps_traced} steps{text}), metadata: {meta_path}; batch latency "
        f"{meta.batch_latency_s * 1e3:.2f} ms"
    )
    suggestion = predict_suggestion(profile, path, args.instance, meta.batch_latency_s)
    if device:
        print(suggestion)
    else:  # a command that exits 2 is no suggestion: say why there is none
        warn(suggestion)
    return 0


def _require_keras_args(args) -> None:
    """What argparse required before ``--torch`` existed: MODEL, --batch-size, --input-size (in
    argparse's words); and no option of a torch model."""
    from ..errors import ProfetValueError

    missing = [flag for dest, flag in _KERAS_ONLY[:3] if getattr(args, dest) is None]
    if missing:
        raise ProfetValueError(
            f"the following arguments are required: {', '.join(missing)} (or --torch "
            "MODULE:FACTORY for a PyTorch model)"
        )
    given = [flag for dest, flag in _TORCH_ONLY if getattr(args, dest)]
    if given:
        raise ProfetValueError(f"{', '.join(given)} go with --torch (a PyTorch model)")


def _collect(args) -> int:
    from ._collect import collect, write_catalog_line

    require_extra("capture", "profet collect")

    if (args.gpu is None) != (args.usd_per_hour is None):
        from ..errors import ProfetValueError

        raise ProfetValueError("--gpu and --usd-per-hour go together (the catalog line)")
    if args.gpu is not None:
        from ._check import check_catalog_file

        check_catalog_file(args.out)  # a malformed one is refused now, not after the run
    summary = collect(args.instance, args.out, **passed(args, _COLLECT_OPTIONS))
    if args.gpu is not None:
        write_catalog_line(args.out, args.instance, args.gpu, args.usd_per_hour)
    print(
        f"collected {summary.ok} workloads, {summary.failed} failed (see {args.out}/status.csv), "
        f"{summary.skipped} already done, in {summary.seconds:.0f}s -> {args.out}"
    )
    return 0


def add_parser(subparsers) -> None:
    """Register ``profile`` and ``collect`` on the ``profet`` sub-command parsers."""
    p = subparsers.add_parser(
        "profile", help="profile a Keras model in PROFET's convention, or a PyTorch training step"
    )
    p.add_argument(
        "model",
        nargs="?",
        help=".keras file, .py file with build_model(input_shape, classes), or zoo name (CNNs "
        "and the text models Text*)",
    )
    p.add_argument(
        "--batch-size", type=int, help="images (sequences) per step (required for a Keras model)"
    )
    p.add_argument(
        "--input-size",
        type=int,
        help="square input, px; for a text model the sequence length, tokens (required for a "
        "Keras model)",
    )
    p.add_argument(
        "--classes", type=int_range(2, MAX_CLASSES), help="label classes (default: the model's)"
    )
    p.add_argument("--steps-per-epoch", type=int, help="default: original data size / batch")
    p.add_argument("--latency-steps", type=int, default=50, help="timed steps (default 50)")
    p.add_argument("--instance", help="instance name for the metadata")
    p.add_argument("--out", default="profile.json", help="profile JSON (default profile.json)")
    p.add_argument(
        "--model-kind",
        choices=_KINDS,
        help="cnn (input (px, px, 3)) or text (integer token sequences (tokens,)); default: a "
        "zoo name's, cnn for a .py file, a .keras file's input",
    )
    p.add_argument(
        "--vocab-size",
        type=int_range(2, 1_000_000),
        help="a text model's token range, words (default: its smallest embedding; the text "
        "zoo's 10,000)",
    )
    p.add_argument("--optimizer", choices=_OPTIMIZERS, help=_OPTIMIZER_HELP)
    t = p.add_argument_group("a PyTorch model (the torch extra: pip install -e '.[torch]')")
    t.add_argument(
        "--torch",
        metavar="MODULE:FACTORY",
        help="profile FACTORY() of MODULE (a module name or a .py file), which returns (model, "
        "loss_fn, optimizer, batch); writes the profile, <stem>.pt.trace.json.gz and "
        "<stem>.meta.json",
    )
    t.add_argument("--amp", choices=["fp16", "bf16"], help="autocast dtype (fp16: GradScaler too)")
    t.add_argument("--channels-last", action="store_true", help="model and inputs channels_last")
    t.add_argument(
        "--steps", type=int_range(1, 100), help="profiled steps counted (default 5; +1 warm-up)"
    )

    c = subparsers.add_parser("collect", help="run the benchmark zoo here: add an instance as data")
    c.add_argument("--instance", required=True, help="this machine's instance type")
    c.add_argument("--out", required=True, help="dataset folder to create or extend")
    c.add_argument(
        "--models",
        nargs="+",
        help="zoo names, 'cnn' or 'text' (every zoo model of that kind), or .py/.keras files "
        "(default: the CNN zoo)",
    )
    c.add_argument(
        "--input-sizes",
        nargs="+",
        type=int,
        help="px of a CNN, sequence lengths (tokens) of a text model (default per kind)",
    )
    c.add_argument("--model-kind", choices=_KINDS, help="kind of the .py model files (default cnn)")
    c.add_argument("--optimizer", choices=_OPTIMIZERS, help=_OPTIMIZER_HELP)
    c.add_argument("--batch-sizes", nargs="+", type=int)
    c.add_argument(
        "--repeats",
        type=int_range(1, MAX_REPEATS),
        default=1,
        help="repetitions exp01.. (default 1)",
    )
    c.add_argument("--quick", action="store_true", help="small subset for a first calibration")
    c.add_argument("--steps-per-epoch", type=int)
    c.add_argument("--latency-steps", type=int_range(1, MAX_LATENCY_STEPS), default=50)
    c.add_argument(
        "--timeout",
        type=float_range(0.0, low_open=True),
        default=3600,
        help="seconds per workload",
    )
    c.add_argument("--retry-failed", action="store_true", help="run failed workloads again")
    c.add_argument(
        "--gpu", type=gpu_name, help="GPU name for the catalog line (with --usd-per-hour)"
    )
    c.add_argument(
        "--usd-per-hour",
        type=float_range(0.0, MAX_PRICE),
        help=f"on-demand price for the catalog line (0..{MAX_PRICE:,g})",
    )


_KINDS = ("cnn", "text")
_OPTIMIZERS = tuple(OPTIMIZERS)
_OPTIMIZER_HELP = (
    "legacy Keras optimizer (default sgd, the convention; adadelta as PROFET's authors' text "
    "rows; another is recorded as a difference from the convention)"
)


def gpu_name(text: str) -> str:
    """An argparse type: a GPU name for the catalog line, 1-64 printable characters."""
    import argparse

    name = text.strip()
    if not name or len(name) > 64 or not name.isprintable():
        raise argparse.ArgumentTypeError(
            f"{text[:40]!r} is not allowed; a GPU name is 1-64 printable characters"
        )
    return name
