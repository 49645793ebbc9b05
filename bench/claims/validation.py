"""Validation of the spec order: spec inversions, rank agreement with published throughput, intervals.

    python bench/claims/validation.py [--data ../shared/data/profet] [--artifacts DIR] [--out FILE] [--record]

(with --out FILE, e.g. docs/crossgpu.md, it also replaces the ``spec-order`` section of FILE;
with --record it writes ``validation/spec_order.csv`` into the artifacts and lists it in their
manifest, for the Model accuracy page)

Prints, for the shipped predictor without the spec order (``before``: what main answered) and
with it (``after``):

- spec inversions over the data's CNN profiles, the four anchors, fp32/amp and 1/all GPUs
  (bench/claims/inversions.py's set; those between two measured answers, which the data itself shows,
  counted apart);
- Spearman rank correlation of predicted vs published one-GPU throughput across the GPUs of
  each published FP32 table (same source, framework, CNN, image size; each GPU at its batch), from the data profile that
  stands in for the CNN on p3.2xlarge (the V100 the published speed-ups are paired on), per CNN;
  VGG16 and Inception-v3 tables reported apart (never fitted);
- the intervals' calibration kept in the artifacts: per kind of answer (FP32 speed-up, AMP
  gain, N-GPU scaling) the factor on the widths and its form (docs/interval_both_coverage_rule.md),
  the 80% coverage with one GPU and with one source left out before and after it (every width
  parameter fitted on all rows), the same cross-fitted (``xfit``: fitted without the judged
  row's GPU or source; the honest number), and the spread between the published sources.

The leave-one-GPU-out MAPEs are printed by bench/claims/published.py (FP32) and bench/claims/amp_multigpu.py
(AMP, N-GPU), the AMP primary score by bench/studies/amp_candidates.py; the spec order does not
move them (it acts on the answers, not on the model those benches refit).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "claims"))

import inversions as inv_bench  # noqa: E402

from profet_core import load_artifacts  # noqa: E402
from profet_core.crossgpu.order._order import bound_violations, inversions  # noqa: E402
from profet_core.prediction import _options  # noqa: E402

ANCHOR = "p3.2xlarge"


def _without_order():
    """Context: the predictor's answers as main gave them (no spec order)."""
    keep = _options._spec_order

    class _Ctx:
        def __enter__(self):
            _options._spec_order = lambda predictor, table, precision, reference=None: (table, [])

        def __exit__(self, *exc):
            _options._spec_order = keep

    return _Ctx()


def count_inversions(predictor, profiles) -> dict:
    tables = inv_bench.all_tables(predictor, profiles)
    specs = predictor.cross.specs_
    inv = inversions(tables, specs)
    out = bound_violations(tables, specs)
    measured = set(tables.loc[tables["basis"] == "measured", "target"].astype(str))
    return {
        "inversions": int(len(inv)),
        "spec-model": int((~inv["measured"]).sum()),
        "between measured answers": int(inv["measured"].sum()),
        "gpu pairs": int(inv.groupby(["faster_spec", "slower_spec"]).ngroups),
        "out of roofline bounds": int(len(out)),
        "  the slower one measured": int(out["slower_spec"].isin(measured).sum()),
    }


#: The issue's repro, examples/profile_g3s.json from g3s.xlarge: (label, target).
REPRO = (
    ("T4 (g4dn.xlarge, measured)", "g4dn.xlarge"),
    ("L4 (g6.xlarge)", "g6.xlarge"),
    ("L40 (gpu-l40)", "gpu-l40"),
    ("L40S (g6e.xlarge)", "g6e.xlarge"),
    ("A100 PCIe 40GB", "gpu-a100-pcie-40gb"),
    ("H100 PCIe 80GB", "gpu-h100-pcie-80gb"),
    ("H100 SXM (p5.48xlarge)", "p5.48xlarge"),
    ("H200 SXM", "gpu-h200-sxm-141gb"),
)


