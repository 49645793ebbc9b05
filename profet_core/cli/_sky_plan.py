"""``profet sky-plan``: what SkyPilot's optimizer would launch a task YAML on, with its one-hour
default and with PROFET's predicted run time on each candidate (offline; nothing launched)."""

from __future__ import annotations

import json
import sys

from .._messages import printable
from ._common import ARTIFACTS_HELP, note, table_text, warn
from ._request import add_request_args, request_from_args

#: Columns of ``--format table`` (csv and json carry every column), headers with units.
_TABLE_COLUMNS = {
    "candidate": "candidate",
    "cloud": "cloud",
    "instance": "instance",
    "region": "region",
    "market": "market",
    "usd_per_hour": "usd_per_hour",
    "price_check": "price_check",  # the CSV's and JSON's note says why
    "basis": "basis",
    "run_hours": "run_hours",
    "run_hours_low": "run_hours_low",  # one name per quantity: the CSV's and JSON's
    "run_hours_high": "run_hours_high",
    "run_usd": "run_usd",
    "usd_1h_default": "usd_1h_default",
    "pick": "pick",
}


def add_parser(subparsers) -> None:
    """Register ``sky-plan`` on the ``profet`` subcommand parsers."""
    sp = subparsers.add_parser(
        "sky-plan",
        help="SkyPilot's pick for a task YAML with PROFET's run times (offline, no launch)",
    )
    sp.add_argument("task", help="a SkyPilot task YAML whose resources name GPU candidates")
    sp.add_argument(
        "--profile", required=True, help="profile: PROFET JSON, TensorBoard CSV, or table"
    )
    add_request_args(sp, gpus=False, method=False, run_steps=True)
    sp.add_argument(
        "--minimize",
        choices=["cost", "time"],
        default="cost",
        help="SkyPilot's objective (default cost)",
    )
    sp.add_argument(
        "--catalog",
        help="a SkyPilot catalog folder: <cloud>/vms.csv and common/accelerators.csv (default "
        "~/.sky/catalogs/v8; e.g. ../shared/data/skypilot-catalog); copied, never changed",
    )
    sp.add_argument(
        "--cloud",
        action="append",
        help="enable this cloud (aws, azure, gcp, lambda, nebius, runpod); repeat or "
        "comma-separate (default: every one the catalog has)",
    )
    sp.add_argument("--artifacts", help=ARTIFACTS_HELP)
    sp.add_argument(
        "--format",
        choices=["table", "csv", "json"],
        default="table",
        help="table: the plan for people (default); csv: every column; json: one document",
    )
    sp.add_argument(
        "--verbose",
        action="store_true",
        help="where SkyPilot refuses the task or fails, print its traceback before the error",
    )


def run(args) -> int:
    """Plan the task; print the picks with and without PROFET's run times and each candidate."""
    from .. import ProfetError

    try:
        plan = _plan(args)
    except ProfetError as exc:
        detail = getattr(exc, "detail", None)
        if args.verbose and detail:  # the child's traceback: SkyPilot's text, printed as data
            print(printable(detail).rstrip(), file=sys.stderr)
        raise
    _print(plan, args.format)
    return 0


def _plan(args):
    """The plan of ``args`` (:func:`~profet_core.sky_plan`)."""
    from .. import read_profile, sky_plan

    profiles = read_profile(args.profile)
    request = request_from_args(args, profiles)
    clouds = None
    if args.cloud:
        clouds = [c for given in args.cloud for c in given.split(",") if c.strip()]
    return sky_plan(
        args.task,
        profiles,
        request,
        catalog=args.catalog,
        clouds=clouds,
        minimize=args.minimize,
        artifacts=args.artifacts,
    )


def _print(plan, fmt: str) -> None:
    """The plan's warnings and notes on stderr, the plan in ``fmt`` on stdout; every name in
    it (a catalog's instance, region, cloud, a task's accelerator) printed as data."""
    for text in plan.warnings:
        warn(text)
    for text in plan.notes:
        note(text)
    if fmt == "csv":
        sys.stdout.write(printable(plan.to_csv().decode("utf-8")))
    elif fmt == "json":
        json.dump(plan.to_json(), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(printable("\n".join(plan.summary())))
        print()
        print(table_text(plan.table[list(_TABLE_COLUMNS)].rename(columns=_TABLE_COLUMNS)))
        unanswered = plan.table[plan.table["reason"] != ""]
        for r in unanswered.itertuples():
            print(printable(f"{r.candidate}: {r.reason}"))
