"""The flags of a :class:`~profet_core.PredictRequest`, registered once for every command that
predicts (``predict``, ``sky-plan``), and the request they parse into."""

from __future__ import annotations

from ._argtypes import measured


def add_request_args(parser, *, gpus: bool = True, method: bool = True, run_steps: bool = False):
    """Register the request's flags on ``parser``: the anchor and its latency, steps, precision,
    AMP latency, params, GPUs (``gpus``), method (``method``) and the workload and run group
    (``--run-steps`` with ``run_steps``)."""
    from ..models._methods import METHODS

    parser.add_argument(
        "--anchor", help="instance the profile was taken on (default: the profile's own)"
    )
    parser.add_argument(
        "--anchor-latency-ms", type=measured, help="measured batch latency on the anchor (ms)"
    )
    if method:
        parser.add_argument(
            "--method", choices=list(METHODS), help="prediction method (default: the artifacts')"
        )
    parser.add_argument(
        "--steps",
        type=int,
        help="training steps the profile covers (default: the file's own, else 2, PROFET's "
        "convention: two consecutive steps traced); op times are rescaled to 2 steps",
    )
    parser.add_argument(
        "--precision",
        choices=["fp32", "amp"],
        default="fp32",
        help="fp32 (default, the profile's) or amp: mixed precision (FP16/BF16 tensor cores) on "
        "each target; GPUs without tensor cores keep their FP32 time",
    )
    if gpus:
        parser.add_argument(
            "--gpus",
            default="1",
            help="GPUs used data-parallel at the profile's per-GPU batch: 1 (default), N (each "
            "GPU at the cheapest offering with at least N of it; GPUs no offering rents N of are "
            "left out) or all (one row per GPU count the offerings rent); cost is the whole "
            "instance's",
        )
    parser.add_argument(
        "--anchor-amp-latency-ms",
        type=measured,
        help="measured AMP step latency on the anchor (ms); with --precision amp",
    )
    parser.add_argument(
        "--params", type=measured, help="the model's parameter count (for the all-reduce)"
    )
    _add_run_args(parser, run_steps)


def _add_run_args(parser, run_steps: bool) -> None:
    """The workload and the whole run: batch and input size, dataset, epochs (and steps)."""
    run = parser.add_argument_group(
        "the workload: whole-run time and cost, will it fit"
        + (
            " (the run's length: --dataset-images and --epochs, or --run-steps)"
            if run_steps
            else ""
        )
    )
    run.add_argument("--batch-size", type=int, help="images per step (on one GPU), as profiled")
    run.add_argument("--input-size", type=int, help="input image side (px), as profiled")
    run.add_argument("--dataset-images", type=int, help="training images per epoch")
    run.add_argument("--epochs", type=int, help="epochs of the run")
    if run_steps:
        run.add_argument(
            "--run-steps",
            type=int,
            help="the run's training steps on one GPU (N GPUs take 1/N as many, each N batches)",
        )


def request_from_args(args, profiles):
    """The :class:`~profet_core.PredictRequest` of parsed flags; the run's batch size is the
    profile's where ``--batch-size`` is not given."""
    from .. import PredictRequest, latency_seconds

    if (args.dataset_images is None) != (args.epochs is None):
        from .. import ProfetValueError

        raise ProfetValueError(
            "--dataset-images and --epochs go together: whole-run cost needs both "
            "(--batch-size: the profile's by default)"
        )
    batch = args.batch_size
    if args.dataset_images is not None and batch is None:
        batch = _profile_batch(profiles)
    return PredictRequest(
        anchor=args.anchor,
        anchor_latency_s=latency_seconds(args.anchor_latency_ms, "ms", "--anchor-latency-ms"),
        method=getattr(args, "method", None),
        steps=args.steps,
        batch_size=batch,
        input_size=args.input_size,
        precision=args.precision,
        gpus=_gpus(getattr(args, "gpus", "1")),
        anchor_amp_latency_s=latency_seconds(
            args.anchor_amp_latency_ms, "ms", "--anchor-amp-latency-ms"
        ),
        params=args.params,
        dataset_images=args.dataset_images,
        epochs=args.epochs,
        run_steps=getattr(args, "run_steps", None),
    )


def _gpus(text: str):
    """``--gpus``: ``all`` or a whole number >= 1 (the request checks the range)."""
    from .. import ProfetValueError

    if text.strip().lower() == "all":
        return "all"
    if not text.strip().isdigit() or not text.strip().isascii():  # not 1_0, +2 or ٣
        raise ProfetValueError(f"--gpus {text[:40]!r} is not allowed; use all or a whole number")
    return int(text)


def _profile_batch(profiles) -> int:
    """The batch size the profile says it was taken at (whole-run cost without --batch-size)."""
    from .. import ProfetValueError

    sizes = set()
    if "batch_size" in profiles.columns:
        sizes = set(profiles["batch_size"].dropna().tolist())
    if len(sizes) != 1:
        said = "says none" if not sizes else f"says several ({len(sizes)})"
        raise ProfetValueError(
            f"whole-run cost needs the batch size, and the profile {said}; give --batch-size"
        )
    return int(sizes.pop())
