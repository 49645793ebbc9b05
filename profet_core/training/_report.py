"""Markdown accuracy report from validation tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..inputs._dataset import Dataset
from ..models._breakdown import LEARNERS
from ..models._curve_scaler import SCALER_VARIANTS
from ..models._intervals import novelty_errors
from ..models._methods import METHODS
from ..onepoint import POWER, cross_validate_one_point, summarize_one_point
from ..prediction._store import write_json
from ..prediction._trained import pair_name
from ._cross_validate import cross_validate_breakdown, noise_floor, summarize, validate_scalers


def _md(df: pd.DataFrame, floatfmt: str = ".1f") -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        cells = [format(v, floatfmt) if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def accuracy_table(
    metrics: pd.DataFrame,
    with_latency: bool,
    value: str = "mape_pct",
    noise: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Pivot ``metrics`` to one row per pair (plus mean and max rows) and one column per estimator.

    With ``noise`` (``instance, noise_pct``) a first column gives the target's noise floor.
    """
    m = metrics[metrics["with_latency"] == with_latency].copy()
    m["pair"] = m["anchor"] + " -> " + m["target"]
    t = m.pivot_table(index="pair", columns="estimator", values=value, aggfunc="first")
    if noise is not None:
        floor = noise.set_index("instance")["noise_pct"]
        targets = m.drop_duplicates("pair").set_index("pair")["target"]
        t.insert(0, "noise-floor", targets.reindex(t.index).map(floor))
    t.loc["mean"] = t.mean()
    t.loc["max"] = t.drop(index="mean").max()
    return t.reset_index()


def accuracy_markdown(
    metrics: pd.DataFrame,
    noise: pd.DataFrame,
    scalers: pd.DataFrame,
    breakdown: pd.DataFrame | None = None,
    novelty: pd.DataFrame | None = None,
    onepoint: pd.DataFrame | None = None,
    selection: str | None = None,
) -> str:
    """The full accuracy report (leave-one-architecture-out), as Markdown.

    ``selection`` (e.g. ``"anchors g3s.xlarge; architectures VGG16, LeNet5"``) says that the
    pairs and left-out architectures were restricted: the noise floor and the scaler tables,
    which do not depend on it, are then labelled as computed on the full data.
    """
    label = [_full_data_label(selection), ""] if selection else []
    parts = _metric_sections(metrics, noise, label)
    parts += _novelty_section(novelty)
    scaler_parts = _scaler_section(scalers) + _onepoint_section(onepoint)
    for i in reversed([i for i, p in enumerate(scaler_parts) if p.startswith("## ")]):
        scaler_parts[i + 2 : i + 2] = label
    parts += scaler_parts
    parts += _breakdown_section(breakdown)
    return "\n".join(parts)


def _full_data_label(selection: str) -> str:
    return (
        f"**Full data, not the selection ({selection}):** this table covers every instance and "
        "architecture of the data; the selection restricts the pair tables only."
    )


def _metric_sections(metrics: pd.DataFrame, noise: pd.DataFrame, label=()) -> list[str]:
    parts = [
        "# Accuracy (leave-one-architecture-out)",
        "",
        "Each CNN architecture is predicted by models trained on the others only. "
        "MAPE in %, per anchor -> target pair; `mean` and `max` over pairs.",
        "",
        "Columns: `noise-floor`, how much repetitions of the same workload differ on the "
        "target (no prediction can be steadily better); `linear-latency` and `median-ratio`, "
        "baselines on the anchor latency alone; `profet`, PROFET's reference ensemble "
        "(median of DNN, RandomForest and linear with the anchor latency, mean of DNN and RF "
        "without), with its members `profet:<member>`; `hybrid`, the default method, with its "
        "members; `per-op:<learner>`, multi-output regressors of the target's time per op "
        "family, turned into latency with the anchor latency.",
        "",
    ]
    noise_title = "## Noise floor (repetitions of the same workload)"
    parts += [noise_title, "", *label, _md(noise, ".2f"), ""]
    for with_lat, title in (
        (True, "with the anchor latency given"),
        (False, "without the anchor latency"),
    ):
        parts += [f"## MAPE % {title}", "", _md(accuracy_table(metrics, with_lat, noise=noise)), ""]
    if "coverage" in metrics:
        cov = metrics.copy()
        cov["coverage"] = 100 * cov["coverage"]
        for with_lat, title in ((True, "with"), (False, "without")):
            parts += [
                f"## 80% interval coverage % ({title} anchor latency)",
                "",
                _md(accuracy_table(cov, with_lat, "coverage")),
                "",
            ]
    for with_lat, title in ((True, "with"), (False, "without")):
        parts += [
            f"## R2 ({title} anchor latency)",
            "",
            _md(accuracy_table(metrics, with_lat, "r2"), ".3f"),
            "",
        ]
    return parts


