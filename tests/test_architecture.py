"""The layout's rules (docs/architecture.md), checked on the source: imports point one way, no
import cycles counting every import (function-level ones included), function-level imports
only where they defer a heavy or optional dependency, the engine importing nothing above it,
no module reading another object's private attributes, no oversized modules or functions,
every test module in a tier."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "simdask"

#: subpackages that must run without a cluster: they never import dask or distributed
NO_DASK = ("kernels", "alignment", "ingest", "storage")
#: pure numpy kernels: no I/O libraries either
NO_IO = {
    "kernels": ("zarr", "sqlite3", "fsspec", "numcodecs"),
    "alignment": ("zarr", "sqlite3", "fsspec", "numcodecs"),
}
#: third-party modules a function may import (deferred: optional extras, or slow to import and
#: needed by one path only); a simdask module whose module-level imports load one of them may
#: be deferred too (e.g. the engine, which loads dask: reading and querying never import it)
HEAVY = {
    "asyncssh": "ssh extra",
    "charset_normalizer": "only text not in UTF-8",
    "dask": "only a run",
    "distributed": "only a run",
    "fsspec": "only a URL store",
    "jinja2": "web extra",
    "matplotlib": "plot extra",
    "numcodecs": "only compressed data",
    "pandas": "dataframe extra (Index.pairs_frame)",
    "pyarrow": "parquet extra",
    "pypdfium2": "pdf extra",
    "starlette": "web extra",
    "striprtf": "rtf extra",
    "tqdm": "only a progress bar",
    "uvicorn": "web extra",
    "zarr": "only compressed data (0.4 s to import)",
}
#: simdask modules a function may import although they load nothing heavy: a query process
#: never reads nor compiles them (its cold start, test_shard_layout.py)
DEFERRED = {"simdask.read.lsh_search": "the MinHash LSH mode only"}
#: modules another branch restructures this round: their function-level imports are hoisted
#: after the merge (issue 27); the cycle test covers them already
NOT_YET_HOISTED: tuple[str, ...] = ()
#: the floor every room may import, besides the rooms below it
SHARED = {
    "simdask.config",
    "simdask.errors",
    "simdask.failpoints",
    "simdask.progress",
    "simdask.summary",
}
#: what the engine may import from simdask (it runs a run; the API above it calls it)
ENGINE_MAY_IMPORT = (
    "simdask.engine",
    "simdask.cluster",
    "simdask.storage",
    "simdask.ingest",
    "simdask.kernels",
    "simdask.alignment",
)
#: private attributes read across modules, each to be fixed by its owner (not this round's)
FRIEND_ACCESS_ALLOWED = {("simdask/web/app.py", "report_html._JS")}
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


@functools.cache
def _parsed(path: Path) -> ast.Module:
    """The syntax tree of a source file, parsed once per test process: every check reads
    the same ~250 modules and none changes a tree (parsing them all again in each check cost
    ~10 CPU s of the unit tier)."""
    return ast.parse(path.read_text())


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


def _imports(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import executed at some point, with whether it sits inside a function. Imports
    under ``if TYPE_CHECKING:`` are left out: they are annotations, never executed."""
    out: list[tuple[ast.Import | ast.ImportFrom, bool]] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                walk(ast.Module(body=child.orelse, type_ignores=[]), in_function)
            elif isinstance(child, ast.Import | ast.ImportFrom):
                out.append((child, in_function))
            else:
                is_function = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                walk(child, in_function or is_function)

    walk(tree, False)
    return out