def bound_evidence(data: Path, tables: list[dict]) -> pd.DataFrame:
    """How far measurements go past the pure roofline bounds (no tolerance): every ordered GPU
    pair of the published one-GPU tables (same source, framework, precision, CNN, batch and image
    size; VGG16 and Inception-v3 left out), of the published FP32 tables at each GPU's own batch
    (the Spearman tables), and of the data's own four GPUs (shared workloads). Per set: pairs,
    pairs past the bound, by more than 5% and 10%, the largest ratio to the bound and its pair."""
    from profet_core import load_dataset
    from profet_core.crossgpu.order._bounds import bound_matrix
    from profet_core.crossgpu.spec._gpuref import gpu_table
    from profet_core.crossgpu.spec._published import held_out, load_published
    from profet_core.inputs._gpu_specs import load_specs

    gpus = gpu_table()
    where = {g: i for i, g in enumerate(gpus.index)}
    h = {k: bound_matrix(gpus.reset_index(), k) for k in ("fp32", "amp")}

    def ratios(groups, kind_of):
        out = []
        for kind, ips in groups:  # ips: {gpu: images/s}
            names = [g for g in ips if g in where]
            for a in names:
                for b in names:
                    if a != b:
                        bound = h[kind_of(kind)][where[a], where[b]]
                        out.append((ips[b] / ips[a] / bound, f"{a} vs {b}"))
        return out

    pub = load_published()
    pub = pub[(pub["gpu_count"] == 1) & ~held_out(pub["model"])]
    pub = pub.assign(doc=pub["source"].str.rsplit(":", n=1).str[0])
    same = []
    for k, grp in pub.groupby(
        ["doc", "framework", "precision", "model", "batch_size", "image_size"]
    ):
        grp = grp.drop_duplicates("catalog_gpu")
        same.append((k[2], dict(zip(grp["catalog_gpu"], grp["images_per_s"], strict=True))))
    sets = {
        "published, same batch": ratios(same, lambda p: "amp" if p == "AMP" else "fp32"),
        "published FP32, each GPU's own batch": ratios(
            [("fp32", t["gpus"]) for t in tables if not t["held_out"]], lambda p: p
        ),
    }
    ds = load_dataset(data)
    keys = ["instance", "model", "input_size", "batch_size"]
    lat = ds.latencies.groupby(keys)["batch_latency_s"].median().unstack("instance")
    gpu_of = load_specs().drop_duplicates("instance").set_index("instance")["gpu"]
    data = []
    for _, row in lat.iterrows():
        ips = {gpu_of[i]: 1.0 / v for i, v in row.dropna().items() if i in gpu_of.index}
        data.append(("fp32", ips))
    sets["the data's own GPUs"] = ratios(data, lambda p: p)
    rows = []
    for name, r in sets.items():
        x = np.array([v for v, _ in r])
        worst = max(r)
        rows.append(
            {
                "measurements": name,
                "ordered pairs": len(x),
                "past the bound": int((x > 1).sum()),
                "by > 5%": int((x > 1.05).sum()),
                "by > 10%": int((x > 1.10).sum()),
                "largest (x bound)": round(float(worst[0]), 3),
                "pair (slower vs faster)": worst[1],
            }
        )
    return pd.DataFrame(rows)


def repro(predictor) -> pd.DataFrame:
    """Steps (ms) of the issue's repro, FP32 and AMP, one GPU; with --method profet too (the
    reference DNN: its own answers kept, the others the default method's)."""
    from profet_core import read_profile

    prof = read_profile(str(ROOT / "examples" / "profile_g3s.json"))
    other = [m for m in predictor.methods if m != predictor.default_method][:1]
    cols = {}
    for method in [None, *other]:
        for precision in ("fp32", "amp"):
            kw = {"method": method} if method else {}
            t = predictor.predict("g3s.xlarge", prof, precision=precision, **kw).table
            ms = t.set_index("target")["batch_latency_ms"]
            name = precision + (f", method {method}" if method else "")
            cols[name] = [float(ms.get(tg, np.nan)) for _, tg in REPRO]
    return pd.DataFrame(cols, index=[lbl for lbl, _ in REPRO])


