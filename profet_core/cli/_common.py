"""What the ``profet`` subcommands share: the defaults and help texts they repeat, the progress
line, warnings on stderr, tables as text, and the old names of renamed flags."""

from __future__ import annotations

import argparse
import sys
import time

from ._argtypes import TREES

#: The shared data beside the repository (the layout the README's commands are run from).
DEFAULT_DATA = "../shared/data/profet"
ARTIFACTS_HELP = "artifacts folder (default: the shipped ones)"
CATALOG_HELP = (
    "prices: a CSV (instance,gpu,usd_per_hour) whose lines join the offerings (SkyPilot's "
    "catalog snapshot) as offerings of cloud 'catalog': a line prices its instance's GPU "
    "configuration where no offering rents it cheaper (a dearer line is listed, not used); or "
    "a SkyPilot catalog folder (~/.sky/catalogs/v8) every price is taken from instead of the "
    "snapshot; no retraining"
)
#: The optional parts of the install: ``extra -> (the modules it brings, what it is for)``. The
#: app's install (requirements.txt) has none of them; the test install has all.
EXTRAS = {
    "capture": (("tensorflow", "tf_keras", "tensorboard", "xprof"), "TensorFlow"),
    "sky": (("sky",), "SkyPilot"),
    "torch": (("torch",), "PyTorch"),
}


def extra_hint(extra: str) -> str:
    """How to add the ``extra`` to this install, in one clause."""
    return (
        f"add it with: pip install -e '.[{extra}]' from the repository root (the test set-up, "
        "requirements-dev.txt, installs it)"
    )


def require_extra(extra: str, command: str, why: str = "") -> None:
    """Refuse ``command`` in one line, before any work, where a module of the ``extra`` is
    missing (found without importing it: TensorFlow's import takes seconds)."""
    import importlib.util

    def absent(module: str) -> bool:
        try:
            return importlib.util.find_spec(module) is None
        except (ImportError, ValueError):  # a module blocked in sys.modules
            return True

    modules, name = EXTRAS[extra]
    missing = [m for m in modules if absent(m)]
    if missing:
        from ..errors import ProfetError

        raise ProfetError(
            f"{command} needs {name}{f' ({why})' if why else ''}, which this install lacks "
            f"(no module {', '.join(missing)}); {extra_hint(extra)}"
        )


def need_dnn(command: str) -> None:
    """Refuse ``command`` in one line where the reference method's DNN member (TensorFlow) cannot
    be trained."""
    require_extra(
        "capture",
        command,
        "the reference method's DNN member; --methods hybrid linear trains without it",
    )


def extra_of_module(name: str | None) -> str | None:
    """The extra that brings module ``name`` (a dotted name's first part), or None."""
    top = str(name or "").split(".")[0]
    return next((e for e, (mods, _) in EXTRAS.items() if top in mods), None)


class Progress:
    """Prints ``[done/total] message (elapsed, ~left)`` on one stderr line."""

    def __init__(self):
        self.start = None

    def __call__(self, done: int, total: int, message: str) -> None:
        if self.start is None or done == 1:  # a new phase (training, then validation)
            self.start = time.monotonic()
        elapsed = time.monotonic() - self.start
        eta = elapsed / done * (total - done) if done else 0
        print(
            f"\r[{done}/{total}] {message} ({elapsed:.0f}s, ~{eta:.0f}s left)".ljust(90),
            end="\n" if done == total else "",
            file=sys.stderr,
            flush=True,
        )


def warn(message: str) -> None:
    """One ``profet: warning: ...`` line on stderr (control characters removed: names from a
    catalog or a profile are data, never terminal escape sequences)."""
    from .._messages import printable

    print(f"profet: warning: {printable(message)}", file=sys.stderr)


def note(message: str) -> None:
    """One ``profet: note: ...`` line on stderr: what an answer rests on (where its prices come
    from, which view is shown), not a warning (:func:`warn`) about the input or the answer."""
    from .._messages import printable

    print(f"profet: note: {printable(message)}", file=sys.stderr)


def renamed(old: str, new: str) -> None:
    """Warn that a command or flag has a new name (the old one works for one more release)."""
    warn(f"{old!r} is now {new!r}; the old name goes in the next release")


def old_flag(new: str):
    """An argparse action for a flag's old name: sets ``new``'s ``store_true`` destination and
    warns (:func:`renamed`). Hidden from ``--help``."""

    class OldFlag(argparse.Action):
        def __init__(self, option_strings, dest, **kwargs):
            super().__init__(option_strings, dest, nargs=0, help=argparse.SUPPRESS)

        def __call__(self, parser, namespace, values, option_string=None):
            renamed(option_string, new)
            setattr(namespace, self.dest, True)

    return OldFlag


