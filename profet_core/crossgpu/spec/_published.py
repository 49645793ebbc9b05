"""Published training-throughput measurements (package data) and the speed-up pairs they give.

``profet_core/data/published.csv`` holds one row per published measurement with its provenance
(see ``profet_core/data/README.md``). Two rows of the same source document, framework, CNN and
GPU count form a pair when one GPU is measured in PROFET's data (the baseline) and the other is a
catalog GPU the data lacks: the published speed-up of the second over the first. Every VGG16 and
Inception-v3 row is held out (:func:`held_out`): never fitted, never used to choose a method.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import ProfetFileNotFoundError, ProfetValueError
from ._pairs import FAM_COLS

TEXT = ("source", "framework", "precision", "xla", "gpu_published", "model")
OPTIONAL_TEXT = (
    "framework_version",
    "catalog_gpu",
    "variant_note",
    "data_model",
    "profile_proxy",
    "notes",
)
NUMBERS = ("gpu_count", "batch_size", "image_size", "images_per_s")
COLUMNS = (*TEXT, *OPTIONAL_TEXT, *NUMBERS)
PRECISIONS = ("FP32", "TF32", "FP32 or TF32", "AMP")
XLA = ("on", "off", "unknown")
#: A GitHub file at a commit (repository@40-hex:path[:line]) or a URL with its date.
SOURCE = re.compile(
    r"^([\w.-]+/[\w.-]+@[0-9a-f]{40}:[^\s:]+(:\d+)?|https?://\S+ \(\d{4}-\d{2}-\d{2}\))$"
)
#: Allowed ranges of the numbers (inclusive) and whether they are whole: a row at 1e-300
#: images/s once predicted an A100 at 1e294 ms. Published CNN training runs 1..100,000 images/s
#: per GPU; 1e-3..1e7 leaves room for any real one.
RANGES = {
    "gpu_count": (1, 64, True),
    "batch_size": (1, 1_000_000, True),
    "image_size": (1, 100_000, True),
    "images_per_s": (1e-3, 1e7, False),
}
#: Largest published table read (bytes).
MAX_PUBLISHED_BYTES = 10 * 1024 * 1024
#: Names (lower case, without '-', '_' and spaces) of the held-out architectures.
HELD_OUT = ("vgg16", "inception3", "inceptionv3")


def held_out(models) -> np.ndarray:
    """Whether each model name is a VGG16 or an Inception-v3 (kept out of every fit), shape (n,)."""
    norm = pd.Series(list(models), dtype=object).astype(str).str.lower()
    norm = norm.str.replace(r"[\s_-]", "", regex=True)
    return norm.isin(HELD_OUT).to_numpy()


def refuse_held_out(rows: pd.DataFrame) -> None:
    """Refuse to fit rows whose ``held_out`` flag is set (VGG16, Inception-v3): the one guard of
    every fit on published rows (AMP gain, data-parallel scaling, tensor-core efficiency)."""
    if rows["held_out"].any():
        raise ProfetValueError(
            "held-out rows (VGG16, Inception-v3) may not be fitted: "
            f"{sorted(set(rows.loc[rows['held_out'], 'model']))}"
        )


def _fail(df: pd.DataFrame, mask, column: str, allowed: str):
    rows = [int(i) + 2 for i in np.flatnonzero(np.asarray(mask))[:5]]  # CSV lines (header = 1)
    shown = df.loc[np.asarray(mask), column].tolist()[:5]
    raise ProfetValueError(
        f"published table: column {column!r} holds {shown} on line(s) {rows}; allowed: {allowed}"
    )


def validate_published(df: pd.DataFrame) -> pd.DataFrame:
    """Check a published-measurements table; return a clean copy (index reset).

    Parameters
    ----------
    df : pandas.DataFrame
        :data:`COLUMNS`: ``source`` (``owner/repo@commit:path[:line]`` or ``URL (YYYY-MM-DD)``),
        ``framework``, ``framework_version``, ``precision`` (:data:`PRECISIONS`), ``xla``
        (:data:`XLA`), ``gpu_published`` (as published), ``catalog_gpu`` (a spec catalog ``gpu``
        or empty: not mapped), ``variant_note``, ``gpu_count``, ``model`` (as published),
        ``data_model`` (the data CNN with the same architecture, or empty), ``profile_proxy``
        (the data CNN whose profile stands in when ``data_model`` is empty), ``batch_size``
        (per GPU; empty when not published), ``image_size`` (px), ``images_per_s``, ``notes``.

    Raises
    ------
    ProfetValueError
        Naming the column, the values and the CSV lines of the bad rows.
    """
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ProfetValueError(f"published table lacks column(s) {missing}; needs {list(COLUMNS)}")
    if df.empty:
        raise ProfetValueError("published table has no rows")
    df = df.reset_index(drop=True).copy()
    for c in (*TEXT, *OPTIONAL_TEXT):
        df[c] = df[c].astype("string").str.strip().fillna("").astype(str)
    for c in TEXT:
        _ok = df[c] != ""
        if not _ok.all():
            _fail(df, ~_ok, c, "a non-empty text (provenance is required)")
    bad = ~df["source"].str.match(SOURCE)
    if bad.any():
        _fail(df, bad, "source", "owner/repo@<40-hex commit>:path[:line] or 'URL (YYYY-MM-DD)'")
    for c, allowed in (("precision", PRECISIONS), ("xla", XLA)):
        bad = ~df[c].isin(allowed)
        if bad.any():
            _fail(df, bad, c, str(list(allowed)))
    both = (df["data_model"] != "") & (df["profile_proxy"] != "")
    neither = (df["data_model"] == "") & (df["profile_proxy"] == "")
    if (both | neither).any():
        _fail(df, both | neither, "profile_proxy", "exactly one of data_model / profile_proxy")
    for c in NUMBERS:
        values = pd.to_numeric(df[c], errors="coerce").astype(float)
        lo, hi, whole = RANGES[c]
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(values) | (values < lo) | (values > hi)
            bad |= (values != np.floor(values)) if whole else False
        if c == "batch_size":
            bad &= df[c].notna() & (df[c].astype(str).str.strip() != "")
            bad |= values.notna() & (values <= 0)
        if bad.any():
            kind = "a whole number" if whole else "a number"
            what = f"{kind} {lo:g}..{hi:g}"
            _fail(df, bad, c, f"empty or {what}" if c == "batch_size" else what)
        df[c] = values
    dup = df.duplicated(subset=list(COLUMNS), keep=False).to_numpy()
    if dup.any():
        lines = [int(i) + 2 for i in np.flatnonzero(dup)[:6]]
        raise ProfetValueError(
            f"published table repeats a row on lines {lines}: each measurement is listed once "
            "(a repeated row would count twice in `published (n)`)"
        )
    return df


def load_published(path: str | Path | None = None) -> pd.DataFrame:
    """Read and validate a published-measurements CSV (default: the package's table)."""
    import io

    from ..._messages import quote
    from ...inputs._safe_read import read_bounded

    if path is None:
        where = "the package's published table (profet_core/data/published.csv)"
        data = resources.files("profet_core").joinpath("data/published.csv").read_bytes()
    else:
        path = Path(path)
        if not path.is_file():
            raise ProfetFileNotFoundError(f"published table {str(path)!r} does not exist")
        where = f"published table {quote(str(path))}"
        data = read_bounded(path, MAX_PUBLISHED_BYTES, "published table")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ProfetValueError(f"{where} is not UTF-8 text") from None
    if not text.strip():
        raise ProfetValueError(f"{where} is empty; it needs the columns {list(COLUMNS)}")
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str)
    except Exception as exc:  # pandas raises many types for a malformed CSV
        raise ProfetValueError(f"cannot read {where}: {str(exc)[:200]}") from None
    return validate_published(df)


