"""No module-level variable of ``profet_core`` is reassigned outside its module.

A model choice is a parameter of the estimator or fit that makes it (saved with the model), and
a bound a test needs smaller is a parameter of the function that applies it: a module global
reassigned from elsewhere (``_efficiency.SHARE_ARCH = False`` in a study,
``monkeypatch.setattr(_predict, "TABLE_MAX_LINES", 60)`` in a test) changes behaviour that no
saved artifact records, and leaks into whatever runs next in the process. This test reads every
Python file of the tree (the package, the app, ``bench/`` and ``tests/``) and fails on each
UPPER_CASE attribute of a ``profet_core`` module that is assigned, deleted, mutated in place
(``.update()``, ``[key] = ...``) or ``setattr``'d (``monkeypatch`` included) from another file.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from tests._utils import ROOT

PACKAGE = "profet_core"
#: A module-level constant's or switch's name (``_PRIVATE`` ones too).
UPPER = re.compile(r"^_*[A-Z][A-Z0-9_]*$")
#: Methods that change a dict, list or set in place.
MUTATORS = {
    "update", "clear", "pop", "popitem", "setdefault", "append", "extend", "insert", "remove",
    "add", "discard", "sort", "reverse", "__setitem__", "__delitem__",
}  # fmt: skip
#: Where the tree's Python files are (a virtual environment or build output is not the tree).
TREES = ("profet_core", "profet_app", "pages", "bench", "tests")


def tree_files() -> list[Path]:
    files = [ROOT / "app.py"] if (ROOT / "app.py").exists() else []
    for top in TREES:
        files += sorted(p for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts)
    return files


def module_of(path: Path) -> str | None:
    """The dotted name of a file of the package (None outside it)."""
    rel = path.relative_to(ROOT)
    if rel.parts[0] != PACKAGE:
        return None
    parts = list(rel.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def is_package_module(name: str) -> bool:
    """Whether a dotted name is a module or subpackage of the package (a file or a folder)."""
    if name != PACKAGE and not name.startswith(PACKAGE + "."):
        return False
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _absolute(node: ast.ImportFrom, here: str | None, is_init: bool) -> str | None:
    """The module an ``import from`` reads, relative imports resolved against ``here``."""
    if not node.level:
        return node.module
    if here is None:
        return None
    base = here.split(".")
    base = base if is_init else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def module_aliases(nodes, here: str | None, is_init: bool) -> dict[str, str]:
    """{local name: package module} bound by the imports among ``nodes`` (anywhere in a file)."""
    out = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname and is_package_module(a.name):
                    out[a.asname] = a.name
                elif not a.asname and a.name.split(".")[0] == PACKAGE:
                    out[PACKAGE] = PACKAGE
        elif isinstance(node, ast.ImportFrom):
            src = _absolute(node, here, is_init)
            for a in node.names:
                full = f"{src}.{a.name}" if src else a.name
                if src and is_package_module(full):
                    out[a.asname or a.name] = full
    return out


def resolve(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """The package module an expression names (``_amp``, ``profet_core.crossgpu.configurations._amp``)."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        parent = resolve(node.value, aliases)
        if parent and is_package_module(f"{parent}.{node.attr}"):
            return f"{parent}.{node.attr}"
    return None


def _targets(node: ast.AST):
    """The expressions an assignment or ``del`` writes (tuples unpacked)."""
    if isinstance(node, (ast.Assign, ast.Delete)):
        todo = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        todo = [node.target]
    else:
        return
    while todo:
        t = todo.pop()
        if isinstance(t, (ast.Tuple, ast.List)):
            todo.extend(t.elts)
        elif isinstance(t, ast.Starred):
            todo.append(t.value)
        else:
            yield t


def _global(node: ast.AST, aliases) -> tuple[str, str] | None:
    """(module, NAME) where ``node`` is ``<package module>.<UPPER_NAME>``."""
    if isinstance(node, ast.Attribute) and UPPER.match(node.attr):
        mod = resolve(node.value, aliases)
        if mod:
            return mod, node.attr
    return None


def _setattr_target(call: ast.Call, aliases) -> tuple[str, str] | None:
    """(module, NAME) a ``setattr``/``monkeypatch.setattr``/``delattr``/``setitem`` call writes."""
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    args = call.args
    if name in ("setattr", "delattr") and args:
        first = args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):  # "pkg.mod.NAME"
            mod, _, attr = first.value.rpartition(".")
            return (mod, attr) if is_package_module(mod) and UPPER.match(attr) else None
        if len(args) > 1 and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str):
            mod = resolve(first, aliases)
            return (mod, args[1].value) if mod and UPPER.match(args[1].value) else None
    if name in ("setitem", "delitem") and args:  # monkeypatch.setitem(mod.TABLE, key, value)
        return _global(args[0], aliases)
    return None


def writes(path: Path) -> list[tuple[int, str, str, str]]:
    """``(line, module, NAME, how)`` for each write of another module's global in ``path``
    (scripts held in its strings, such as a test's subprocess code, included)."""
    here = module_of(path)
    text = path.read_text(encoding="utf-8")
    if here is None and PACKAGE not in text:
        return []  # outside the package, only a file naming it can reach its modules
    found = _writes(ast.parse(text, str(path)), path, here)
    return [w for w in found if w[1] != here]