def passed(args, names) -> dict:
    """The flags ``names`` as keyword arguments: their argparse destinations are the core's
    parameter names, so they pass through unchanged."""
    return {name: getattr(args, name) for name in names}


def add_trees_flag(parser) -> None:
    """``--trees N`` on ``train``/``validate`` (read by :func:`method_params`)."""
    parser.add_argument(
        "--trees",
        type=TREES,
        help="trees per tree ensemble (default: the hybrid's 100 extra-trees and 200 boosting "
        "stages, the reference's 50-tree forest; fewer: faster, less accurate)",
    )


def method_params(dnn_epochs: int | None, trees: int | None = None) -> dict:
    """``method_params`` of ``train``/``validate`` for ``--dnn-epochs`` and ``--trees`` (the
    number of trees of every tree ensemble: the hybrid's extra-trees and boosting stages, the
    reference's forest)."""
    params = {"profet": {"dnn_params": {"epochs": dnn_epochs}}} if dnn_epochs else {}
    if trees:
        params["hybrid"] = {"n_trees_et": trees, "n_trees_gb": trees}
        params.setdefault("profet", {})["rf_params"] = {"n_estimators": trees}
    return params


def read_prices(catalog) -> tuple:
    """``--catalog``: ``(user catalog, offerings snapshot, price-source line, source)``. A CSV
    of prices (``instance,gpu,usd_per_hour``) is the user's catalog, merged over the shipped
    snapshot; a SkyPilot catalog folder (``~/.sky/catalogs/v8``) is derived into the snapshot
    every price comes from (its odd rows are ``profet offerings refresh``'s to report).
    ``source`` is the JSON documents' ``source``: the snapshot's metadata (the folder's where
    one is given, naming it in ``catalog_folder``; ``user_catalog`` a CSV's path)."""
    from pathlib import Path

    from .. import ProfetValueError, load_catalog, offerings_meta, price_source

    if catalog is None:
        return None, None, price_source(), offerings_meta()
    if not str(catalog).strip():  # '' would otherwise price from the snapshot without a word
        raise ProfetValueError(
            "--catalog '' is empty; give a prices CSV or a SkyPilot catalog folder, or leave "
            "--catalog out for the offerings' prices"
        )
    if Path(catalog).is_dir():
        from .. import refresh_offerings

        done = refresh_offerings(catalog)
        line = f"{price_source(done['meta'])} (from {catalog!r})"
        return None, done["table"], line, {**done["meta"], "catalog_folder": str(catalog)}
    # An empty price in the user's catalog keeps the offerings' (said in catalog_notes).
    given = load_catalog(catalog, missing_price_ok=True)
    line = f"{price_source()} (and {catalog!r} for the instances it prices)"
    return given, None, line, {**offerings_meta(), "user_catalog": str(catalog)}


def load_predictor(artifacts, catalog=None):
    """The artifacts (``--artifacts``) priced by the offerings, or by ``--catalog``
    (:func:`read_prices`); returns ``(predictor, user catalog, snapshot, price-source line,
    source metadata)``."""
    from .. import load_artifacts

    given, snapshot, line, meta = read_prices(catalog)
    predictor = load_artifacts(artifacts, catalog=given, offerings=snapshot)
    return predictor, given, snapshot, line, meta


#: How a table printed for people shows a value that is not known (no price, no offering, no
#: pick): a dash, as the app's grid does, never "NaN" or an empty cell that shifts the columns.
UNKNOWN = "-"


def table_text(df, fmt=None) -> str:
    """A table as aligned text, without the index; floats as ``fmt`` (a format spec), or by the
    one rule for numbers shown to people (:func:`profet_core.format_number`); an unknown value
    (NaN, an empty text cell) as :data:`UNKNOWN`; control characters removed (it is printed to
    a terminal)."""
    from .. import format_number
    from .._messages import printable

    show = format_number if fmt is None else (lambda v: format(v, fmt))
    text = df.select_dtypes(include=["object", "string", "category"]).columns
    if len(text):
        df = df.assign(
            **{c: df[c].astype(object).where(df[c].astype(str) != "", UNKNOWN) for c in text}
        )
    return printable(df.to_string(index=False, float_format=show, na_rep=UNKNOWN))
