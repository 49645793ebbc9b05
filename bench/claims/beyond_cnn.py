"""The spec family model judged where measurements exist: models beyond CNNs and PyTorch traces.

Prints three tables (Markdown):

1. **The Reuters rows** of PROFET's own notebook (``../shared/data/seed-rnn``: RNN, LSTM and
   BiLSTM profiled on g4dn.xlarge, measured on g5.xlarge): the predicted g5.xlarge step with
   its 80% interval against the measured one, and the whole step scaled by the FP32-rate and
   bandwidth ratios (the baselines the issue measured 20-75% off).
2. **PyTorch traces** (real GPU traces committed as test fixtures: ResNet-50 on a V100 and on an
   A100 (one rank of two, DDP)): the predicted step ratio target / trace GPU against the
   published PyTorch ResNet-50 throughput ratio (Lambda's tables and NVIDIA's, ``published.csv``,
   FP32/TF32 and AMP, one GPU), per GPU, with the ratio baselines. Their batches differ from the
   trace's (Lambda's AMP batch is twice its FP32 one): ratios, not steps, are compared.
3. **Other model kinds** (``published_text.csv``: Lambda's GNMT, Tacotron 2, BERT, Transformer-XL,
   NCF, WaveGlow columns): where a profile stands in (the notebook's cuDNN BiLSTM for the
   recurrent models GNMT and Tacotron 2; the V100 ResNet-50 trace for WaveGlow's convolutions),
   its predicted ratios against the V100 row; for the others no profile stands in: only the
   baselines are printed, and no number of the model's.

    .venv/bin/python bench/claims/beyond_cnn.py [--seed ../shared/data/seed-rnn] [--record]

With ``--record`` it also writes ``validation/beyond_cnn.csv`` into the shipped artifacts and
lists it in their manifest: the Model accuracy page's "Other models and PyTorch" tab reads it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from profet_core import load_artifacts, read_profile
from profet_core.crossgpu.spec._gpuref import fp32_rate, gpu_table

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "tests" / "core" / "inputs" / "data" / "torch_traces"
DATA = ROOT / "profet_core" / "data"
#: Published GPU -> the spec line predicted for it (its catalog GPU's instance).
V100 = "NVIDIA V100 SXM2 16GB"


def _md(df: pd.DataFrame) -> str:
    df = df.copy()
    for c in df.columns:
        if df[c].dtype.kind == "f":
            df[c] = df[c].map(lambda v: "" if pd.isna(v) else f"{v:.4g}")
    head = "| " + " | ".join(map(str, df.columns)) + " |"
    sep = "|" + "---|" * len(df.columns)
    return "\n".join([head, sep, *("| " + " | ".join(map(str, r)) + " |" for r in df.values)])


def _ratio_baselines(predictor, anchor: str, target: str) -> tuple[float, float]:
    """Step time target/anchor by the FP32 (or TF32 tensor) rate and by memory bandwidth."""
    specs = predictor.cross.specs_.set_index("instance")
    gpus = gpu_table(predictor.cross.specs_)
    a, t = gpus.loc[specs.at[anchor, "gpu"]], gpus.loc[specs.at[target, "gpu"]]
    rate = fp32_rate(gpus.loc[[a.name, t.name]])
    return rate[0] / rate[1], a["mem_bandwidth_gbs"] / t["mem_bandwidth_gbs"]


def reuters(predictor, seed: Path) -> pd.DataFrame:
    rows = pd.read_csv(seed / "reuters_g4dn_g5.csv")
    ops = [c for c in rows.columns if c.startswith(("Host_", "Device_"))]
    pred = predictor.predict(
        "g4dn.xlarge",
        rows[ops],
        anchor_latency_s=rows["batch_latency_s"].to_numpy(),
        targets=["g5.xlarge"],
    ).table
    fp32, bw = _ratio_baselines(predictor, "g4dn.xlarge", "g5.xlarge")
    meas = rows["g5_xlarge_batch_latency_s"].to_numpy() * 1e3
    lat = rows["batch_latency_s"].to_numpy() * 1e3
    out = pd.DataFrame(
        {
            "model": rows["model"],
            "g4dn ms": lat,
            "g5 measured ms": meas,
            "predicted ms": pred["batch_latency_ms"].to_numpy(),
            "80% low": pred["low_ms"].to_numpy(),
            "80% high": pred["high_ms"].to_numpy(),
        }
    )
    out["error %"] = 100 * (out["predicted ms"] / meas - 1)
    out["inside"] = (out["80% low"] <= meas) & (meas <= out["80% high"])
    out["FP32-ratio error %"] = 100 * (lat * fp32 / meas - 1)
    out["bandwidth-ratio error %"] = 100 * (lat * bw / meas - 1)
    return out


def _published_resnet() -> pd.DataFrame:
    pub = pd.read_csv(DATA / "published.csv")
    one = pub[(pub["framework"] == "PyTorch") & (pub["gpu_count"] == 1)]
    one = one[one["model"].isin(["resnet50", "ResNet-50 v1.5"])]
    return one.assign(precision=one["precision"].replace({"FP32": "TF32"}))


def _spec_line(predictor, gpu: str) -> str | None:
    specs = predictor.cross.specs_
    names = [i for i in specs.loc[specs["gpu"] == gpu, "instance"] if i in predictor.all_instances]
    return sorted(names, key=lambda n: (n not in predictor.instances, n))[0] if names else None


def torch_traces(predictor) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each trace's predicted step ratio target / V100 16GB (p3.2xlarge, a target of both)
    against the published throughput ratio V100 16GB / target of the same source."""
    pub = _published_resnet()
    pub = pub.assign(repo=pub["source"].str.split("@").str[0])
    ref = _spec_line(predictor, V100)
    parts = []
    for trace in ("resnet50_v100_train", "resnet50_a100_ddp_rank0"):
        profile = read_profile(TRACES / f"{trace}.pt.trace.json.gz")
        for precision in ("fp32", "amp"):
            rows = pub[pub["precision"] == ("TF32" if precision == "fp32" else "AMP")]
            table = predictor.predict(None, profile, precision=precision).table
            step = table.drop_duplicates("target").set_index("target")["batch_latency_ms"]
            for (repo, gpu), grp in rows.groupby(["repo", "catalog_gpu"]):
                base = rows[(rows["repo"] == repo) & (rows["catalog_gpu"] == V100)]
                target = _spec_line(predictor, gpu)
                if base.empty or target is None or gpu == V100 or target not in step:
                    continue
                measured = float(base["images_per_s"].median()) / float(
                    grp["images_per_s"].median()
                )
                fp32, bw = _ratio_baselines(predictor, ref, target)
                parts.append(
                    {
                        "trace": trace,
                        "precision": precision,
                        "source": repo,
                        "GPU": gpu.replace("NVIDIA ", ""),
                        "measured ratio": measured,
                        "predicted ratio": step[target] / step[ref],
                        "FP32-ratio": fp32,
                        "bandwidth-ratio": bw,
                    }
                )
    out = pd.DataFrame(parts)
    for col in ("predicted ratio", "FP32-ratio", "bandwidth-ratio"):
        out[f"{col} err %"] = 100 * (out[col] / out["measured ratio"] - 1)
    errs = [c for c in out.columns if c.endswith("err %")]
    summary = (
        out.groupby(["trace", "precision"])[errs]
        .apply(lambda g: g.abs().mean())
        .reset_index()
        .rename(columns=lambda c: c.replace("err %", "MAPE %"))
    )
    keep = ["trace", "precision", "source", "GPU", "measured ratio", "predicted ratio", *errs]
    return out[keep], summary


