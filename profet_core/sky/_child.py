"""The child process of an offline plan (:func:`~profet_core.sky.sky_plan`): SkyPilot's optimizer
on a task YAML, with and without PROFET's time estimator, and no network.

Run as ``python -m profet_core.sky._child`` by :mod:`._offline`, with ``HOME`` and SkyPilot's
``SKY_RUNTIME_DIR`` set to a fresh folder: a request (JSON) on stdin, the answer (JSON) written
to the file the request names. SkyPilot reads its catalog from that folder (a copy of the
catalog folder given, so never downloaded: SkyPilot pulls only files missing or unmodified
since its own last pull), sees the clouds asked for as enabled (the stub SkyPilot's optimizer
tests use) and no cloud identity; every network call is refused and recorded.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import socket
import sys
import traceback
from pathlib import Path

import pandas as pd

from .._messages import printable, quote
from ..errors import ProfetError, ProfetValueError
from ._estimator import config_of, time_estimator
from ._runs import config_label, not_a_gpu


def guard_network() -> list:
    """Refuse every name lookup and connection of this process; the list of what was tried."""
    tried: list = []

    def refuse(what):
        def blocked(*args, **_kwargs):
            target = args[0] if what != "connect" else args[1]
            tried.append(f"{what} {str(target)[:80]}")
            raise OSError(f"profet sky-plan runs offline: {what} {str(target)[:80]} refused")

        return blocked

    socket.getaddrinfo = refuse("lookup")
    socket.create_connection = refuse("connection")
    socket.socket.connect = refuse("connect")
    return tried


def one_line(exc: BaseException, limit: int = 400) -> str:
    """An exception's message on one line, without terminal colours, cut short."""
    text = printable(re.sub(r"\x1b\[[0-9;]*m", "", str(exc)), one_line=True)
    text = " ".join(text.split()) or type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "..."


def copy_catalog(request: dict) -> str:
    """Copy the checked catalog files (the parent's, in this process's folder) where SkyPilot
    reads them; SkyPilot's catalog schema version."""
    from sky.skylet import constants

    root = Path(os.environ["SKY_RUNTIME_DIR"]) / ".sky" / "catalogs"
    version = constants.CATALOG_SCHEMA_VERSION
    for name, src in request["paths"].items():
        if name.startswith("catalog/"):
            dest = root / version / name[len("catalog/") :]
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
    return version


def sky_step(fn, *args):
    """``fn(*args)``, a step of SkyPilot's: what it raises about the task becomes one line (its
    traceback kept as the error's ``detail`` for ``--verbose``)."""
    try:
        return fn(*args)
    except ProfetError:
        raise
    except Exception as exc:  # SkyPilot's own errors (ValueError, its exceptions, asserts)
        error = ProfetValueError(f"SkyPilot cannot plan the task: {one_line(exc)}")
        error.detail = whole_traceback()
        raise error from None


def whole_traceback() -> str:
    """The exception being handled, traceback and all (SkyPilot's
    ``print_exception_no_traceback`` leaves ``sys.tracebacklimit`` at 0 when it raises)."""
    if getattr(sys, "tracebacklimit", None) is not None:
        del sys.tracebacklimit
    return traceback.format_exc()


def stub_clouds(sky, clouds: list) -> None:
    """Enable ``clouds`` and no other (as SkyPilot's optimizer tests do); no cloud identity
    (AWS's zone mapping then keeps the catalog's zone IDs, as without credentials)."""
    from sky import check as sky_check
    from sky import exceptions
    from sky.utils import registry

    enabled = [registry.CLOUD_REGISTRY.from_str(c) for c in clouds]
    sky_check.get_cached_enabled_clouds_or_refresh = lambda *_a, **_k: list(enabled)

    def no_identity(*_args, **_kwargs):
        raise exceptions.CloudUserIdentityError("an offline plan has no cloud identity")

    sky.clouds.AWS.get_active_user_identity = no_identity


def load_task(sky, path: str, shown: str):
    """The task of a YAML file (``shown``: the user's name for it), or one line saying why it
    is none: not a SkyPilot task, several nodes, no GPU, too many candidates."""
    from ._task import MAX_CANDIDATES, NO_GPU

    try:
        task = sky.Task.from_yaml(path)
    except Exception as exc:  # any failure to read a user's file is that file's fault
        error = ProfetValueError(f"task YAML {shown} is not a SkyPilot task: {one_line(exc)}")
        error.detail = whole_traceback()
        raise error from None
    if task.num_nodes != 1:
        raise ProfetValueError(
            f"the task runs on {task.num_nodes} nodes; PROFET predicts the GPUs of one instance "
            "(num_nodes: 1)"
        )
    resources = list(task.resources)
    if len(resources) > MAX_CANDIDATES:
        raise ProfetValueError(
            f"the task lists {len(resources):,} candidate resources; a plan runs SkyPilot's "
            f"optimizer once per candidate: give at most {MAX_CANDIDATES}"
        )
    if all(r.accelerators is None and r.instance_type is None for r in resources):
        raise ProfetValueError(NO_GPU)
    return task


def optimize(sky, task, minimize: str):
    """SkyPilot's pick for ``task`` (no launch), or None where nothing in the catalog fits."""
    from sky import exceptions
    from sky.optimizer import Optimizer
    from sky.utils import common

    target = common.OptimizeTarget.COST if minimize == "cost" else common.OptimizeTarget.TIME
    dag = sky.Dag()
    dag.add(task)
    try:
        Optimizer.optimize(dag, minimize=target, quiet=True)
    except exceptions.ResourcesUnavailableError:
        return None
    return task.best_resources


