"""The XLA-off counterparts of Lambda's XLA system folders, as ``published.csv`` rows.

Round 4's D1 (docs/amp_decision_rule.md): for each system folder that Lambda's
``tools/log2csv.py`` feeds into its published tables with XLA on, the folder of the same
repository and commit named without ``_XLA`` (same server, GPU, NVLink, trt tag, TF version).
Each of its training runs that the XLA folder's table rows have becomes one row, copied from the
run log: ``total images/sec`` rounded as Lambda's tables round it, the per-GPU batch from the
run's folder name (checked against the log's ``per device`` line), TF version from the log. A log
with any of the XLA markers the audit used is refused (the row would not be XLA off).

Needs a mirror of the repository (the ``fetch`` tool: ``github:LambdaColdStorage/lambda-tensorflow-benchmark``).
Prints the rows as CSV (with --append FILE, appends them to FILE, e.g.
profet_core/data/published.csv, refusing rows it already has).

    python profet_core/data/build/lambda_xla_off.py --git-dir /work/.mirror/LambdaColdStorage+lambda-tensorflow-benchmark/repo
"""

from __future__ import annotations

import re
import subprocess
import sys

from _rows import git_show, main_for

REPO = "LambdaColdStorage/lambda-tensorflow-benchmark"
COMMIT = "e086e0e7d88a19991642d0774793693d4b7cbe46"
#: XLA folder -> its XLA-off counterpart (names differ only by ``_XLA``; tools/log2csv.py:30-34).
COUNTERPARTS = {
    "Gold_6230-GeForce_RTX_2080_Ti_XLA_trt_TF1_15": "Gold_6230-GeForce_RTX_2080_Ti_trt_TF1_15",
    "Gold_6230-GeForce_RTX_2080_Ti_NVLink_XLA_trt_TF1_15": (
        "Gold_6230-GeForce_RTX_2080_Ti_NVLink_trt_TF1_15"
    ),
    "Gold_6230-Quadro_RTX_8000_XLA_trt_TF1_15": "Gold_6230-Quadro_RTX_8000_trt_TF1_15",
    "Gold_6230-Quadro_RTX_8000_NVLink_XLA_trt_TF1_15": "Gold_6230-Quadro_RTX_8000_NVLink_trt_TF1_15",
}
#: What the audit (docs/published_audit.md) read as XLA on in a log.
XLA_MARKERS = (
    "Compiled cluster using XLA",
    "compiler/xla/service/gpu",
    "mark_for_compilation_pass",
)
PRECISION = {"fp16": "AMP", "fp32": "FP32"}


def runs(git_dir: str, folder: str) -> list[str]:
    out = subprocess.run(
        [
            "git",
            "--git-dir",
            git_dir,
            "ls-tree",
            "-r",
            "--name-only",
            COMMIT,
            f"logs/{folder}.logs",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    pat = re.compile(r"/syn-replicated-fp(16|32)-\dgpus/[a-z0-9]+-\d+/throughput/1$")
    return sorted(p for p in out if pat.search(p))


def read_run(git_dir: str, path: str) -> dict:
    """The numbers of one run log (refused if it shows XLA or lacks its throughput line)."""
    text = git_show(git_dir, COMMIT, path)
    if any(m in text for m in XLA_MARKERS):
        raise SystemExit(f"{path}: XLA markers in an XLA-off folder")
    lines = text.splitlines()
    hits = [i for i, s in enumerate(lines) if s.startswith("total images/sec:")]
    tf = re.search(r"^TensorFlow:\s+(\S+)", text, re.M)
    per_device = re.search(r"^(\d+) per device", text, re.M)
    cuda = re.search(r"libcudart\.so\.(\d+\.\d+)", text)
    cudnn = re.search(r"libcudnn\.so\.(\d+)", text)
    if len(hits) != 1 or not (tf and per_device and cuda and cudnn):
        raise SystemExit(f"{path}: not one complete run log")
    m = re.search(r"fp(16|32)-(\d)gpus/([a-z0-9]+)-(\d+)/", path)
    if int(per_device.group(1)) != int(m.group(4)):
        raise SystemExit(f"{path}: folder batch {m.group(4)} vs log {per_device.group(1)}")
    value = float(lines[hits[0]].split(":")[1])
    return {
        "line": hits[0] + 1,
        "images_per_s": int(value + 0.5),  # Lambda's tables: the log's value rounded half up
        "tf": tf.group(1),
        "cuda": cuda.group(1),
        "cudnn": cudnn.group(1),
        "precision": PRECISION["fp" + m.group(1)],
        "gpu_count": int(m.group(2)),
        "model": m.group(3),
        "batch": int(m.group(4)),
    }


def rows(git_dir: str, table: list[dict]) -> list[dict]:
    """One row per run of each counterpart folder whose XLA twin row is in ``table``."""
    out = []
    for xla_folder, folder in COUNTERPARTS.items():
        twins = {
            (r["precision"], int(r["gpu_count"]), r["model"]): r
            for r in table
            if r["source"].startswith(REPO) and f"logs/{xla_folder}.logs/" in r["notes"]
        }
        for path in runs(git_dir, folder):
            run = read_run(git_dir, path)
            twin = twins.get((run["precision"], run["gpu_count"], run["model"]))
            if twin is None:  # a run the tables never had with XLA on (none expected)
                print(f"left out (no XLA twin in the table): {path}", file=sys.stderr)
                continue
            row = dict(twin)
            row.update(
                source=f"{REPO}@{COMMIT}:{path}:{run['line']}",
                framework_version=(
                    f"tf_cnn_benchmarks, TF {run['tf']}, CUDA {run['cuda']}, cuDNN {run['cudnn']}"
                    " (run log)"
                ),
                xla="off",
                batch_size=str(run["batch"]),
                images_per_s=str(run["images_per_s"]),
                notes=(
                    "XLA-off counterpart of the table's run (round 4 D1, docs/amp_decision_rule.md):"
                    " not in Lambda's published tables; the run log's total images/sec, batch per"
                    " GPU from the run's folder; synthetic data; replicated variable update"
                    + (
                        "; no data CNN matches: the named profile stands in"
                        if twin["profile_proxy"]
                        else ""
                    )
                    + f"; run log {path}"
                ),
            )
            out.append(row)
    return out


def main(argv=None) -> None:
    main_for(rows, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
