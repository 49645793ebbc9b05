"""``profet doe``: design two-level factorial experiments and analyse their results.

``profet_core.cli._main`` registers this with :func:`add_parser` and runs it with :func:`run`;
:func:`main` runs it standalone.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ProfetError, ProfetValueError

if TYPE_CHECKING:
    import pandas as pd

    from ._analysis import AnalysisResult
    from ._design import Design

# Registering the parser imports nothing heavy: statsmodels, pyDOE3 and plotly are imported by
# the handlers, so `profet predict` does not pay for them.

__all__ = ["add_parser", "main", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``doe`` subcommand (``design`` and ``analyze``) on an argparse subparsers.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The object returned by ``parser.add_subparsers()``.

    Returns
    -------
    argparse.ArgumentParser
        The ``doe`` parser; :func:`run` runs its sub-subcommands (``design``, ``analyze``).
    """
    doe = subparsers.add_parser(
        "doe",
        help="design two-level factorial experiments and analyse their results",
        description="Two-level full and fractional factorial designs, and their ANOVA.",
    )
    sub = doe.add_subparsers(dest="doe_command", metavar="{design,analyze}", required=True)

    d = sub.add_parser(
        "design",
        help="build a run sheet",
        description="Build a two-level full or fractional factorial design and its run sheet.",
        epilog="example: profet doe design --factor cpu=750m,1500m --factor memory=1.5Gi,3Gi "
        "--factor network=FashionMNISTCNN,FashionMNISTResNet --factor epochs=5,10 "
        "--generator D=ABC --replicates 4 --seed 1",
    )
    d.add_argument(
        "--factor",
        action="append",
        required=True,
        metavar="NAME=LOW,HIGH",
        help="a factor and its two levels; repeat for each factor (letters A, B, C, "
        "... follow this order)",
    )
    d.add_argument(
        "--generator",
        action="append",
        default=[],
        metavar="D=ABC",
        help="generator of a fraction, e.g. D=ABC or D=-ABC; repeat for more",
    )
    d.add_argument(
        "--replicates", type=int, default=1, metavar="N", help="replicates of each run (default 1)"
    )
    d.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="S",
        help="seed of the randomised run order (default: drawn and printed)",
    )
    d.add_argument(
        "--no-randomize",
        action="store_true",
        help="keep standard order instead of randomising the runs",
    )
    d.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="write run_sheet.csv, factors.csv and aliases.csv to DIR",
    )

    a = sub.add_parser(
        "analyze",
        help="ANOVA of a results CSV",
        description="Fit main effects and two-factor interactions (sum-to-zero contrasts, type "
        "III ANOVA) to a results CSV: factor columns with level labels or -1/+1, and numeric "
        "response columns.",
    )
    # str, not Path: Path("") would turn an empty argument into "." (a directory)
    a.add_argument("results", metavar="RESULTS.csv", help="results table (CSV)")
    a.add_argument(
        "--response",
        action="append",
        required=True,
        metavar="NAME",
        help="response column; repeat to analyse several",
    )
    a.add_argument(
        "--factors",
        default=None,
        metavar="A,B,...",
        help="factor columns (default: every other column, except run-sheet "
        "bookkeeping columns and numeric columns with more than two values)",
    )
    a.add_argument(
        "--levels",
        action="append",
        default=[],
        metavar="NAME=LOW,HIGH",
        help="which label of a factor is low and which high (default: numeric "
        "order, else alphabetical)",
    )
    a.add_argument(
        "--terms",
        default=None,
        metavar="A,A:B,...",
        help="keep only these terms and pool the rest into the error",
    )
    a.add_argument(
        "--alpha", type=float, default=0.05, help="confidence intervals at 1 - ALPHA (default 0.05)"
    )
    a.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="write <response>_anova.csv, _coefficients.csv, _effects.csv, "
        "_residuals.csv and one HTML file per figure (with plotly.min.js) to DIR",
    )
    return doe


def run(args: argparse.Namespace) -> int:
    """Run ``profet doe design`` or ``profet doe analyze``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by the parser :func:`add_parser` registers.

    Returns
    -------
    int
        Exit code, 0.
    """
    handler = design_handler if args.doe_command == "design" else analyze_handler
    return handler(args)


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [t.strip() for t in text.split(",") if t.strip()]


def _table(df: pd.DataFrame, index: bool = True) -> str:
    return df.to_string(index=index, float_format=lambda v: f"{v:.6g}", na_rep="-")


def _check_out(out: Path | None, command: str, inputs=()) -> Path | None:
    """The write rule (``training._swap.check_command_out``), before any work: a new or empty
    folder, or one ``profet doe <command>`` wrote whose files nobody changed since (a run sheet
    with results filled in is never replaced)."""
    from ..training._swap import check_command_out

    return None if out is None else check_command_out(out, f"doe {command}", inputs)


def _write_folder(out: Path, command: str, write) -> None:
    """``write(folder)`` into a folder beside ``out``, swapped in when complete."""
    from ..training._swap import written_beside

    try:
        with written_beside(out, f"doe {command}") as tmp:
            write(tmp)
    except OSError as exc:
        raise ProfetValueError(f"cannot write to output folder {str(out)!r}: {exc}") from exc


