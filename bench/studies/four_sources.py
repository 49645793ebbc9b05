"""Four more setups judged by docs/four_sources_rule.md: Lambda's PyTorch v1 lines the
table lacked (L1) and its v2 tables (L2), FlagPerf's A100 40GB tables (F), the Sia/Pollux traces
(S); the MLPerf rows (M) form no fitted pair and are checked by ``mlperf_check.py``.

Each set's rows are read from ``profet_core/data/published_check.csv`` (where the builders put
them) or ``published.csv`` (where an adopted set's went) and added, in memory, to
``published.csv`` without any set's rows (the table the rule's bars were measured on) and the sets
adopted before it (F with the two parameter counts its N-GPU rows need). For today's table and each candidate it prints

- the done-when MAPEs of ``new_sources.py`` (FP32 LOGO speed-up MAPE, AMP primary score P, N-GPU
  LOGO MAPE) over all fitted rows and over today's rows (by ``source`` with its line);
- the cross-fitted coverages of ``interval_both_coverage.py`` (shipped forms: FP32 C, AMP F0,
  N-GPU F0; GPU / source left out) and the AMP coverages of ``amp_multigpu.py``;
- AMP and N-GPU leave-one-source-out per repository and AMP leave-one-GPU-out per GPU;
- each bar of the rule, passed or not, and the verdict;

then item 5 re-judged (``interval_both_coverage.py``'s forms on the table as adopted) and the sets
not adopted predicted as a set left out (models fitted on the adopted table without them: MAPE
and cross-fitted 80% coverage), the independent check the rule gives them.

    python bench/studies/four_sources.py [--data ../shared/data/profet]

VGG16 and Inception-v3 rows are never fitted nor scored (none is in these sets). About 10 minutes
on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "bench" / "claims"), str(ROOT / "bench" / "studies")]

import inhouse_amp  # noqa: E402
import interval_both_coverage as ibc  # noqa: E402
import new_sources  # noqa: E402
from _variants import Fits  # noqa: E402

from profet_core import load_dataset  # noqa: E402
from profet_core.crossgpu import CrossInstanceModel, all_pairs, median_table  # noqa: E402
from profet_core.crossgpu.configurations._dataparallel import dp_logo  # noqa: E402
from profet_core.crossgpu.configurations._validate import summarize_logo  # noqa: E402
from profet_core.crossgpu.spec._gpuref import gpu_table  # noqa: E402
from profet_core.crossgpu.spec._published import load_published, published_pairs  # noqa: E402
from profet_core.inputs._gpu_specs import load_specs  # noqa: E402

CHECK = ROOT / "profet_core" / "data" / "published_check.csv"
BUILD = ROOT / "profet_core" / "data" / "build"


def _l1(source: pd.Series) -> pd.Series:
    """Set L1: the lines of Lambda's v1 tables its builder writes (``LINES``), not the 134 rows
    of the same files that published.csv held before."""
    sys.path.insert(0, str(BUILD))  # the builder imports its helpers by name
    try:
        from lambdal_pytorch_v1 import LINES
    finally:
        sys.path.remove(str(BUILD))
    pattern = (
        r"^lambdal/deeplearning-benchmark@\w+:pytorch/pytorch-train-throughput-(fp\d\d)\.csv:(\d+)$"
    )
    m = source.str.extract(pattern).fillna("")
    hit = [p in LINES and int(n) in LINES[p] for p, n in zip(m[0], m[1], strict=True)]
    return pd.Series(hit, index=source.index, dtype=bool)


#: The candidate sets of the rule, in the order they are judged, by their rows' ``source``.
SETS = {
    "L1": _l1,
    "L2": lambda s: s.str.contains("pytorch-train-throughput-v2-", regex=False),
    "F": lambda s: s.str.startswith("FlagOpen/FlagPerf@"),
    "S": lambda s: s.str.startswith("siasosp23/artifacts@"),
}
#: Set F's parameter counts (torchvision, 1000 classes): its N-GPU rows need them.
F_PARAMS = {"mobilenetv2": 3.504872e6, "efficientnet_v2_s": 21.458488e6}


def fits_for(sets) -> Fits:
    """The product's fits, with F's parameter counts for the N-GPU rows of a table with F."""
    return Fits(param_counts=F_PARAMS if "F" in sets else {})


def set_rows(check: pd.DataFrame, name: str) -> pd.DataFrame:
    return check[SETS[name](check["source"])]


def table_of(today: pd.DataFrame, check: pd.DataFrame, sets) -> pd.DataFrame:
    return pd.concat([today, *[set_rows(check, s) for s in sets]], ignore_index=True)


def coverages(table, medians, specs, base, fits: Fits) -> dict:
    """Cross-fitted coverages (%) of interval_both_coverage.py's shipped forms, GPU / source."""
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


