"""The numbers of docs/new_sources_rule.md for a published table: the done-when numbers over all
fitted rows, and the same numbers on the rows of the repositories the table had before (the
models fitted on every row of the table).

- FP32: leave-one-GPU-out speed-up MAPE pooled over fitted pairs (`bench/claims/published.py`'s
  `all / all / mape_cross`);
- AMP: primary score P, the mean over GPUs of each GPU's leave-one-GPU-out gain MAPE on fitted
  pairs (`bench/claims/amp_multigpu.py`'s per-GPU table), and the row mean;
- N-GPU: leave-one-GPU-out scaling MAPE over fitted rows (row mean);
- and, for the record, the leave-one-source-out MAPE and coverage of AMP and N-GPU per repository.

    python bench/studies/new_sources.py --data /work/shared/data/profet [--table FILE] [--old-table FILE]

With ``--check FILE`` (e.g. ``profet_core/data/published_check.csv``, the rows of a set the rule
did not adopt) it prints instead how the models fitted on the table without those rows predict
them (AMP gain and N-GPU scaling; leave-one-source-out, 80% coverage with the widths fitted
without them): the independent check the rule gives such a set.

VGG16 and Inception-v3 rows are never fitted nor scored here (``held_out``).
"""

from __future__ import annotations

import argparse
import time

import pandas as pd
from _variants import TODAY, Fits

from profet_core import load_dataset
from profet_core.crossgpu import CrossInstanceModel, all_pairs, median_table
from profet_core.crossgpu.configurations._amp import amp_logo, amp_state_from
from profet_core.crossgpu.configurations._dataparallel import dp_logo, scaling_rows
from profet_core.crossgpu.configurations._validate import ape
from profet_core.crossgpu.configurations._validate import summarize_logo as summarize
from profet_core.crossgpu.spec._gpuref import gpu_table
from profet_core.crossgpu.spec._holdout import published_logo
from profet_core.crossgpu.spec._published import load_published, published_pairs
from profet_core.inputs._gpu_specs import load_specs

#: The repositories of published.csv before the new sources were judged.
OLD = (
    "LambdaColdStorage/lambda-tensorflow-benchmark",
    "NVIDIA/DeepLearningExamples",
    "lambdal/deeplearning-benchmark",
)


def _repo(source: pd.Series) -> pd.Series:
    return source.str.split("@").str[0]


def scores(
    data: str,
    table_path: str | None,
    old_docs: set[str] | None = None,
    old_sources: set[str] | None = None,
    fits: Fits = TODAY,
) -> pd.DataFrame:
    """One row per scope (``all`` rows, ``old`` rows): fp32_mape, amp_P, amp_rows_mape, ngpu_mape
    (leave-one-GPU-out, fitted rows) and the row counts. ``old_docs``: documents (source without
    line) of the old table; ``old`` rows are those of these documents. ``old_sources``: the old
    table's sources with their lines (for new rows of an old document); ``old`` rows are those.
    ``fits``: how the AMP and N-GPU models are fitted (a candidate's choices; today's by default)."""
    medians = median_table(load_dataset(data))
    specs = load_specs()
    base = CrossInstanceModel().fit_pairs(all_pairs(medians), specs)
    table = load_published(table_path)
    doc = lambda s: s.str.replace(r":\d+$", "", regex=True)  # noqa: E731
    old = lambda s: doc(s).isin(old_docs) if old_docs is not None else _repo(s).isin(OLD)  # noqa: E731
    if old_sources is not None:
        old = lambda s: s.isin(old_sources)  # noqa: E731
    fp = published_logo(base, published_pairs(table, specs, medians))
    fp = fp[~fp["held_out"]].reset_index(drop=True)
    fp = fp.assign(ape=lambda d: ape(d["cross"], d["speedup"]))
    gpus = gpu_table(specs)
    _, pairs, shares = fits.amp_state(table, gpus, medians, base.theta_)
    amp = fits.amp_logo(pairs, gpus, shares, "catalog_gpu")
    amp = amp[~amp["held_out"]].assign(ape=lambda d: ape(d["pred"], d["gain"]))
    dp = dp_logo(fits.scaling_rows(table, gpus), "catalog_gpu")
    dp = dp[~dp["held_out"]].assign(ape=lambda d: ape(d["pred"], d["scaling"]))
    out = []
    for scope in ("all", "old"):
        f = fp if scope == "all" else fp[old(fp["source"])]
        a = amp if scope == "all" else amp[old(amp["source"])]
        d = dp if scope == "all" else dp[old(dp["source"])]
        out.append(
            {
                "scope": scope,
                "fp32_pairs": len(f),
                "fp32_mape": float(f["ape"].mean()),
                "amp_pairs": len(a),
                "amp_P": float(a.groupby("catalog_gpu")["ape"].mean().mean()),
                "amp_rows_mape": float(a["ape"].mean()),
                "ngpu_rows": len(d),
                "ngpu_mape": float(d["ape"].mean()),
            }
        )
    return pd.DataFrame(out)