def _targets(node: ast.Import | ast.ImportFrom, mods: dict[str, Path]) -> list[str]:
    """The modules an import statement imports (``from pkg import submodule``: the
    submodule)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level or not node.module:
        return []
    return [
        f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in mods else node.module
        for a in node.names
    ]


def _all_imported_roots(tree: ast.Module) -> set[str]:
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def _import_graph(function_level: bool = True) -> dict[str, set[str]]:
    """simdask module -> the simdask modules it imports (with ``function_level``: every
    import, those inside functions included; without: those run when it is imported)."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        for node, in_function in _imports(_parsed(path)):
            if in_function and not function_level:
                continue
            graph[name] |= {t for t in _targets(node, mods) if t in mods and t != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (a package importing its own submodule is not one), or
    None."""
    state: dict[str, int] = {}
    found: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if nxt.startswith(node + ".") or found:
                continue
            if state.get(nxt) == 1:
                found.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for m in sorted(graph):
        if m not in state and not found:
            visit(m, [m])
    return found[0] if found else None


def _loads_heavy(graph: dict[str, set[str]], roots: dict[str, set[str]]) -> set[str]:
    """The simdask modules whose import (module level, transitively, parents included)
    imports a :data:`HEAVY` module."""
    heavy = {m for m, r in roots.items() if r & HEAVY.keys()}
    changed = True
    while changed:
        changed = False
        for m, deps in graph.items():
            parents = {".".join(m.split(".")[:i]) for i in range(1, m.count(".") + 1)}
            if m not in heavy and (deps | parents) & heavy:
                heavy.add(m)
                changed = True
    return heavy


def test_no_relative_imports_and_no_import_cycles_counting_every_import():
    for name, path in _modules().items():
        rel = [n for n in ast.walk(_parsed(path)) if isinstance(n, ast.ImportFrom)]
        assert all(n.level == 0 for n in rel), f"{name} uses a relative import"
    cycle = _cycle(_import_graph(function_level=True))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_check_finds_a_cycle():
    """The check itself: a cycle closed by a function-level import is found."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"a.x"}, "a.x": set()}) is None
    tree = ast.parse(
        "import os\ndef f():\n    import simdask.index\nif TYPE_CHECKING:\n    import x"
    )
    assert [(n.lineno, f) for n, f in _imports(tree)] == [(1, False), (3, True)]


def test_function_level_imports_only_defer_heavy_modules_and_say_why():
    """A function-level import defers a :data:`HEAVY` module, or a simdask module that loads
    one, and carries a comment saying why (on its line or the line above)."""
    mods = _modules()
    top = _import_graph(function_level=False)
    roots = {
        m: {t.split(".")[0] for n, f in _imports(_parsed(p)) if not f for t in _targets(n, mods)}
        for m, p in mods.items()
    }
    heavy = _loads_heavy(top, roots)
    bad = []
    for path in mods.values():
        rel = str(path.relative_to(ROOT))
        if rel.startswith(NOT_YET_HOISTED):
            continue
        lines = path.read_text().splitlines()
        for node, in_function in _imports(_parsed(path)):
            if not in_function:
                continue
            for t in _targets(node, mods):
                if t.split(".")[0] not in HEAVY and t not in heavy and t not in DEFERRED:
                    bad.append(f"{rel}:{node.lineno} imports {t} in a function")
            text = lines[node.lineno - 1 : node.end_lineno]
            if not any("#" in x for x in text) and not lines[node.lineno - 2].strip().startswith(
                "#"
            ):
                bad.append(f"{rel}:{node.lineno} defers an import without saying why")
    assert not bad, "\n".join(bad)


def test_the_engine_imports_nothing_above_it():
    """The engine runs a run; the API (index, update, compare), read/, write/, the CLI, the
    evidence and the web interface call it, never the other way round."""
    bad = []
    for name, deps in _import_graph(function_level=True).items():
        if not name.startswith("simdask.engine"):
            continue
        for d in sorted(deps):
            if not d.startswith(ENGINE_MAY_IMPORT) and d not in SHARED | {"simdask"}:
                bad.append(f"{name} imports {d}")
    assert not bad, "\n".join(bad)


def _friend_access(tree: ast.Module) -> list[tuple[int, str]]:
    """``x._name`` where ``x`` is not ``self`` or ``cls`` (dunders aside): another object's or
    module's private attribute."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        if node.attr.startswith("__") and node.attr.endswith("__"):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        out.append((node.lineno, ast.unparse(node)))
    return out


def test_no_module_reads_another_objects_private_attributes():
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        for line, expr in _friend_access(_parsed(path)):
            if (rel, expr) not in FRIEND_ACCESS_ALLOWED:
                bad.append(f"{rel}:{line}: {expr}")
    assert not bad, "private attributes read from outside:\n" + "\n".join(bad)
    tree = ast.parse("self._a\ncls._b\nother._c\nx.__class__\nmod._D")
    assert [e for _, e in _friend_access(tree)] == ["other._c", "mod._D"]


@pytest.mark.parametrize("sub", NO_DASK)
def test_kernels_ingest_storage_never_import_dask(sub):
    for path in sorted((PACKAGE / sub).rglob("*.py")):
        roots = _all_imported_roots(_parsed(path))
        banned = {"dask", "distributed"} | set(NO_IO.get(sub, ()))
        assert not roots & banned, f"{path.relative_to(ROOT)} imports {sorted(roots & banned)}"


def test_only_storage_touches_the_catalog_connection():
    """SQL lives in storage/: no module elsewhere reads a ``.conn`` attribute of another
    object (the catalog's SQLite connection); they call storage's functions with the catalog.
    A class's own ``self.conn`` (e.g. uvicorn's h11 connection in web/protocol.py) is not the
    catalog's."""
    found = []
    for name, path in _modules().items():
        if name.startswith("simdask.storage."):
            continue
        for node in ast.walk(_parsed(path)):
            own = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            if own and node.value.id == "self":  # type: ignore[attr-defined]
                continue
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
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    too_long.append(f"function {name}.{node.name}: {n} lines")
    assert not too_long, "\n".join(too_long)


#: the shard store's backends: leaves that import the contract (``storage/shards.py``) and
#: nothing of each other or of the factory (``storage/backends.py``), as zarr's
#: ``storage/_local.py`` imports only its ABC
SHARD_BACKENDS = ("simdask.storage.local_store", "simdask.storage.remote")


def test_shard_backends_are_leaves_and_the_factory_stands_apart():
    graph = _import_graph()
    contract, factory = "simdask.storage.shards", "simdask.storage.backends"
    assert not graph[contract] & {*SHARD_BACKENDS, factory}, graph[contract]
    for backend in SHARD_BACKENDS:
        assert contract in graph[backend], backend
        others = {*SHARD_BACKENDS, factory} - {backend}
        assert not graph[backend] & others, (backend, graph[backend] & others)
    assert set(SHARD_BACKENDS) <= graph[factory]
    # the factory is the only module that chooses a backend; the rest ask the store
    choosers = {name for name, deps in graph.items() if "simdask.storage.local_store" in deps} - {
        factory
    }
    assert choosers <= {"simdask.storage.candidate_store"}, choosers


def test_no_branch_on_which_backend_a_store_is():
    """Callers ask the store what it can do (``store.local_root``, ``store.can_mmap``,
    ``store.url``), never ``store.remote``: no attribute ``remote`` is read anywhere."""
    found = [
        f"{name}:{node.lineno}"
        for name, path in _modules().items()
        for node in ast.walk(_parsed(path))
        if isinstance(node, ast.Attribute) and node.attr in ("remote", "is_remote")
    ]
    assert not found, found


#: file names two modules may share: the package markers, and ``config.py`` (the public
#: ``simdask.config`` and ``simdask.alignment.config``, each its package's settings; renaming
#: either breaks a documented import path)
SHARED_FILE_NAMES = {"__init__.py": "package marker", "config.py": "each package's settings"}


def _duplicate_file_names() -> dict[str, list[str]]:
    by_name: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        by_name.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    return {n: ps for n, ps in by_name.items() if len(ps) > 1 and n not in SHARED_FILE_NAMES}


def test_no_two_modules_share_a_file_name():
    """Distinct names for distinct things (issue 27): ``kernels/segments.py`` beside
    ``storage/segments.py`` made a reader open the wrong one; each file name says what the
    module is, once in the package."""
    dups = _duplicate_file_names()
    assert not dups, "\n".join(f"{n}: {', '.join(ps)}" for n, ps in sorted(dups.items()))


def test_no_two_public_functions_share_a_name_across_run_paths():
    """No two top-level functions ``run_update`` (the CLI's and the engine's were two things
    under one name): the writer's and the engine's entry points have one name each."""
    owners = [
        name
        for name, path in _modules().items()
        for node in _parsed(path).body
        if isinstance(node, ast.FunctionDef) and node.name == "run_update"
    ]
    assert len(owners) <= 1, owners


def test_docs_architecture_names_every_module():
    """docs/architecture.md describes the code as it is: every module's file name appears in
    it (file names are unique, test above), with what the module is for."""
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [
        str(path.relative_to(ROOT))
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "__init__.py"
        and not re.search(r"(?<![A-Za-z0-9_])" + re.escape(path.name), doc)
    ]
    assert not missing, f"not in docs/architecture.md: {missing}"


def test_every_test_module_has_a_tier():
    tiers = {"unit", "integration", "system"}
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        tree = _parsed(path)
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


#: documentation read as the code's description: README and docs/
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_benchmark_uses_the_shared_bench_helper():
    """One bench harness (issue 27): every ``scripts/bench_*.py`` imports ``_benchutil``, so
    that each prints or writes its machine, date and load the same way."""
    missing = [
        p.name
        for p in sorted((ROOT / "scripts").glob("bench_*.py"))
        if not re.search(
            r"^\s*from (?:scripts\.)?_benchutil import ", p.read_text(encoding="utf-8"), re.M
        )
    ]
    assert not missing, f"benchmarks not using scripts/_benchutil.py: {missing}"


def test_docs_cite_only_scripts_present_and_no_machine_paths():
    """Every script README and docs/ name (``scripts/x.py``, or a bench/eval/probe script by
    its file name) is in the repository, and no page carries a path of this machine (the
    checkouts under ``/work/``, a home under ``/root/``)."""
    cited = re.compile(r"\b(?:scripts/[a-z_0-9]+|(?:bench|eval|probe|profile)_[a-z_0-9]+)\.py")
    absent, local = set(), []
    for page in DOCS:
        text = page.read_text(encoding="utf-8")
        names = {m.group(0).removeprefix("scripts/") for m in cited.finditer(text)}
        absent |= {f"{page.name}: {n}" for n in names if not (ROOT / "scripts" / n).exists()}
        local += [
            f"{page.name}: {m.group(0)}" for m in re.finditer(r"(?<![\w.])/(?:work|root)/\S*", text)
        ]
    assert not absent, f"scripts cited but not in scripts/: {sorted(absent)}"
    assert not local, f"machine-local paths in the docs: {local}"


def test_docs_name_only_modules_that_exist():
    """A module path README and docs/ name (``engine/range_merge.py``, with or without
    ``simdask/``) is a file of the package: a renamed or removed module leaves no stale name
    (``docs/placement.md`` named three such paths once)."""
    rooms = "|".join(sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name[0] != "_"))
    named = re.compile(rf"(?<![\w/])(?:simdask/)?((?:{rooms})/[a-z_/]+\.py)")
    stale = sorted(
        {
            f"{page.name}: {m.group(1)}"
            for page in DOCS
            for m in named.finditer(page.read_text(encoding="utf-8"))
            if not (PACKAGE / m.group(1)).exists()
        }
    )
    assert not stale, f"modules named in the docs that do not exist: {stale}"
