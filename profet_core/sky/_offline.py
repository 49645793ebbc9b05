"""Running SkyPilot offline: the catalog folder a plan reads, the clouds it enables, and the child
process (:mod:`._child`) that runs SkyPilot's optimizer in a fresh folder of its own.

A child process, not this one: SkyPilot fixes where it reads its catalog when it is first
imported, so a fresh interpreter with ``HOME`` and ``SKY_RUNTIME_DIR`` set to a new folder is the
one reliable way to give it a catalog of our choosing, whatever this process imported before;
and the user's own SkyPilot state (``~/.sky``: clusters, config, catalogs) is never touched.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..errors import ProfetFileNotFoundError, ProfetValueError

#: The clouds a plan may enable: those PROFET's offerings read (each has a plain vms.csv).
CLOUDS = ("aws", "azure", "gcp", "lambda", "nebius", "runpod")
#: Where an installed SkyPilot keeps its catalog (the default catalog folder).
DEFAULT_CATALOG = "~/.sky/catalogs/v8"
#: Seconds a plan may take (SkyPilot's import, catalogs read, one optimizer run per candidate).
TIMEOUT_S = 600


def catalog_source(catalog=None, clouds=None) -> tuple[dict, Path, tuple]:
    """The catalog files a plan copies: ``({cloud: vms.csv}, accelerators.csv, clouds)``.

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
        A cloud outside :data:`CLOUDS`, or one the folder lacks.
    """
    from ..inputs._args import path_arg, shown
    from ..offerings import catalog_files

    given = path_arg(DEFAULT_CATALOG if catalog is None else catalog, "the catalog folder")
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
    if not common.is_file():
        raise ProfetFileNotFoundError(
            f"{str(schema)!r} has no common/accelerators.csv, which SkyPilot reads before any "
            "cloud's file"
        )
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
    return {c: files[c].resolve() for c in chosen}, common.resolve(), chosen


def check_installed() -> None:
    """Refuse, in one line, where SkyPilot is not installed."""
    if importlib.util.find_spec("sky") is None:
        raise ProfetValueError(
            "SkyPilot is not installed (skypilot>=0.14.1); add it with: pip install -e '.[sky]' "
            "from the repository root (the test set-up, requirements-dev.txt, installs it)"
        )


#: A SkyPilot task is a short file; anything longer is not read (or handed to SkyPilot).
TASK_MAX_BYTES = 1_000_000


def check_task_yaml(path: Path) -> None:
    """Refuse, before SkyPilot starts (seconds of imports), a task file that is not a YAML
    mapping: too long, not text, not YAML, or a list or a scalar. What SkyPilot's schema says of
    a mapping (keys, accelerators) the child checks."""
    check_installed()
    import yaml  # SkyPilot's own dependency

    size = path.stat().st_size
    if size > TASK_MAX_BYTES:
        raise ProfetValueError(
            f"task YAML {str(path)!r} is {size:,} bytes; a SkyPilot task is a short file "
            f"(up to {TASK_MAX_BYTES:,} bytes here)"
        )
    try:
        doc = yaml.safe_load(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        what = " ".join(str(exc).split())[:300]
        raise ProfetValueError(f"task YAML {str(path)!r} is not a SkyPilot task: {what}") from None
    if not isinstance(doc, dict):
        held = {list: "a list", str: "text", int: "a number", float: "a number", bool: "a flag"}
        raise ProfetValueError(
            f"task YAML {str(path)!r} is not a SkyPilot task: it holds "
            f"{held.get(type(doc), 'nothing')}, not a mapping of task fields (resources, run, ...)"
        )


def run_child(request: dict, timeout_s: float = TIMEOUT_S) -> dict:
    """Run :mod:`._child` on ``request`` in a fresh folder; its JSON answer.

    Raises
    ------
    ProfetValueError
        The answer is an error about the user's input (the child's one line).
    RuntimeError
        The child crashed or gave no answer (a bug, shown whole).
    """
    check_installed()
    root = Path(tempfile.mkdtemp(prefix="profet-sky-"))
    try:
        request = {**request, "result": str(root / "answer.json")}
        done = subprocess.run(
            [sys.executable, "-m", "profet_core.sky._child"],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            env=_child_env(root),
            timeout=timeout_s,
        )
        answer_file = root / "answer.json"
        if not answer_file.is_file():
            raise RuntimeError(f"the SkyPilot plan gave no answer:\n{done.stderr[-4000:]}")
        answer = json.loads(answer_file.read_text())
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"the SkyPilot plan took over {timeout_s:g} s") from None
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if "error" in answer:
        raise ProfetValueError(answer["error"])
    if "crash" in answer:
        raise RuntimeError(f"the SkyPilot plan failed:\n{answer['crash']}")
    return answer


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
