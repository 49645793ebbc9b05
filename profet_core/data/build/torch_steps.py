"""Time CNN training steps of torchvision's versions of the data's CNNs on one CUDA GPU.

In-house measurements for ``profet_core/data/inhouse_torch.csv`` (README.md beside this file):
one row per (CNN, image size, batch size, precision) with the columns of
``profet_core/data/published.csv`` where they apply, plus how it was measured.

A step is forward + cross-entropy loss + backward + SGD step (lr 0.01, no momentum, as the
data's Keras runs) on synthetic random images and labels kept on the GPU; NCHW,
``cudnn.benchmark`` on, no ``torch.compile``. Precisions:

- ``FP32``: TF32 off (``torch.backends.cuda.matmul.allow_tf32`` and ``cudnn.allow_tf32`` False);
- ``TF32``: both on;
- ``AMP``: FP16 autocast with a GradScaler (TF32 on for what stays FP32);
- ``AMP BF16``: BF16 autocast, no scaler (TF32 on).

Each configuration runs warm-up steps (the first autotunes cuDNN), one timed calibration step
that sets how many steps to time (about ``--target-s`` seconds, within ``--min-steps`` and
``--max-steps``), then the timed steps, each between two CUDA events: ``ms_per_step`` is their
median. Out-of-memory and other per-configuration failures become notes (no row); so do the
configurations left when ``--budget-s`` seconds have passed.

Run from the repository root (needs torch and torchvision, nothing of profet_core)::

    python profet_core/data/build/torch_steps.py --out inhouse_torch.csv --commit <git commit>

``--device cpu`` with a tiny grid dry-runs the script without a GPU (no rows worth keeping).
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import torch
import torchvision

SCRIPT = "profet_core/data/build/torch_steps.py"
PRECISIONS = ("FP32", "TF32", "AMP", "AMP BF16")
BATCHES = (16, 32, 64, 128)
SIZES = (224, 128)
#: Classes of the synthetic labels per image size, as the data's generator (profet_core/capture/_zoo.py).
CLASSES = {128: 100, 224: 1000, 299: 1000}
HELD_OUT_NOTE = "held out: independent check (VGG16 and Inception-v3 stay out of every fit)"


@dataclass(frozen=True)
class Cnn:
    """A torchvision CNN and what it stands for in PROFET's data."""

    name: str  # torchvision builder, also the row's ``model``
    data_model: str = ""  # the data's CNN of the same architecture
    profile_proxy: str = ""  # else the data's CNN whose profile stands in (as published.csv)
    size: int | None = None  # the one image size it is measured at, else SIZES
    note: str = ""