def other_kinds(predictor, seed: Path) -> pd.DataFrame:
    text = pd.read_csv(DATA / "published_text.csv")
    text = text[text["precision"] == "TF32"]
    rows = pd.read_csv(seed / "reuters_g4dn_g5.csv")
    ops = [c for c in rows.columns if c.startswith(("Host_", "Device_"))]
    bilstm = rows[rows["model"] == "bilstm"]
    stand = {
        "recurrent": (
            "the notebook's cuDNN BiLSTM (Reuters, g4dn.xlarge)",
            "g4dn.xlarge",
            bilstm[ops].reset_index(drop=True),
            bilstm["batch_latency_s"].to_numpy(),
        ),
        "conv": (
            "the V100 ResNet-50 PyTorch trace",
            None,
            read_profile(TRACES / "resnet50_v100_train.pt.trace.json.gz"),
            None,
        ),
    }
    parts = []
    for (model, kind), grp in text.groupby(["model", "kind"]):
        base = grp[grp["catalog_gpu"] == V100]
        if base.empty:
            continue
        anchor_v100 = _spec_line(predictor, V100)
        step = None
        if kind in stand:
            label, anchor, profile, lat = stand[kind]
            t = predictor.predict(anchor, profile, anchor_latency_s=lat).table
            step = t.drop_duplicates("target").set_index("target")["batch_latency_ms"]
        for _, r in grp.iterrows():
            target = _spec_line(predictor, r["catalog_gpu"])
            if target is None or r["catalog_gpu"] == V100:
                continue
            measured = float(base["throughput"].iloc[0]) / float(r["throughput"])
            fp32, bw = _ratio_baselines(predictor, anchor_v100, target)
            pred = (
                np.nan if step is None else step.get(target, np.nan) / step.get(anchor_v100, np.nan)
            )
            parts.append(
                {
                    "model": model,
                    "stands in": stand[kind][0] if kind in stand else "none",
                    "GPU": r["catalog_gpu"].replace("NVIDIA ", ""),
                    "measured ratio (vs V100)": measured,
                    "predicted ratio": pred,
                    "FP32-ratio": fp32,
                    "bandwidth-ratio": bw,
                }
            )
    out = pd.DataFrame(parts)
    for col in ("predicted ratio", "FP32-ratio", "bandwidth-ratio"):
        out[f"{col} err %"] = 100 * (out[col] / out["measured ratio (vs V100)"] - 1)
    summary = (
        out.groupby(["model", "stands in"])[[c for c in out.columns if c.endswith("err %")]]
        .apply(lambda g: g.abs().mean())
        .reset_index()
        .rename(columns=lambda c: c.replace("err %", "MAPE %"))
    )
    return summary


