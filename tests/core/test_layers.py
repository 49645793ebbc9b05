"""The package's layers: every module imports only from its own layer or the layers
below it, and no two modules import each other, directly or round a longer loop.

Every ``import``/``from ... import`` counts, the ones deferred inside functions too: a deferred
import still ties the two modules together, it only hides the tie from a reader of the header.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "profet_core"

#: Lowest first. A module belongs to the most specific prefix listed; ``capture._cli`` and
#: ``doe._cli`` register subcommands, so they sit with the command line.
LAYERS = (
    ("errors", "_schema", "_messages", "_format", "_base"),
    ("inputs",),
    ("features",),
    ("models",),
    ("crossgpu", "onepoint"),
    ("prediction",),
    ("offerings",),
    ("training",),
    ("capture", "doe", "sky"),
    ("__init__",),
    ("cli", "capture._cli", "doe._cli", "__main__"),
)


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[0] == "data":  # data/build/: scripts that build shipped rows, not modules
            continue
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def layer(module: str) -> int:
    """Index in :data:`LAYERS` of a module named relative to the package (``inputs._profile``)."""
    best, depth = None, -1
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and prefix.count(".") > depth:
                best, depth = i, prefix.count(".")
    if best is None:
        raise AssertionError(f"profet_core.{module} is in no layer; add it to LAYERS")
    return best


def _resolve(module: str, node: ast.ImportFrom | ast.Import) -> list[str]:
    """Package modules (relative names) that one import statement loads."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names if a.name.startswith("profet_core")]
        return [n.removeprefix("profet_core").lstrip(".") or "__init__" for n in names]
    parts = module.split(".")
    is_package = MODULES[module].name == "__init__.py"
    if node.level:
        base = parts if is_package else parts[:-1]
        base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
        target = ".".join([*base, *([node.module] if node.module else [])])
    elif (node.module or "").startswith("profet_core"):
        target = node.module.removeprefix("profet_core").lstrip(".")
    else:
        return []
    target = target.removesuffix(".__init__")
    out = []
    for alias in node.names:
        sub = f"{target}.{alias.name}" if target else alias.name
        if sub in MODULES or f"{sub}.__init__" in MODULES:
            out.append(sub)
        else:
            out.append(target or "__init__")
    return [m if m in MODULES else f"{m}.__init__" for m in out]


def import_graph() -> dict[str, set[str]]:
    """``{module: modules it imports}``, relative names, every import statement counted."""
    graph = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text())
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                deps.update(_resolve(module, node))
        graph[module] = {d for d in deps if d in MODULES and d != module}
    return graph


GRAPH = import_graph()


def _short(module: str) -> str:
    return module.removesuffix(".__init__") or "__init__"


@pytest.mark.parametrize("module", sorted(MODULES), ids=sorted(MODULES))
def test_imports_only_from_its_layer_or_below(module):
    mine = layer(_short(module))
    upward = sorted(d for d in GRAPH[module] if layer(_short(d)) > mine)
    assert not upward, f"profet_core.{module} (layer {mine}) imports from above: {upward}"


def test_no_import_cycle():
    # Tarjan's strongly connected components: any component of two or more is a cycle.
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def test_the_graph_sees_deferred_and_relative_imports():
    # The checks above are only as good as the graph: a deferred relative import must show up.
    assert "inputs._sanity" in GRAPH["prediction._checks"]
    assert "inputs._rules" in GRAPH["inputs._dataset"]


#: The command line parses, calls the core and renders: it imports the public API
#: (``profet_core``), its own modules and, named here with the reason, the few package-level
#: helpers that are not public. capture's and doe's commands may use their own subpackage.
CLI_ALLOWED = {
    "models._methods": "the method names, for --methods' choices (no model is built)",
    "inputs._profile": "profile_instance: the anchor a profile file names (predict's default)",
    "training._folders": "training_data: train's folders -> checked paths, dataset and catalog",
    "inputs._csv": "to_csv: the formula-escaping CSV writer of doe's tables",
    "training._swap": "the one write rule: doe's output folders checked first, swapped in",
    "_messages": "printable: a catalog's or a profile's text without terminal escapes",
    "_format": "round_table: 4 significant digits in every CSV document (profet instances)",
}
CLI_MODULES = sorted(
    m for m in MODULES if m.startswith("cli.") or m in ("capture._cli", "doe._cli", "__main__")
)


@pytest.mark.parametrize("module", CLI_MODULES, ids=CLI_MODULES)
def test_the_cli_calls_the_public_core(module):
    own = module.split(".")[0] if module.endswith("._cli") else "cli"
    private = sorted(
        d
        for d in GRAPH[module]
        if _short(d) not in ("__init__", "errors", *CLI_ALLOWED, *CLI_MODULES)
        and not _short(d).startswith(f"{own}.")
    )
    assert not private, f"profet_core.{module} imports private core modules: {private}"


def test_the_cli_allow_list_is_used():
    # A stale entry would let a private import back in unnoticed.
    used = {_short(d) for m in CLI_MODULES for d in GRAPH[m]}
    assert set(CLI_ALLOWED) <= used, set(CLI_ALLOWED) - used


# The app: ``app.py`` and ``pages/`` sit on top of the app package (``profet_app``), which sits
# on top of ``profet_core``'s public API. Names with a leading underscore are private, at any
# depth of the module path (``profet_core._schema``, ``profet_core.inputs._csv``).
APP_PACKAGE = ROOT / "profet_app"
APP_FILES = sorted(
    [ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *APP_PACKAGE.glob("*.py")],
    key=lambda p: str(p.relative_to(ROOT)),
)


def _imported_names(path: Path) -> set[str]:
    """Absolute module names a file imports (``from a.b import c`` counts as ``a.b`` and
    ``a.b.c``: ``c`` may be a submodule), every import statement counted."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


@pytest.mark.parametrize("path", APP_FILES, ids=[str(p.relative_to(ROOT)) for p in APP_FILES])
def test_the_app_uses_the_public_core_only(path):
    private = sorted(
        n
        for n in _imported_names(path)
        if n.split(".")[0] == "profet_core" and any(p.startswith("_") for p in n.split("."))
    )
    assert not private, f"{path.relative_to(ROOT)} imports private core modules: {private}"


@pytest.mark.parametrize(
    "path",
    [p for p in APP_FILES if p.parent == APP_PACKAGE],
    ids=[p.name for p in APP_FILES if p.parent == APP_PACKAGE],
)
def test_the_app_package_imports_no_page(path):
    # Pages are run by Streamlit as scripts; the package they import must not import them back.
    up = sorted(n for n in _imported_names(path) if n.split(".")[0] in ("pages", "app"))
    assert not up, f"{path.relative_to(ROOT)} imports from above: {up}"


def test_the_core_never_imports_the_app():
    found = sorted(
        str(p.relative_to(ROOT))
        for p in PACKAGE.rglob("*.py")
        if any(n.split(".")[0] in ("profet_app", "pages", "streamlit") for n in _imported_names(p))
    )
    assert not found, f"profet_core modules that import the app or streamlit: {found}"


def test_the_app_package_is_what_the_pages_import():
    # The check above is only as good as the names it reads: the pages must show up as users.
    users = [p for p in APP_FILES if any(n.startswith("profet_app") for n in _imported_names(p))]
    assert (ROOT / "pages" / "anchor_prediction.py") in users
    assert (ROOT / "app.py") in users
