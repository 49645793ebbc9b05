"""Bandwidth credit of the compute families on tensor-core GPUs: the scores of
docs/family_roofline_rule.md for main (``gpu``: the compute class reads the GPU's own bandwidth
per peak FLOP), F1 (``none``: no bandwidth credit for convolutions and matrix products) and F2
(``arch``: the compute class reads its architecture's mean).

Per variant: FP32 speed-up MAPE over main's fitted published pairs, one GPU left out (pooled and
mean over GPUs) and one source document left out; the cross-fitted coverage of the ``published``
and ``specs only`` bases; held-out VGG16 / Inception-v3 APE (not a criterion). Then, never a
criterion: the H100 SXM5 / H200 (and H100 PCIe / H200, T4 / L4) one-GPU step ratios over the
data's profiles, the 4 anchors and fp32/amp (``bench/claims/inversions.all_tables`` on the
shipped predictor with the variant's tensor-core efficiencies), and the in-house H200 rows
(PyTorch, TF32, spread <= 10 %) as H200 / V100 speed-ups against the data's p3.2xlarge, measured
vs each variant's full fit (a cross-framework check, not a fit). AMP gain and N-GPU scaling:
``bench/claims/amp_multigpu.py`` with the cross model's ``compute_z`` set (see the rule). About 3-4
minutes on 2 cores.

    .venv/bin/python bench/studies/family_roofline.py [--data ../shared/data/profet]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "bench" / "claims"), str(Path(__file__).parent)]

from _variants import inhouse_pairs  # noqa: E402
from arch_efficiency import scores  # noqa: E402
from inversions import all_tables, data_profiles  # noqa: E402

from profet_core import load_artifacts, load_dataset  # noqa: E402
from profet_core.crossgpu import CrossInstanceModel, all_pairs, median_table  # noqa: E402
from profet_core.crossgpu.spec._efficiency import fit_published, predict_speedups  # noqa: E402
from profet_core.crossgpu.spec._published import load_published, published_pairs  # noqa: E402
from profet_core.inputs._gpu_specs import load_specs  # noqa: E402

VARIANTS = {"main (gpu)": "gpu", "F1 (none)": "none", "F2 (arch)": "arch"}
RATIOS = {
    "H100 SXM / H200": ("p5.48xlarge", "gpu-h200-sxm-141gb"),
    "H100 PCIe / H200": ("gpu-h100-pcie-80gb", "gpu-h200-sxm-141gb"),
    "H100 SXM / H100 NVL": ("p5.48xlarge", "gpu-h100-nvl-94gb"),
    "T4 / L4": ("g4dn.xlarge", "g6.xlarge"),
}

_FIT_PAIRS: list = []


def step_ratios(profiles, compute_z: str) -> dict:
    """min / median / max of each :data:`RATIOS` step ratio, one GPU, over every table: the
    shipped predictor (a fresh one: its caches are built from the model it is given) whose cross
    model takes the variant's (``compute_z``) tensor-core efficiencies, fitted on every fitted
    pair (its intervals, AMP and N-GPU state stay the shipped ones)."""
    pred = load_artifacts()
    cross = pred.cross.set_params(compute_z=compute_z)
    cross.__dict__.update(fit_published(cross, _FIT_PAIRS[0]).__dict__)
    t = all_tables(pred, profiles)
    t = t[t["key"].str.endswith("gpus=1")]
    wide = t.pivot_table(
        index=["key", "row", "precision"], columns="target", values="batch_latency_ms"
    )
    out = {}
    for name, (num, den) in RATIOS.items():
        r = (wide[num] / wide[den]).dropna()
        out[name] = f"{r.min():.3f} / {r.median():.3f} / {r.max():.3f} (n={len(r)})"
    return out


def decompose(cross, medians, anchor="p3.2xlarge", pair=RATIOS["H100 SXM / H200"]) -> pd.DataFrame:
    """Where the physical model's H100 SXM5 / H200 step ratio comes from (residual learner
    left out), over the data's ``anchor`` workloads (held-out CNNs left out): the full ratio,
    then with the H200 given the H100's compute-class efficiency, both classes' efficiencies,
    and also its bandwidth (ratio 1); and each workload's share of compute (conv, matmul),
    memory-class and fixed (transfer, idle) time on the H100."""
    from profet_core.crossgpu.spec._model import CLASS, SCALES
    from profet_core.crossgpu.spec._pairs import FAM_COLS
    from profet_core.crossgpu.spec._published import held_out

    rows = medians[(medians["instance"] == anchor)].dropna(subset=list(FAM_COLS))
    rows = rows[~held_out(rows["model"])]
    fam = rows[list(FAM_COLS)].to_numpy(float)
    n = len(rows)
    spec = {t: cross._spec_rows([t] * n) for t in (anchor, *pair)}
    eta = {t: cross._eta([t] * n) for t in (anchor, *pair)}
    h100, h200 = pair

    def step(t, e, s=None):
        d_spec = spec[anchor] - (spec[t] if s is None else s)
        return cross._log_ratio(fam, d_spec, e - eta[anchor])

    base = step(h100, eta[h100])
    same_c = eta[h200].copy()
    same_c[:, 0] = eta[h100][:, 0]
    out = {
        "full": base - step(h200, eta[h200]),
        "H200 with the H100's compute efficiency": base - step(h200, same_c),
        "H200 with the H100's efficiencies": base - step(h200, eta[h100]),
    }
    expo = (spec[anchor] - spec[h100]) @ cross.theta_.T + (eta[h100] - eta[anchor])[
        :, CLASS
    ] * SCALES
    t = fam * np.exp(expo)
    share = t / t.sum(axis=1, keepdims=True)
    compute, fixed = share[:, :2].sum(axis=1), share[:, -2:].sum(axis=1)
    frame = pd.DataFrame({k: np.exp(v) for k, v in out.items()})
    frame["compute share on H100"] = compute
    frame["memory-class share"] = 1 - compute - fixed
    frame["transfer+idle share"] = fixed
    return frame.describe(percentiles=[0.5]).loc[["min", "50%", "max"]]


def inhouse_check(fitted, specs, medians) -> pd.DataFrame:
    """Measured vs predicted H200 / V100 speed-ups of the in-house TF32 rows (not held out)."""
    ip = inhouse_pairs(specs, medians)
    ip = ip[~ip["held_out"]]
    pred = predict_speedups(fitted, ip)["cross"]
    return pd.DataFrame(
        {
            "cnn": ip["profile"].to_numpy(),
            "batch": ip["batch_size"].to_numpy(),
            "measured": ip["speedup"].to_numpy(),
            "model": pred.to_numpy(),
        }
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "profet"))
    ap.add_argument("--per-model", type=int, default=2)
    args = ap.parse_args(argv)
    t0 = time.time()
    medians = median_table(load_dataset(args.data))
    specs = load_specs()
    base = CrossInstanceModel().fit_pairs(all_pairs(medians), specs)
    pairs = published_pairs(load_published(), specs, medians)
    common = pairs.index[~pairs["held_out"]].to_numpy()
    _FIT_PAIRS[:] = [pairs[~pairs["held_out"]]]
    profiles = data_profiles(Path(args.data), args.per_model)
    cols, per_gpu, ratios, checks = {}, {}, {}, {}
    for name, mode in VARIANTS.items():
        base.set_params(compute_z=mode)  # every fit below reads the variant from the model
        cols[name], per_gpu[name] = scores(base, pairs, common)
        ratios[name] = step_ratios(profiles, mode)
        checks[name] = inhouse_check(fit_published(base, pairs[~pairs["held_out"]]), specs, medians)
    pd.set_option("display.width", 200)
    print(pd.DataFrame(cols).round(3).to_string())
    print("\nLeave-one-GPU-out MAPE per left-out GPU (%), main's fitted pairs:")
    print(pd.DataFrame(per_gpu).round(2).to_string())
    print("\nOne-GPU step ratios, min / median / max over profiles x 4 anchors x fp32/amp:")
    print(pd.DataFrame(ratios).to_string())
    print("\nIn-house H200 / V100 (p3.2xlarge) speed-ups, TF32, PyTorch vs the data (a check):")
    first = next(iter(checks.values()))
    table = first[["cnn", "batch", "measured"]].copy()
    for name, c in checks.items():
        table[name] = c["model"].to_numpy()
    print(table.round(2).to_string(index=False))
    ape = {
        n: float(np.mean(np.abs(c["model"] / c["measured"] - 1)) * 100) for n, c in checks.items()
    }
    print("mean APE %:", {n: round(v, 1) for n, v in ape.items()})
    print(
        "\nWhere the physical model's H100 SXM / H200 ratio comes from (shipped model, the data's"
    )
    print("p3.2xlarge workloads, held-out CNNs left out; min / median / max):")
    print(decompose(load_artifacts().cross, medians).round(3).T.to_string())
    print(f"\nMade by `python bench/studies/family_roofline.py` in {time.time() - t0:.0f} s.")


if __name__ == "__main__":
    main()
