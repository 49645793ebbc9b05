"""What limits the AMP-gain and N-GPU goals: per GPU, the leave-one-GPU-out MAPE beside what the
same model reaches when it has seen the GPU, and beside floors no model of the GPU could beat.

For each GPU (fitted rows only; VGG16 and Inception-v3 are never fitted and not shown):

- ``logo``: the goal's number, the model refitted without the GPU (``amp_logo`` / ``dp_logo``).
- ``logo_bias``: its mean log error as a percentage (``pred / published - 1`` at the
  geometric mean; positive: the left-out GPU predicted too high).
- ``seen``: the same model fitted on every fitted row, the GPU's included (in-sample).
- ``seen_bias``: the mean log residual of ``seen`` as a percentage (``pred / published - 1``
  at the geometric mean): the part of the error one factor per GPU would remove.
- ``seen_gpu_factor``: ``seen`` with that factor taken out (each GPU's mean log residual
  removed, without refitting), i.e. the model given a perfect GPU-level correction, the most any
  feature of the GPU's spec sheet could add to a model of this form.
- ``constant``: one value per GPU and condition (AMP: source and XLA setting; N-GPU: also
  precision and GPU count), the geometric mean of the GPU's own rows (in-sample): the spread
  left among the CNNs measured under one condition.
- ``proxy_constant`` (AMP): one value per GPU, condition and stand-in profile (``profile``:
  the data CNN whose profile every published CNN it stands for gets, e.g. ResNet50 for
  ResNet-152, ResNeXt101 and SSD): CNNs that share a stand-in get the same shares, so a model
  fed these profiles can separate them only by batch and image size. Its groups are small
  (often one row, fitted exactly), so it is no floor: it shows where the spread lies.
- ``same_cnn_spread`` (AMP): for each GPU and CNN published under more than one condition
  (another source or XLA setting), the mean |log| difference of those gains from their
  geometric mean, in %: how much the published numbers of one GPU and CNN disagree.

A GPU whose ``seen_gpu_factor`` exceeds the goal cannot meet it with this model's form even if its
level were known (approximately: the factor is taken out without refitting); one whose ``same_cnn_spread`` is of the goal's size has measurements that
disagree by as much as the goal allows. Prints the tables; ``--out`` also writes them.

    .venv/bin/python bench/studies/goal_limits.py [--data ../shared/data/profet] [--out FILE]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "claims"))  # bench/claims: _sections
from _sections import data_main, md_table

from profet_core import load_dataset
from profet_core.crossgpu import CrossInstanceModel, all_pairs, median_table
from profet_core.crossgpu.configurations._amp import amp_logo, amp_state_from, predict_gain
from profet_core.crossgpu.configurations._dataparallel import (
    dp_logo,
    fit_dataparallel,
    scaling_rows,
    step_factor,
)
from profet_core.crossgpu.configurations._validate import ape
from profet_core.crossgpu.spec._efficiency import fit_published, predict_speedups
from profet_core.crossgpu.spec._gpuref import gpu_table
from profet_core.crossgpu.spec._holdout import published_logo
from profet_core.crossgpu.spec._published import load_published, published_pairs
from profet_core.inputs._gpu_specs import load_specs

AMP_GOAL, DP_GOAL, FP32_GOAL = 10.0, 8.0, 10.0


def _gpu_table(rows: pd.DataFrame, truth: str, constants: dict[str, list[str]]) -> pd.DataFrame:
    """Per GPU and over all rows (``all``): ``rows``, ``logo``, ``logo_bias``, ``seen``,
    ``seen_bias``, ``seen_gpu_factor`` and one MAPE (%) per entry of ``constants`` (name: the
    columns whose groups each get their geometric mean), from ``logo_pred`` and ``seen_pred``."""
    r = rows.copy()
    log_logo, log_seen = np.log(r["logo_pred"] / r[truth]), np.log(r["seen_pred"] / r[truth])
    gpu = r["catalog_gpu"]
    apes = {
        "logo": ape(r["logo_pred"], r[truth]),
        "seen": ape(r["seen_pred"], r[truth]),
        "seen_gpu_factor": np.abs(np.expm1(log_seen - log_seen.groupby(gpu).transform("mean")))
        * 100,
    }
    for name, cols in constants.items():
        geo = np.exp(np.log(r[truth]).groupby([r[c] for c in cols]).transform("mean"))
        apes[name] = ape(geo, r[truth])
    a = pd.DataFrame(apes, index=r.index)
    out = a.groupby(gpu).mean()
    out.insert(1, "logo_bias", np.expm1(log_logo.groupby(gpu).mean()) * 100)
    out.insert(3, "seen_bias", np.expm1(log_seen.groupby(gpu).mean()) * 100)
    out.insert(0, "rows", gpu.value_counts())
    out.loc["all"] = {"rows": len(r), **a.mean()}
    out["rows"] = out["rows"].astype(int)
    return out.reset_index().rename(columns={"index": "catalog_gpu"})


def reading(t: pd.DataFrame, goal: float, pooled: bool = False) -> str:
    """The table in one sentence: how many GPUs (or, ``pooled``, the all-rows MAPE) stay over
    ``goal`` as the model is given more: the GPU seen, its level corrected, one value per
    condition."""
    per, every = t[t["catalog_gpu"] != "all"], t[t["catalog_gpu"] == "all"].iloc[0]
    cols = ("logo", "seen", "seen_gpu_factor", "constant")
    words = (
        "left out",
        "with every GPU in the fit",
        "with each GPU's own level corrected as well",
        "with one value per GPU and condition instead of the model",
    )
    if pooled:
        told = "; ".join(f"{w} {every[c]:.1f}%" for c, w in zip(cols, words, strict=True))
        return f"Over all rows (goal <= {goal:g}%): {told}."
    told = "; ".join(f"{w} {int((per[c] > goal).sum())}" for c, w in zip(cols, words, strict=True))
    return f"GPUs over {goal:g}% (of {len(per)}): {told}."


def same_cnn_spread(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per GPU: the (GPU, CNN) groups published under more than one condition and the mean
    |log| distance (%) of their gains from the group's geometric mean."""
    fit = pairs[~pairs["held_out"]].copy()
    fit["cnn"] = fit["model"].str.lower().str.replace(" v1.5", "", regex=False)
    key = [fit["catalog_gpu"], fit["cnn"]]
    n = fit.groupby(key)["gain"].transform("size")
    logs = np.log(fit["gain"])
    fit["dev"] = np.abs(np.expm1(logs - logs.groupby(key).transform("mean"))) * 100
    many = fit[n > 1]
    g = many.groupby("catalog_gpu")
    return pd.DataFrame(
        {"cnns": g["cnn"].nunique(), "rows": g.size(), "same_cnn_spread": g["dev"].mean()}
    ).reset_index()


