"""Running SkyPilot offline: the catalog folder a plan reads, the clouds it enables, and the child
process (:mod:`._child`) that runs SkyPilot's optimizer in a fresh folder of its own.

A child process, not this one: SkyPilot fixes where it reads its catalog when it is first
imported, so a fresh interpreter with ``HOME`` and ``SKY_RUNTIME_DIR`` set to a new folder is the
one reliable way to give it a catalog of our choosing, whatever this process imported before;
and the user's own SkyPilot state (``~/.sky``: clusters, config, catalogs) is never touched.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .._messages import printable
from ..errors import ProfetFileNotFoundError, ProfetValueError

#: The clouds a plan may enable: those PROFET's offerings read (each has a plain vms.csv).
CLOUDS = ("aws", "azure", "gcp", "lambda", "nebius", "runpod")
#: Where an installed SkyPilot keeps its catalog (the default catalog folder).
DEFAULT_CATALOG = "~/.sky/catalogs/v8"
#: Seconds a plan may take (SkyPilot's import, catalogs read, one optimizer run per candidate).
TIMEOUT_S = 600


@dataclass(frozen=True)
class CatalogCopy:
    """The catalog files a plan hands SkyPilot, checked by the offerings' reader.

    Attributes
    ----------
    files : dict of str to str
        ``{cloud: vms.csv text}``, and ``"common"``: ``accelerators.csv``'s.
    clouds : tuple of str
        The clouds to enable.
    notes : tuple of str
        Per cloud, the rows left out or corrected on the way (``profet offerings refresh``
        names each).
    """

    files: dict
    clouds: tuple
    notes: tuple = ()


def catalog_source(catalog=None, clouds=None) -> CatalogCopy:
    """The catalog a plan copies, read and checked as ``profet offerings refresh`` reads it
    (regular files inside the folder, bounded, UTF-8, SkyPilot's columns each once, prices and
    counts in range, no control characters) before anything is copied or handed to SkyPilot.

    Parameters
    ----------
    catalog : path-like, optional
        A SkyPilot catalog folder (``<cloud>/vms.csv`` and ``common/accelerators.csv``; default
        :data:`DEFAULT_CATALOG`), or one holding schema folders (``v8``).
    clouds : sequence of str, optional
        The clouds to enable (default: every one of :data:`CLOUDS` the folder has).

    Raises
    ------
    ProfetFileNotFoundError
        No such folder, no ``vms.csv`` in it, or no ``common/accelerators.csv`` beside them.
    ProfetValueError
        An empty path, a cloud outside :data:`CLOUDS` or one the folder lacks, a file that is
        no catalog file (see :func:`~profet_core.offerings._vms.read_vms`).
    """
    from ..inputs._args import path_arg, shown
    from ..offerings import catalog_files
    from ..offerings._vms import check_catalog_file

    given = path_arg(DEFAULT_CATALOG if catalog is None else catalog, "the catalog folder")
    if catalog is not None and not os.fsdecode(catalog).strip():
        raise ProfetValueError(
            "the catalog folder path is empty; give a SkyPilot catalog folder, or None for "
            f"{DEFAULT_CATALOG}"
        )
    folder = Path(os.path.expanduser(given))
    clouds = [clouds] if isinstance(clouds, str) else clouds
    if clouds is not None and (
        not isinstance(clouds, (list, tuple))
        or not clouds
        or not all(isinstance(c, str) for c in clouds)
    ):
        raise ProfetValueError(
            f"clouds must be a list of cloud names ({', '.join(CLOUDS)}); got {shown(clouds)}"
        )
    if catalog is None and not folder.is_dir():
        raise ProfetFileNotFoundError(
            f"no SkyPilot catalog at {DEFAULT_CATALOG}; give a catalog folder (<cloud>/vms.csv "
            "and common/accelerators.csv), e.g. ../shared/data/skypilot-catalog"
        )
    files = catalog_files(folder)
    schema = next(iter(files.values())).parent.parent
    common = schema / "common" / "accelerators.csv"
    if not os.path.lexists(common):
        raise ProfetFileNotFoundError(
            f"{str(schema)!r} has no common/accelerators.csv, which SkyPilot reads before any "
            "cloud's file"
        )
    check_catalog_file(folder, common, "common")
    chosen = _chosen(clouds, files, schema)
    return _checked_copy(files, common, chosen, folder)


def _chosen(clouds, files: dict, schema: Path) -> tuple:
    """The clouds to enable: those asked for (each allowed and in the folder), or every one
    of :data:`CLOUDS` the folder has."""
    have = tuple(c for c in CLOUDS if c in files)
    if clouds is None:
        chosen = have
    else:
        chosen = tuple(dict.fromkeys(str(c).strip().lower() for c in clouds))
        for c in chosen:
            if c not in CLOUDS:
                raise ProfetValueError(f"cloud {c!r} is not allowed; use {', '.join(CLOUDS)}")
            if c not in files:
                raise ProfetValueError(
                    f"cloud {c!r} has no vms.csv in {str(schema)!r}; it has {', '.join(have)}"
                )
    if not chosen:
        raise ProfetFileNotFoundError(
            f"{str(schema)!r} has no vms.csv of {', '.join(CLOUDS)}; give another catalog folder"
        )
    return chosen


def _checked_copy(files: dict, common: Path, chosen: tuple, folder: Path) -> CatalogCopy:
    """Each chosen cloud's vms.csv as SkyPilot is handed it, and what was left out on the way."""
    from ..offerings._vms import checked_accelerators, skypilot_copy

    texts, notes = {}, []
    for cloud in chosen:
        texts[cloud], report, (records, kept) = skypilot_copy(files[cloud], cloud)
        if len(report):
            kinds = report["kind"].value_counts().sort_index()
            said = ", ".join(f"{k} {n}" for k, n in kinds.items())
            notes.append(
                f"the catalog's {cloud}/vms.csv: {records - kept:,} of {records:,} row(s) left "
                f"out of what SkyPilot reads, others corrected ({said}); `profet offerings "
                f"refresh --catalog {str(folder)}` names each"
            )
    texts["common"] = checked_accelerators(common)
    return CatalogCopy(texts, chosen, tuple(notes))