def causes(predictor, profiles) -> pd.DataFrame:
    """Inversions without the spec order with parts of the spec model switched off (the model
    as shipped, then without each part): what caused them. ``spec vs spec``: both answers from
    the spec model (neither measured)."""
    import copy

    cross = predictor.cross
    keep = copy.copy(cross.__dict__)

    def no_residual():
        cross.residual_model_ = None

    def no_gpu_terms():
        cross.published_eta_ = {}

    def no_memory_roof():
        roof = cross.roof_.copy()
        roof[1, 1] = -50.0  # the memory class's bandwidth-per-FLOP term off
        cross.roof_ = roof

    variants = {
        "as shipped": [],
        "no residual trees": [no_residual],
        "no per-GPU efficiency offsets": [no_gpu_terms],
        "no memory-class roofline term": [no_memory_roof],
        "none of the three": [no_residual, no_gpu_terms, no_memory_roof],
    }
    rows = []
    for name, parts in variants.items():
        for f in parts:
            f()
        try:
            t = inv_bench.all_tables(predictor, profiles)
        finally:
            cross.__dict__.update(keep)
        inv = inversions(t, cross.specs_)
        spec = inversions(t[t["basis"] != "measured"], cross.specs_)
        rows.append(
            {
                "spec model": name,
                "inversions": len(inv),
                "spec vs spec": len(spec),
                "involving a measured answer": len(inv) - len(spec),
            }
        )
    return pd.DataFrame(rows)


def published_tables(data: Path) -> list[dict]:
    """Published one-GPU FP32 tables with >= 3 catalog GPUs and a data CNN standing in: the
    published throughput per GPU and the anchor profile (ops, latency s) of that CNN."""
    from profet_core import load_dataset
    from profet_core.crossgpu import median_table
    from profet_core.crossgpu.spec._published import _profile, held_out, load_published

    ds = load_dataset(data)
    medians = median_table(ds)
    prof = ds.profiles[ds.profiles["instance"] == ANCHOR]
    pub = load_published()
    pub = pub[(pub["gpu_count"] == 1) & (pub["precision"] != "AMP")]
    pub = pub.assign(
        doc=pub["source"].str.rsplit(":", n=1).str[0],
        stand_in=pub["data_model"].replace("", np.nan).fillna(pub["profile_proxy"]),
    )
    pub["stand_in"] = pub["stand_in"].replace("", np.nan)
    out = []
    # one table per source, CNN and image size: each GPU at its published batch (batches differ
    # with the GPUs' memory); the profile at the median of those batches stands in
    for key, grp in pub.groupby(["doc", "framework", "model", "image_size"]):
        grp = grp.drop_duplicates("catalog_gpu")
        cnn = grp["stand_in"].dropna()
        if len(grp) < 3 or cnn.empty:
            continue
        row = _profile(medians, ANCHOR, cnn.iloc[0], key[3], float(grp["batch_size"].median()))
        p = prof[
            (prof["model"] == row["model"])
            & (prof["input_size"] == row["input_size"])
            & (prof["batch_size"] == row["batch_size"])
        ].iloc[:1]
        ops = p[[c for c in p if c.startswith(("Host_", "Device_"))]].fillna(0.0)
        out.append(
            {
                "doc": key[0].split("@")[0] + ":" + key[0].rsplit(":", 1)[-1].split("/")[-1],
                "model": key[2],
                "held_out": bool(held_out(pd.Series([key[2]]))[0]),
                "gpus": dict(
                    zip(grp["catalog_gpu"], grp["images_per_s"].astype(float), strict=True)
                ),
                "ops": ops.reset_index(drop=True),
                "latency_s": float(row["anchor_latency_s"])
                if "anchor_latency_s" in row
                else float(row["latency_s"]),
            }
        )
    return out