def logo_tables(table, medians, specs, base, fits: Fits) -> dict:
    """amp_multigpu.py's summaries: AMP by GPU and by source, N-GPU by source."""
    gpus = gpu_table(specs)
    _, pairs, shares = fits.amp_state(table, gpus, medians, base.theta_)
    rows = fits.scaling_rows(table, gpus)
    by_src = fits.amp_logo(pairs, gpus, shares, "repo")
    return {
        "amp_gpu": summarize_logo(fits.amp_logo(pairs, gpus, shares), "catalog_gpu", "gain", []),
        "amp_src": summarize_logo(by_src, "repo", "gain", []),
        "dp_src": summarize_logo(dp_logo(rows, "repo"), "repo", "scaling", []),
    }


def measure(data, medians, specs, base, table, old_sources, sets) -> dict:
    """Every number of the rule for one table."""
    fits = fits_for(sets)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "published.csv"
        table.to_csv(path, index=False)
        table = load_published(path)
        sc = new_sources.scores(data, str(path), old_sources=old_sources, fits=fits)
        sc = sc.set_index("scope")
        cov = coverages(table, medians, specs, base, fits)
        tabs = logo_tables(table, medians, specs, base, fits)
    amp_gpu, amp_src = tabs["amp_gpu"], tabs["amp_src"]
    cov["AMP LOGO (amp_multigpu)"] = float(amp_gpu.loc[amp_gpu["catalog_gpu"] == "all"].iloc[0, -1])
    cov["AMP LOSO (amp_multigpu)"] = float(amp_src.loc[amp_src["repo"] == "all"].iloc[0, -1])
    return {"scores": sc, "cov": cov, **tabs}


def set_out_check(table, extra, name, medians, specs, base) -> pd.DataFrame:
    """A set not adopted, predicted by the models fitted on ``table`` without it: AMP gain and
    N-GPU scaling, MAPE and cross-fitted 80% coverage (the set's pairs as one group left out)."""
    gpus = gpu_table(specs)
    both = pd.concat([table, extra], ignore_index=True)
    mine = set(extra["source"])
    out, fits = [], fits_for({name})
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "published.csv"
        both.to_csv(path, index=False)
        both = load_published(path)
        _, pairs, shares = fits.amp_state(both, gpus, medians, base.theta_)
        pairs = pairs.assign(group=pairs["source"].isin(mine).map({True: name, False: "rest"}))
        if (pairs["group"] == name).any():
            oof = fits.amp_logo(pairs, gpus, shares, "group")
            s = summarize_logo(oof, "group", "gain", [])
            out.append(s[s["group"] == name].assign(answer="AMP gain"))
        rows = fits.scaling_rows(both, gpus)
        rows = rows.assign(group=rows["source"].isin(mine).map({True: name, False: "rest"}))
        if (rows["group"] == name).any():
            s = summarize_logo(dp_logo(rows, "group"), "group", "scaling", [])
            out.append(s[s["group"] == name].assign(answer="N-GPU scaling"))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def judge(results: dict, name: str, ref: str) -> tuple[bool, list]:
    lines = inhouse_amp.bars(results[name], results[ref], results["today"])
    return all(p for _, p, _ in lines), lines


