"""Write-rule probes for bench/fuzz/fuzz.py (class ``writes``): every command that writes,
pointed at a folder or file the user owns, an input, a sidecar or temporary name a user's file
has, a subfolder it cannot read, or run twice at once.

    .venv/bin/python bench/fuzz/fuzz_writes.py [--repo PATH]

Each probe sets files up in a scratch folder, runs ``profet`` of ``--repo`` there and compares
every user file byte for byte afterwards. Outcomes: ``refused`` (exit 2, one ``profet: error:``
line), ``ok`` (exit 0, user files intact), ``garbage`` (exit 0 for a spec line that must be
refused), ``data-loss`` (a user file changed or gone, an
artifacts folder that no longer loads, a concurrent writer's update lost), ``traceback`` or
``hang`` (no answer within 300 s). Nothing under ``--repo`` is written.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

TIMEOUT = 300
MODEL = "import keras\n\ndef build_model(input_shape, classes):\n" + (
    "    return keras.Sequential([keras.Input(input_shape), keras.layers.Flatten(), "
    "keras.layers.Dense(classes, activation='softmax')])\n"
)
_SETUP = """
import sys
from pathlib import Path
from tests.core.crossgpu._utils import make_multi_gpu, train_cross
from tests._utils import make_synthetic, synthetic_catalog
tmp = Path(sys.argv[1])
prof, lat = make_multi_gpu(n_arch=3)
train_cross(prof, lat, tmp / "cross", trees=(10, 10), measured=["gpu-a", "gpu-b", "gpu-c"])
few = lambda t: t[t["model"].eq("Net0")]
(tmp / "newgpu").mkdir()
few(prof).to_parquet(tmp / "newgpu" / "profiles.parquet")
few(lat).to_parquet(tmp / "newgpu" / "latencies.parquet")
p, l = make_synthetic(n_arch=2, n_exp=2)
(tmp / "data").mkdir()
p.to_parquet(tmp / "data" / "profiles.parquet")
l.to_csv(tmp / "data" / "latencies.csv", index=False)
synthetic_catalog().to_csv(tmp / "data" / "instances.csv", index=False)
"""


def _digest(folder: Path) -> dict:
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.is_symlink():
            out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _run(repo: str, argv, cwd: Path, user: str | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "profet_core", *map(str, argv)]
    if user:
        cmd = ["setpriv", "--reuid", user, "--regid", user, "--clear-groups", *cmd]
    env = {**os.environ, "PYTHONPATH": repo, "TF_CPP_MIN_LOG_LEVEL": "3"}
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, errors="replace"
    )


#: The last stderr line of each probe's command (``--verbose`` prints it).
LAST = []


def _outcome(proc, lost: bool) -> str:
    LAST.append((proc.stderr.strip().splitlines() or [""])[-1][:200])
    if lost:
        return "data-loss"
    if "Traceback" in proc.stderr or proc.returncode not in (0, 2):
        return "traceback"
    if proc.returncode == 2:
        last = proc.stderr.strip().splitlines()[-1:] or [""]
        return "refused" if last[0].startswith("profet: error:") else "traceback"
    return "ok"


def _users(folder: Path, files: dict) -> list[Path]:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return [folder / n for n in files]


def _probe(repo, w: Path, argv, user_files: dict, *, user=None, check=None) -> str:
    """Run ``argv`` in ``w`` with ``user_files`` made first; data loss if any of them changed."""
    paths = _users(w, user_files)
    before = {p: p.read_bytes() for p in paths}
    proc = _run(repo, argv, w, user)
    lost = any(not p.is_file() or p.read_bytes() != b for p, b in before.items())
    lost = lost or bool(check and check(w))
    return _outcome(proc, lost)


def _loads(repo: str, art: Path) -> bool:
    code = f"from profet_core import load_artifacts; load_artifacts({str(art)!r})"
    env = {**os.environ, "PYTHONPATH": repo}
    return (
        subprocess.run([sys.executable, "-c", code], env=env, capture_output=True).returncode == 0
    )


def probes(repo: str, base: Path):
    """(name, callable(w) -> outcome) of every probe; ``base`` holds the shared set-up."""
    data, cross, new = base / "data", base / "cross", base / "newgpu"
    val = ["validate", "--data", data, "--methods", "hybrid", "--anchors", "gpu-a"]
    val += ["--targets", "gpu-b", "--architectures", "Net0"]
    design = ["doe", "design", "--factor", "a=1,2", "--factor", "b=x,y", "--seed", "1"]
    prof = ["profile", "model.py", "--batch-size", "4", "--input-size", "8"]
    prof += ["--latency-steps", "2", "--steps-per-epoch", "3"]
    sheet = "run,a,b,latency_ms\n1,1,x,10\n2,2,x,11\n3,1,y,12\n4,2,y,13\n"

    def art_copy(w):
        shutil.copytree(cross, w / "art")
        return w / "art"

    def add(w, inst, *extra):
        return ["add-instance", "--instance", inst, "--data", new, "--artifacts", w / "art", *extra]

    def bad_spec(w, name):
        art_copy(w)
        line = "instance,gpu,gpu_count,fp32_tflops,tensor_tflops_fp32_training,mem_bandwidth_gbs,"
        line += "gpu_memory_gb,sm_count,boost_clock_mhz,arch,release_year,vcpus,usd_per_hour,"
        line += "price_source,price_date,spec_source\n"
        (w / "specs.csv").write_text(
            line + f"{name},G,1,12,0,600,16,40,1300,GenD,2018,4,1,t,2024,t\n"
        )
        before = _digest(w / "art")
        proc = _run(repo, add(w, "gpu-d", "--specs", w / "specs.csv"), w)
        lost = _digest(w / "art") != before and not _loads(repo, w / "art")
        result = _outcome(proc, lost)
        return "garbage" if result == "ok" else result  # a line that must be refused

    def concurrent(w):
        art_copy(w)
        env = {**os.environ, "PYTHONPATH": repo}
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "profet_core", *map(str, add(w, g))],
                cwd=w,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )  # fmt: skip
            for g in ("gpu-d", "gpu-e")
        ]
        codes = [p.wait(timeout=TIMEOUT) for p in procs]
        code = f"""from profet_core import load_artifacts
