"""Opening an artifacts folder: the checked, unpriced :class:`Predictor` of its models
(``profet_core.load_artifacts`` prices it from the offerings)."""

from __future__ import annotations

import os

from ..errors import ArtifactError, ProfetValueError
from ..inputs._args import frame_arg, path_arg
from ..inputs._catalog import merge_catalogs, validate_catalog
from ._predictor import Predictor
from ._store import load_bundle


def load_models(path=None, catalog=None) -> Predictor:
    """Load and verify trained artifacts, unpriced: :func:`profet_core.load_artifacts` (the one
    public loader) prices every GPU configuration from the offerings, the one price source.

    Parameters
    ----------
    path : path-like, optional
        Artifacts folder; default: ``$PROFET_ARTIFACTS`` or the project's ``artifacts/``.
    catalog : pandas.DataFrame, optional
        An instance catalog (``instance, gpu, usd_per_hour``) giving prices and GPU names,
        without touching the models; an empty price leaves the instance unpriced. Its
        lines that no prediction uses, or that lack a price, are named in
        :attr:`Predictor.catalog_notes` and in every prediction's warnings.

    Raises
    ------
    ArtifactError
        If the folder, its manifest or a file is missing, edited or malformed.
    """
    if path is not None:
        checked = path_arg(path, "the artifacts path")
        if not os.fsdecode(path).strip():
            raise ProfetValueError(
                f"the artifacts path {str(path)!r} is empty; give a folder, or None for the default"
            )
        path = checked
    if catalog is not None:
        frame_arg(catalog, "the instance catalog")
    bundle = load_bundle(path)
    model = bundle.model
    for key, kind in (
        ("instances", list),
        ("methods", list),
        ("models", dict),
        ("default_method", str),
    ):
        if not isinstance(model.get(key), kind):
            raise ArtifactError(f"model.json: {key!r} must be a {kind.__name__}")
    try:
        base_catalog = validate_catalog(bundle.catalog)
    except ProfetValueError as exc:
        raise ArtifactError(f"the artifacts' prices are invalid: {exc}") from None
    # Prices belong to offerings (profet_core.load_artifacts prices every configuration from
    # the offerings snapshot); the artifacts' own (the training data's 2021 list) are not used.
    base_catalog = base_catalog.assign(usd_per_hour=float("nan"))
    predictor = Predictor(bundle, base_catalog)
    if predictor.cross is not None:
        specs = predictor.cross.specs_[["instance", "gpu", "gpu_count"]]
        specs = specs.assign(usd_per_hour=float("nan"))
        catalog_all = merge_catalogs(base_catalog, specs, prefer="base")
        predictor = Predictor(bundle, catalog_all, predictor._cache)
    return predictor.with_catalog(catalog) if catalog is not None else predictor