CNNS = (
    Cnn("resnet50", "ResNet50"),
    Cnn("mobilenet_v2", "MobileNetV2"),
    Cnn("resnet18", "ResNet18"),
    Cnn("alexnet", "AlexNet"),
    Cnn("vgg11", "VGG11"),
    Cnn("vgg16", "VGG16", note=HELD_OUT_NOTE),
    Cnn("vgg19", "VGG19"),
    Cnn(
        "inception_v3",
        profile_proxy="InceptionResNetV2",
        size=299,
        note=f"{HELD_OUT_NOTE}; no auxiliary classifier (aux_logits=False)",
    ),
    Cnn("resnet152", profile_proxy="ResNet50"),
    Cnn("efficientnet_b0", profile_proxy="MobileNetV2"),
)
#: torchvision's AlexNet and VGGs pool adaptively to 6x6 / 7x7 before the classifier, so at 128
#: px their classifier sees upsampled maps (Keras's versions flatten the smaller map instead).
ADAPTIVE_NOTE = "torchvision adaptive pooling before the classifier (differs from Keras at 128 px)"
#: torch.cuda.get_device_name() -> the catalog GPU (gpu_specs.csv) and how it differs.
CATALOG = (
    (r"H100 80GB HBM3$", "NVIDIA H100 SXM5 80GB", "same variant"),
    (r"H100 PCIe", "NVIDIA H100 PCIe 80GB", "same variant"),
    (r"H100 NVL", "NVIDIA H100 NVL 94GB", "same variant"),
    (
        r"^NVIDIA H200$",
        "NVIDIA H200 SXM 141GB",
        "SXM inferred: the driver names the SXM part plainly 'NVIDIA H200'",
    ),
)
COLUMNS = (
    "source", "framework", "framework_version", "precision", "xla", "gpu_published", "catalog_gpu",
    "variant_note", "gpu_count", "model", "data_model", "profile_proxy", "batch_size",
    "image_size", "images_per_s", "notes", "ms_per_step", "ms_per_step_wall", "spread_pct",
    "n_steps", "n_warmup", "tf32", "autocast_dtype", "grad_scaler", "amp_skipped_steps",
    "channels_last", "cudnn_benchmark", "torch_compile", "optimizer", "classes", "torch_version",
    "torchvision_version", "cuda_version", "cudnn_version", "driver_version", "device_name",
    "gpu_memory_gib", "timestamp_utc",
)  # fmt: skip


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, type=Path, help="CSV to write (notes beside it)")
    p.add_argument("--commit", default="", help="git commit of this script (40 hex)")
    p.add_argument("--device", default="cuda", help="cuda, or cpu for a dry run")
    p.add_argument("--models", nargs="+", default=[c.name for c in CNNS])
    p.add_argument("--precisions", nargs="+", default=list(PRECISIONS), choices=PRECISIONS)
    p.add_argument("--batches", nargs="+", type=int, default=list(BATCHES))
    p.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    p.add_argument("--warmup", type=int, default=3, help="untimed steps before calibration")
    p.add_argument("--min-steps", type=int, default=8)
    p.add_argument("--max-steps", type=int, default=30)
    p.add_argument("--target-s", type=float, default=0.4, help="about this long timed per config")
    p.add_argument("--budget-s", type=float, default=240.0, help="start no config after this")
    return p.parse_args(argv)


def commit_of(given: str) -> str:
    """The script's git commit: the one given, else ``git rev-parse HEAD``, else 'unknown'."""
    if given:
        if not re.fullmatch(r"[0-9a-f]{40}", given):
            sys.exit(f"--commit must be 40 lower-case hex digits; got {given!r}")
        return given
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        )
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def environment(device: torch.device) -> dict:
    """Versions and the device, as written on every row."""
    env = {
        "torch_version": torch.__version__,
        "torchvision_version": torchvision.__version__,
        "cuda_version": torch.version.cuda or "",
        "cudnn_version": str(torch.backends.cudnn.version() or ""),
        "driver_version": "",
        "device_name": "cpu",
        "gpu_memory_gib": "",
    }
    if device.type == "cuda":
        prop = torch.cuda.get_device_properties(device)
        env["device_name"] = torch.cuda.get_device_name(device)
        env["gpu_memory_gib"] = f"{prop.total_memory / 2**30:.1f}"
        try:
            q = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
            env["driver_version"] = subprocess.run(
                q, capture_output=True, text=True, timeout=20, check=True
            ).stdout.split("\n")[0]
        except (OSError, subprocess.SubprocessError):
            pass
    return env


def catalog(device_name: str) -> tuple[str, str]:
    for pattern, gpu, note in CATALOG:
        if re.search(pattern, device_name):
            return gpu, note
    return "", "not in the catalog"


def set_precision(precision: str) -> None:
    tf32 = precision != "FP32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def build(cnn: Cnn, classes: int, device: torch.device) -> torch.nn.Module:
    kwargs = {"weights": None, "num_classes": classes}
    if cnn.name == "inception_v3":
        kwargs.update(aux_logits=False, init_weights=False)
    with device:  # parameters are created (and initialised) on the device
        model = getattr(torchvision.models, cnn.name)(**kwargs)
    return model.train()


