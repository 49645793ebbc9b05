"""The shape the code keeps: no module over 400 lines, no function over 60 lines of
code (docstrings not counted; argparse builders exempt). The light import: test_import_light.py."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    p
    for p in [
        *ROOT.glob("profet_core/**/*.py"),
        *ROOT.glob("pages/*.py"),
        ROOT / "app.py",
        *ROOT.glob("profet_app/*.py"),
    ]
    if p.is_file()
)
MAX_MODULE, MAX_FUNCTION = 400, 60
#: argparse builders list every option; splitting them would only scatter the CLI's help.
EXEMPT = ("build_parser", "add_parser")


def _code_lines(fn: ast.AST) -> int:
    body = fn.body
    doc = (
        body[0]
        if body
        and isinstance(body[0], ast.Expr)
        and isinstance(getattr(body[0], "value", None), ast.Constant)
        and isinstance(body[0].value.value, str)
        else None
    )
    lines = fn.end_lineno - fn.lineno + 1
    return lines - ((doc.end_lineno - doc.lineno + 1) if doc else 0)


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_module_and_function_sizes(path):
    src = path.read_text()
    assert len(src.splitlines()) <= MAX_MODULE, f"{path.name} has {len(src.splitlines())} lines"
    long = [
        (f.name, _code_lines(f))
        for f in ast.walk(ast.parse(src))
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
        and f.name not in EXEMPT
        and _code_lines(f) > MAX_FUNCTION
    ]
    assert not long, f"functions over {MAX_FUNCTION} lines of code: {long}"
