"""Loading and validating PROFET datasets, and building anchor -> target training pairs."""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from .._schema import KEY, MAX_OP_TIME_US, PAIR_KEY, op_columns
from ..errors import ProfetFileNotFoundError, ProfetValueError
from ._args import frame_arg, path_arg, shown
from ._convention import CONVENTION, ZOO_VERSION, check_same_convention, folder_convention
from ._rules import check_instance_names


@dataclass(frozen=True)
class Dataset:
    """A validated PROFET dataset.

    Attributes
    ----------
    profiles : pandas.DataFrame
        One row per profiled step: the :data:`KEY` columns plus ``Host_*``/``Device_*`` op times
        in microseconds (0 where the op did not occur).
    latencies : pandas.DataFrame
        The :data:`KEY` columns plus ``batch_latency_s`` (seconds, > 0).
    fingerprint : str
        sha256 of the two tables' contents, recorded in trained artifacts.
    convention, zoo : str
        Capture convention and benchmark zoo that made the rows (``profet_core.inputs._convention``).
    source : str
        Where the rows came from (a folder), for messages.
    """

    profiles: pd.DataFrame
    latencies: pd.DataFrame
    fingerprint: str
    convention: str = CONVENTION
    zoo: str = ZOO_VERSION
    source: str = "an in-memory dataset"

    @property
    def instances(self) -> list[str]:
        """Instances that have both profiles and latencies, sorted."""
        return sorted(set(self.profiles["instance"]) & set(self.latencies["instance"]))

    @property
    def ops(self) -> list[str]:
        """Op-time columns of the profiles."""
        return op_columns(self.profiles.columns)

    @property
    def architectures(self) -> list[str]:
        """CNN architectures (``model`` values) in the profiles, sorted."""
        return sorted(self.profiles["model"].unique())


def _read_csv(path: Path, **kwargs) -> pd.DataFrame:
    """A CSV whose every row has as many fields as its header (see ``_csv.check_csv_text``)."""
    from ._csv import check_csv_text

    text = path.read_text(encoding="utf-8-sig")
    check_csv_text(text, str(path))
    return pd.read_csv(io.StringIO(text), **kwargs)


def _read_table(folder: Path, stem: str) -> pd.DataFrame:
    # An empty CSV cell is a missing op (0); a literal "nan" or "null" is an error, not missing.
    csv = partial(_read_csv, keep_default_na=False, na_values=[""])
    # No Arrow thread pools: their threads can abort the process at exit (apache/arrow#34314).
    parquet = partial(pd.read_parquet, pre_buffer=False, use_threads=False)
    for suffix, reader in ((".parquet", parquet), (".csv", csv)):
        path = folder / f"{stem}{suffix}"
        if path.is_file():
            try:
                return reader(path)
            except ProfetValueError:
                raise
            except Exception as exc:  # pandas/pyarrow raise many types for a broken file
                raise ProfetValueError(f"cannot read {path}: {exc}") from exc
    raise ProfetFileNotFoundError(
        f"no {stem}.parquet or {stem}.csv in {folder} (a dataset folder holds profiles and latencies)"
    )