def _scripts(nodes):
    """(line, parsed code) of each string constant that is Python importing the package."""
    for node in nodes:
        text = node.value if isinstance(node, ast.Constant) else None
        if isinstance(text, str) and PACKAGE in text and "\n" in text:
            try:
                yield node.lineno, ast.parse(text)
            except SyntaxError:
                continue


def _writes(tree: ast.AST, path: Path, here: str | None) -> list:
    nodes = list(ast.walk(tree))  # walked once: the imports, the scripts and the writes
    aliases = module_aliases(nodes, here, path.name == "__init__.py")
    found = [
        (line + inner - 1, *rest)
        for line, code in _scripts(nodes)
        for inner, *rest in _writes(code, path, here)
    ]
    for node in nodes:
        for t in _targets(node) or ():
            hit = _global(t, aliases) or (
                _global(t.value, aliases) if isinstance(t, ast.Subscript) else None
            )
            if hit:
                found.append((node.lineno, *hit, "assigned"))
        if isinstance(node, ast.Call):
            hit = _setattr_target(node, aliases)
            if hit:
                found.append((node.lineno, *hit, "setattr"))
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in MUTATORS:
                hit = _global(f.value, aliases)
                if hit:
                    found.append((node.lineno, *hit, f"mutated (.{f.attr})"))
    return found


def test_no_module_global_of_the_package_is_written_from_outside():
    bad = [
        f"{p.relative_to(ROOT)}:{line}: {mod}.{name} {how}"
        for p in tree_files()
        if p != Path(__file__).resolve()  # this file's examples of what is refused
        for line, mod, name, how in writes(p)
    ]
    assert not bad, "module globals written from outside their module:\n" + "\n".join(bad)


CASES = {
    "assigned": "from profet_core.crossgpu.spec import _efficiency\n_efficiency.SHARE_ARCH = False\n",
    "tuple": (
        "from profet_core.crossgpu.spec import _efficiency as e\nfrom profet_core.crossgpu.configurations import _amp\n"
        "e.COMPUTE_Z, (x, _amp.MEMORY) = 'none', (1, None)\n"
    ),
    "dotted": "import profet_core.crossgpu.configurations._amp\nprofet_core.crossgpu.configurations._amp.MEMORY = None\n",
    "aliased": "import profet_core.cli._predict as p\np.TABLE_MAX_LINES += 1\n",
    "monkeypatch": (
        "from profet_core.cli import _predict\n"
        "def test(monkeypatch):\n    monkeypatch.setattr(_predict, 'TABLE_MAX_LINES', 60)\n"
    ),
    "monkeypatch-string": (
        "def test(monkeypatch):\n"
        "    monkeypatch.setattr('profet_core.inputs._profile.MAX_PROFILE_BYTES', 10)\n"
    ),
    "mutated": (
        "from profet_core.crossgpu.configurations import _dataparallel\n_dataparallel.PARAMS.update({'x': 1})\n"
    ),
    "item": "from profet_core.crossgpu.configurations import _dataparallel\n_dataparallel.PARAMS['x'] = 1.0\n",
    "relative": "from ..crossgpu.spec import _efficiency\n_efficiency.SHARE_ARCH = False\n",
    "in-a-script": (
        'CODE = """\nfrom profet_core.capture import _profile\n_profile.WARMUP_STEPS = 0\n"""\n'
    ),
}


@pytest.mark.parametrize("source", CASES.values(), ids=CASES.keys())
def test_each_form_of_write_is_caught(tmp_path, monkeypatch, source):
    path = ROOT / "profet_core" / "cli" / "_written_for_the_test.py"
    monkeypatch.setattr(Path, "read_text", lambda self, **kw: source)
    want = 2 if ", (x, _amp.MEMORY)" in source else 1
    assert len(writes(path)) == want


@pytest.mark.parametrize(
    "source",
    [
        "from profet_core.crossgpu.spec import _efficiency\nx = _efficiency.COMPUTE_Z_MODES\n",
        "from profet_core.crossgpu.configurations._dataparallel import PARAMS\ncounts = {**PARAMS, 'x': 1}\n",
        "from profet_core.crossgpu import CrossInstanceModel\nm = CrossInstanceModel()\n"
        "m.set_params(share_arch=False)\n",
        "import os\nos.ENVIRON = {}\n",  # not the package's
        "from profet_core.cli import _predict\n_predict.helper = None\n",  # not a constant
    ],
    ids=["read", "copied", "set-params", "other-package", "lower-case"],
)
def test_reading_and_parameters_are_not_writes(source, monkeypatch):
    path = ROOT / "bench" / "studies" / "_written_for_the_test.py"
    monkeypatch.setattr(Path, "read_text", lambda self, **kw: source)
    assert writes(path) == []


def test_a_module_may_change_its_own_globals(monkeypatch):
    source = "import profet_core.cli._predict as me\nme.TABLE_MAX_LINES = 1\n"
    monkeypatch.setattr(Path, "read_text", lambda self, **kw: source)
    assert writes(ROOT / "profet_core" / "cli" / "_predict.py") == []
