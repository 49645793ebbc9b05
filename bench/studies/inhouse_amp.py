"""The in-house Hopper rows as AMP pairs of a fourth source (S3) and S3 with depthwise convolutions
without AMP gain (S3+D), judged by docs/inhouse_amp_rule.md.

For today's model and each candidate (a ``_variants.Fits``: the in-house AMP pairs joined, and for
D the AMP fit's ``memory_families`` without ``depthwise``), prints

- the done-when MAPEs of ``bench/studies/new_sources.py`` (FP32 LOGO speed-up MAPE, AMP primary
  score P, N-GPU LOGO MAPE) over all fitted rows and over today's three repositories' rows;
- the cross-fitted coverages of ``bench/studies/interval_both_coverage.py`` (shipped forms: FP32
  C, AMP F0, N-GPU F0; GPU / source left out) and the AMP coverages of
  ``bench/claims/amp_multigpu.py`` (LOGO / leave-one-source-out, all rows);
- AMP leave-one-source-out MAPE and coverage per repository, and the LOGO rows of the two Hopper
  GPUs;
- the Hopper check (``bench/claims/hopper_check.py`` (c): Spearman rho and mean absolute log
  error of predicted vs measured FP16 AMP / TF32 gains across CNNs) with the candidate's AMP
  state in the shipped artifacts: information only, never a criterion;
- and each bar of the rule, passed or not.

    python bench/studies/inhouse_amp.py [--data ../shared/data/profet] [--artifacts DIR]

VGG16 and Inception-v3 rows are never fitted nor scored. About 3 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "bench" / "claims"), str(ROOT / "bench" / "studies")]

import hopper_check  # noqa: E402
import interval_both_coverage as ibc  # noqa: E402
import new_sources  # noqa: E402
from _variants import TODAY, Fits  # noqa: E402

from profet_core import load_artifacts, load_dataset  # noqa: E402
from profet_core.crossgpu import (  # noqa: E402
    CrossInstanceModel,
    _amp,
    _inhouse,
    all_pairs,
    median_table,
)
from profet_core.crossgpu.configurations._validate import summarize_logo  # noqa: E402
from profet_core.crossgpu.spec._gpuref import gpu_table  # noqa: E402
from profet_core.crossgpu.spec._published import load_published, published_pairs  # noqa: E402
from profet_core.inputs._gpu_specs import load_specs  # noqa: E402

#: Candidates of the rule: the in-house AMP pairs joined (S3), and depthwise convolutions
#: without AMP gain (D: the memory-bound families but depthwise).
NO_DEPTHWISE = ("norm", "pool", "activation", "elementwise")
CANDIDATES = {
    "today": TODAY,
    "S3": Fits(inhouse_amp=True),
    "S3+D": Fits(inhouse_amp=True, memory_families=NO_DEPTHWISE),
}
BAND = (75.0, 85.0)
#: Tolerances of bars 1-3 (docs/new_sources_rule.md) and of bar 4 (today's rows only).
TOL = {"fp32_mape": 0.0, "amp_P": 0.05, "ngpu_mape": 0.05}
TOL_OLD = 0.5


def coverages(medians, specs, base, fits: Fits) -> dict:
    """Cross-fitted coverages (%) of interval_both_coverage.py's shipped forms, GPU / source."""
    table = load_published()
    fp = ibc.fp32_rows(base, published_pairs(table, specs, medians))
    amp, dp = ibc.amp_dp_rows(base, table, medians, fits)
    out = {}
    for kind, rows, fn, form, fp32 in (
        ("FP32", fp, ibc.base_fp32, "C", True),
        ("AMP", amp, ibc.base_amp, "F0", False),
        ("N-GPU", dp, ibc.base_dp, "F0", False),
    ):
        s = ibc.score(form, rows, fn, fp32)
        out[f"{kind} gpu"], out[f"{kind} source"] = s["cov_gpu"], s["cov_source"]
    return out


def amp_tables(medians, specs, base, fits: Fits) -> tuple[pd.DataFrame, pd.DataFrame]:
    """amp_multigpu.py's AMP tables: leave-one-GPU-out and leave-one-source-out summaries."""
    gpus = gpu_table(specs)
    _, pairs, shares = fits.amp_state(load_published(), gpus, medians, base.theta_)
    logo = fits.amp_logo(pairs, gpus, shares, "catalog_gpu")
    logo = summarize_logo(logo, "catalog_gpu", "gain", [])
    loso = summarize_logo(fits.amp_logo(pairs, gpus, shares, "repo"), "repo", "gain", [])
    return logo, loso


def hopper(predictor, medians, data: Path, fits: Fits) -> tuple[pd.DataFrame, dict]:
    """hopper_check.py's (c) with the candidate's AMP fit in place of the shipped AMP state
    (its memory-bound families included), and that fit's parameters (``a``, ``b``, ``beta``,
    ``alpha``, the sources' log offsets)."""
    cross = predictor.cross
    keep = cross.amp_state_
    gpus = gpu_table(cross.specs_)
    fitted = fits.amp_state(load_published(), gpus, medians, cross.theta_)[0]
    keys = ("a", "b", "beta", "alpha", "source_offset", "memory_families")
    cross.amp_state_ = dict(keep) | {k: fitted[k] for k in keys}
    try:
        rows = _inhouse.load_inhouse()
        ratios, gains = _inhouse.gpu_ratios(rows), _inhouse.amp_gains(rows)
        matched = hopper_check.match(
            hopper_check.workloads(ratios), hopper_check.anchor_profiles(data)
        )
        pred = hopper_check.predict(predictor, matched)
        out = hopper_check.summary(hopper_check.gain_table(pred, gains), gains, 10.0)
    finally:
        cross.amp_state_ = keep
    params = {k: fitted[k] for k in keys[:4]} | {
        f"offset {k.split('/')[0]}": v for k, v in fitted["source_offset"].items()
    }
    params["user offset (centre)"] = _amp.user_offset(fitted)
    return out[out["set"] == "fitted"].drop(columns="set"), params


