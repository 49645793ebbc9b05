"""``validate()``: the leave-one-architecture-out report of ``profet validate``, and with
``cross=True`` the cross-instance model's leave-one-GPU-out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..inputs._args import path_arg
from ..inputs._dataset import Dataset
from ..inputs._gpu_specs import load_specs
from ..models._intervals import interval_quantiles
from ..models._methods import METHODS, method_factory
from ._cross_validate import Progress, cross_validate
from ._folders import as_folders, read_folders
from ._report import write_validation
from ._swap import check_command_out, written_beside

#: What :func:`validate` writes besides ``crossgpu.csv``, the report first.
FILES = ("report.md", "metrics.csv", "per_architecture.csv", "scalers.csv", "noise.csv")
#: Columns of :meth:`Validation.crossgpu_summary`: each left-out GPU's errors (MAPE %).
SUMMARY_COLUMNS = (
    "basis k left_out mape_cross max_pair_cross mape_fp32-ratio mape_roofline coverage_pct"
).split()


@dataclass(frozen=True)
class Validation:
    """What :func:`validate` wrote and found.

    Attributes
    ----------
    out : pathlib.Path
        The folder written.
    report : str
        ``report.md``'s text (Markdown).
    files : tuple of str
        The report and its main tables in ``out`` (:data:`FILES`; ``run.json`` and
        ``breakdown.csv`` are written too).
    crossgpu : pandas.DataFrame or None
        The cross-instance model's leave-one-GPU-out table (``crossgpu.csv``); None unless
        ``cross``.
    """

    out: Path
    report: str
    files: tuple[str, ...]
    crossgpu: pd.DataFrame | None = None

    def crossgpu_summary(self) -> pd.DataFrame | None:
        """Each left-out GPU's errors, both directions together (:data:`SUMMARY_COLUMNS`)."""
        if self.crossgpu is None:
            return None
        both = self.crossgpu[self.crossgpu["direction"] == "both"]
        return both[SUMMARY_COLUMNS].reset_index(drop=True)


def validate(
    data,
    out="validation",
    *,
    methods=None,
    anchors=None,
    targets=None,
    architectures=None,
    threshold: float = 6.0,
    method_params: dict | None = None,
    cross: bool = False,
    specs=None,
    progress: Progress | None = None,
) -> Validation:
    """Cross-validate (leave one architecture out) and write the accuracy report.

    Parameters
    ----------
    data : Dataset, path-like or sequence of path-like
        The data, or dataset folders (concatenated).
    out : path-like
        Folder for ``report.md``, the CSVs and ``run.json`` (which ``train(validation=out)``
        reuses for the same data and settings): new, empty or one ``validate`` wrote (checked
        before any work; never overlapping ``data`` or inside an artifacts folder); written
        beside and swapped in.
    methods : list of str, optional
        Methods to validate (default: all).
    anchors, targets, architectures : list of str, optional
        Restrict the pairs and the left-out architectures (default: all). The noise floor and
        the scaler tables (two-point and one-point) stay on the full data and say so in the
        report.
    threshold : float
        Op-clustering distance threshold (reference method).
    method_params : dict, optional
        ``{method: {param: value}}`` passed to the method constructors.
    cross : bool
        Also validate the cross-instance model: each GPU left out (leave-one-GPU-out x
        leave-one-architecture-out, from specs only and after 1 or 3 measured CNNs); writes
        ``crossgpu.csv``.
    specs : pandas.DataFrame or path-like, optional
        GPU spec catalog for ``cross`` (default: the package's); a file is read before any
        fitting, so a bad one is refused at once.
    progress : callable, optional
        ``progress(done, total, message)``.

    Returns
    -------
    Validation
        The report's text, the files written and, with ``cross``, the leave-one-GPU-out table.
    """
    path_arg(out, "the report folder (out)")  # type checks before any work
    inputs = [] if isinstance(data, Dataset) else as_folders(data)
    if specs is not None and not isinstance(specs, pd.DataFrame):
        inputs.append(specs)
    out = check_command_out(out, "validate", inputs)  # before any work
    if cross and not isinstance(specs, pd.DataFrame):
        specs = load_specs(specs)
    dataset = data if isinstance(data, Dataset) else read_folders(data)
    params = method_params or {}
    factories = {m: method_factory(m, params.get(m)) for m in methods or METHODS}
    oof = cross_validate(
        dataset,
        factories,
        threshold=threshold,
        anchors=anchors,
        targets=targets,
        architectures=architectures,
        progress=progress,
    )
    settings = {"threshold": threshold, "method_params": params}
    chosen = {"anchors": anchors, "targets": targets, "architectures": architectures}
    # The noise floor and scaler tables are per instance on all the data: said in the report.
    selection = "; ".join(f"{k} {', '.join(map(str, v))}" for k, v in chosen.items() if v)
    with written_beside(out, "validate") as tmp:
        write_validation(tmp, oof, interval_quantiles(oof), dataset, settings, selection or None)
        table = _validate_cross(dataset, specs, tmp) if cross else None
        report = (tmp / "report.md").read_text()
    return Validation(out, report, FILES, table)


def _validate_cross(dataset: Dataset, specs: pd.DataFrame, out: Path) -> pd.DataFrame:
    """Leave-one-GPU-out x leave-one-architecture-out of the cross-instance model."""
    from ..crossgpu import median_table
    from ..crossgpu.spec._validate import cross_validate_gpus, summarize_gpus

    table = summarize_gpus(cross_validate_gpus(median_table(dataset), specs))
    table.to_csv(out / "crossgpu.csv", index=False)
    return table
