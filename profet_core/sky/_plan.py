"""The offline plan of a SkyPilot task (``profet sky-plan``): per candidate resource its
predicted run time and cost at the catalog's price, and what SkyPilot's optimizer picks with its
one-hour default and with PROFET's run times."""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._format import format_number
from .._messages import quote
from ..errors import ProfetValueError
from ..inputs._args import frame_arg, is_number, path_arg, shown
from ._notes import check_prices, plan_notes, price_flags, sense_warnings
from ._offline import TIMEOUT_S, catalog_source, check_installed, run_child
from ._runs import RunSpec, run_spec
from ._task import check_resources, read_task

#: Columns of :attr:`SkyPlan.table` (USD per hour, hours per run, USD per run).
PLAN_COLUMNS = (
    "candidate",
    "accelerator",
    "gpus",
    "cloud",
    "instance",
    "region",
    "market",
    "usd_per_hour",
    "regions_at_price",
    "price_check",
    "basis",
    "batch_latency_ms",
    "run_hours",
    "run_hours_low",
    "run_hours_high",
    "run_usd",
    "usd_1h_default",
    "p_fit",
    "pick",
    "reason",
    "note",
)
DEFAULT_PICK, PROFET_PICK = "1-hour default", "PROFET"
_NUMBERS = (
    "usd_per_hour",
    "batch_latency_ms",
    "run_hours",
    "run_hours_low",
    "run_hours_high",
    "run_usd",
    "usd_1h_default",
    "p_fit",
    "regions_at_price",
)


@dataclass(frozen=True)
class SkyPlan:
    """What SkyPilot's optimizer would launch a task on, with and without PROFET's run times.

    Attributes
    ----------
    table : pandas.DataFrame
        :data:`PLAN_COLUMNS`, one row per candidate resource of the task, best first by the
        objective (``run_usd``, or ``run_hours`` when minimizing time): the cheapest launchable
        offering SkyPilot finds for it alone (``cloud``, ``instance``, ``region``, ``market``,
        ``usd_per_hour``; ``regions_at_price``, ``price_check`` and ``note``: what that price
        needs said, as every view of the offering says it), PROFET's prediction (``batch_latency_ms`` per step on all its GPUs,
        ``run_hours`` with its 80% interval), ``run_usd`` at that price, ``usd_1h_default`` (what
        SkyPilot's one-hour default charges it), ``pick`` and ``reason`` (why no prediction).
    default_pick, profet_pick : dict or None
        The rows SkyPilot's optimizer picks with its one-hour default and with PROFET's
        estimator (None: it picked nothing).
    minimize : str
        ``"cost"`` or ``"time"``.
    run : RunSpec
    clouds : tuple of str
        The clouds enabled.
    task : str
        The task's name (or file).
    notes : tuple of str
        What the plan does not show by itself: ordered resources, ties, candidates without a
        prediction or an offering.
    warnings : tuple of str
        The prediction's warnings about the profile.
    configs : tuple of dict
        Each row's resource config (SkyPilot's YAML form), for :meth:`ordered_resources`.
    network : tuple of str
        Network calls SkyPilot tried and was refused (none expected: it runs offline).
    """

    table: pd.DataFrame
    default_pick: dict | None
    profet_pick: dict | None
    minimize: str
    run: RunSpec
    clouds: tuple
    task: str
    notes: tuple = ()
    warnings: tuple = ()
    configs: tuple = field(default=(), repr=False)
    network: tuple = ()

    def summary(self) -> list[str]:
        """The plan in sentences: the run, then both picks with their predicted time and cost."""
        lines = [
            f"task {self.task}: {len(self.table)} candidate resources on "
            f"{', '.join(self.clouds)}, minimizing {self.minimize}; the run: {self.run.text()}"
        ]
        for what, pick in (
            ("its 1-hour default", self.default_pick),
            ("PROFET's run times", self.profet_pick),
        ):
            lines.append(f"SkyPilot's optimizer with {what} picks {_described(pick)}")
        d, p = self.default_pick, self.profet_pick
        if d is not None and p is not None and d["candidate"] != p["candidate"]:
            usd, hours = p["run_usd"] - d["run_usd"], p["run_hours"] - d["run_hours"]
            if np.isfinite(usd) and np.isfinite(hours):
                lines.append(
                    f"PROFET's pick, as predicted: {_more_or_less(usd, 'USD')} and "
                    f"{_more_or_less(hours, 'h')} than the 1-hour default's"
                )
        return lines

    def to_csv(self) -> bytes:
        """The table as CSV (every column, numbers to 4 significant digits, at least 4
        decimals)."""
        from .._format import round_table
        from ..inputs._csv import escape_formulas

        text = round_table(escape_formulas(self.table)).to_csv(index=False, lineterminator="\n")
        return text.encode("utf-8")

    def to_json(self) -> dict:
        """One JSON document: the run, units, both picks, notes, warnings and every row."""
        records = json.loads(self.table.to_json(orient="records", double_precision=10))
        return {
            "task": self.task,
            "minimize": self.minimize,
            "clouds": list(self.clouds),
            "run": dataclasses.asdict(self.run),
            "units": {"price": "USD/h", "run time": "h", "cost": "USD", "latency": "ms"},
            "default_pick": _plain(self.default_pick),
            "profet_pick": _plain(self.profet_pick),
            "notes": list(self.notes),
            "warnings": list(self.warnings),
            "candidates": records,
        }

    def ordered_resources(self):
        """The task's candidates as a SkyPilot ``ordered`` list, best by PROFET's objective
        first (then those it cannot predict, in the plan's order): ``sky.launch`` tries them in
        this order, which survives its trip to SkyPilot's API server (a time estimator does not).

        Returns
        -------
        list of sky.Resources
        """
        import sky

        return sky.Resources.from_yaml_config({"ordered": [dict(c) for c in self.configs]})


