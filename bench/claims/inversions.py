"""Spec inversions of the shipped predictor: pairs of spec lines where a GPU with at
least the other's FP32, TF32-tensor and FP16-tensor rates and 95% of its bandwidth is predicted
more than 10% slower, over the data's CNN profiles, the four anchors, fp32/amp and 1/all GPUs.

    python bench/claims/inversions.py [--artifacts DIR] [--data ../shared/data/profet] [--per-model 2]

Prints the count per (precision, GPUs), the distinct GPU pairs with their worst ratio, and the
repro of the issue (examples/profile_g3s.json from g3s.xlarge, FP32, 1 GPU).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from profet_core import load_artifacts, read_profile  # noqa: E402
from profet_core.crossgpu.order._order import inversions  # noqa: E402

ANCHORS = ("p2.xlarge", "g3s.xlarge", "g4dn.xlarge", "p3.2xlarge")
META = ("instance", "model", "input_size", "batch_size", "batch_latency_s")


def median_profiles(data: Path) -> pd.DataFrame:
    """One profile row per (instance, CNN, image size, batch) of the data (its first
    repetition's op times) with the median measured latency of its repetitions
    (``batch_latency_s``)."""
    from profet_core.inputs._dataset import load_dataset

    ds = load_dataset(data)
    key = ["instance", "model", "input_size", "batch_size"]
    prof = ds.profiles.groupby(key).first()
    return prof.join(ds.latencies.groupby(key)["batch_latency_s"].median()).reset_index()


def data_profiles(data: Path, per_model: int) -> dict[str, pd.DataFrame]:
    """Per anchor: ``per_model`` workloads of each CNN (smallest to largest batch, spread
    evenly), one profile row each with its measured latency; {} without the data."""
    if not (data / "profiles.parquet").exists():
        return {}
    prof = median_profiles(data)
    ops = [c for c in prof if c.startswith(("Host_", "Device_"))]
    out = {}
    for anchor, grp in prof.groupby("instance"):
        rows = []
        for _, m in grp.sort_values("batch_size").groupby("model"):
            idx = sorted(
                {round(k * (len(m) - 1) / max(per_model - 1, 1)) for k in range(per_model)}
            )
            rows.append(m.iloc[idx])
        sel = pd.concat(rows, ignore_index=True)
        out[anchor] = sel[[*META, *ops]]
    return out


def all_tables(predictor, profiles: dict) -> pd.DataFrame:
    """Every (anchor, precision, GPUs) prediction table, concatenated (``key``: the anchor)."""
    parts = []
    for anchor, prof in profiles.items():
        ops = prof.drop(columns=[c for c in META if c != "batch_latency_s"], errors="ignore")
        ops = ops.drop(columns="batch_latency_s").fillna(0.0)  # ops a profile lacks: 0 us
        for precision in ("fp32", "amp"):
            for gpus in (1, "all"):
                res = predictor.predict(
                    anchor,
                    ops,
                    anchor_latency_s=prof["batch_latency_s"].to_numpy(),
                    batch_size=prof["batch_size"].to_numpy(),
                    input_size=prof["input_size"].to_numpy(),
                    precision=precision,
                    gpus=gpus,
                )
                t = res.table[["row", "target", "basis", "batch_latency_ms", "gpus"]].copy()
                t["precision"], t["key"] = precision, f"{anchor} gpus={gpus}"
                t["model"] = prof["model"].to_numpy()[t["row"].to_numpy()]
                parts.append(t)
    return pd.concat(parts, ignore_index=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--artifacts", default=None)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "profet"))
    ap.add_argument("--per-model", type=int, default=2)
    args = ap.parse_args(argv)
    predictor = load_artifacts(args.artifacts)
    specs = predictor.cross.specs_
    profiles = data_profiles(Path(args.data), args.per_model)
    if not profiles:
        print(f"no data at {args.data}: the example profile only")
    example = read_profile(str(ROOT / "examples" / "profile_g3s.json"))
    ex = example.drop(columns=["instance", "steps"], errors="ignore")
    ex = ex.assign(model="example")
    profiles.setdefault("g3s.xlarge", ex.iloc[:0])
    profiles["g3s.xlarge"] = pd.concat([ex, profiles["g3s.xlarge"]], ignore_index=True)
    tables = all_tables(predictor, profiles)
    inv = inversions(tables, specs)
    n_cases = tables.groupby(["key", "row", "precision", "gpus"]).ngroups
    print(f"profiles: {sum(len(p) for p in profiles.values())} over {len(profiles)} anchors")
    print(f"inversions (step of the dominating GPU > 1.10 x the other's): {len(inv)}")
    print(
        f"  of which both answers measured (trained pairs, the data's own): {inv['measured'].sum()}"
    )
    print(f"  spec-model inversions: {(~inv['measured']).sum()}")
    print(f"  over {n_cases} (anchor, profile, precision, GPU-count) tables")
    if len(inv):
        inv["gpus"] = inv["gpus"].astype(int)
        inv["option"] = inv["key"].str.split(" ").str[1]
        print(inv.groupby(["precision", "option", "gpus"]).size().rename("inversions").to_string())
        worst = inv.groupby(["faster_spec", "slower_spec"])["ratio"].agg(["size", "max"])
        print(f"distinct pairs: {len(worst)}")
        print(worst.sort_values("max", ascending=False).to_string(float_format="%.2f"))
    rep = tables[(tables["key"] == "g3s.xlarge gpus=1") & (tables["model"] == "example")]
    rep = rep[rep["precision"] == "fp32"].set_index("target")
    print("repro (examples/profile_g3s.json, g3s.xlarge, fp32, 1 GPU), ms:")
    for t in (
        "g4dn.xlarge",
        "g6.xlarge",
        "gpu-l40",
        "g6e.xlarge",
        "gpu-a100-pcie-40gb",
        "gpu-a100-pcie-80gb",
        "gpu-h100-pcie-80gb",
        "gpu-h100-nvl-94gb",
        "p5.48xlarge",
        "gpu-h200-sxm-141gb",
    ):
        r = rep.loc[t]
        print(f"  {t:20s} {r['batch_latency_ms']:7.2f}  {r['basis']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
