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
import os
import re
import shutil
import socket
import sys
import traceback
from pathlib import Path

import pandas as pd

from ..errors import ProfetError, ProfetValueError
from ._estimator import config_of, time_estimator
from ._runs import config_label


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
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    text = " ".join(text.split()) or type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "..."


def copy_catalog(request: dict) -> str:
    """Copy the catalog files where SkyPilot reads them; SkyPilot's catalog schema version."""
    from sky.skylet import constants

    root = Path(os.environ["SKY_RUNTIME_DIR"]) / ".sky" / "catalogs"
    version = constants.CATALOG_SCHEMA_VERSION
    files = {**request["catalog_files"], "common": request["accelerators_csv"]}
    for cloud, src in files.items():
        name = "accelerators.csv" if cloud == "common" else "vms.csv"
        (root / version / cloud).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, root / version / cloud / name)
    return version


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


def load_task(sky, path: str):
    """The task of a YAML file, or one line saying why it is none."""
    try:
        task = sky.Task.from_yaml(path)
    except Exception as exc:  # any failure to read a user's file is that file's fault
        raise ProfetValueError(
            f"task YAML {path!r} is not a SkyPilot task: {one_line(exc)}"
        ) from None
    if task.num_nodes != 1:
        raise ProfetValueError(
            f"the task runs on {task.num_nodes} nodes; PROFET predicts the GPUs of one instance "
            "(num_nodes: 1)"
        )
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


def candidate_rows(sky, task, estimator) -> list:
    """Each candidate of the task: its configuration, the cheapest launchable one SkyPilot
    finds for it alone (what it uses where it picks that candidate), PROFET's run."""
    rows = []
    for i, r in enumerate(task.resources):
        alone = sky.Task(name=f"candidate-{i}")
        alone.set_resources({r.copy()})
        best = optimize(sky, alone, "cost")
        name, count = config_of(r)
        if name is None and best is not None:  # an instance type names its GPUs
            name, count = config_of(best)
        row = {"candidate": config_label(name, count) if name else "no accelerator"}
        row["pinned_cloud"] = str(r.cloud).lower() if r.cloud is not None else None
        row["spot_asked"] = bool(r.use_spot)
        if row["pinned_cloud"]:
            row["candidate"] += f" on {row['pinned_cloud']}"
        if r.use_spot:
            row["candidate"] += " (spot)"
        row.update(described(best) if best is not None else {"accelerator": name, "gpus": count})
        row["offered"] = best is not None
        row["config"] = r.to_yaml_config()
        row["run"] = estimator.row(best if best is not None else r)
        rows.append(row)
    return rows


def check_candidates(rows: list, accelerators_csv: str) -> None:
    """Refuse a task without a GPU candidate, or one naming an accelerator nobody knows."""
    from ..offerings import GPU_OF_ACCELERATOR

    if all(r["accelerator"] is None for r in rows):
        raise ProfetValueError(
            "the task asks for no GPU: give its resources accelerators, e.g. any_of: "
            "[{accelerators: T4}, {accelerators: A100:8}]"
        )
    known = set(pd.read_csv(accelerators_csv)["AcceleratorName"].astype(str).str.lower())
    for r in rows:
        name = r["accelerator"]
        if name and name.lower() not in known and name not in GPU_OF_ACCELERATOR:
            raise ProfetValueError(
                f"accelerator {name!r} is unknown: neither SkyPilot's catalog "
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

    p = request["profile"]
    profiles = pd.DataFrame(p["data"], columns=p["columns"])
    from ..prediction._request import request_of

    asked = request_of(request["request"])
    est = time_estimator(profiles, asked, predictor=load_models(request["artifacts"]))
    task = load_task(sky, request["task"])
    rows = candidate_rows(sky, task, est)
    check_candidates(rows, request["accelerators_csv"])
    if not any(r["offered"] for r in rows):
        raise ProfetValueError(
            f"no candidate of the task is offered on {', '.join(request['clouds'])} in the "
            "catalog given"
        )
    default = optimize(sky, task, request["minimize"])
    task.set_time_estimator(est)
    profet = optimize(sky, task, request["minimize"])
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
    tried = guard_network()
    try:
        answer = plan(request)
    except ProfetError as exc:
        answer = {"error": str(exc)}
    except Exception:  # a bug: the parent shows it whole
        answer = {"crash": traceback.format_exc()}
    answer["network"] = tried
    Path(request["result"]).write_text(json.dumps(answer, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
