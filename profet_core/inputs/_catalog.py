"""The instance catalog (each instance's GPU and on-demand price) and whole-run cost."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from .._schema import MS_PER_HOUR
from ..errors import ProfetFileNotFoundError, ProfetValueError

CATALOG_COLUMNS = ("instance", "gpu", "usd_per_hour")
#: Largest catalog file read (bytes): a few hundred instances take a few kB.
MAX_CATALOG_BYTES = 5 * 2**20
#: Prices (USD per hour) accepted besides 0 (free, e.g. own hardware): the dearest cloud GPU
#: instances cost about 100 USD/h; 10,000 leaves room, 1e300 or a denormal is a typo.
MIN_PRICE, MAX_PRICE = 1e-4, 10_000.0
#: Bounds of a whole run: images per epoch, images per step and epochs.
RUN_LIMITS = {"dataset_images": 10**11, "batch_size": 10**6, "epochs": 10**5}
#: Where a dataset folder's catalog is looked for last: the shared data's, beside the repository
#: (the layout the README's commands are run from).
DEFAULT_CATALOG = Path("../shared/instances.csv")


def validate_catalog(df: pd.DataFrame, missing_price_ok: bool = False) -> pd.DataFrame:
    """Check a catalog table.

    Parameters
    ----------
    df : pandas.DataFrame
        Columns ``instance`` (unique), ``gpu`` and ``usd_per_hour`` (finite, >= 0); other columns
        (``gpu_count``, ``gpu_memory_gb``, ``vcpus``, ``memory_gib``) are kept.
    missing_price_ok : bool
        Accept an empty price (NaN): an override catalog may name an instance only to change
        its GPU name, and the price it lacks is then kept (see :func:`merge_catalogs`).

    Returns
    -------
    pandas.DataFrame
        The catalog indexed by nothing, ``instance`` as str, ``usd_per_hour`` as float.
    """
    from ._args import frame_arg

    frame_arg(df, "the instance catalog")
    missing = [c for c in CATALOG_COLUMNS if c not in df.columns]
    if missing:
        raise ProfetValueError(
            f"instance catalog lacks column(s) {missing}; needs {list(CATALOG_COLUMNS)}"
        )
    from .._messages import show_number
    from ._rules import check_instance_names, text_to_float

    df = df.copy()
    df["instance"] = df["instance"].astype(str).str.strip()
    check_instance_names(df["instance"], "instance catalog: instance")
    if df["instance"].duplicated().any():
        dup = sorted(df.loc[df["instance"].duplicated(), "instance"])
        raise ProfetValueError(f"instance catalog lists {dup} more than once")
    raw = df["usd_per_hour"]
    if pd.api.types.is_bool_dtype(raw):
        price = pd.Series(np.nan, index=raw.index)
    elif pd.api.types.is_numeric_dtype(raw):
        price = raw.astype(float)
    else:  # text: ASCII numbers only ("True", "nan" refused); 400 digits -> inf, refused below
        price = pd.Series(text_to_float(raw, "usd_per_hour", "instance catalog"), index=raw.index)
    with np.errstate(invalid="ignore"):
        ok = (price == 0) | ((price >= MIN_PRICE) & (price <= MAX_PRICE))
    if missing_price_ok:  # an empty cell only: a bool column stays refused
        ok |= price.isna() & ~pd.api.types.is_bool_dtype(raw)
    if not ok.all():
        i = int((~ok).to_numpy().argmax())
        raise ProfetValueError(
            f"instance catalog: usd_per_hour {show_number(_as_number(raw.iloc[i]))} for {df['instance'].iloc[i]!r} is not "
            f"allowed; prices are 0 or {MIN_PRICE:g}..{MAX_PRICE:,g} USD per hour"
        )
    df["usd_per_hour"] = price
    _check_gpus_and_sizes(df)
    return df.reset_index(drop=True)


#: Columns a catalog may add, each a positive number where given (``gpu_count`` whole, at most
#: the 64 GPUs a prediction answers for).
SIZE_COLUMNS = ("gpu_count", "gpu_memory_gb", "vcpus", "memory_gib")


def _check_gpus_and_sizes(df: pd.DataFrame) -> None:
    """Refuse GPU names with control characters (a NUL byte or a terminal escape would reach
    every table and CSV) and sizes that are no size (``gpu_count`` -8, ``vcpus`` text)."""
    from .._messages import has_control, quote, show_number

    names = [g for g in pd.unique(df["gpu"]) if isinstance(g, str) and has_control(g)]
    if names:
        raise ProfetValueError(
            f"instance catalog: gpu {quote(names[0])} holds control characters (a NUL byte, a "
            "terminal escape); a GPU name is printable text"
        )
    for col in [c for c in SIZE_COLUMNS if c in df.columns]:
        raw = df[col]
        given = raw.notna() & (raw.astype(str).str.strip() != "")
        v = pd.to_numeric(raw.where(given), errors="coerce").to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(v) & (v > 0)
            if col == "gpu_count":
                ok &= (v == np.round(v)) & (v <= 64)
        bad = given.to_numpy() & ~ok
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = "a whole number of GPUs 1..64" if col == "gpu_count" else "a number > 0"
            raise ProfetValueError(
                f"instance catalog: {col} {show_number(_as_number(raw.iloc[i]))} for "
                f"{df['instance'].iloc[i]!r} is not allowed; it is {what}, or empty"
            )


def merge_catalogs(base: pd.DataFrame, other: pd.DataFrame, prefer: str = "other") -> pd.DataFrame:
    """One catalog from two, one line per instance of either.

    Parameters
    ----------
    base, other : pandas.DataFrame
        Catalogs (see :func:`validate_catalog`).
    prefer : {"other", "base"}
        ``"other"``: an instance both list takes ``other``'s values where ``other`` has one and
        keeps ``base``'s elsewhere (a user's prices override the artifacts' and leave the GPU
        names, counts and memory they do not give). ``"base"``: ``other`` only adds the
        instances ``base`` lacks.

    Returns
    -------
    pandas.DataFrame
        Validated; ``base``'s instances in its order, then ``other``'s new ones.
    """
    if prefer not in ("other", "base"):
        raise ProfetValueError(f"prefer {prefer!r}; allowed: other, base")
    # Missing prices pass: each caller validated its own catalog as strictly as it needs.
    b = validate_catalog(base, missing_price_ok=True).set_index("instance")
    o = validate_catalog(other, missing_price_ok=True).set_index("instance")
    if prefer == "base":
        o = o[~o.index.isin(b.index)]
    order = [*b.index, *(i for i in o.index if i not in b.index)]
    columns = [*b.columns, *(c for c in o.columns if c not in b.columns)]
    if prefer == "base":  # only new lines: base's as they are, then other's (what
        # combine_first gives here, without its per-cell alignment)
        merged = pd.concat([b, o], axis=0).reindex(columns=columns)
    else:
        merged = o.combine_first(b).reindex(index=order, columns=columns)
    return validate_catalog(merged.rename_axis("instance").reset_index(), missing_price_ok=True)


def override_notes(base: pd.DataFrame, other: pd.DataFrame, known) -> tuple[str, ...]:
    """What a user's catalog ``other`` changed less than it seems to: the warnings of an override.

    Parameters
    ----------
    base : pandas.DataFrame
        The catalog overridden (validated; the offerings' prices and the artifacts' GPU names).
    other : pandas.DataFrame
        The user's catalog (validated with ``missing_price_ok``).
    known : collection of str
        The instances predictions reach.

    Returns
    -------
    tuple of str
        One warning naming the user's instances that no prediction reaches (their lines are
        unused), one naming those listed without a price (the per-target table keeps the
        offerings' price, or has none; no offering is added); empty when every line is used
        as written.
    """
    from .._messages import quote_list

    known = set(known)
    names = other["instance"].tolist()
    unknown = [i for i in names if i not in known]
    no_price = other.loc[other["usd_per_hour"].isna() & other["instance"].isin(known), "instance"]
    priced = base.set_index("instance")["usd_per_hour"].dropna()
    kept = [i for i in no_price if i in priced.index]
    lost = [i for i in no_price if i not in priced.index]
    notes = []
    if unknown:
        notes.append(
            f"the catalog lists {len(unknown)} instance(s) the artifacts do not predict, "
            f"so their lines are unused: {quote_list(unknown)}; 'profet instances' lists those "
            "predicted (a new GPU needs 'profet add-instance')"
        )
    if kept or lost:  # what each such line does, in both answers a catalog reaches
        shown = ", ".join(f"{i!r} {priced[i]:g} USD/h" for i in kept[:8])
        more = f" and {len(kept) - 8} more" if len(kept) > 8 else ""
        parts = [f"the per-target table keeps the offerings' price ({shown}{more})"] if kept else []
        parts += (
            [f"{quote_list(lost)} has no price at all, so its cost is empty there"] if lost else []
        )
        notes.append(
            f"the catalog gives no usd_per_hour for {quote_list([*kept, *lost])}, so those "
            f"line(s) set no price: {'; '.join(parts)}; and they add no offering (cloud "
            "'catalog'): give a usd_per_hour to price one"
        )
    return tuple(notes)


def _as_number(cell):
    """A cell as the number it spells (a 400-digit int stays an int), else the cell."""
    for kind in (int, float):
        try:
            return kind(str(cell).strip())
        except ValueError:
            pass
    return cell


def load_catalog(path: str | Path, missing_price_ok: bool = False) -> pd.DataFrame:
    """Read and validate an instance catalog CSV (see :func:`validate_catalog`)."""
    from ._csv import read_csv_file

    table = read_csv_file(path, MAX_CATALOG_BYTES, "instance catalog")
    return validate_catalog(table, missing_price_ok)


def find_catalog(data: str | Path) -> Path:
    """The catalog file of a dataset folder.

    Parameters
    ----------
    data : path-like
        A dataset folder.

    Returns
    -------
    pathlib.Path
        ``instances.csv`` in the folder, else two levels up (the shared data's ``data/profet``
        layout), else :data:`DEFAULT_CATALOG`.

    Raises
    ------
    ProfetFileNotFoundError
        None of them exists.
    """
    data = Path(data)
    for candidate in (
        data / "instances.csv",
        data.parent.parent / "instances.csv",
        DEFAULT_CATALOG,
    ):
        if candidate.is_file():
            return candidate
    raise ProfetFileNotFoundError(f"no instances.csv next to {str(data)!r}; pass --catalog PATH")


def catalog_for_data(folders, path: str | Path | None = None) -> pd.DataFrame:
    """The instance catalog for training on dataset folders.

    Parameters
    ----------
    folders : sequence of path-like
        Dataset folders, at least one.
    path : path-like, optional
        A catalog file: then it alone is the catalog.

    Returns
    -------
    pandas.DataFrame
        The first folder's catalog (:func:`find_catalog`); the other folders' own
        ``instances.csv`` (e.g. a collected instance's line) only add the instances it lacks.
    """
    if path is not None:
        return load_catalog(path)
    folders = [Path(f) for f in folders]
    catalog = load_catalog(find_catalog(folders[0]))
    for folder in folders[1:]:
        if (folder / "instances.csv").is_file():
            extra = load_catalog(folder / "instances.csv")
            catalog = merge_catalogs(catalog, extra, prefer="base")
    return catalog


def _positive_int(name: str, value) -> int:
    from .._messages import show_number

    top = RUN_LIMITS[name]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= top:
        raise ProfetValueError(
            f"{name} is {show_number(value)}; it must be a whole number 1..{top:,}"
        )
    return int(value)


def estimate_run(
    table: pd.DataFrame, dataset_images: int, batch_size: int, epochs: int
) -> pd.DataFrame:
    """Time and cost of a whole training run on each target.

    Parameters
    ----------
    table : pandas.DataFrame
        A prediction table with ``batch_latency_ms`` and ``usd_per_hour``, and optionally
        ``low_ms``/``high_ms``.
    dataset_images : int
        Training images per epoch.
    batch_size : int
        Images per training step (the batch size the profile was taken with).
    epochs : int

    Returns
    -------
    pandas.DataFrame
        ``table`` plus ``steps``, ``run_hours`` and ``run_usd`` (and ``run_usd_low``/``run_usd_high``
        from the interval when present). ``run_usd`` is NaN where the price is unknown.
    """
    from ._args import frame_arg

    frame_arg(table, "the prediction table")
    missing = [c for c in ("batch_latency_ms", "usd_per_hour") if c not in table.columns]
    if missing:
        raise ProfetValueError(
            f"the prediction table lacks {missing}; give Prediction.table (from predict)"
        )
    for col in ("batch_latency_ms", "usd_per_hour"):  # a negative one: a negative cost
        v = pd.to_numeric(table[col], errors="coerce").to_numpy(dtype=float)
        if (v < 0).any() or np.isinf(v).any():
            bad = v[(v < 0) | np.isinf(v)][0]
            raise ProfetValueError(
                f"the prediction table's {col} holds {bad:g}; a latency or price must be finite "
                "and >= 0"
            )
    dataset_images = _positive_int("dataset_images", dataset_images)
    batch_size = _positive_int("batch_size", batch_size)
    epochs = _positive_int("epochs", epochs)
    steps = math.ceil(dataset_images / batch_size) * epochs
    # Data-parallel: global batch = GPUs used x batch (offerings: ``gpus_used``; ``gpus`` there
    # is the instance's count, which one-GPU use leaves idle).
    used = "gpus_used" if "gpus_used" in table.columns else "gpus"
    if used in table.columns:
        gpus = pd.to_numeric(table[used], errors="coerce").fillna(1).to_numpy()
        steps = (np.ceil(dataset_images / (batch_size * gpus)) * epochs).astype(int)
    out = table.copy()
    out["steps"] = steps
    out["run_hours"] = out["batch_latency_ms"] * steps / MS_PER_HOUR
    out["run_usd"] = out["run_hours"] * out["usd_per_hour"]
    for side in ("low", "high"):
        if f"{side}_ms" in out:
            out[f"run_usd_{side}"] = out[f"{side}_ms"] * steps / MS_PER_HOUR * out["usd_per_hour"]
    return out
