"""``profet add-instance`` (formerly ``profet calibrate``): teach the artifacts' cross-instance
model a new instance from a few of its runs."""

from __future__ import annotations

from ._common import renamed

#: The command's old name: accepted, with a warning, until the next release.
OLD_NAME = "calibrate"


def add_parser(subparsers) -> None:
    """Register ``add-instance`` (and its old name) on the ``profet`` subcommand parsers."""
    add = subparsers.add_parser(
        "add-instance",
        aliases=[OLD_NAME],
        help="adapt the cross-instance model to a new instance from a few runs",
    )
    add.add_argument("--instance", required=True, help="the new instance (in the spec catalog)")
    add.add_argument(
        "--data",
        action="append",
        required=True,
        help="dataset folder with the new instance's rows (repeatable; the measured instances' "
        "rows of the same workloads are needed too, e.g. --data new --data ../shared/data/profet)",
    )
    add.add_argument("--specs", help="spec catalog CSV with the instance's line (if not shipped)")
    add.add_argument("--artifacts", help="artifacts folder to update (default: the shipped ones)")


def run(args) -> int:
    """Add ``--instance`` to ``--artifacts``; print the basis its predictions now rest on."""
    from .. import add_instance

    if args.command == OLD_NAME:
        renamed(f"profet {OLD_NAME}", "profet add-instance")
    basis = add_instance(args.artifacts, args.instance, args.data, args.specs)
    print(f"{args.instance}: predictions now rest on {basis}")
    return 0