def amp_part(medians, specs, theta, table) -> list[str]:
    """The AMP-gain tables."""
    gpus = gpu_table(specs)
    state, pairs, shares = amp_state_from(table, gpus, medians, theta)
    logo = amp_logo(pairs, gpus, shares, "catalog_gpu")
    seen = predict_gain(state, gpus, pairs["catalog_gpu"], shares, pairs["repo"])
    rows = pairs.assign(logo_pred=logo["pred"], seen_pred=seen, xla=_xla(table, pairs))
    rows = rows[~rows["held_out"]]
    cond = ["catalog_gpu", "repo", "xla"]
    t = _gpu_table(rows, "gain", {"constant": cond, "proxy_constant": [*cond, "profile"]})
    return [
        "### AMP gain per GPU (MAPE %; goal <= 10% leave-one-GPU-out)",
        "",
        md_table(t, ".3g"),
        "",
        reading(t, AMP_GOAL) + f" One value per GPU, condition and stand-in profile leaves "
        f"{t.iloc[-1]['proxy_constant']:.1f}% over all rows: the spread within a GPU lies between"
        " the CNN families the stand-ins stand for (AlexNet, ResNet, Inception, MobileNet), which"
        " the model has to tell apart from the stand-ins' op mix (with every GPU in the fit it reads"
        f" {t.iloc[-1]['seen']:.1f}% over all rows, one value per GPU and condition"
        f" {t.iloc[-1]['constant']:.1f}%).",
        "",
        "Published gains of one GPU and CNN under more than one condition (source or XLA setting):",
        "",
        md_table(same_cnn_spread(pairs), ".3g"),
    ]