def report(results: dict, verdicts: dict) -> None:
    rows = []
    for name, res in results.items():
        for scope, s in res["scores"].iterrows():
            rows.append({"table": name, "scope": scope, **s.round(3).to_dict()})
    print("Done-when MAPEs (new_sources.py's numbers; old: today's rows, by source line):")
    print(pd.DataFrame(rows).to_string(index=False))
    cov = pd.DataFrame({n: r["cov"] for n, r in results.items()}).T.round(1)
    print("\nCoverage (%), cross-fitted, GPU / source left out:")
    print(cov.to_string())
    for name, res in results.items():
        print(f"\n[{name}] AMP leave-one-source-out per repository:")
        print(res["amp_src"].round(1).to_string(index=False))
        print(f"[{name}] N-GPU leave-one-source-out per repository:")
        print(res["dp_src"].round(1).to_string(index=False))
        print(f"[{name}] AMP leave-one-GPU-out per GPU:")
        print(res["amp_gpu"].round(1).to_string(index=False))
    for name, (ref, ok, lines) in verdicts.items():
        print(f"\n{name} judged against {ref}: {'ADOPTED' if ok else 'not adopted'}")
        for bar, passed, text in lines:
            print(f"  {'pass' if passed else 'FAIL'}  {bar}: {text}")


def item5(table, sets, medians, specs, base) -> pd.DataFrame:
    """interval_both_coverage.py's forms on a table (its adoption rule's numbers)."""
    fp = ibc.fp32_rows(base, published_pairs(table, specs, medians))
    kinds = {"FP32 speed-up": (fp, ibc.base_fp32, True)}
    amp, dp = ibc.amp_dp_rows(base, table, medians, fits_for(sets))
    kinds["AMP gain"] = (amp, ibc.base_amp, False)
    kinds["N-GPU scaling"] = (dp, ibc.base_dp, False)
    out = []
    for kind, (rows, fn, fp32) in kinds.items():
        for form in ("F0", "C", "A"):
            r = ibc.score(form, rows, fn, fp32)
            r["meets"] = all(75.0 <= r[c] <= 85.0 for c in ("cov_gpu", "cov_source"))
            out.append({"answer": kind, **r})
    return pd.DataFrame(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "profet"))
    args = ap.parse_args(argv)
    t0 = time.time()
    data = str(args.data)
    medians = median_table(load_dataset(data))
    specs = load_specs()
    base = CrossInstanceModel().fit_pairs(all_pairs(medians), specs)
    # a set's rows are read from either table (an adopted set's are in published.csv), and
    # "today" is published.csv without any set's rows: the rule's bars stay the same table
    both = pd.concat([load_published(), load_published(CHECK)], ignore_index=True)
    mine = pd.concat([SETS[n](both["source"]) for n in SETS], axis=1).any(axis=1)
    today, check = both[~mine & both.index.isin(range(len(load_published())))], both[mine]
    today = today.reset_index(drop=True)
    old = set(today["source"])
    results = {"today": measure(data, medians, specs, base, today, old, ())}
    adopted, verdicts = [], {}
    for name in SETS:
        ref = "+".join(["today", *adopted]) if adopted else "today"
        key = "+".join([ref, name])
        sets = (*adopted, name)
        results[key] = measure(data, medians, specs, base, table_of(today, check, sets), old, sets)
        ok, lines = judge(results, key, ref)
        verdicts[key] = (ref, ok, lines)
        if ok:
            adopted.append(name)
        print(f"[{time.time() - t0:.0f} s] {key}: {'adopted' if ok else 'not adopted'}", flush=True)
    allsets = tuple(SETS)
    results["all sets (information)"] = measure(
        data, medians, specs, base, table_of(today, check, allsets), old, allsets
    )
    with pd.option_context("display.width", 220, "display.max_columns", 30):
        report(results, verdicts)
        final = table_of(today, check, adopted)
        print(f"\nAdopted: {', '.join(adopted) or 'none'}. Item 5 on the table as adopted:")
        print(item5(final, adopted, medians, specs, base).round(3).to_string(index=False))
        print("\nSets not adopted, each predicted as a set left out (models fitted on the table as")
        print("adopted, without the set):")
        parts = [
            set_out_check(final, set_rows(check, n), n, medians, specs, base).assign(set=n)
            for n in SETS
            if n not in adopted
        ]
        parts = [p for p in parts if len(p)]
        if parts:
            print(pd.concat(parts, ignore_index=True).round(1).to_string(index=False))
    print(f"\nMade by `python bench/studies/four_sources.py` in {time.time() - t0:.0f} s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