def check_installed() -> None:
    """Refuse, in one line, where SkyPilot is not installed."""
    if importlib.util.find_spec("sky") is None:
        raise ProfetValueError(
            "SkyPilot is not installed (skypilot>=0.14.1); add it with: pip install -e '.[sky]' "
            "from the repository root (the test set-up, requirements-dev.txt, installs it)"
        )


#: Largest file the child may write (bytes): the catalog copies are bounded by the reader
#: (a vms.csv linked to /dev/zero once wrote 9.1 GB into the child's folder in 90 s).
MAX_CHILD_FILE_BYTES = 512 * 2**20


def run_child(request: dict, timeout_s: float = TIMEOUT_S, files: dict | None = None) -> dict:
    """Run :mod:`._child` on ``request`` in a fresh folder holding ``files`` (``{name: text}``:
    the checked task and catalog copies, named in the request by their paths there); its JSON
    answer. The folder is removed on every exit (an answer, an error, a timeout, Ctrl-C or
    SIGTERM), the child and its processes stopped with it.

    Raises
    ------
    ProfetValueError
        The answer is an error about the user's input (the child's one line); the child took
        longer than ``timeout_s``, crashed or gave no answer. Its traceback, where there is one,
        is the exception's ``detail`` (``profet sky-plan --verbose`` prints it).
    """
    check_installed()
    root = Path(tempfile.mkdtemp(prefix="profet-sky-"))
    try:
        with _removed_on_sigterm():
            paths = {}
            for name, text in (files or {}).items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text, encoding="utf-8")
                paths[name] = str(root / name)
            request = {**request, "paths": paths, "result": str(root / "answer.json")}
            answer = _run(request, root, timeout_s)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if "error" in answer:
        raise with_detail(ProfetValueError(answer["error"]), answer.get("detail"))
    if "crash" in answer:
        last = (answer["crash"].strip().splitlines() or ["no message"])[-1]
        raise with_detail(
            ProfetValueError(
                f"the SkyPilot plan failed: {printable(last, one_line=True)[:300]} (a bug in "
                "profet sky-plan or SkyPilot; --verbose shows the child's traceback)"
            ),
            answer["crash"],
        )
    return answer


def with_detail(exc: Exception, detail) -> Exception:
    """``exc`` carrying ``detail`` (the child's traceback) for ``--verbose``."""
    exc.detail = detail
    return exc


def _run(request: dict, root: Path, timeout_s: float) -> dict:
    """Start the child, wait at most ``timeout_s``, stop its whole process group; its answer."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "profet_core.sky._child"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_child_env(root),
        start_new_session=True,  # its own group: stopped whole, SkyPilot's helpers included
        preexec_fn=_bounded,
    )
    try:
        _, err = proc.communicate(json.dumps(request), timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise ProfetValueError(
            f"the SkyPilot plan took over {timeout_s:g} s (timeout_s) and was stopped; a plan "
            "takes seconds per candidate resource"
        ) from None
    finally:
        _stop(proc)
    answer = root / "answer.json"
    if not answer.is_file():
        raise with_detail(
            ProfetValueError(
                f"the SkyPilot plan gave no answer (its process exited with code "
                f"{proc.returncode}); --verbose shows what it said"
            ),
            (err or "")[-4000:],
        )
    return json.loads(answer.read_text())


def _bounded() -> None:
    """In the child, before it runs: no file past :data:`MAX_CHILD_FILE_BYTES` (Python takes
    the signal as an error: the write fails, the child answers)."""
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_CHILD_FILE_BYTES, MAX_CHILD_FILE_BYTES))


def _stop(proc) -> None:
    """Stop the child's process group if anything of it still runs."""
    import signal

    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:  # it ended meanwhile
            pass
        proc.wait()


@contextlib.contextmanager
def _removed_on_sigterm():
    """SIGTERM as an exit that runs ``finally`` (the child stopped, its folder removed), where
    this is the main thread (only it may set signal handlers)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, _frame):
        raise SystemExit(128 + signum)

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _child_env(root: Path) -> dict:
    """The child's environment: SkyPilot's state, home and catalog in ``root``, no usage
    reports, no user config, no Kubernetes; this package first on the path."""
    package_root = str(Path(__file__).resolve().parents[2])
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("SKYPILOT_CONFIG", "SKYPILOT_PROJECT_CONFIG", "SKYPILOT_API_SERVER_ENDPOINT")
    }
    env.update(
        HOME=str(root),
        SKY_RUNTIME_DIR=str(root),
        SKYPILOT_DISABLE_USAGE_COLLECTION="1",
        DO_NOT_TRACK="1",
        SCARF_NO_ANALYTICS="1",
        KUBECONFIG=str(root / "no-kubeconfig"),
        PYTHONPATH=os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p),
    )
    return env