def _profile(medians: pd.DataFrame, instance: str, model: str, image: float, batch: float):
    """The anchor's median row for ``model`` nearest the published image size and batch."""
    m = medians[(medians["instance"] == instance) & (medians["model"] == model)]
    m = m.dropna(subset=list(FAM_COLS))
    if m.empty:
        raise ProfetValueError(f"the data has no profile of {model!r} on {instance!r}")
    size = m["input_size"].iloc[int(np.argmin(np.abs(m["input_size"] - image)))]
    m = m[m["input_size"] == size]
    fits = m[m["batch_size"] <= batch] if np.isfinite(batch) else m
    return (fits if len(fits) else m.nsmallest(1, "batch_size")).nlargest(1, "batch_size").iloc[0]


PAIR_COLUMNS = (
    "document",
    "source",
    "baseline_source",
    "framework",
    "model",
    "profile",
    "anchor",
    "target",
    "target_gpu",
    "gpu_published",
    "speedup",
    "held_out",
    "input_size",
    "batch_size",
    *FAM_COLS,
    "anchor_latency_s",
)


def published_pairs(table: pd.DataFrame, specs: pd.DataFrame, medians: pd.DataFrame):
    """Speed-up pairs: a data GPU (anchor) and an unmeasured catalog GPU of one document.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`load_published` rows.
    specs : pandas.DataFrame
        Spec catalog (``instance``, ``gpu``).
    medians : pandas.DataFrame
        :func:`profet_core.crossgpu.median_table` of the data (anchor profiles); rows whose
        CNN (or stand-in) the data lacks give no pair.

    Returns
    -------
    pandas.DataFrame
        One row per pair: ``document``, ``source`` (target row), ``baseline_source``,
        ``framework``, ``model``, ``profile`` (data CNN profiled), ``anchor``, ``target``
        (instances), ``target_gpu`` (catalog GPU), ``gpu_published``, ``speedup`` (target /
        anchor images/s), ``held_out``, the anchor workload, :data:`FAM_COLS` (us) and
        ``anchor_latency_s``.
    """
    # FP32/TF32 one-GPU rows only: AMP and multi-GPU rows are the AMP and data-parallel
    # models' (profet_core.crossgpu.configurations._amp, _dataparallel).
    one = table[(table["gpu_count"] == 1) & (table["precision"] != "AMP")]
    one = one.assign(document=one["source"].str.replace(r":\d+$", "", regex=True))
    # Only CNNs whose profile (or stand-in) the data holds can be predicted.
    one = one[
        one["data_model"]
        .where(one["data_model"] != "", one["profile_proxy"])
        .isin(set(medians["model"]))
    ]
    measured = set(medians["instance"])
    by_gpu = specs.sort_values("instance").drop_duplicates("gpu").set_index("gpu")["instance"]
    inst = one["catalog_gpu"].map(by_gpu)
    base = one[inst.isin(measured)].assign(anchor=inst)
    # Targets are GPUs of generations the data lacks (a V100 32GB or a Turing card is no
    # tensor-core efficiency to learn: the data's own generation terms cover it).
    arch = specs.set_index("instance")["arch"]
    data_gens = set(arch.reindex(sorted(measured)).dropna())
    targ = one[inst.notna() & ~inst.isin(measured) & ~inst.map(arch).isin(data_gens)]
    targ = targ.assign(target=inst)
    key = ["document", "framework", "model"]
    pairs = targ.merge(
        base[[*key, "anchor", "source", "images_per_s"]], on=key, suffixes=("", "_b")
    )
    rows = []
    for r in pairs.itertuples(index=False):
        profile = r.data_model or r.profile_proxy
        a = _profile(medians, r.anchor, profile, r.image_size, r.batch_size)
        rows.append(
            {
                "document": r.document,
                "source": r.source,
                "baseline_source": r.source_b,
                "framework": r.framework,
                "model": r.model,
                "profile": profile,
                "anchor": r.anchor,
                "target": r.target,
                "target_gpu": r.catalog_gpu,
                "gpu_published": r.gpu_published,
                "speedup": r.images_per_s / r.images_per_s_b,
                "held_out": bool(held_out([r.model])[0] or held_out([r.data_model])[0]),
                "input_size": a["input_size"],
                "batch_size": a["batch_size"],
                **{c: a[c] for c in FAM_COLS},
                "anchor_latency_s": a["latency_s"],
            }
        )
    out = pd.DataFrame(rows, columns=list(PAIR_COLUMNS))
    return out.astype({"held_out": bool, "speedup": float})