class Stepper:
    """One training step of ``model`` at one precision, on fixed random inputs."""

    def __init__(self, model, batch, size, classes, precision, device):
        self.model, self.device, self.precision = model, device, precision
        gen = torch.Generator(device=device).manual_seed(batch * 1000 + size)
        self.x = torch.randn(batch, 3, size, size, device=device, generator=gen)
        self.y = torch.randint(0, classes, (batch,), device=device, generator=gen)
        self.opt = torch.optim.SGD(model.parameters(), lr=0.01)
        self.loss = torch.nn.CrossEntropyLoss()
        self.dtype = {"AMP": torch.float16, "AMP BF16": torch.bfloat16}.get(precision)
        self.scaler = torch.amp.GradScaler(device.type) if precision == "AMP" else None

    def __call__(self) -> None:
        self.opt.zero_grad(set_to_none=True)
        with torch.autocast(self.device.type, dtype=self.dtype, enabled=self.dtype is not None):
            loss = self.loss(self.model(self.x), self.y)
        if self.scaler is None:
            loss.backward()
            self.opt.step()
        else:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()

    def scale(self) -> float:
        return float(self.scaler.get_scale()) if self.scaler is not None else 1.0


def sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_steps(step: Stepper, args, device) -> dict:
    """Warm up, calibrate, time; per-step milliseconds (median), wall mean and spread."""
    for _ in range(args.warmup):
        step()
    sync(device)
    t0 = time.perf_counter()
    step()
    sync(device)
    one = time.perf_counter() - t0
    n = max(args.min_steps, min(args.max_steps, math.ceil(args.target_s / max(one, 1e-6))))
    scale0 = step.scale()
    if device.type == "cuda":
        ev = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(n)
        ]
    t0 = time.perf_counter()
    per = []
    for i in range(n):
        if device.type == "cuda":
            ev[i][0].record()
            step()
            ev[i][1].record()
        else:
            s = time.perf_counter()
            step()
            per.append((time.perf_counter() - s) * 1e3)
    sync(device)
    wall = (time.perf_counter() - t0) * 1e3 / n
    if device.type == "cuda":
        per = [a.elapsed_time(b) for a, b in ev]
    med = statistics.median(per)
    q = statistics.quantiles(per, n=10) if len(per) >= 2 else [med] * 9
    skipped = round(math.log2(scale0 / step.scale())) if step.scale() > 0 else -1
    return {
        "ms_per_step": med,
        "ms_per_step_wall": wall,
        "spread_pct": (q[-1] - q[0]) / med * 100,
        "n_steps": n,
        "n_warmup": args.warmup + 1,
        "amp_skipped_steps": skipped,
    }