c = load_artifacts({str(w / "art")!r}).cross
print(sum(c.basis(g).startswith("calibrated") for g in ("gpu-d", "gpu-e")))"""
        n = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        landed = int(n.stdout.strip() or 0)
        return "data-loss" if landed < codes.count(0) else ("ok" if landed == 2 else "refused")

    def in_artifacts(w):
        before = _digest(art_copy(w))
        proc = _run(repo, [*val, "--out", "art/validation"], w)
        return _outcome(proc, _digest(w / "art") != before or not _loads(repo, w / "art"))

    def out_is_data(w):
        shutil.copytree(data, w / "d")
        before = _digest(w / "d")
        proc = _run(repo, [*val[:1], "--data", "d", *val[3:], "--out", "d"], w)
        return _outcome(proc, _digest(w / "d") != before)

    def unreadable(w):
        art = art_copy(w)
        (art / "validation" / "theirs").mkdir()
        (art / "validation" / "theirs" / "x").write_text("root's")
        os.chmod(art / "validation" / "theirs", 0o700)
        os.chown(w, 65534, 65534)
        for p in [art, *art.rglob("*")]:
            if "theirs" not in p.parts:
                os.lchown(p, 65534, 65534)
        before = _digest(art)
        proc = _run(repo, ["train", "--data", data, "--out", art, "--methods", "hybrid",
                           "--no-intervals"], w, user="65534")  # fmt: skip
        unmarked = [p for p in w.glob(".profet-train-*") if not Path(f"{p}.owner").exists()] + [
            p for p in w.glob(".profet-train-*.old")
        ]
        lost = not (art / "validation" / "theirs" / "x").exists() or bool(unmarked)
        lost = lost or (_digest(art) != before and not _loads(repo, art))
        return _outcome(proc, lost)

    return {
        "validate-users-folder": lambda w: _probe(
            repo,
            w,
            [*val, "--out", "mine"],
            {"mine/report.md": "my report", "mine/metrics.csv": "a\n1\n"},
        ),  # fmt: skip
        "validate-out-is-data": out_is_data,
        "validate-in-artifacts": in_artifacts,
        "doe-design-over-results": lambda w: _probe(
            repo, w, [*design, "--out", "d"], {"d/run_sheet.csv": sheet}
        ),
        "doe-design-users-folder": lambda w: _probe(
            repo, w, [*design, "--out", "."], {"thesis.tex": "mine", "factors.csv": "mine"}
        ),
        "doe-analyze-out-has-input": lambda w: _probe(
            repo,
            w,
            ["doe", "analyze", "r.csv", "--response", "latency_ms", "--out", "."],
            {"r.csv": sheet, "latency_ms_anova.csv": "mine"},
        ),  # fmt: skip
        "profile-out-is-model": lambda w: _probe(
            repo, w, [*prof, "--out", "model.py"], {"model.py": MODEL}
        ),
        "profile-users-meta": lambda w: _probe(
            repo, w, [*prof, "--out", "r.json"], {"model.py": MODEL, "r.meta.json": "{}"}
        ),
        "profile-temp-names": lambda w: _probe(
            repo,
            w,
            [*prof, "--out", "keep.json"],
            {"model.py": MODEL, ".keep.json.tmp": "mine", ".keep.meta.json.tmp": "mine"},
        ),  # fmt: skip
        "collect-users-folder": lambda w: _probe(
            repo,
            w,
            [
                "collect",
                "--instance",
                "x",
                "--out",
                ".",
                "--models",
                "model.py",
                "--input-sizes",
                "8",
                "--batch-sizes",
                "4",
                "--latency-steps",
                "2",
                "--steps-per-epoch",
                "3",
            ],
            {"model.py": MODEL, "notes.txt": "mine", ".convention.json.tmp": "mine"},
        ),  # fmt: skip
        "add-instance-bad-name": lambda w: bad_spec(w, "my a100 box"),
        "add-instance-redefines-trained": lambda w: bad_spec(w, "gpu-a"),
        "add-instance-concurrent": concurrent,
        "train-unreadable-subfolder": unreadable,
    }


def run_probes(repo: str, only=None, verbose: bool = False) -> Counter:
    """Run the probes (``only``: their names) on the checkout ``repo``; print one row each and
    return the count of each outcome."""
    repo = str(Path(repo).resolve())
    counts = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)  # the unreadable-subfolder probe runs as another user
        base = Path(tmp) / "base"
        base.mkdir()
        env = {**os.environ, "PYTHONPATH": repo}
        subprocess.run([sys.executable, "-c", _SETUP, str(base)], cwd=repo, env=env, check=True)
        for name, probe in probes(repo, base).items():
            if only and name not in only:
                continue
            w = Path(tmp) / name
            w.mkdir()
            t0 = time.perf_counter()
            try:
                result = probe(w)
            except subprocess.TimeoutExpired:
                result = "hang"
            counts[result] += 1
            print(f"writes          {name:32s} {result:10s} {time.perf_counter() - t0:6.1f} s")
            if verbose and LAST:
                print("    " + LAST[-1], flush=True)
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repo", default=str(Path(__file__).resolve().parents[2]))
    ap.add_argument("--only", nargs="+", help="probe names (default all)")
    ap.add_argument("--verbose", action="store_true", help="print each command's last stderr line")
    args = ap.parse_args()
    counts = run_probes(args.repo, args.only, args.verbose)
    print("writes totals   " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(json.dumps(dict(counts)))


if __name__ == "__main__":
    main()
