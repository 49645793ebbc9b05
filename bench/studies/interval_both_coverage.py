"""Intervals covering 75-85% both with a GPU and with a source left out: the
forms of docs/interval_both_coverage_rule.md (F0 today's one factor, C a pooled conformal
factor, A a two-component width), each scored cross-fitted: a GPU-side row is judged with every
width parameter fitted without any row of its GPU, a source-side row without any row of its
source. Per answer kind (FP32 speed-up, AMP gain, N-GPU scaling): both coverages, today's
all-rows numbers for comparison, and the median shipped half-width (fitted on all rows). VGG16
and Inception-v3 rows are never fitted nor scored. About 1-2 minutes on 2 cores.

    .venv/bin/python bench/studies/interval_both_coverage.py [--data ../shared/data/profet]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).parent)]

from _variants import TODAY, Fits  # noqa: E402

from profet_core import load_dataset  # noqa: E402
from profet_core.crossgpu import CrossInstanceModel, all_pairs, median_table  # noqa: E402
from profet_core.crossgpu.configurations._amp import conformal_half_width  # noqa: E402
from profet_core.crossgpu.configurations._dataparallel import dp_logo, half_widths, row_half_width  # noqa: E402
from profet_core.crossgpu.spec._calibrate import BAND, coverage, two_way_scale  # noqa: E402
from profet_core.crossgpu.spec._gpuref import gpu_table  # noqa: E402
from profet_core.crossgpu.spec._holdout import (  # noqa: E402
    _weighted_quantile,
    _weights,
    basis_frames,
    published_half_width,
    published_logo,
)
from profet_core.crossgpu.spec._published import load_published, published_pairs  # noqa: E402
from profet_core.inputs._gpu_specs import load_specs  # noqa: E402

LEVEL = 0.8
TAU = np.round(np.arange(0.0, 1.0001, 0.005), 3)


# ----------------------------------------------------------------------------- the rows
def _rows(frame, side, gpu, source, fold, pred, truth, extra=()):
    out = pd.DataFrame(
        {
            "side": side,
            "gpu": frame[gpu].to_numpy(object),
            "source": frame[source].to_numpy(object),
            "fold": frame[fold].astype(str).to_numpy(object),
            "signed": np.log(frame[pred].to_numpy(float) / frame[truth].to_numpy(float)),
        }
    )
    for c in extra:
        out[c] = frame[c].to_numpy()
    out["err"] = out["signed"].abs()
    return out


def fp32_rows(base, pairs) -> pd.DataFrame:
    bases = basis_frames(base, pairs)
    gpu = pd.concat([f[f["basis"] == b] for b, f in bases.items()])
    src = published_logo(base, pairs, "document")
    gpu, src = gpu[~gpu["held_out"]], src[~src["held_out"]]
    extra = ("basis", "document", "model", "target_gpu")
    return pd.concat(
        [
            _rows(gpu, "gpu", "target_gpu", "document", "left_out", "cross", "speedup", extra),
            _rows(src, "source", "target_gpu", "document", "document", "cross", "speedup", extra),
        ],
        ignore_index=True,
    )


def amp_dp_rows(base, table, medians, fits: Fits = TODAY):
    """GPU-out and source-out rows of the AMP and N-GPU models, fitted as ``fits`` says."""
    gpus = gpu_table(base.specs_)
    _, pairs, shares = fits.amp_state(table, gpus, medians, base.theta_)
    g, s = fits.amp_logo(pairs, gpus, shares), fits.amp_logo(pairs, gpus, shares, "repo")
    g, s = g[~g["held_out"]], s[~s["held_out"]]
    amp = pd.concat(
        [
            _rows(g, "gpu", "catalog_gpu", "repo", "catalog_gpu", "pred", "gain"),
            _rows(s, "source", "catalog_gpu", "repo", "repo", "pred", "gain"),
        ],
        ignore_index=True,
    )
    rows = fits.scaling_rows(table, gpus)
    g, s = dp_logo(rows), dp_logo(rows, "repo")
    g, s = g[~g["held_out"]], s[~s["held_out"]]
    extra = ("no_p2p", "gpu_count", "pred", "scaling", "held_out")
    dp = pd.concat(
        [
            _rows(g, "gpu", "catalog_gpu", "repo", "catalog_gpu", "pred", "scaling", extra),
            _rows(s, "source", "catalog_gpu", "repo", "repo", "pred", "scaling", extra),
        ],
        ignore_index=True,
    )
    return amp, dp


# ------------------------------------------------------------- base widths (the product's)
def base_fp32(train: pd.DataFrame):
    g = train[train["side"] == "gpu"]
    w = {}
    for b in ("published", "specs only"):
        part = g[g["basis"] == b].assign(held_out=False)
        if len(part):
            w[b] = published_half_width(_as_oof(part), LEVEL)
    pooled = published_half_width(_as_oof(g.assign(held_out=False)), LEVEL)
    return lambda rows: rows["basis"].map(w).fillna(pooled).to_numpy(float)


def _as_oof(part: pd.DataFrame) -> pd.DataFrame:
    """The columns published_half_width reads (``cross``/``speedup`` as exp(signed)/1)."""
    return pd.DataFrame(
        {
            "cross": np.exp(part["signed"].to_numpy(float)),
            "speedup": 1.0,
            "held_out": False,
            "document": part["document"].to_numpy(),
            "model": part["model"].to_numpy(),
            "target_gpu": part["target_gpu"].to_numpy(),
        }
    )


def base_amp(train: pd.DataFrame):
    w = conformal_half_width(train.loc[train["side"] == "gpu", "err"], LEVEL)
    return lambda rows: np.full(len(rows), w)


def base_dp(train: pd.DataFrame):
    st = half_widths(train[train["side"] == "gpu"].assign(held_out=False), LEVEL)
    return lambda rows: row_half_width(st, rows["no_p2p"], rows["gpu_count"])


def row_weights(rows: pd.DataFrame, fp32: bool) -> np.ndarray:
    """Each side weighs one half; within a side FP32 (document, CNN, GPU) groups weigh 1."""
    w = np.ones(len(rows))
    for side in ("gpu", "source"):
        m = (rows["side"] == side).to_numpy()
        if m.any():
            ws = _weights(rows[m]) if fp32 else np.ones(m.sum())
            w[m] = 0.5 * ws / ws.sum()
    return w


def n_sources(rows: pd.DataFrame, pool: pd.DataFrame) -> np.ndarray:
    """Distinct sources among ``pool``'s rows of each row's GPU that its own fold did not
    leave out (>= 1): a source-side row loses its source, a ``published``-basis FP32 row its
    (document, CNN, GPU) group, any other GPU-side row its whole GPU (nothing left: 1)."""
    out = np.ones(len(rows))
    grp = "basis" in rows
    for i, r in enumerate(rows.itertuples()):
        cand = pool[pool["gpu"] == r.gpu]
        if r.side == "source":
            cand = cand[cand["source"] != r.source]
        elif grp and r.basis == "published":
            cand = cand[
                (cand["document"] != r.document)
                | (cand["model"] != r.model)
                | (cand["target_gpu"] != r.target_gpu)
            ]
        else:
            continue
        out[i] = max(1, cand["source"].nunique())
    return out


# -------------------------------------------------------------------------- the forms
def fit_form(form: str, train: pd.DataFrame, base_fn, fp32: bool):
    """A callable rows -> half-widths, every parameter fitted on ``train``."""
    base = base_fn(train)
    hw = base(train)
    g, s = (train["side"] == "gpu").to_numpy(), (train["side"] == "source").to_numpy()
    err = train["err"].to_numpy(float)
    if form == "F0":
        k = two_way_scale(err[g], hw[g], err[s], hw[s])["scale"]
        return lambda rows: k * base(rows)
    if form == "C":
        k = _weighted_quantile(err / hw, row_weights(train, fp32), LEVEL)
        return lambda rows: k * base(rows)
    if form == "A":
        m = n_sources(train, train)
        tau = next(
            (t for t in TAU if coverage(err[s], np.sqrt(hw[s] ** 2 + t**2 / m[s])) >= LEVEL),
            TAU[-1],
        )
        return lambda rows: np.sqrt(base(rows) ** 2 + tau**2 / n_sources(rows, train))
    raise ValueError(form)


def score(form: str, rows: pd.DataFrame, base_fn, fp32: bool) -> dict:
    """Cross-fitted coverages of each side, plus the all-rows fit's coverages and median width."""
    inside = np.full(len(rows), np.nan)
    for side, col in (("gpu", "gpu"), ("source", "source")):
        for key in rows.loc[rows["side"] == side, col].unique():
            test = ((rows["side"] == side) & (rows[col] == key)).to_numpy()
            train = rows[(rows[col] != key).to_numpy()]
            hw = fit_form(form, train, base_fn, fp32)(rows[test])
            inside[test] = rows.loc[test, "err"].to_numpy(float) <= hw
    full = fit_form(form, rows, base_fn, fp32)(rows)
    g = (rows["side"] == "gpu").to_numpy()
    err = rows["err"].to_numpy(float)
    return {
        "form": form,
        "cov_gpu": 100 * inside[g].mean(),
        "cov_source": 100 * inside[~g].mean(),
        "allrows_gpu": 100 * np.mean(err[g] <= full[g]),
        "allrows_source": 100 * np.mean(err[~g] <= full[~g]),
        "median_hw": float(np.median(full)),
        "median_x": f"x{np.exp(np.median(full)):.3f}",
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "profet"))
    args = ap.parse_args(argv)
    t0 = time.time()
    medians = median_table(load_dataset(args.data))
    specs = load_specs()
    base = CrossInstanceModel().fit_pairs(all_pairs(medians), specs)
    table = load_published()
    pairs = published_pairs(table, specs, medians)
    kinds = {"FP32 speed-up": (fp32_rows(base, pairs), base_fp32, True)}
    amp, dp = amp_dp_rows(base, table, medians)
    kinds["AMP gain"] = (amp, base_amp, False)
    kinds["N-GPU scaling"] = (dp, base_dp, False)
    out = []
    for kind, (rows, base_fn, fp32) in kinds.items():
        n = rows["side"].value_counts()
        for form in ("F0", "C", "A"):
            r = score(form, rows, base_fn, fp32)
            r["meets"] = all(
                BAND[0] * 100 <= r[c] <= BAND[1] * 100 for c in ("cov_gpu", "cov_source")
            )
            out.append({"answer": kind, "rows_gpu": n["gpu"], "rows_source": n["source"], **r})
    table_ = pd.DataFrame(out)
    with pd.option_context("display.width", 200, "display.precision", 1):
        print(
            "80% intervals, coverage (%) cross-fitted (cov_*) and with every parameter fitted on"
            " all rows (allrows_*); median_hw: median shipped log half-width over both sides'"
            " rows; meets: both cross-fitted coverages in 75-85%"
        )
        print(table_.to_string(index=False))
    print(
        f"\nMade by `python bench/studies/interval_both_coverage.py` in {time.time() - t0:.0f} s."
    )


if __name__ == "__main__":
    main()
