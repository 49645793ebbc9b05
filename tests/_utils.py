"""Helpers shared by the tests (imported as ``tests._utils``): the repository root, the real
data in ../shared, a small synthetic PROFET dataset made by the tests themselves, and the CLI run
in process."""

from __future__ import annotations

import io
import os
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("PROFET_DATA", ROOT.parent / "shared" / "data" / "profet"))
SHARED_CATALOG = SHARED.parent.parent / "instances.csv"
requires_shared = pytest.mark.skipif(
    not (SHARED / "profiles.parquet").is_file(),
    reason=f"real PROFET data not found at {SHARED} (set PROFET_DATA; CI has ../shared)",
)

# Per-instance speed of each op family: the target/anchor ratio depends on the op mix, which is
# what the models have to learn.
SPEED = {
    "gpu-a": {"conv": 1.0, "mem": 1.0},
    "gpu-b": {"conv": 0.4, "mem": 0.8},
    "gpu-c": {"conv": 1.5, "mem": 1.3},
}
OPS = {
    "Device_Conv2D": "conv",
    "Device_Conv2DBackpropFilter": "conv",
    "Device_Conv2DBackpropInput": "conv",
    "Device_MatMul": "conv",
    "Device_Relu": "mem",
    "Device_ReluGrad": "mem",
    "Device_MaxPool": "mem",
    "Device_IDLE": "mem",
    "Host_IDLE": "host",
    "Host_Dataset": "host",
}


def bench_module(relpath: str):
    """A ``bench/`` script or helper (``studies/_variants.py``) imported as a module, under its
    file's name (as the scripts beside it import it), once per process."""
    import importlib.util
    import sys

    path = ROOT / "bench" / relpath
    if path.stem in sys.modules:
        return sys.modules[path.stem]
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = sys.modules[path.stem] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_synthetic(
    n_arch: int = 5, n_exp: int = 3, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Profiles and latencies in the shared schema for 3 fake instances."""
    rng = np.random.default_rng(seed)
    prof_rows, lat_rows = [], []
    for a in range(n_arch):
        conv_share = 0.2 + 0.6 * a / max(n_arch - 1, 1)
        weights = {op: rng.uniform(0.5, 1.5) for op in OPS}
        for input_size in (32, 64, 128):
            for batch in (16, 32, 64):
                work = batch * (input_size / 32) ** 2 * (1 + a) * 100.0
                for e in range(n_exp):
                    for inst, speed in SPEED.items():
                        noise = rng.normal(1, 0.01)
                        ops = {}
                        for op, fam in OPS.items():
                            share = conv_share if fam == "conv" else (1 - conv_share)
                            base = work * share * weights[op] / 4
                            ops[op] = (
                                base * speed.get(fam, 1.0) * noise
                                if fam != "host"
                                else 50.0 * weights[op]
                            )
                        device = sum(v for k, v in ops.items() if k.startswith("Device_"))
                        key = {
                            "exp": f"exp{e:02d}",
                            "instance": inst,
                            "model": f"Net{a}",
                            "input_size": input_size,
                            "batch_size": batch,
                        }
                        prof_rows.append({**key, **ops})
                        lat_rows.append(
                            {
                                **key,
                                "batch_latency_s": (device + 500) / 1e6,
                                "epoch_latency_s": (device + 500) / 1e6 * 100,
                            }
                        )
    return pd.DataFrame(prof_rows), pd.DataFrame(lat_rows)


def synthetic_catalog() -> pd.DataFrame:
    return pd.DataFrame(
        {"instance": list(SPEED), "gpu": ["GA", "GB", "GC"], "usd_per_hour": [1.0, 2.0, 0.5]}
    )


def run(*argv) -> tuple[int, str, str]:
    """``profet ARGV`` in process: (exit code, stdout, stderr); arguments may be paths or numbers."""
    from profet_core.cli._main import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(map(str, argv)))
    return code, out.getvalue(), err.getvalue()