def _more_or_less(change: float, unit: str) -> str:
    """``0.43 USD less`` / ``1.2 h more``: a difference in words, with its unit."""
    return f"{format_number(abs(change))} {unit} {'less' if change < 0 else 'more'}"


def _plain(row: dict | None) -> dict | None:
    if row is None:
        return None
    return {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in row.items()}


def _described(row: dict | None) -> str:
    """A pick in words: candidate, offering, price, predicted time and cost (units given)."""
    if row is None:
        return "nothing"
    text = (
        f"{row['candidate']}: {row['cloud']} {row['instance']} ({row['region']}, "
        f"{row['market']}) at {format_number(row['usd_per_hour'])} USD/h"
    )
    if row["reason"]:
        return f"{text}; no PROFET run time ({row['reason']})"
    return (
        f"{text}; predicted {format_number(row['run_hours'])} h "
        f"({format_number(row['run_hours_low'])}..{format_number(row['run_hours_high'])}), "
        f"{format_number(row['run_usd'])} USD per run"
    )


def sky_plan(
    task_yaml,
    profiles: pd.DataFrame,
    request=None,
    *,
    catalog=None,
    clouds=None,
    minimize: str = "cost",
    artifacts=None,
    timeout_s: float = TIMEOUT_S,
    **options,
) -> SkyPlan:
    """Plan a SkyPilot task offline with and without PROFET's run times (no launch).

    Parameters
    ----------
    task_yaml : path-like
        A SkyPilot task YAML whose resources name GPU candidates (``any_of``, ``ordered``, or
        ``accelerators: {T4, H100:8}``).
    profiles : pandas.DataFrame
        One profile row, as :func:`~profet_core.read_profile` returns it.
    request : PredictRequest, optional
        The run and the prediction's options, as for :func:`~profet_core.time_estimator` (the
        anchor: the one the profile names where the request has none).
    catalog : path-like, optional
        A SkyPilot catalog folder (default ``~/.sky/catalogs/v8``); it is copied, never changed.
    clouds : sequence of str, optional
        Clouds to enable (default: every one the folder has, of aws, azure, gcp, lambda, nebius,
        runpod).
    minimize : {"cost", "time"}
    artifacts : path-like, optional
        Trained artifacts (default: the shipped ones).
    timeout_s : float
        Seconds SkyPilot's part may take.
    **options
        The request's fields as keywords instead; not with ``request``.

    Returns
    -------
    SkyPlan

    Raises
    ------
    ProfetValueError
        A bad YAML, a task without GPU candidates, an unknown accelerator, a multi-node task,
        no candidate offered on the clouds, a bad run or profile, SkyPilot not installed.
    ProfetFileNotFoundError
        No task file, or no catalog folder.
    """
    from ..prediction._request import as_request, request_fields

    request = as_request(request, options)
    path = path_arg(task_yaml, "the task YAML")
    if minimize not in ("cost", "time"):
        raise ProfetValueError(f"minimize {minimize!r} is not allowed; use cost or time")
    frame_arg(profiles, "the profile")
    if artifacts is not None:
        artifacts = path_arg(artifacts, "the artifacts path")
    if not is_number(timeout_s) or not 0 < timeout_s < float("inf"):
        raise ProfetValueError(f"timeout_s {shown(timeout_s)} is not allowed; give seconds > 0")
    data, doc = read_task(task_yaml)
    check_resources(doc)
    r = request
    spec = run_spec(profiles, r.dataset_images, r.epochs, r.run_steps, r.batch_size)
    copy = catalog_source(catalog, clouds)
    check_installed()  # after every argument's check: a bad one is named with or without it
    asked = {
        "shown": quote(str(path)),
        "clouds": list(copy.clouds),
        "minimize": minimize,
        "artifacts": None if artifacts is None else os.path.abspath(artifacts),
        "profile": {"columns": list(map(str, profiles.columns)), "data": _values(profiles)},
        "request": request_fields(request),
        "timeout_s": float(timeout_s),
    }
    answer = run_child(asked, timeout_s, _files(data, copy))
    return _assemble(answer, minimize, spec, copy, path)


