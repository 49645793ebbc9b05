"""``profet validate``: the leave-one-architecture-out report (and, with ``--cross``, each GPU
left out), printed and written."""

from __future__ import annotations

from ._argtypes import EPOCHS, THRESHOLD
from ._common import (
    DEFAULT_DATA,
    Progress,
    add_trees_flag,
    method_params,
    need_dnn,
    passed,
    table_text,
)

#: ``validate``'s options, given as the flags of the same names.
_OPTIONS = ("methods", "anchors", "targets", "architectures", "threshold", "cross", "specs")


def add_parser(subparsers) -> None:
    """Register ``validate`` on the ``profet`` subcommand parsers."""
    from ..models._methods import METHODS

    v = subparsers.add_parser("validate", help="leave-one-architecture-out cross-validation report")
    v.add_argument("--data", default=DEFAULT_DATA)
    v.add_argument("--out", default="validation", help="folder for report.md and CSVs")
    v.add_argument("--methods", nargs="+", choices=list(METHODS))
    v.add_argument("--anchors", nargs="+")
    v.add_argument("--targets", nargs="+")
    v.add_argument("--architectures", nargs="+", help="left-out architectures (default all)")
    v.add_argument("--threshold", type=THRESHOLD, default=6.0)
    v.add_argument("--dnn-epochs", type=EPOCHS)
    add_trees_flag(v)
    v.add_argument(
        "--cross",
        action="store_true",
        help="also validate the cross-instance model: each GPU left out (leave-one-GPU-out x "
        "leave-one-architecture-out, specs only and after 1 or 3 measured CNNs)",
    )
    v.add_argument("--specs", help="GPU spec catalog CSV (default: the package's)")


def run(args) -> int:
    """Validate, then print the report, the files written and the leave-one-GPU-out table."""
    from .. import validate
    from ..models._methods import METHODS

    if "profet" in (args.methods or list(METHODS)):
        need_dnn("profet validate")
    done = validate(
        args.data,
        args.out,
        **passed(args, _OPTIONS),
        method_params=method_params(args.dnn_epochs, args.trees),
        progress=Progress(),
    )
    print(done.report)
    print(f"written: {done.out}/{done.files[0]}, {', '.join(done.files[1:])}")
    if args.cross:
        print("\nGPUs left out (MAPE %, with the anchor latency; k = runs of the left-out GPU):")
        print(table_text(done.crossgpu_summary(), ".1f"))
        print(f"written: {done.out}/crossgpu.csv")
    return 0