def _novelty_section(novelty: pd.DataFrame | None) -> list[str]:
    parts = []
    if novelty is not None and not novelty.empty:
        n = novelty.pivot_table(
            index=["estimator", "band"],
            columns="with_latency",
            values=["share_pct", "mape_pct"],
            sort=False,
        )
        n.columns = [f"{v} ({'with' if wl else 'without'} latency)" for v, wl in n.columns]
        parts += [
            "## Error by novelty of the held-out profile",
            "",
            "Novelty: distance of a profile from the training profiles (mean over its 5 nearest, "
            "in standardised profile features), relative to its median over held-out rows "
            "(1 = as unusual as the typical held-out architecture). The intervals widen with it; "
            "the app warns above 1.25. `share_pct`: rows in the band; `mape_pct`: their MAPE.",
            "",
            _md(n.reset_index()),
            "",
        ]
    return parts


def _scaler_section(scalers: pd.DataFrame) -> list[str]:
    parts = []
    if not scalers.empty:
        s = scalers.pivot_table(index=["by", "instance"], columns="variant", values="mape_pct")
        for col, suffix in (("mape_all_pct", " (all sizes)"), ("mape_3pt_pct", " (3 sizes given)")):
            if col in scalers and scalers[col].notna().any():
                extra = scalers.pivot_table(index=["by", "instance"], columns="variant", values=col)
                s = s.join(extra.add_suffix(suffix))
        parts += [
            "## Scaler MAPE %",
            "",
            "Left-out architectures' latency curves, given their latencies at the two ends of "
            "the trained range (batch 16 and 256, input 32 and 256 px): error at the sizes "
            "strictly between; `(all sizes)` counts the two exact ends too; `(3 sizes given)`: "
            "the latency at the middle size (batch 64, input 128 px) is given as well, error "
            "at the other sizes between the ends.",
            "",
            _md(s.reset_index(), ".2f"),
            "",
        ]
    return parts


def _onepoint_section(table: pd.DataFrame | None) -> list[str]:
    if table is None or table.empty:
        return []
    parts = [
        "## Scaler from one latency: MAPE %",
        "",
        "Left-out architectures: from the latency at one size on an instance (and, for "
        "`profile`, the anchor profile taken at that size), the latency at every other trained "
        "size (batch 16..256; input 32..256 px). `profile` is what the Scaler page uses after an "
        "anchor prediction, `latency only` without a profile; `linear in work`, `median ratio` "
        "(the median training ratio per instance and size pair) and `PROFET quadratic` (its "
        "degree-2 curve through the one point) are baselines. Two points given: the linear "
        "scaler above, unchanged.",
        "",
    ]
    for col, title in (
        ("mape_pct", "every other size"),
        ("mape_1step_pct", "sizes at most 2x from the given one"),
        ("median_ape_pct", "median absolute % error, every other size"),
    ):
        wide = table.pivot_table(index=["by", "variant"], columns="instance", values=col)
        parts += [f"### {title}", "", _md(wide.reset_index()), ""]
    return parts


