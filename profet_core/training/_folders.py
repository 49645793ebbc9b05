"""Dataset folders as the command line names them: refused before anything is read when they
cannot serve (a bad path is said in the first second, not after minutes of reading), then read
and joined, with the instance catalog that goes with them."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..inputs._args import path_arg
from ..inputs._catalog import catalog_for_data
from ..inputs._dataset import Dataset, combine_datasets, load_dataset
from ._swap import check_paths


def as_folders(data) -> list[Path]:
    """One dataset folder or a sequence of them, as a list of paths."""
    if isinstance(data, str | bytes | os.PathLike) or not np.iterable(data):
        return [path_arg(data, "the dataset folder")]
    return [path_arg(d, "a dataset folder") for d in data]


def read_folders(folders) -> Dataset:
    """The dataset folders read and concatenated (see ``combine_datasets``)."""
    return combine_datasets([load_dataset(d) for d in as_folders(folders)])


def training_data(
    folders, out, catalog: str | os.PathLike | None = None, validation=None
) -> tuple[Dataset, pd.DataFrame]:
    """The dataset and instance catalog to train on, from dataset folders.

    Parameters
    ----------
    folders : path-like or sequence of path-like
        Dataset folders, concatenated.
    out : path-like
        The artifacts folder training will write: checked first with the folders and
        ``validation`` (``check_paths``), before any data are read.
    catalog : path-like, optional
        Catalog file; default: the first folder's (``find_catalog``), which the other folders'
        own ``instances.csv`` only add instances to.
    validation : path-like, optional
        A ``profet validate`` folder to reuse (it must hold ``run.json``).

    Returns
    -------
    tuple of (Dataset, pandas.DataFrame)
    """
    folders = as_folders(folders)
    check_paths(folders, out, validation)
    chosen = catalog_for_data(folders, catalog)
    return read_folders(folders), chosen