def format_design(design: Design) -> str:
    """Text summary of a design: type, resolution, defining relation, factors, aliases."""
    lines = [
        f"Design: {design.label}, {design.n_base_runs} runs x {design.replicates} replicate(s) "
        f"= {design.n_runs} runs",
        f"Resolution: {design.resolution_label}",
    ]
    if design.generators:
        lines.append("Generators: " + ", ".join(design.generators))
        lines.append(f"Defining relation: {design.defining_relation_text}")
    lines.append(
        "Run order: "
        + (f"randomised, seed {design.seed}" if design.seed is not None else "standard order")
    )
    lines += ["", "Factors:", _table(design.factor_table(), index=False)]
    if design.aliases:
        lines += ["", "Alias structure:", _table(design.alias_table(), index=False)]
    return "\n".join(lines)


def design_handler(args: argparse.Namespace) -> int:
    """Handle ``profet doe design``: print the design and run sheet, optionally write CSVs."""
    from ..inputs._csv import to_csv
    from ._design import make_design
    from ._factors import parse_factor

    _check_out(args.out, "design")
    factors = [parse_factor(f) for f in args.factor]
    design = make_design(
        factors,
        args.generator,
        replicates=args.replicates,
        seed=args.seed,
        randomize=not args.no_randomize,
    )
    print(format_design(design))
    print("\nRun sheet:")
    print(_table(design.runs, index=False))
    if args.out is not None:

        def write(tmp: Path) -> None:
            to_csv(design.runs, tmp / "run_sheet.csv", index=False)
            to_csv(design.factor_table(), tmp / "factors.csv", index=False)
            to_csv(design.alias_table(), tmp / "aliases.csv", index=False)

        _write_folder(args.out, "design", write)
        print(f"\nWrote run_sheet.csv, factors.csv and aliases.csv to {args.out}")
    return 0


def format_analysis(result: AnalysisResult) -> str:
    """Text report of an analysis: ANOVA, coefficients, effects, diagnostics and notes."""
    lines = [
        f"Response: {result.response} ({result.n_runs} runs, residual df {result.df_resid}, "
        f"R^2 = {result.r_squared:.4f})"
    ]
    if result.has_error:
        lines += ["", "ANOVA (type III):", _table(result.anova)]
    else:
        lines += [
            "",
            "No error term: F tests are not possible; use the half-normal plot "
            "(--out) or --terms to pool small effects into the error.",
            "",
            "Sums of squares:",
            _table(result.anova[["sum_sq", "df"]]),
        ]
    ci = int(round(100 * (1 - result.alpha)))
    lines += ["", f"Coefficients ({ci}% confidence intervals):", _table(result.coefficients)]
    lines += ["", "Effects:", _table(result.effects, index=False)]
    if result.shapiro is not None:
        lines += [
            "",
            f"Shapiro-Wilk on residuals: W = {result.shapiro.statistic:.4f}, "
            f"p = {result.shapiro.p_value:.4g}",
        ]
    if result.notes:
        lines += ["", "Notes:"] + [f"- {n}" for n in result.notes]
    return "\n".join(lines)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "response"


def _write_analysis(result: AnalysisResult, out: Path, shown: Path) -> str:
    """Write one response's tables and figures to ``out``; return the line saying so (that
    they are in ``shown``, where ``out`` is swapped in)."""
    from ..inputs._csv import to_csv
    from ._plots import doe_figures

    stem = _safe(result.response)
    to_csv(result.anova, out / f"{stem}_anova.csv")
    to_csv(result.coefficients, out / f"{stem}_coefficients.csv")
    to_csv(result.effects, out / f"{stem}_effects.csv", index=False)
    to_csv(result.residuals, out / f"{stem}_residuals.csv", index=False)
    names = []
    for name, fig in doe_figures(result).items():
        # "directory" writes plotly.min.js once next to the pages: offline, without
        # repeating 4 MB of JavaScript in every file
        fig.write_html(out / f"{stem}_{name}.html", include_plotlyjs="directory")
        names.append(f"{stem}_{name}.html")
    return (
        f"\nWrote {stem}_anova.csv, {stem}_coefficients.csv, {stem}_effects.csv, "
        f"{stem}_residuals.csv and {', '.join(names)} to {shown}"
    )


def analyze_handler(args: argparse.Namespace) -> int:
    """Handle ``profet doe analyze``: print ANOVA tables, optionally write CSVs and figures."""
    from ._analysis import analyze
    from ._factors import parse_factor
    from ._results import default_factors, read_results

    _check_out(args.out, "analyze", [args.results])
    df = read_results(args.results)
    levels = [parse_factor(s) for s in args.levels]
    factors = _split(args.factors)
    terms = _split(args.terms)
    results = []
    for i, response in enumerate(args.response):
        # other requested responses are never factors, whatever their values look like
        facs = default_factors(df, args.response) if factors is None else factors
        result = analyze(df, response, facs, levels=levels or None, terms=terms, alpha=args.alpha)
        if i:
            print("\n" + "=" * 78 + "\n")
        print(format_analysis(result))
        results.append(result)
    if args.out is not None:  # every response's files in one new folder, swapped in
        lines = []
        write = lambda tmp: lines.extend(_write_analysis(r, tmp, args.out) for r in results)  # noqa: E731
        _write_folder(args.out, "analyze", write)
        print("\n".join(lines))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``doe`` standalone (``python -m profet_core.doe._cli design ...``).

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments after ``doe``; default ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit code: 0 on success, 2 on a ProfetError (message on stderr).
    """
    parser = argparse.ArgumentParser(prog="profet")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["doe", *(sys.argv[1:] if argv is None else argv)])
    try:
        return run(args)
    except ProfetError as exc:
        print(f"profet: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