def spearman(predictor, tables) -> pd.DataFrame:
    from scipy.stats import spearmanr

    specs = predictor.cross.specs_
    inst = specs.drop_duplicates("gpu").set_index("gpu")["instance"]
    anchor_gpu = specs.set_index("instance").loc[ANCHOR, "gpu"]
    rows = []
    for t in tables:
        gpus = [g for g in t["gpus"] if g in inst.index or g == anchor_gpu]
        if len(gpus) < 3:
            continue
        targets = [inst[g] for g in gpus if g != anchor_gpu]
        res = predictor.predict(ANCHOR, t["ops"], anchor_latency_s=t["latency_s"], targets=targets)
        ms = res.table.set_index("target")["batch_latency_ms"]
        pred = [1.0 / (t["latency_s"] * 1e3 if g == anchor_gpu else ms[inst[g]]) for g in gpus]
        rho = spearmanr(pred, [t["gpus"][g] for g in gpus]).statistic
        rows.append(
            {
                "doc": t["doc"],
                "model": t["model"],
                "held_out": t["held_out"],
                "gpus": len(gpus),
                "rho": rho,
            }
        )
    return pd.DataFrame(rows)


def calibration_table(predictor) -> pd.DataFrame:
    cross = predictor.cross
    kinds = {
        "FP32 speed-up": getattr(cross, "source_calibration_", {}).get("fp32"),
        "AMP gain": (cross.amp_state_ or {}).get("source_calibration"),
        "N-GPU scaling": (cross.dp_state_ or {}).get("source_calibration"),
    }
    rows = []
    for kind, c in kinds.items():
        if not c:
            rows.append({"answer": kind, "scale": np.nan})
            continue
        rows.append(
            {
                "answer": kind,
                "scale": c["scale"],
                "form": c.get("form", "two-way"),
                "cov_gpu_before": 100 * c["coverage_gpu_before"],
                "cov_source_before": 100 * c["coverage_source_before"],
                "cov_gpu": 100 * c["coverage_gpu"],
                "cov_source": 100 * c["coverage_source"],
                "xfit_gpu": 100 * c.get("crossfit_gpu", np.nan),
                "xfit_source": 100 * c.get("crossfit_source", np.nan),
                "sources": c["sources"],
                "spread": f"x{c['spread'][0]:.2f}..x{c['spread'][1]:.2f}",
            }
        )
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "profet"))
    ap.add_argument("--artifacts", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument(
        "--record",
        action="store_true",
        help="also write validation/spec_order.csv into the artifacts (the Model accuracy page)",
    )
    args = ap.parse_args(argv)
    import contextlib
    import io
    import time

    t0 = time.time()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = report(args)
    text = buf.getvalue()
    print(text, end="")
    if args.out:
        from _sections import markers, write_section

        start, end = markers("spec-order")
        body = (
            "## Spec order and intervals for a user's setup\n\n```\n"
            + text
            + f"```\n\nMade by `python bench/claims/validation.py` in {time.time() - t0:.0f} s."
        )
        write_section(args.out, "spec-order", f"{start}\n{body}\n{end}")
    return code


def report(args) -> int:
    data = Path(args.data)
    if not (data / "profiles.parquet").exists():
        print(f"no data at {data}: nothing to validate")
        return 0
    predictor = load_artifacts(args.artifacts)
    profiles = inv_bench.data_profiles(data, 2)
    tables = published_tables(data)
    res = {}
    for name, ctx in (("before", _without_order()), ("after", None)):
        if ctx is not None:
            ctx.__enter__()
        try:
            res[name] = (
                count_inversions(predictor, profiles),
                spearman(predictor, tables),
                repro(predictor),
            )
        finally:
            if ctx is not None:
                ctx.__exit__(None, None, None)
    counts = pd.DataFrame({k: v[0] for k, v in res.items()})
    print("Spec inversions (97 data profiles x 4 anchors x fp32/amp x 1/all GPUs):")
    print(counts.to_string())
    print(
        "(out of roofline bounds: a step more than 1.10x another GPU's over the least ratio of "
        "its resources to that GPU's)"
    )
    rep = pd.concat({k: v[2] for k, v in res.items()}, axis=1)
    print(
        "\nMeasurements against the pure roofline bounds (a step at most another GPU's over the "
        "least ratio of its resources to that GPU's; the spec order adds 10% where neither GPU "
        "dominates the other, and a measured step raises others only through a GPU it "
        "dominates):"
    )
    print(bound_evidence(data, tables).to_string(index=False))
    print("\nThe issue's repro (examples/profile_g3s.json from g3s.xlarge, one GPU), ms:")
    print(rep.to_string(float_format="%.2f"))
    with _without_order():
        why = causes(predictor, profiles)
    print("\nWithout the spec order, with parts of the spec model off (what caused them):")
    print(why.to_string(index=False))
    sp = res["before"][1].rename(columns={"rho": "rho_before"})
    sp["rho_after"] = res["after"][1]["rho"].to_numpy()
    print("\nSpearman rho, predicted vs published one-GPU FP32 throughput, per published table:")
    print(sp.to_string(index=False, float_format="%.3f"))
    for flag, part in sp.groupby("held_out"):
        label = "held out (VGG16, Inception-v3)" if flag else "fitted CNNs"
        per_cnn = part.groupby("model")[["rho_before", "rho_after"]].mean()
        print(f"\nmean rho per CNN, {label}:")
        print(per_cnn.to_string(float_format="%.3f"))
        print(
            f"  mean over tables: before {part['rho_before'].mean():.3f}, after {part['rho_after'].mean():.3f}"
        )
    print(
        "\nIntervals (80%): coverage (%) with one GPU / one source left out, before and after the"
    )
    print(
        "factor on the widths (all rows; xfit_*: cross-fitted); spread: the sources' own median"
        " predicted/published ratio:"
    )
    print(calibration_table(predictor).to_string(index=False, float_format="%.3g"))
    q = predictor.cross.interval_log_
    amp = (predictor.cross.amp_state_ or {}).get("half_width")
    widths = [(b, q[b]) for b in ("published", "specs only") if b in q]
    widths += [("AMP gain", amp)] if amp else []
    print(
        "80% intervals shipped: "
        + "; ".join(f"{b} x{np.exp(-w):.2f}..x{np.exp(w):.2f}" for b, w in widths)
    )
    if getattr(args, "record", False):
        path = record(predictor, counts, sp, rep)
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        print(f"\nrecorded for the Model accuracy page: {shown}")
    return 0


def record(predictor, counts: pd.DataFrame, sp: pd.DataFrame, rep: pd.DataFrame) -> Path:
    """Write ``validation/spec_order.csv`` into the predictor's artifacts folder and list it
    (with its sha256) in the manifest: the Model accuracy page reads it, computing nothing.
    Rows: ``section`` (inversions, spearman, repro), ``item``, ``before`` and ``after`` (no
    spec order / as shipped), ``unit``."""
    from _sections import record_validation

    rows = [
        {
            "section": "inversions",
            "item": k.strip(),
            "before": r["before"],
            "after": r["after"],
            "unit": "pairs",
        }
        for k, r in counts.iterrows()
    ]
    rows += [
        {
            "section": "spearman",
            "item": f"{r.model} ({r.doc})" + (" [held out]" if r.held_out else ""),
            "before": r.rho_before,
            "after": r.rho_after,
            "unit": f"rho over {r.gpus} GPUs",
        }
        for r in sp.itertuples()
    ]
    for flag, part in sp.groupby("held_out"):
        label = "held-out CNNs (VGG16, Inception-v3)" if flag else "fitted CNNs"
        rows.append(
            {
                "section": "spearman",
                "item": f"mean over tables, {label}",
                "before": part["rho_before"].mean(),
                "after": part["rho_after"].mean(),
                "unit": "rho",
            }
        )
    for col in rep.columns.levels[1]:
        for label in rep.index:
            rows.append(
                {
                    "section": "repro",
                    "item": f"{label}, {col}",
                    "before": rep.loc[label, ("before", col)],
                    "after": rep.loc[label, ("after", col)],
                    "unit": "ms",
                }
            )
    return record_validation(predictor, "spec_order", pd.DataFrame(rows))


if __name__ == "__main__":
    raise SystemExit(main())
