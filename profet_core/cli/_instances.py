"""``profet instances``: every GPU offering (cloud, instance type, region, prices), or with
``--targets`` the instances the artifacts predict, with GPU, price and basis."""

from __future__ import annotations

from ._common import ARTIFACTS_HELP, CATALOG_HELP, load_predictor, note, table_text, warn
from ._offerings import add_filters, filters_given, offering_filter, write_table


def add_parser(subparsers) -> None:
    """Register ``instances`` on the ``profet`` subcommand parsers."""
    ins = subparsers.add_parser(
        "instances", help="list every GPU offering (cloud, region, on-demand and spot prices)"
    )
    ins.add_argument("--artifacts", help=ARTIFACTS_HELP)
    ins.add_argument("--catalog", help=CATALOG_HELP)
    ins.add_argument(
        "--format",
        choices=["table", "csv", "json"],
        default="table",
        help="table: aligned text (default); csv; json: one document with the notes",
    )
    ins.add_argument(
        "--targets",
        action="store_true",
        help="list the GPU configurations predictions reach (instance, GPU, price, the offering "
        "it is from, basis) instead",
    )
    add_filters(ins, "only offerings with a spot price (spot capacity can be taken back)")


def run(args) -> int:
    """Print the offerings (or the artifacts' targets) and the notes about their prices."""
    from .. import list_offerings

    predictor, given, snapshot, source, meta = load_predictor(args.artifacts, args.catalog)
    for text in predictor.catalog_notes:
        warn(text)
    if args.targets:
        if filters_given(args):  # the spec lines have no cloud, region or market
            from .. import ProfetValueError

            raise ProfetValueError(
                "--targets lists the artifacts' spec lines, which the offering filters (--cloud, "
                "--region, --gpu, --spot, --max-usd-per-hour, --all-regions) do not apply to; "
                "drop the filters, or drop --targets to list offerings"
            )
        write_table(predictor.instance_table(), args.format)
        return 0
    table, notes = list_offerings(
        predictor, offering_filter(args, None), catalog=given, offerings=snapshot
    )
    for text in notes:
        note(source if text.startswith("Prices:") else text)
    if args.format == "table":
        print(table_text(table.drop(columns="note")))
    else:  # the snapshot the prices are from: the shipped one, or --catalog's folder
        write_table(table, args.format, notes, source=meta)
    return 0