def _files(task: bytes, copy) -> dict:
    """The files the child reads, by their names in its folder: the task and the catalog as
    checked here (copies), never the user's files themselves."""
    files = {"task.yaml": task.decode("utf-8")}
    for cloud, text in copy.files.items():
        files[f"catalog/{cloud}/{'accelerators' if cloud == 'common' else 'vms'}.csv"] = text
    return files


def _value(v):
    """A plain Python value for JSON (numpy scalars as their Python kind; floats exactly)."""
    return v.item() if isinstance(v, np.generic) else v


def _values(frame: pd.DataFrame) -> list:
    return [[_value(v) for v in row] for row in frame.itertuples(index=False, name=None)]


def _assemble(answer: dict, minimize: str, spec: RunSpec, copy, path) -> SkyPlan:
    """The plan from the child's answer: one row per candidate, sorted, picks marked, its
    prices and run times checked for sense (:func:`~profet_core.sky._notes.check_prices`)."""
    rows, configs = [], []
    for i, c in enumerate(answer["candidates"]):
        run = c["run"]
        row = {k: c.get(k) for k in PLAN_COLUMNS if k in c}
        row.update({k: run.get(k) for k in PLAN_COLUMNS if k in run and k not in ("gpus",)})
        row["accelerator"], row["gpus"] = c.get("accelerator"), c.get("gpus")
        price = c.get("usd_per_hour", np.nan)
        row["usd_per_hour"] = price
        row["run_usd"] = price * run["run_hours"] if run["run_hours"] is not None else np.nan
        row["usd_1h_default"] = price
        picks = [
            p for p, who in ((DEFAULT_PICK, "default"), (PROFET_PICK, "profet")) if answer[who] == i
        ]
        row["pick"] = ", ".join(picks)
        if not c["offered"]:
            row["reason"] = "; ".join(
                r for r in (row.get("reason"), "not offered on these clouds in the catalog") if r
            )
        rows.append(row)
        configs.append(c["config"])
    table = pd.DataFrame(rows, columns=list(PLAN_COLUMNS))
    for col in _NUMBERS:
        table[col] = pd.to_numeric(table[col], errors="coerce")
    for col in ("cloud", "instance", "region", "market", "basis", "reason", "price_check", "note"):
        table[col] = table[col].fillna("")
    check_prices(table)
    table, checked = price_flags(table, copy)
    key = "run_usd" if minimize == "cost" else "run_hours"
    order = np.lexsort((np.arange(len(table)), table[key].to_numpy()))
    table = table.iloc[order].reset_index(drop=True)
    configs = tuple(configs[i] for i in order)
    picked = {
        who: _row_of(table, name, answer[f"{who}_launch"])
        for who, name in (("default", DEFAULT_PICK), ("profet", PROFET_PICK))
    }
    return SkyPlan(
        table,
        picked["default"],
        picked["profet"],
        minimize,
        spec,
        copy.clouds,
        quote(answer["task"]) if answer["task"] else quote(str(path)),
        (
            *copy.notes,
            *plan_notes(answer, table, minimize, picked),
            *([checked] if checked else []),
        ),
        (*answer["warnings"], *sense_warnings(table)),
        configs,
        tuple(answer["network"]),
    )


def _row_of(table: pd.DataFrame, pick: str, launch: dict | None) -> dict | None:
    """The picked candidate's row at the offering SkyPilot would launch (minimizing time, a
    tie among clouds may land on another than the candidate's cheapest)."""
    hit = table[table["pick"].str.split(", ").apply(lambda p: pick in p)]
    if hit.empty:
        return None
    row = hit.iloc[0].to_dict()
    if launch is not None:
        row.update({k: launch[k] for k in ("cloud", "instance", "region", "market")})
        row["usd_per_hour"] = row["usd_1h_default"] = launch["usd_per_hour"]
        row["run_usd"] = launch["usd_per_hour"] * row["run_hours"]
    return row