def _require(df: pd.DataFrame, cols, what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ProfetValueError(
            f"{what} lacks required column(s) {missing}; it has {list(df.columns)[:12]}"
        )


def validate_tables(
    profiles: pd.DataFrame, latencies: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Check and normalise a profiles table and a latencies table.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Must hold the key columns ``exp, instance, model, input_size, batch_size`` and at least
        one ``Host_*``/``Device_*`` column (microseconds, finite, >= 0; missing values become 0).
    latencies : pandas.DataFrame
        Must hold the key columns and ``batch_latency_s`` (seconds, finite, > 0).

    Returns
    -------
    tuple of pandas.DataFrame
        Copies with string keys, integer sizes and float op times.

    Raises
    ------
    ProfetValueError
        On a missing column, a non-numeric, negative or non-finite time, or an empty table.
    """
    _require(profiles, KEY, "profiles table")
    _require(latencies, (*KEY, "batch_latency_s"), "latencies table")
    ops = op_columns(profiles.columns)
    if not ops:
        raise ProfetValueError("profiles table has no Host_<Op>/Device_<Op> columns")
    if profiles.empty or latencies.empty:
        raise ProfetValueError("profiles and latencies tables must not be empty")
    profiles = profiles.copy()
    latencies = latencies.copy()

    for df, what in ((profiles, "profiles"), (latencies, "latencies")):
        for c in ("exp", "instance", "model"):
            df[c] = df[c].astype(str)
        check_instance_names(df["instance"].unique(), f"{what} table: instance")
        for c in ("input_size", "batch_size"):
            df[c] = _whole_column(df[c], f"{what} table: column {c!r}")
    flags = [c for c in ops if not _numeric_or_text(profiles[c])]
    if flags:
        raise ProfetValueError(
            f"op column(s) {flags[:5]} hold {profiles[flags[0]].dtype} values; op times are "
            "numbers of microseconds (not True/False, dates or durations)"
        )
    times = profiles[ops].apply(pd.to_numeric, errors="coerce")
    bad = [c for c in ops if (profiles[c].notna() & times[c].isna()).any()]
    if bad:
        raise ProfetValueError(
            f"op column(s) {bad[:5]} hold non-numeric values; op times are microseconds"
        )
    times = times.fillna(0.0).astype(float)
    arr = times.to_numpy()
    if not np.isfinite(arr).all() or (arr < 0).any() or (arr > MAX_OP_TIME_US).any():
        bad = [c for c in ops if (~np.isfinite(times[c]) | (times[c] < 0)).any()]
        bad += [c for c in ops if (times[c] > MAX_OP_TIME_US).any()]
        raise ProfetValueError(
            f"op column(s) {bad[:5]} hold negative, infinite or absurd times; allowed: "
            f"0..{MAX_OP_TIME_US:g} us"
        )
    profiles[ops] = times
    lat = pd.to_numeric(latencies["batch_latency_s"], errors="coerce")
    if lat.isna().any() or not np.isfinite(lat).all() or (lat <= 0).any():
        raise ProfetValueError(
            "batch_latency_s must be a finite number of seconds > 0 in every row"
        )
    latencies["batch_latency_s"] = lat.astype(float)
    return profiles, latencies


def _numeric_or_text(col: pd.Series) -> bool:
    """Numbers, or text to convert (CSV); not booleans, datetimes, durations or complex."""
    if pd.api.types.is_bool_dtype(col) or col.dtype.kind in "mMc":
        return False
    if col.dtype == object:  # Parquet object columns may hold Timedelta or bool objects
        kinds = {type(v) for v in col.dropna().head(1000)}
        return kinds <= {str, int, float}
    return pd.api.types.is_numeric_dtype(col) or pd.api.types.is_string_dtype(col)


def _whole_column(col: pd.Series, what: str) -> pd.Series:
    """Positive whole numbers as int; 32.5, True, text and empty cells are refused."""
    values = pd.to_numeric(col, errors="coerce")
    ok = not pd.api.types.is_bool_dtype(col) and values.notna().all()
    ok = ok and (values > 0).all() and (values == np.floor(values)).all()
    ok = ok and (values <= 1_000_000).all()
    if not ok:
        bad = col[~(values.notna() & (values > 0) & (values == np.floor(values)))]
        shown = bad.iloc[0] if len(bad) else col.iloc[0]
        raise ProfetValueError(
            f"{what} holds {str(shown)[:40]!r}; sizes must be whole numbers 1..1,000,000 "
            "(never truncated)"
        )
    return values.astype(int)


def _fingerprint(*frames: pd.DataFrame) -> str:
    h = hashlib.sha256()
    for df in frames:
        h.update(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes())
        h.update(",".join(map(str, df.columns)).encode())
    return h.hexdigest()


def dataset_arg(value, what: str = "dataset") -> Dataset:
    """A :class:`Dataset` argument (as :func:`load_dataset` or :func:`make_dataset` return)."""
    if not isinstance(value, Dataset):
        raise ProfetValueError(
            f"{what} must be a Dataset (from load_dataset or make_dataset); got "
            f"{type(value).__name__} {shown(value)}"
        )
    return value


def make_dataset(profiles: pd.DataFrame, latencies: pd.DataFrame) -> Dataset:
    """Validate two in-memory tables (see :func:`validate_tables`) into a :class:`Dataset`."""
    frame_arg(profiles, "profiles")
    frame_arg(latencies, "latencies")
    profiles, latencies = validate_tables(profiles, latencies)
    cols = [*KEY, "batch_latency_s"]
    latencies = latencies[cols + [c for c in latencies.columns if c not in cols]]
    return Dataset(
        profiles.reset_index(drop=True),
        latencies.reset_index(drop=True),
        _fingerprint(profiles, latencies),
    )


def load_dataset(path: str | Path) -> Dataset:
    """Load a dataset folder in the shared schema.

    Parameters
    ----------
    path : str or path-like
        Folder holding ``profiles.parquet`` (or ``.csv``) and ``latencies.parquet`` (or ``.csv``).

    Returns
    -------
    Dataset

    Raises
    ------
    ProfetFileNotFoundError
        If the folder or a table is missing.
    ProfetValueError
        If a table is unreadable or fails :func:`validate_tables`.
    """
    folder = path_arg(path, "the dataset folder")
    if not folder.is_dir():
        raise ProfetFileNotFoundError(f"dataset folder {str(folder)!r} does not exist")
    convention, zoo = folder_convention(folder)
    dataset = make_dataset(_read_table(folder, "profiles"), _read_table(folder, "latencies"))
    return replace(dataset, convention=convention, zoo=zoo, source=f"folder {str(folder)!r}")


def combine_datasets(datasets) -> Dataset:
    """Concatenate datasets (e.g. the shared data and a collected instance) into one.

    Parameters
    ----------
    datasets : sequence of Dataset
        At least one, all of the same capture convention and zoo. Op columns missing from a
        dataset count as 0 us; rows with the same key in two datasets are both kept
        (``make_pairs`` takes their median latency).

    Returns
    -------
    Dataset
        Validated again, with a fingerprint over the combined tables.

    Raises
    ------
    ProfetValueError
        If the datasets' conventions or zoos differ (their same-named workloads differ).
    """
    datasets = list(datasets)
    if not datasets:
        raise ProfetValueError("combine_datasets needs at least one dataset")
    if len(datasets) == 1:
        return datasets[0]
    check_same_convention((d.source, d.convention, d.zoo) for d in datasets)
    profiles = pd.concat([d.profiles for d in datasets], ignore_index=True)
    ops = sorted(op_columns(profiles.columns))
    profiles = profiles[[*KEY, *ops]].fillna({c: 0.0 for c in ops})
    latencies = pd.concat([d.latencies for d in datasets], ignore_index=True)
    first = datasets[0]
    return replace(make_dataset(profiles, latencies), convention=first.convention, zoo=first.zoo)


def make_pairs(dataset: Dataset, anchor: str, target: str) -> pd.DataFrame:
    """Join the anchor's profiles to the anchor's and the target's latencies.

    Parameters
    ----------
    dataset : Dataset
    anchor, target : str
        Instance names present in the dataset.

    Returns
    -------
    pandas.DataFrame
        One row per key profiled on ``anchor`` and measured on ``target``: :data:`PAIR_KEY`,
        the anchor's op columns (us), ``anchor_latency_s`` and ``target_latency_s`` (seconds).
    """
    dataset_arg(dataset)
    for name in (anchor, target):
        if not isinstance(name, str) or name not in dataset.instances:
            raise ProfetValueError(
                f"instance {shown(name)} not in dataset; known: {dataset.instances}"
            )
    key = list(PAIR_KEY)
    prof = dataset.profiles[dataset.profiles["instance"] == anchor].drop(columns="instance")
    lat_tab = dataset.latencies[[*KEY, "batch_latency_s"]]
    a = lat_tab[lat_tab["instance"] == anchor].drop(columns="instance")
    t = lat_tab[lat_tab["instance"] == target].drop(columns="instance")
    # Aggregate duplicate keys defensively so a join can never multiply rows.
    a = a.groupby(key, as_index=False)["batch_latency_s"].median()
    t = t.groupby(key, as_index=False)["batch_latency_s"].median()
    out = prof.merge(a.rename(columns={"batch_latency_s": "anchor_latency_s"}), on=key, how="inner")
    out = out.merge(t.rename(columns={"batch_latency_s": "target_latency_s"}), on=key, how="inner")
    return out.reset_index(drop=True)