def row(cnn, size, batch, precision, classes, timing, env, base) -> dict:
    notes = [cnn.note] if cnn.note else []
    if size == 128 and cnn.name.startswith(("vgg", "alexnet")):
        notes.append(ADAPTIVE_NOTE)
    if timing["amp_skipped_steps"]:
        notes.append(f"GradScaler skipped {timing['amp_skipped_steps']} of the timed steps")
    r = dict(base)
    r.update(env)
    r.update(
        precision=precision,
        model=cnn.name,
        data_model=cnn.data_model,
        profile_proxy=cnn.profile_proxy,
        batch_size=batch,
        image_size=size,
        images_per_s=f"{batch / (timing['ms_per_step'] / 1e3):.2f}",
        notes="; ".join(notes),
        ms_per_step=f"{timing['ms_per_step']:.4f}",
        ms_per_step_wall=f"{timing['ms_per_step_wall']:.4f}",
        spread_pct=f"{timing['spread_pct']:.1f}",
        n_steps=timing["n_steps"],
        n_warmup=timing["n_warmup"],
        tf32="off" if precision == "FP32" else "on",
        autocast_dtype={"AMP": "float16", "AMP BF16": "bfloat16"}.get(precision, "none"),
        grad_scaler="on" if precision == "AMP" else "off",
        amp_skipped_steps=timing["amp_skipped_steps"],
        classes=classes,
        timestamp_utc=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    return r


def configs(args):
    """(cnn, size) pairs in run order: every CNN at 224 px (299 for Inception-v3) first."""
    chosen = [c for c in CNNS if c.name in args.models]
    unknown = set(args.models) - {c.name for c in CNNS}
    if unknown:
        sys.exit(f"unknown --models {sorted(unknown)}; known: {[c.name for c in CNNS]}")
    for size in args.sizes:
        for cnn in chosen:
            if cnn.size is None:
                yield cnn, size
            elif size == max(args.sizes):
                yield cnn, cnn.size


def run(args) -> tuple[list[dict], list[str], dict]:
    start = time.perf_counter()
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True
    env = environment(device)
    gpu, variant = catalog(env["device_name"])
    base = {
        "source": f"in-house@{commit_of(args.commit)}:{SCRIPT}",
        "framework": "PyTorch",
        "framework_version": f"torch {torch.__version__}, torchvision {torchvision.__version__}",
        "xla": "off",
        "gpu_published": env["device_name"],
        "catalog_gpu": gpu,
        "variant_note": variant,
        "gpu_count": 1,
        "channels_last": "off",
        "cudnn_benchmark": "on",
        "torch_compile": "off",
        "optimizer": "SGD lr=0.01 momentum=0",
    }
    rows, notes = [], []
    for cnn, size in configs(args):
        classes = CLASSES.get(size, 1000)
        model = None
        for precision in args.precisions:
            for batch in args.batches:
                key = f"{cnn.name} {size}px batch {batch} {precision}"
                if time.perf_counter() - start > args.budget_s:
                    notes.append(f"{key}: not run (budget of {args.budget_s:.0f} s spent)")
                    continue
                try:
                    if model is None:
                        model = build(cnn, classes, device)
                    set_precision(precision)
                    step = Stepper(model, batch, size, classes, precision, device)
                    timing = time_steps(step, args, device)
                    del step
                except torch.OutOfMemoryError:
                    notes.append(f"{key}: out of memory, no row")
                    timing = None
                except RuntimeError as exc:  # one configuration failing must not end the run
                    notes.append(f"{key}: failed, no row: {str(exc).splitlines()[0][:200]}")
                    timing = None
                if device.type == "cuda":
                    torch.cuda.empty_cache()
                if timing is not None:
                    rows.append(row(cnn, size, batch, precision, classes, timing, env, base))
                    print(f"{key}: {rows[-1]['images_per_s']} images/s", flush=True)
        del model
    env["elapsed_s"] = f"{time.perf_counter() - start:.1f}"
    return rows, notes, env


def summary(rows: list[dict], precisions) -> str:
    """images/s per (model, size, batch) row and precision column."""
    table = {}
    for r in rows:
        key = (r["model"], int(r["image_size"]), int(r["batch_size"]))
        table.setdefault(key, {})[r["precision"]] = float(r["images_per_s"])
    head = f"{'model':<16}{'px':>5}{'batch':>6}" + "".join(f"{p:>10}" for p in precisions)
    lines = [head + "   (images/s)"]
    for (model, size, batch), v in sorted(table.items()):
        cells = "".join(f"{v[p]:>10.1f}" if p in v else f"{'-':>10}" for p in precisions)
        lines.append(f"{model:<16}{size:>5}{batch:>6}{cells}")
    return "\n".join(lines)


def main(argv=None) -> int:
    args = parse_args(argv)
    rows, notes, env = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    notes_path = args.out.with_name(args.out.stem + "_notes.txt")
    head = [f"{k}: {v}" for k, v in env.items()] + [f"rows: {len(rows)}"]
    notes_path.write_text("\n".join(head + notes) + "\n")
    print(summary(rows, args.precisions))
    print("\n".join(head + notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