def record(predictor, tables: dict) -> Path:
    """Write ``validation/beyond_cnn.csv`` into the predictor's artifacts folder and list it
    (with its sha256) in the manifest: the Model accuracy page reads it, computing nothing.

    Rows: ``section`` (``reuters``: one per notebook row, ms per step; ``trace``: one per trace,
    precision, source and GPU, step-time ratios to the V100 16GB; ``trace_mape`` and ``kinds``:
    MAPE % per trace and precision, per model kind), ``item``, ``gpu``, ``source``, ``measured``,
    ``predicted``, ``low``, ``high``, ``error_pct``, ``fp32_error_pct``,
    ``bandwidth_error_pct``, ``inside``, ``unit``.
    """
    from _sections import record_validation

    r, (t, tm), k = tables["reuters"], tables["trace"], tables["kinds"]
    parts = [
        pd.DataFrame(
            {
                "section": "reuters",
                "item": r["model"],
                "gpu": "g4dn.xlarge -> g5.xlarge",
                "measured": r["g5 measured ms"],
                "predicted": r["predicted ms"],
                "low": r["80% low"],
                "high": r["80% high"],
                "error_pct": r["error %"],
                "fp32_error_pct": r["FP32-ratio error %"],
                "bandwidth_error_pct": r["bandwidth-ratio error %"],
                "inside": r["inside"],
                "unit": "ms per step",
            }
        ),
        pd.DataFrame(
            {
                "section": "trace",
                "item": t["trace"] + ", " + t["precision"],
                "gpu": t["GPU"],
                "source": t["source"],
                "measured": t["measured ratio"],
                "predicted": t["predicted ratio"],
                "error_pct": t["predicted ratio err %"],
                "fp32_error_pct": t["FP32-ratio err %"],
                "bandwidth_error_pct": t["bandwidth-ratio err %"],
                "unit": "step time / V100 SXM2 16GB's",
            }
        ),
    ]
    for section, frame, item in (
        ("trace_mape", tm, tm["trace"] + ", " + tm["precision"]),
        ("kinds", k, k["model"] + " (stands in: " + k["stands in"] + ")"),
    ):
        parts.append(
            pd.DataFrame(
                {
                    "section": section,
                    "item": item,
                    "error_pct": frame["predicted ratio MAPE %"],
                    "fp32_error_pct": frame["FP32-ratio MAPE %"],
                    "bandwidth_error_pct": frame["bandwidth-ratio MAPE %"],
                    "unit": "MAPE % of step-time ratios to the V100",
                }
            )
        )
    columns = [
        "section", "item", "gpu", "source", "measured", "predicted", "low", "high",
        "error_pct", "fp32_error_pct", "bandwidth_error_pct", "inside", "unit",
    ]  # fmt: skip
    table = pd.concat(parts, ignore_index=True).reindex(columns=columns)
    return record_validation(predictor, "beyond_cnn", table)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", default=str(ROOT.parent / "shared" / "data" / "seed-rnn"))
    ap.add_argument(
        "--record",
        action="store_true",
        help="also write validation/beyond_cnn.csv into the artifacts (the Model accuracy page)",
    )
    args = ap.parse_args(argv)
    predictor = load_artifacts()
    seed = Path(args.seed)
    tables = {
        "reuters": reuters(predictor, seed),
        "trace": torch_traces(predictor),
        "kinds": other_kinds(predictor, seed),
    }
    print("## 1. The notebook's Reuters rows: g4dn.xlarge -> g5.xlarge\n")
    print(_md(tables["reuters"]))
    print("\n## 2. PyTorch traces against published PyTorch ResNet-50 ratios (one GPU)\n")
    rows, summary = tables["trace"]
    print(_md(rows) + "\n\nMAPE per trace and precision:\n\n" + _md(summary))
    print("\n## 3. Other model kinds (published_text.csv, TF32 one GPU), ratio to the V100\n")
    print(_md(tables["kinds"]))
    if args.record:
        path = record(predictor, tables)
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        print(f"\nrecorded for the Model accuracy page: {shown}")


if __name__ == "__main__":
    main()
