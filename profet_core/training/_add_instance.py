"""``add_instance()`` (``profet add-instance``): teach the artifacts a new instance from a few
of its runs.

Only the cross-instance model changes (a per-instance efficiency shrunk toward the spec prior);
nothing else is retrained. The artifacts folder is rewritten atomically with a new manifest.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ProfetValueError
from ..inputs._args import path_arg, shown
from ..inputs._convention import CONVENTION, ZOO_VERSION
from ..inputs._dataset import Dataset
from ..inputs._gpu_specs import SPEC_COLUMNS, load_specs
from ..inputs._outputs import folder_lock
from ..inputs._rules import check_instance_names
from ..prediction._load import load_models
from ..prediction._store import artifacts_path, write_json, write_manifest
from ._folders import as_folders, read_folders
from ._swap import check_out_folder, check_paths, new_temp_folder, remove_temp, replace_folder


def add_instance(path, instance: str, data, specs=None) -> str:
    """Add ``instance`` to the artifacts from a few of its runs: adapt their cross-instance
    model to it and write them back.

    Parameters
    ----------
    path : path-like or None
        Artifacts folder (default: ``$PROFET_ARTIFACTS`` or the shipped one).
    instance : str
        The new instance: in the artifacts' spec catalog, or in ``specs``.
    data : Dataset, path-like or sequence of path-like
        Rows of ``instance`` and of measured instances for the same workloads (shared schema),
        or dataset folders holding them: these are checked (they exist, and none of them is or
        holds the artifacts folder) before anything is read, then concatenated.
    specs : pandas.DataFrame or path-like, optional
        Spec catalog lines to add or replace (e.g. the new instance's line), or their CSV.

    Returns
    -------
    str
        The instance's new basis, e.g. ``"calibrated (6 runs)"``.

    Raises
    ------
    ProfetValueError
        No cross-instance model in the artifacts, an instance already measured, no workload
        shared with a measured instance, data taken under another capture convention or zoo
        than the artifacts' training data, an empty ``path``, a spec line whose instance name
        is not allowed or that changes a trained instance's specs, runs more than 20x off what
        the GPU's specs predict, or another writer holding the artifacts' lock too long. All
        are checked before writing: the artifacts are then left as they were.

    Notes
    -----
    The artifacts folder's lock (``inputs._outputs.folder_lock``) is held from reading the
    artifacts to swapping the new ones in, so concurrent runs each add their instance.
    """
    if path is not None:  # type checks before any reading
        path_arg(path, "the artifacts folder")
    if not isinstance(instance, str):
        raise ProfetValueError(f"instance must be an instance name (text); got {shown(instance)}")
    artifacts = artifacts_path(path)  # "" refused, never read as the shipped artifacts
    check_instance_names([instance], "--instance")
    if not isinstance(data, Dataset):  # paths and the spec file refused before any reading
        folders = as_folders(data)
        check_paths(folders, artifacts)
    if specs is not None and not isinstance(specs, pd.DataFrame):
        specs = load_specs(specs)
    if specs is not None:
        check_instance_names(specs["instance"], "spec catalog instance")
    dataset = data if isinstance(data, Dataset) else read_folders(folders)
    with folder_lock(artifacts):  # read, adapt and rewrite as one: no other writer between
        predictor = load_models(artifacts)
        check_convention(predictor.bundle.manifest, dataset)
        check_out_folder(predictor.path)  # it is rewritten: it must hold nothing but our files
        cross = predictor.cross
        if cross is None:
            raise ProfetValueError("these artifacts hold no cross-instance model; retrain them")
        if specs is not None:
            check_no_redefinition(cross, specs)
            keep = cross.specs_[~cross.specs_["instance"].isin(specs["instance"])]
            cross = cross.with_specs(pd.concat([keep, specs], ignore_index=True))
        if instance not in cross.spec_index_:
            raise ProfetValueError(
                f"instance {instance!r} is not in the spec catalog; pass its line with --specs FILE"
            )
        adapted = cross.calibrate(instance, dataset)
        _write_cross(Path(predictor.path), adapted, predictor.bundle.arrays)
    return adapted.basis(instance)


def check_no_redefinition(cross, specs: pd.DataFrame) -> None:
    """Refuse spec lines that change an instance the artifacts were trained on (its measured
    rows and its specs fit the model together: new specs would move every prediction); a line
    equal to the trained one is fine.

    Raises
    ------
    ProfetValueError
        Naming the instance and the first value that differs.
    """
    trained = cross.specs_.set_index("instance")
    for row in specs.itertuples(index=False):
        name = row.instance
        if name not in set(cross.instances_) or name not in trained.index:
            continue
        for col in SPEC_COLUMNS[1:]:  # after the instance name
            old, new = trained.at[name, col], getattr(row, col)
            same = (
                np.isclose(float(old), float(new), rtol=1e-9)
                if isinstance(old, int | float | np.number)
                else str(old) == str(new)
            )
            if not same:
                raise ProfetValueError(
                    f"the spec line for {name!r} changes {col} ({old} -> {new}) of an instance "
                    "the artifacts were trained on, which would move every prediction; drop "
                    "that line (nothing was changed)"
                )


def check_convention(manifest: dict, dataset: Dataset) -> None:
    """Refuse an added instance's data whose capture convention or zoo differ from the training data's
    (recorded in the manifest; artifacts from before it was recorded were trained on
    ``profet-2021`` data): the same-named workloads would not be the same."""
    trained = (manifest.get("convention", CONVENTION), manifest.get("zoo", ZOO_VERSION))
    if (dataset.convention, dataset.zoo) != trained:
        raise ProfetValueError(
            f"the new instance's data {dataset.source} has convention {dataset.convention!r} (zoo "
            f"{dataset.zoo!r}) but the artifacts were trained on convention {trained[0]!r} (zoo "
            f"{trained[1]!r}); collect the new instance's runs the same way as the training data"
        )


def _write_cross(folder: Path, cross, stored) -> None:
    """Replace the cross model's state in ``folder`` (model.json, arrays.npz, manifest);
    ``stored``: the verified arrays of the folder, kept but the cross model's."""
    meta, arrays = cross.to_state()
    manifest = json.loads((folder / "manifest.json").read_text())
    tmp = new_temp_folder(folder)
    try:
        shutil.copytree(folder, tmp, dirs_exist_ok=True)
        model = json.loads((tmp / "model.json").read_text())
        model["cross"] = meta
        write_json(tmp / "model.json", model)
        kept = {k: stored[k] for k in stored if not k.startswith("cross|")}
        kept.update({f"cross|{k}": np.asarray(v) for k, v in arrays.items()})
        np.savez_compressed(tmp / "arrays.npz", **kept)
        (tmp / "manifest.json").unlink()
        keep = {k: v for k, v in manifest.items() if k not in ("files", "versions", "created")}
        write_manifest(tmp, **keep)
        replace_folder(tmp, folder)
    finally:
        remove_temp(tmp)
