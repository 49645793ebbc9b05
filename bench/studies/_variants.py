"""Model variants the studies judged and the product did not adopt, and the fits a study runs.

- The in-house PyTorch rows (``profet_core/data/inhouse_torch.csv``) as one more source of
  fitted pairs: their ``TF32`` rows as FP32 speed-up pairs against the data's V100
  (:func:`inhouse_pairs`; candidate B of docs/arch_efficiency_rule.md, rejected) and their
  FP16 AMP / TF32 rows as AMP-gain pairs (:func:`inhouse_amp_pairs`; candidate S3 of
  docs/inhouse_amp_rule.md, rejected).
- :class:`Fits`: how a study fits the AMP-gain and N-GPU models (today's choices by default),
  passed down to the helpers of ``new_sources.py``, ``interval_both_coverage.py`` and the studies
  that import them, so a candidate is one instance, never a module switch.

The library keeps what the product ships and checks: the rows' loader and their measured
ratios and gains (``profet_core.crossgpu.spec._inhouse``, read by ``bench/claims/hopper_check.py``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from profet_core.crossgpu.configurations._amp import (
    MEMORY_FAMILIES,
    amp_logo,
    amp_pairs,
    amp_state_of_pairs,
)
from profet_core.crossgpu.configurations._dataparallel import PARAMS, scaling_rows
from profet_core.crossgpu.spec._inhouse import KEY, checked_steps, load_inhouse
from profet_core.crossgpu.spec._pairs import FAM_COLS
from profet_core.crossgpu.spec._published import (
    PAIR_COLUMNS,
    held_out,
    published_pairs,
)

#: The data GPU the in-house rows are paired with (every published pair's baseline is a data GPU;
#: the data's K80 and T4 run far below their rated resources).
ANCHOR = "p3.2xlarge"
#: Largest 10th-90th percentile step spread (% of the median) of a row that enters a pair
#: (small batches are host-bound there).
MAX_SPREAD_PCT = 10.0


def inhouse_pairs(specs: pd.DataFrame, medians: pd.DataFrame, rows=None) -> pd.DataFrame:
    """:func:`profet_core.crossgpu.spec._published.published_pairs`-shaped pairs of the in-house
    ``TF32`` one-GPU rows against the data's :data:`ANCHOR` at the same workload.

    Each ``TF32`` row (PyTorch's default for convolutions, and the model's convention that FP32
    training runs on TF32 tensor cores) is paired with the data's own V100 median latency of the
    same CNN (``data_model``, not a stand-in), image size and batch: a cross-framework pair,
    PyTorch on the target, the data's TensorFlow on the anchor. Only rows whose step spread is
    at most :data:`MAX_SPREAD_PCT` enter.

    Parameters
    ----------
    specs : pandas.DataFrame
        Spec catalog (``instance``, ``gpu``).
    medians : pandas.DataFrame
        :func:`profet_core.crossgpu.median_table` of the data.
    rows : pandas.DataFrame, optional
        In-house rows (default: :func:`load_inhouse`).

    Returns
    -------
    pandas.DataFrame
        :data:`PAIR_COLUMNS`; ``document`` is the rows' ``source`` (one source), ``framework``
        ``PyTorch``; empty where the data lacks the anchor.
    """
    rows = load_inhouse() if rows is None else rows
    keep = (
        (rows["precision"] == "TF32")
        & (rows["gpu_count"] == 1)
        & rows["data_model"].fillna("").ne("")
        & (rows["spread_pct"].astype(float) <= MAX_SPREAD_PCT)
    )
    by_gpu = specs.sort_values("instance").drop_duplicates("gpu").set_index("gpu")["instance"]
    anchor = medians[medians["instance"] == ANCHOR].dropna(subset=list(FAM_COLS))
    out = []
    for r in rows[keep].itertuples(index=False):
        target = by_gpu.get(r.catalog_gpu)
        a = anchor[
            (anchor["model"] == r.data_model)
            & (anchor["input_size"] == r.image_size)
            & (anchor["batch_size"] == r.batch_size)
        ]
        if target is None or a.empty:
            continue
        a = a.iloc[0]
        out.append(
            {
                "document": r.source,
                "source": r.source,
                "baseline_source": f"PROFET data: {ANCHOR} median",
                "framework": r.framework,
                "model": r.model,
                "profile": r.data_model,
                "anchor": ANCHOR,
                "target": target,
                "target_gpu": r.catalog_gpu,
                "gpu_published": r.gpu_published,
                "speedup": float(r.images_per_s) * a["latency_s"] / float(r.batch_size),
                "held_out": bool(held_out([r.model])[0] or held_out([r.data_model])[0]),
                "input_size": a["input_size"],
                "batch_size": a["batch_size"],
                **{c: a[c] for c in FAM_COLS},
                "anchor_latency_s": a["latency_s"],
            }
        )
    frame = pd.DataFrame(out, columns=list(PAIR_COLUMNS))
    return frame.astype({"held_out": bool, "speedup": float})


def published_and_inhouse_pairs(table, specs, medians) -> pd.DataFrame:
    """The published table's pairs, then the in-house ones (candidate B); the table's alone
    where the data lacks :data:`ANCHOR`."""
    pairs = published_pairs(table, specs, medians)
    if ANCHOR not in set(medians["instance"]):
        return pairs
    extra = inhouse_pairs(specs, medians)
    return pd.concat([pairs, extra], ignore_index=True) if len(extra) else pairs


def inhouse_amp_pairs(rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """Same-GPU AMP gains of the in-house rows, shaped as
    :func:`profet_core.crossgpu.configurations._amp.amp_pairs` rows (candidate S3 of docs/inhouse_amp_rule.md).

    Each one-GPU ``AMP`` (FP16 autocast) row pairs with the ``TF32`` row of the same GPU, CNN,
    image size and batch; both rows' ``spread_pct`` must be at most :data:`MAX_SPREAD_PCT`.
    ``AMP BF16`` and strict ``FP32`` rows never pair. The profile is ``data_model``, else
    ``profile_proxy`` (the published table's convention); VGG16 and Inception-v3 rows are flagged
    ``held_out`` (by name or proxy), as in every source.

    Parameters
    ----------
    rows : pandas.DataFrame, optional
        In-house rows as ``torch_steps.py`` writes them (default: :func:`load_inhouse`); the
        columns :func:`profet_core.crossgpu.spec._inhouse.gpu_ratios` reads plus ``source``,
        ``framework``, ``gpu_published``.

    Returns
    -------
    pandas.DataFrame
        ``repo`` (``source`` before its ``@``), ``framework``, ``model``, ``profile``,
        ``catalog_gpu``, ``gpu_published``, ``source`` (the AMP row's), ``baseline_source`` (the
        TF32 row's), ``gain`` (TF32 ms per step / AMP ms per step), ``batch_size``,
        ``image_size``, ``held_out``; one row per pair, empty (same columns) where none pairs.
    """
    rows = load_inhouse() if rows is None else rows
    r = checked_steps(rows)
    r = r[(r["spread"] <= MAX_SPREAD_PCT) & (r["cnn"] != "")]
    key = ["catalog_gpu", *KEY]
    cols = [*key, "source", "framework", "gpu_published", "ms", "held_out"]
    amp = r.loc[r["precision"] == "AMP", cols]
    tf32 = r.loc[r["precision"] == "TF32", [*key, "source", "ms"]]
    p = amp.merge(tf32, on=key, suffixes=("", "_tf32"))
    out = pd.DataFrame(
        {
            "repo": p["source"].astype(str).str.split("@").str[0],
            "framework": p["framework"].astype(str),
            "model": p["model"].astype(str),
            "profile": p["cnn"].astype(str),
            "catalog_gpu": p["catalog_gpu"].astype(str),
            "gpu_published": p["gpu_published"].astype(str),
            "source": p["source"].astype(str),
            "baseline_source": p["source_tf32"].astype(str),
            "gain": (p["ms_tf32"] / p["ms"]).astype(float),
            "batch_size": p["batch_size"],
            "image_size": p["image_size"],
            "held_out": p["held_out"].astype(bool),
        }
    )
    return out.sort_values(["catalog_gpu", "model", "batch_size"], ignore_index=True)


@dataclass(frozen=True)
class Fits:
    """How a study fits the AMP-gain and N-GPU models; the defaults are the product's.

    Attributes
    ----------
    inhouse_amp : bool
        Whether the in-house AMP pairs (:func:`inhouse_amp_pairs`, S3) join the table's.
    memory_families : tuple of str
        The AMP fit's memory-bound families (``fit_amp``'s ``memory_families``; D drops
        ``depthwise``).
    param_counts : dict
        CNN parameter counts added to ``_dataparallel.PARAMS`` for the N-GPU rows (a set whose
        CNNs the package lacks, such as four_sources.py's F).
    """

    inhouse_amp: bool = False
    memory_families: tuple = MEMORY_FAMILIES
    param_counts: dict = field(default_factory=dict)

    def amp_state(self, table, gpus, medians, theta):
        """``amp_state_from``'s (state, pairs, shares) under these choices."""
        pairs = amp_pairs(table)
        if self.inhouse_amp:
            pairs = pd.concat([pairs, inhouse_amp_pairs()], ignore_index=True)
        return amp_state_of_pairs(pairs, gpus, medians, theta, memory_families=self.memory_families)

    def amp_logo(self, pairs, gpus, shares, by="catalog_gpu"):
        """``amp_logo`` with each fold fitted under these choices."""
        return amp_logo(pairs, gpus, shares, by, memory_families=self.memory_families)

    def scaling_rows(self, table, gpus):
        """``scaling_rows`` with :attr:`param_counts` added to the package's counts."""
        return scaling_rows(table, gpus, {**PARAMS, **self.param_counts})


#: The product's choices.
TODAY = Fits()