def _xla(table: pd.DataFrame, pairs: pd.DataFrame) -> np.ndarray:
    """Each pair's XLA setting (its AMP row's)."""
    return (
        pairs["source"].map(table.drop_duplicates("source").set_index("source")["xla"]).to_numpy()
    )


def dp_part(table, specs) -> list[str]:
    """The N-GPU scaling tables."""
    rows = scaling_rows(table, gpu_table(specs))
    logo = dp_logo(rows, "catalog_gpu")
    fit = rows[~rows["held_out"]]
    st = fit_dataparallel(fit)
    cols = [rows[c].to_numpy(float) for c in ("t1_s", "gpu_count", "params", "gbs")]
    seen = 1.0 / step_factor(st, *cols, rows["pcie"], rows["amp_noxla"])
    rows = rows.assign(logo_pred=logo["pred"], seen_pred=seen)[~rows["held_out"]]
    cond = ["catalog_gpu", "repo", "framework", "precision", "gpu_count", "amp_noxla"]
    t = _gpu_table(rows, "scaling", {"constant": cond})
    return [
        "### N-GPU scaling per GPU (MAPE %; goal <= 8% over all rows, leave-one-GPU-out)",
        "",
        md_table(t, ".3g"),
        "",
        reading(t, DP_GOAL, pooled=True) + " Left out, the GPUs without peer-to-peer are missed "
        "by (mean, `logo_bias`) "
        + ", ".join(
            f"{g} {b:+.1f}%"
            for g, b in t.set_index("catalog_gpu")["logo_bias"].items()
            if g in set(rows.loc[rows["no_p2p"], "catalog_gpu"])
        )
        + ".",
    ]


def fp32_part(base, specs, medians, table) -> list[str]:
    """The FP32 speed-up tables (published pairs of a V100 anchor and a tensor-core target)."""
    pairs = published_pairs(table, specs, medians)
    logo = published_logo(base, pairs)  # indexed like pairs
    seen = predict_speedups(fit_published(base, pairs[~pairs["held_out"]]), pairs)["cross"]
    rows = pairs.assign(logo_pred=logo["cross"], seen_pred=seen, catalog_gpu=pairs["target_gpu"])
    t = _gpu_table(rows[~rows["held_out"]], "speedup", {"constant": ["catalog_gpu", "document"]})
    return [
        "### FP32 speed-up per GPU (MAPE %; goal <= 10% on every GPU, leave-one-GPU-out)",
        "",
        md_table(t, ".3g"),
        "",
        reading(t, FP32_GOAL),
    ]


def report(data: str) -> str:
    t0 = time.time()
    medians = median_table(load_dataset(data))
    specs = load_specs()
    base = CrossInstanceModel().fit_pairs(all_pairs(medians), specs)
    table = load_published()
    intro = "\n\n".join(__doc__.split("\n\n")[1:4])
    parts = ["## What limits the AMP, N-GPU and FP32 goals", "", intro, ""]
    parts += amp_part(medians, specs, base.theta_, table) + [""] + dp_part(table, specs)
    parts += [""] + fp32_part(base, specs, medians, table)
    parts += ["", f"Made by `python bench/studies/goal_limits.py` in {time.time() - t0:.0f} s."]
    return "\n".join(parts)


def main(argv=None) -> None:
    data_main(report, __doc__, argv)


if __name__ == "__main__":
    main()
