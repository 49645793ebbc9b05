"""``profet instances``: the instances the artifacts reach, with GPU, price and basis."""

from __future__ import annotations

from ._common import ARTIFACTS_HELP, CATALOG_HELP, load_predictor, table_text


def add_parser(subparsers) -> None:
    """Register ``instances`` on the ``profet`` subcommand parsers."""
    ins = subparsers.add_parser(
        "instances", help="list the instances the artifacts know, with prices"
    )
    ins.add_argument("--artifacts", help=ARTIFACTS_HELP)
    ins.add_argument("--catalog", help=CATALOG_HELP)


def run(args) -> int:
    """Print the artifacts' instance table."""
    print(table_text(load_predictor(args.artifacts, args.catalog).instance_table()))
    return 0
