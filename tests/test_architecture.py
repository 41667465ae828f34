"""The layout's rules (docs/architecture.md), checked on the source: imports point one way, no
import cycles, no oversized modules or functions, every test module in a tier."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "simdask"

#: subpackages that must run without a cluster: they never import dask or distributed
NO_DASK = ("kernels", "ingest", "storage")
#: pure numpy kernels: no I/O libraries either
NO_IO = {"kernels": ("zarr", "sqlite3", "fsspec", "numcodecs")}
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports executed when the module is imported (not inside functions or TYPE_CHECKING)."""
    out: list = []
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            todo.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            todo.extend(node.body + node.orelse + node.finalbody)
            for h in node.handlers:
                todo.extend(h.body)
    return out


def _all_imported_roots(tree: ast.Module) -> set[str]:
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def _import_graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        for node in _top_level_imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level or not node.module or not node.module.startswith("simdask"):
                    continue
                # `from pkg import submodule` depends on the submodule
                targets = [
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in mods else node.module
                    for a in node.names
                ]
            graph[name] |= {t for t in targets if t in mods and t != name}
    return graph


def test_no_relative_imports_and_no_import_cycles():
    graph = _import_graph()
    for name, path in _modules().items():
        rel = [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ImportFrom)]
        assert all(n.level == 0 for n in rel), f"{name} uses a relative import"
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            # a package's __init__ importing its own submodule is not a cycle through the package
            if nxt.startswith(node + "."):
                continue
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt] if nxt in stack else [node, nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])


@pytest.mark.parametrize("sub", NO_DASK)
def test_kernels_ingest_storage_never_import_dask(sub):
    for path in sorted((PACKAGE / sub).rglob("*.py")):
        roots = _all_imported_roots(ast.parse(path.read_text()))
        banned = {"dask", "distributed"} | set(NO_IO.get(sub, ()))
        assert not roots & banned, f"{path.relative_to(ROOT)} imports {sorted(roots & banned)}"


def test_only_storage_touches_the_catalog_connection():
    """SQL lives in storage/: no module elsewhere reads a ``.conn`` attribute (the catalog's
    SQLite connection); they call storage's functions with the catalog."""
    found = []
    for name, path in _modules().items():
        if name.startswith("simdask.storage."):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "conn":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, "catalog connection used outside storage/: " + ", ".join(found)


def test_no_oversized_modules_or_functions():
    too_long = []
    for name, path in _modules().items():
        text = path.read_text()
        lines = text.count("\n")
        if lines > MAX_MODULE_LINES:
            too_long.append(f"module {name}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    too_long.append(f"function {name}.{node.name}: {n} lines")
    assert not too_long, "\n".join(too_long)


def test_every_test_module_has_a_tier():
    tiers = {"unit", "integration", "system"}
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text())
        marks = [
            n.value
            for n in tree.body
            if isinstance(n, ast.Assign)
            and any(getattr(t, "id", "") == "pytestmark" for t in n.targets)
        ]
        assert len(marks) == 1, (
            f"{path.name} sets pytestmark {len(marks)} times (one: a second drops the first)"
        )
        # one marker, or a list of markers (a tier and e.g. a skipif) whose first is the tier
        first = marks[0].elts[0] if isinstance(marks[0], ast.List) and marks[0].elts else marks[0]
        assert isinstance(first, ast.Attribute) and first.attr in tiers, path.name
