"""The ``profet`` command line: builds the parser from the subcommand modules, each with
``add_parser(subparsers)`` and ``run(args) -> int``, and runs the one asked for."""

from __future__ import annotations

import errno
import importlib
import os
import sys

from ._argtypes import OneLineParser

#: Options whose value may be a negative number or -inf (argparse would take it for an option).
_NUMERIC_OPTIONS = (
    "--anchor-latency-ms",
    "--latency-min-ms",
    "--latency-max-ms",
    "--size",
    "--size-min",
    "--size-max",
    "--seed",
    "--batch-size",
    "--dataset-images",
    "--epochs",
    "--steps",
    "--run-steps",
    "--input-size",
    "--threshold",
    "--dnn-epochs",
    "--trees",
    "--classes",
    "--timeout",
    "--usd-per-hour",
    "--max-usd-per-hour",
)
#: Each subcommand name (aliases too) and the module that registers it (imported when needed),
#: in ``--help`` order; each module's ``add_parser`` registers its subcommands, all run by its
#: ``run``. ``profet NAME`` builds only NAME's parser (tests check this against the full parser,
#: message for message).
_COMMAND_MODULES = {
    "train": "._train",
    "predict": "._predict",
    "add-instance": "._add_instance",
    "calibrate": "._add_instance",
    "instances": "._instances",
    "scale": "._scale",
    "validate": "._validate",
    "offerings": "._offerings",
    "sky-plan": "._sky_plan",
    "doe": "..doe._cli",
    "profile": "..capture._cli",
    "collect": "..capture._cli",
}
#: Modules of optional features: left out of the parser where they cannot be imported.
_OPTIONAL = ("..doe._cli", "..capture._cli")


def _modules() -> list:
    """Every subcommand module of :data:`_COMMAND_MODULES`, once each, in order (the optional
    features' left out where they cannot be imported)."""
    modules = []
    for name in dict.fromkeys(_COMMAND_MODULES.values()):
        try:
            modules.append(importlib.import_module(name, __package__))
        except ImportError:
            if name not in _OPTIONAL:
                raise
    return modules


def _only_module(argv) -> list | None:
    """``[module]`` of the subcommand ``argv`` starts with, when only its parser is needed; None
    for no command, an unknown one, a help flag anywhere (the full parser says all of them)."""
    if not argv or argv[0] not in _COMMAND_MODULES:
        return None
    if any(a.startswith(("-h", "--h")) for a in argv):
        return None
    try:
        return [importlib.import_module(_COMMAND_MODULES[argv[0]], __package__)]
    except ImportError:  # an optional feature missing: the full parser says what is left
        return None


def build_parser(argv=None) -> OneLineParser:
    """The ``profet`` parser; each subcommand's parser has its ``run`` as default ``run``.

    With ``argv`` that names a known subcommand (and asks for no help) only that subcommand is
    registered: it parses ``argv`` exactly as the full parser does, in less time.
    """
    modules = (argv is not None and _only_module(argv)) or _modules()
    p = OneLineParser(
        prog="profet",
        description="Predict CNN training-step latency and "
        "cost on GPU instances from a profile taken on one anchor instance.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    for module in modules:
        before = set(sub.choices)
        module.add_parser(sub)
        for name in set(sub.choices) - before:  # its subcommands and their aliases
            sub.choices[name].set_defaults(run=module.run)
    return p


def _join_numeric(argv: list) -> list:
    """``--size -1`` -> ``--size=-1``, so a bad number gets its own message, not argparse's
    "expected one argument"."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] in _NUMERIC_OPTIONS and i + 1 < len(argv) and argv[i + 1].startswith("-"):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def main(argv=None) -> int:
    """Run ``profet`` with ``argv`` (default ``sys.argv[1:]``); return the exit code.

    Parameters
    ----------
    argv : list of str, optional

    Returns
    -------
    int
        0 on success; 2 on a bad input (one ``profet: error: ...`` line on stderr), 130 on
        Ctrl-C, 141 when the reader of stdout left.
    """
    from .. import ProfetError

    argv = _join_numeric(list(sys.argv[1:] if argv is None else argv))
    args = build_parser(argv).parse_args(argv)
    try:
        code = args.run(args)
        sys.stdout.flush()  # here, so that a closed pipe or a full disk is caught below
        return code
    except ProfetError as exc:
        from .._messages import printable  # a message may echo a catalog's or a task's text

        print(f"profet: error: {printable(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("profet: interrupted", file=sys.stderr)
        return 130
    except ModuleNotFoundError as exc:  # an optional part of the install, one line
        from ._common import EXTRAS, extra_hint, extra_of_module

        extra = extra_of_module(exc.name)
        if extra is None:
            raise
        print(
            f"profet: error: profet {args.command} needs {EXTRAS[extra][1]}, which this install "
            f"lacks (no module {exc.name}); {extra_hint(extra)}",
            file=sys.stderr,
        )
        return 2
    except BrokenPipeError:  # `profet ... | head`: the reader left; nothing more to say
        _drop_stdout()
        return 141
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EIO):
            raise
        _drop_stdout()
        print(f"profet: error: cannot write: {exc.strerror}", file=sys.stderr)
        return 2


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of what could not be
    written raises nothing more at exit (Python's documented recipe for SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