def measure(name: str, data: Path, medians, specs, base, predictor) -> dict:
    """Every number of the rule for one candidate."""
    fits = CANDIDATES[name]
    sc = new_sources.scores(str(data), None, fits=fits).set_index("scope")
    cov = coverages(medians, specs, base, fits)
    logo, loso = amp_tables(medians, specs, base, fits)
    hop, params = hopper(predictor, medians, data, fits)
    cov["AMP LOGO (amp_multigpu)"] = float(
        logo.loc[logo["catalog_gpu"] == "all", "coverage_pct"].iloc[0]
    )
    cov["AMP LOSO (amp_multigpu)"] = float(loso.loc[loso["repo"] == "all", "coverage_pct"].iloc[0])
    return {"scores": sc, "cov": cov, "logo": logo, "loso": loso, "hopper": hop, "params": params}


def _dist(x: float) -> float:
    """How far a coverage (%) lies outside the 75-85 % band (0 inside)."""
    return max(0.0, BAND[0] - x, x - BAND[1])


def bars(cand: dict, ref: dict, today: dict) -> list[tuple[str, bool, str]]:
    """Each bar of the rule: (name, passed, numbers). ``ref``: the table the candidate is judged
    against (today's, or S3's for S3+D once S3 is adopted); bar 4 always against ``today``."""
    out = []
    c, r, t = cand["scores"], ref["scores"], today["scores"]
    for i, col in enumerate(("fp32_mape", "amp_P", "ngpu_mape"), 1):
        v, lim = c.loc["all", col], r.loc["all", col] + TOL[col]
        out.append((f"{i}. {col} (all rows)", v <= lim + 1e-9, f"{v:.3f} vs <= {lim:.3f}"))
    for col in ("fp32_mape", "amp_P", "ngpu_mape"):
        v, lim = c.loc["old", col], t.loc["old", col] + TOL_OLD
        out.append((f"4. {col} (today's rows)", v <= lim + 1e-9, f"{v:.3f} vs <= {lim:.3f}"))
    for key, v in cand["cov"].items():
        was = ref["cov"][key]
        ok = _dist(v) <= _dist(was) + 1e-9
        n = "6." if "amp_multigpu" in key else "5."
        out.append((f"{n} coverage {key}", ok, f"{v:.1f} (was {was:.1f})"))
    return out


def report(results: dict, adopted: dict) -> None:
    """Print the tables and the verdicts."""
    rows = []
    for name, res in results.items():
        for scope, s in res["scores"].iterrows():
            rows.append({"table": name, "scope": scope, **s.round(3).to_dict()})
    print("Done-when MAPEs (new_sources.py's numbers; old: today's three repositories' rows):")
    print(pd.DataFrame(rows).to_string(index=False))
    cov = pd.DataFrame({n: r["cov"] for n, r in results.items()}).T.round(1)
    print("\nCoverage (%), cross-fitted, GPU / source left out:")
    print(cov.to_string())
    print(
        "\nThe AMP fit on all fitted rows (log offsets: each source's; a user's is their centre):"
    )
    print(pd.DataFrame({n: r["params"] for n, r in results.items()}).round(4).to_string())
    for name, res in results.items():
        logo = res["logo"]
        hop = logo[logo["catalog_gpu"].str.contains("H100 SXM5|H200|all")]
        print(f"\n[{name}] AMP leave-one-source-out per repository:")
        print(res["loso"].round(1).to_string(index=False))
        print(f"[{name}] AMP leave-one-GPU-out, the Hopper GPUs and all rows:")
        print(hop.round(1).to_string(index=False))
        print(f"[{name}] Hopper check (information only): predicted vs measured FP16/TF32 gain")
        cols = ["gpu", "rows", "n CNNs", "spearman rho", "MALE"]
        print(res["hopper"][cols].round(3).to_string(index=False))
    for name, (ref, ok) in adopted.items():
        print(f"\n{name} judged against {ref}: {'ADOPTED' if ok else 'not adopted'}")
        for bar, passed, text in bars(results[name], results[ref], results["today"]):
            print(f"  {'pass' if passed else 'FAIL'}  {bar}: {text}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "profet"))
    ap.add_argument("--artifacts", default=None, help="artifacts folder (default: shipped)")
    args = ap.parse_args(argv)
    t0 = time.time()
    data = Path(args.data)
    medians = median_table(load_dataset(data))
    specs = load_specs()
    base = CrossInstanceModel().fit_pairs(all_pairs(medians), specs)
    predictor = load_artifacts(args.artifacts)
    results = {n: measure(n, data, medians, specs, base, predictor) for n in CANDIDATES}
    s3_ok = all(p for _, p, _ in bars(results["S3"], results["today"], results["today"]))
    ref = "S3" if s3_ok else "today"
    s3d_ok = all(p for _, p, _ in bars(results["S3+D"], results[ref], results["today"]))
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        report(results, {"S3": ("today", s3_ok), "S3+D": (ref, s3d_ok)})
    print(f"\nMade by `python bench/studies/inhouse_amp.py` in {time.time() - t0:.0f} s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
