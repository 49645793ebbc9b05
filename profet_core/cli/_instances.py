"""``profet instances``: the instances the artifacts reach, with GPU, price and basis."""

from __future__ import annotations

from ._common import ARTIFACTS_HELP, CATALOG_HELP, load_predictor, table_text, warn


def add_parser(subparsers) -> None:
    """Register ``instances`` on the ``profet`` subcommand parsers."""
    ins = subparsers.add_parser(
        "instances", help="list the instances the artifacts know, with prices"
    )
    ins.add_argument("--artifacts", help=ARTIFACTS_HELP)
    ins.add_argument("--catalog", help=CATALOG_HELP)


def run(args) -> int:
    """Print the artifacts' instance table (and what the catalog given did not change)."""
    predictor = load_predictor(args.artifacts, args.catalog)
    for note in predictor.catalog_notes:
        warn(note)
    print(table_text(predictor.instance_table()))
    return 0
