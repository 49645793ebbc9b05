"""The offering filters ``profet predict`` and ``profet instances`` share, and ``profet
offerings refresh``: the shipped snapshot derived from a SkyPilot catalog folder."""

from __future__ import annotations

import json
import sys

from .._messages import printable
from ._argtypes import number
from ._common import table_text


def add_filters(parser, spot_help: str) -> None:
    """Register ``--cloud``, ``--region``, ``--gpu``, ``--spot``, ``--max-usd-per-hour`` and
    ``--all-regions`` (one :class:`~profet_core.OfferingFilter`)."""
    g = parser.add_argument_group("offerings (SkyPilot's catalog: clouds, regions, spot)")
    g.add_argument(
        "--cloud",
        action="append",
        help="keep this cloud (aws, gcp, azure, lambda, "
        "runpod, nebius, catalog); repeat or comma-separate",
    )
    g.add_argument("--region", action="append", help="keep this region (shows regions)")
    g.add_argument(
        "--gpu", action="append", help="keep this GPU (A100 matches A100-80GB; L4 not L40S)"
    )
    g.add_argument("--spot", action="store_true", help=spot_help)
    g.add_argument(
        "--max-usd-per-hour",
        type=number,
        help="the whole instance's price at most this (USD per hour, in the market chosen)",
    )
    g.add_argument(
        "--all-regions",
        action="store_true",
        help="every region, not only each instance type's cheapest",
    )


def _names(values, flag: str) -> tuple:
    """The names of a repeatable, comma-separated flag; an empty or wordless one is refused
    (``--cloud ''`` would otherwise match every offering)."""
    from .. import ProfetValueError

    names = tuple(v.strip() for item in values or () for v in item.split(","))
    bad = [n for n in names if not any(c.isalnum() for c in n)]
    if bad:
        raise ProfetValueError(
            f"{flag} {bad[0]!r} names nothing (no letter or digit); give a name, e.g. "
            f"{_EXAMPLES[flag]}, or leave {flag} out for all"
        )
    return names


_EXAMPLES = {"--cloud": "--cloud aws", "--region": "--region us-east-1", "--gpu": "--gpu A100"}


def offering_filter(args, spot_default):
    """The :class:`~profet_core.OfferingFilter` of the flags (``--spot``: spot only, else
    ``spot_default``)."""
    from .. import OfferingFilter

    return OfferingFilter(
        clouds=_names(args.cloud, "--cloud"),
        regions=_names(args.region, "--region"),
        gpus=_names(args.gpu, "--gpu"),
        spot=True if args.spot else spot_default,
        max_usd_per_hour=args.max_usd_per_hour,
        all_regions=args.all_regions,
    )


def filters_given(args) -> bool:
    """Whether any offering flag was given."""
    return bool(
        args.cloud
        or args.region
        or args.gpu
        or args.spot
        or args.all_regions
        or args.max_usd_per_hour is not None
    )


def write_table(table, fmt: str, notes=(), **document) -> None:
    """A table as aligned text, CSV (4 significant digits, as every CSV document) or one JSON
    document with the notes."""
    if fmt == "csv":  # printed: no terminal escape sequences from a catalog's names
        from .._format import round_table
        from .._messages import printable
        from ..inputs._csv import escape_formulas

        text = round_table(escape_formulas(table)).to_csv(index=False, lineterminator="\n")
        sys.stdout.write(printable(text))
    elif fmt == "json":
        records = json.loads(table.to_json(orient="records", double_precision=10))
        json.dump({**document, "notes": list(notes), "offerings": records}, sys.stdout, indent=1)
        print()
    else:
        print(table_text(table))


def add_parser(subparsers) -> None:
    """Register ``offerings refresh``."""
    off = subparsers.add_parser("offerings", help="the offerings snapshot (SkyPilot's catalog)")
    sub = off.add_subparsers(dest="offerings_command", required=True)
    ref = sub.add_parser(
        "refresh",
        help="derive the offerings snapshot from a SkyPilot catalog folder and say what changed",
    )
    ref.add_argument(
        "--catalog",
        required=True,
        help="a SkyPilot catalog folder: <cloud>/vms.csv "
        "(e.g. ~/.sky/catalogs/v8, or ../shared/data/skypilot-catalog)",
    )
    ref.add_argument(
        "--out",
        help="folder to write offerings.csv and offerings_meta.json into "
        "(default: write nothing, only say what would change)",
    )
    ref.set_defaults(run=run)


def run(args) -> int:
    """Derive the snapshot; print what changed against the shipped one and the odd rows."""
    from .. import offerings_changes_text, refresh_offerings

    out = None
    if args.out is not None and not args.out.strip():
        from .. import ProfetValueError

        raise ProfetValueError(
            "--out '' is empty; give the folder to write into, or leave --out out"
        )
    if args.out:  # the write rule, before any work: a new folder, or one this command wrote
        from ..training._swap import check_command_out

        out = check_command_out(args.out, "offerings refresh", [args.catalog])
    done = refresh_offerings(args.catalog)
    meta, report = done["meta"], done["report"]
    # The clouds' folder names and SOURCE.md lines are the catalog's text: printed as data.
    print(printable(f"{meta['offerings']} offerings from {', '.join(meta['clouds'])}"))
    for cloud, info in meta["clouds"].items():
        line = (
            f"  {cloud}: {info.get('repository', info.get('path', ''))} "
            f"{info.get('schema', '')} commit {info.get('commit', 'unknown')}"
        )
        print(printable(line))
    print("against the shipped snapshot: " + offerings_changes_text(done["changes"]))
    _print_accounting(meta.get("rows", {}))
    if len(report):
        print(
            f"{len(report)} catalog row(s) left out or corrected, each named (not ranked): "
            + ", ".join(f"{k} {v}" for k, v in meta["odd_rows"].items())
        )
        _print_rows(meta["reported_rows"])
    if out is not None:
        from .. import write_offerings
        from ..training._swap import written_beside

        with written_beside(out, "offerings refresh") as tmp:
            write_offerings(done, tmp)
        print(f"wrote {args.out}/offerings.csv and offerings_meta.json")
    return 0


def _print_accounting(rows: dict) -> None:
    """Every input row per cloud: priced, reported by name, a GCP host, no accelerator."""
    for cloud, c in rows.items():
        print(
            printable(
                f"  {cloud}: {c['rows']} row(s) read: {c['priced']} priced, {c['reported']} "
                f"reported below, {c['gcp_hosts']} GCP N1 host(s) no GPU was priced on, "
                f"{c['no_accelerator']} without an accelerator"
                + (f", {c['unaccounted']} UNACCOUNTED" if c["unaccounted"] else "")
            )
        )


def _print_rows(groups: list) -> None:
    """Each odd row by name with its reason: one line per cloud, instance, kind and reason,
    naming every region/zone and vms.csv line it holds (the metadata's ``reported_rows``)."""
    for g in groups:
        print(
            printable(
                f"{g['cloud']} {g['instance'] or '(no instance name)'}: {g['kind']}: "
                f"{g['detail']} [{g['rows']} row(s): {g['where']}]"
            )
        )