def _breakdown_section(breakdown: pd.DataFrame | None) -> list[str]:
    parts = []
    if breakdown is not None and not breakdown.empty:
        b = breakdown.groupby("learner")[
            ["family_wape_pct", "busy_mape_pct", "latency_mape_pct"]
        ].mean()
        parts += [
            "## Per-op breakdown: target time per op family from the anchor's (mean over pairs)",
            "",
            "`family_wape_pct`: weighted absolute % error over op families; `busy_mape_pct`: "
            "MAPE of the summed device-busy time; `latency_mape_pct`: anchor latency x "
            "predicted/anchor device time vs measured target latency.",
            "",
            _md(b.reset_index()),
            "",
        ]
    return parts


def _per_op_metrics(breakdown: pd.DataFrame) -> pd.DataFrame:
    """The per-op regressors as latency predictors (anchor latency x predicted/anchor device
    time), so they enter the same comparison, with the anchor latency only."""
    learned = breakdown[breakdown["learner"].isin(LEARNERS)]
    return pd.DataFrame(
        {
            "anchor": learned["anchor"],
            "target": learned["target"],
            "estimator": "per-op:" + learned["learner"],
            "with_latency": True,
            "mape_pct": learned["latency_mape_pct"],
            "n": learned["n"],
        }
    )


def write_validation(
    folder: Path,
    oof: pd.DataFrame,
    intervals: pd.DataFrame,
    dataset: Dataset,
    settings: dict | None = None,
    selection: str | None = None,
) -> None:
    """Write the accuracy report (CSV + Markdown) of a cross-validation run into ``folder``.

    ``settings`` (``threshold``, ``method_params``) go into ``run.json`` with the data's
    fingerprint, so that ``train(validation=folder)`` can reuse the run for the same models.
    ``selection`` labels the full-data tables (see :func:`accuracy_markdown`).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_json(
        folder / "run.json",
        {
            "data_fingerprint": dataset.fingerprint,
            "estimators": sorted(oof["estimator"].unique()),
            "pairs": sorted(
                {pair_name(a, t) for a, t in zip(oof["anchor"], oof["target"], strict=True)}
            ),
            **(settings or {}),
        },
    )
    metrics = summarize(oof).merge(
        intervals, on=["anchor", "target", "estimator", "with_latency"], how="left"
    )
    breakdown = cross_validate_breakdown(
        dataset, anchors=sorted(oof["anchor"].unique()), targets=sorted(oof["target"].unique())
    )
    breakdown.to_csv(folder / "breakdown.csv", index=False)
    metrics = pd.concat([metrics, _per_op_metrics(breakdown)], ignore_index=True)
    noise = noise_floor(dataset.latencies)
    scalers = validate_scalers(dataset.latencies, SCALER_VARIANTS)
    per_arch = (
        oof.assign(ape=lambda d: 100 * (d["predicted_s"] - d["measured_s"]).abs() / d["measured_s"])
        .groupby(["anchor", "target", "estimator", "with_latency", "architecture"])["ape"]
        .mean()
        .rename("mape_pct")
        .reset_index()
    )
    metrics.to_csv(folder / "metrics.csv", index=False)
    noise.to_csv(folder / "noise.csv", index=False)
    scalers.to_csv(folder / "scalers.csv", index=False)
    per_arch.to_csv(folder / "per_architecture.csv", index=False)
    novelty = novelty_errors(oof)
    novelty.to_csv(folder / "novelty.csv", index=False)
    # Keep one repetition's out-of-fold predictions of the main estimators for parity plots
    # (the full table is large and repetitions differ by ~1.5%).
    main = oof[oof["estimator"].isin(METHODS) & (oof["exp"] == oof["exp"].min())]
    main.to_csv(folder / "predictions.csv.gz", index=False, float_format="%.6g")
    onepoint = summarize_one_point(
        pd.concat([cross_validate_one_point(dataset, by) for by in POWER], ignore_index=True)
    )
    onepoint.to_csv(folder / "onepoint.csv", index=False)
    (folder / "report.md").write_text(
        accuracy_markdown(metrics, noise, scalers, breakdown, novelty, onepoint, selection)
    )