def by_source(data: str, table_path: str | None) -> pd.DataFrame:
    """Leave-one-source-out MAPE and 80% coverage per repository, AMP and N-GPU."""
    medians = median_table(load_dataset(data))
    specs = load_specs()
    theta = CrossInstanceModel().fit_pairs(all_pairs(medians), specs).theta_
    table = load_published(table_path)
    gpus = gpu_table(specs)
    _, pairs, shares = amp_state_from(table, gpus, medians, theta)
    a = summarize(amp_logo(pairs, gpus, shares, "repo"), "repo", "gain", [])
    d = summarize(dp_logo(scaling_rows(table, gpus), "repo"), "repo", "scaling", [])
    return pd.concat([a.assign(answer="AMP"), d.assign(answer="N-GPU")], ignore_index=True)


def check(data: str, table_path: str | None, check_path: str) -> pd.DataFrame:
    """Leave-one-source-out MAPE and coverage of the repositories of ``check_path``'s rows, the
    models fitted on the table plus every other set's rows (never on their own)."""
    import tempfile

    table = load_published(table_path)
    extra = load_published(check_path)
    # a set from a repository the table already has (S2: DeepLearningExamples' MXNet README) is
    # left out on its own: its rows get the repository name plus their document's top folder
    known = _repo(extra["source"]).isin(set(_repo(table["source"])))
    top = extra["source"].str.extract(r"@[0-9a-f]{40}:([^/]+)/", expand=False)
    extra.loc[known, "source"] = (
        _repo(extra["source"]) + "." + top + "@" + extra["source"].str.split("@").str[1]
    )[known]
    both = pd.concat([table, extra], ignore_index=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/published.csv"
        both.to_csv(path, index=False)
        out = by_source(data, path)
    return out[out["repo"].isin(set(_repo(extra["source"])))]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/data/profet")
    ap.add_argument("--table", help="a published CSV (default: the package's)")
    ap.add_argument("--old-table", help="the table before: its documents are the 'old' rows")
    ap.add_argument("--check", help="rows kept out of the table, predicted as a source left out")
    args = ap.parse_args(argv)
    t0 = time.time()
    if args.check:
        print(check(args.data, args.table, args.check).round(1).to_string(index=False))
        print(
            f"\nMade by `python bench/studies/new_sources.py --check` in {time.time() - t0:.0f} s."
        )
        return
    old_docs = None
    if args.old_table:
        src = load_published(args.old_table)["source"]
        old_docs = set(src.str.replace(r":\d+$", "", regex=True))
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(scores(args.data, args.table, old_docs).round(3).to_string(index=False))
        print()
        print(by_source(args.data, args.table).round(1).to_string(index=False))
    print(f"\nMade by `python bench/studies/new_sources.py` in {time.time() - t0:.0f} s.")


if __name__ == "__main__":
    main()