def described(r) -> dict:
    """A launchable resource: cloud, instance type, region, market and catalog price (USD/h)."""
    name, count = config_of(r)
    return {
        "accelerator": name,
        "gpus": count,
        "cloud": str(r.cloud).lower(),
        "instance": r.instance_type,
        "region": r.region,
        "market": "spot" if r.use_spot else "on-demand",
        "usd_per_hour": float(r.get_cost(3600)),
    }


def candidate_rows(sky, task) -> tuple[list, list]:
    """Each candidate of the task: its configuration and the cheapest launchable one SkyPilot
    finds for it alone (what it uses where it picks that candidate); and those launchables
    (None: not offered), whose run PROFET predicts (:func:`add_runs`)."""
    rows, bests = [], []
    for i, r in enumerate(task.resources):
        alone = sky.Task(name=f"candidate-{i}")
        alone.set_resources({r.copy()})
        best = sky_step(optimize, sky, alone, "cost")
        name, count = config_of(r)
        if name is None and best is not None and r.instance_type is not None:
            name, count = config_of(best)  # an instance type names its GPUs
        row = {"candidate": config_label(name, count) if name else "no accelerator"}
        row["pinned_cloud"] = str(r.cloud).lower() if r.cloud is not None else None
        row["spot_asked"] = bool(r.use_spot)
        if row["pinned_cloud"]:
            row["candidate"] += f" on {row['pinned_cloud']}"
        if r.use_spot:
            row["candidate"] += " (spot)"
        if name is None:  # a CPU candidate: no GPU offering of it is planned
            best = None
        row.update(described(best) if best is not None else {"accelerator": name, "gpus": count})
        row["offered"] = best is not None
        row["config"] = r.to_yaml_config()
        rows.append(row)
        bests.append(best if best is not None else r)
    return rows, bests


def add_runs(rows: list, bests: list, estimator) -> None:
    """PROFET's run on each candidate's launchable resource (or the candidate's own)."""
    for row, best in zip(rows, bests, strict=True):
        row["run"] = estimator.row(best)


def check_candidates(rows: list, accelerators_csv: str) -> None:
    """Refuse a task without a GPU candidate (TPUs and other accelerators named as what they
    are), or one naming an accelerator nobody knows."""
    from ..offerings import GPU_OF_ACCELERATOR
    from ._task import NO_GPU

    names = [r["accelerator"] for r in rows if r["accelerator"]]
    if not names:
        raise ProfetValueError(NO_GPU)
    other = {n: not_a_gpu(n) for n in names}
    if all(other.values()):
        raise ProfetValueError(
            "the task asks for no GPU PROFET predicts: " + "; ".join(dict.fromkeys(other.values()))
        )
    known = set(pd.read_csv(accelerators_csv)["AcceleratorName"].astype(str).str.lower())
    for name in names:
        if not other[name] and name.lower() not in known and name not in GPU_OF_ACCELERATOR:
            raise ProfetValueError(
                f"accelerator {quote(name)} is unknown: neither SkyPilot's catalog "
                "(common/accelerators.csv) nor PROFET's GPU list names it (e.g. T4, L4, A10G, "
                "A100, A100-80GB, H100)"
            )


def pick_of(rows: list, best) -> int | None:
    """The candidate a launchable pick came from (same GPUs, its cloud if it names one, market)."""
    if best is None:
        return None
    cfg, cloud = config_of(best), str(best.cloud).lower()
    for i, r in enumerate(rows):
        if (
            (r["accelerator"], r["gpus"]) == cfg
            and r["pinned_cloud"] in (None, cloud)
            and r["spot_asked"] == bool(best.use_spot)
        ):
            return i
    return None


def plan(request: dict) -> dict:
    """The whole plan, as the JSON answer."""
    version = copy_catalog(request)
    import sky

    stub_clouds(sky, request["clouds"])
    from ..prediction._load import load_models
    from ..prediction._request import request_of

    paths = request["paths"]
    task = load_task(sky, paths["task.yaml"], request["shown"])
    rows, bests = candidate_rows(sky, task)
    check_candidates(rows, paths["catalog/common/accelerators.csv"])
    if not any(r["offered"] for r in rows):
        raise ProfetValueError(
            f"no candidate of the task is offered on {', '.join(request['clouds'])} in the "
            "catalog given"
        )
    p = request["profile"]
    profiles = pd.DataFrame(p["data"], columns=p["columns"])
    asked = request_of(request["request"])
    est = time_estimator(profiles, asked, predictor=load_models(request["artifacts"]))
    add_runs(rows, bests, est)
    default = sky_step(optimize, sky, task, request["minimize"])
    task.set_time_estimator(est)
    profet = sky_step(optimize, sky, task, request["minimize"])
    return {
        "task": task.name,
        "ordered": isinstance(task.resources, list),
        "candidates": rows,
        "default": pick_of(rows, default),
        "profet": pick_of(rows, profet),
        "default_launch": described(default) if default is not None else None,
        "profet_launch": described(profet) if profet is not None else None,
        "unanswered": est.unanswered,
        "warnings": est.warnings_for([(r["accelerator"], r["gpus"]) for r in rows if r["offered"]]),
        "sky_version": sky.__version__,
        "schema": version,
    }


def main() -> int:
    """Read the request, write the answer; 0 unless the answer cannot be written."""
    request = json.loads(sys.stdin.read())
    # Its own bound too: a parent killed outright (SIGKILL) cannot stop it
    signal.alarm(int(math.ceil(request.get("timeout_s", 600))) + 5)
    tried = guard_network()
    try:
        answer = plan(request)
    except ProfetError as exc:
        answer = {"error": str(exc), "detail": getattr(exc, "detail", None)}
    except Exception:  # a bug: the parent says so in one line, --verbose shows it whole
        answer = {"crash": whole_traceback()}
    answer["network"] = tried
    Path(request["result"]).write_text(json.dumps(answer, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
