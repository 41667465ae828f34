"""The CLI as a package of command modules, and the API decisions moved out of it (issue 11):
every command module has ``register``/``run``; importing the CLI loads neither dask,
distributed nor zarr; ``COMMAND --help`` works for every command; exceptions map to the
documented exit statuses; :func:`simdask.write.settings.update_config`,
:func:`simdask.write.settings.use_worker_cache` and :func:`simdask.queries.query_files` against
brute-force expectations."""

from __future__ import annotations

import itertools
import pkgutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import simdask.cli
from simdask import ClusterSpec, IndexConfig
from simdask.cli import stats as stats_cmd
from simdask.cli.main import COMMAND_MODULES, build_parser, main
from simdask.errors import ClusterError, ConfigError, DocumentNotFoundError, SimdaskError
from simdask.index import Index
from simdask.kernels.words import words
from simdask.queries import query_files
from simdask.storage.catalog import Catalog
from simdask.write import settings as settings_module
from simdask.write.settings import INDEX_SETTINGS, update_config, use_worker_cache
from tests.helpers.cli import run
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.unit

#: modules of simdask/cli that are not commands
_NOT_COMMANDS = {"main", "output", "__main__"}
#: command modules not named as their command: ``errors`` and ``totals`` would share a file
#: name with ``simdask/errors.py`` and ``engine/totals.py`` (test_architecture.py)
_MODULE_OF = {"errors": "error_list", "totals": "doc_totals", "candidates": "candidate_list"}


def _commands() -> list[str]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return list(sub.choices)


def test_every_cli_module_is_a_registered_command_module():
    names = {
        m.name
        for m in pkgutil.iter_modules(simdask.cli.__path__)
        if not m.name.startswith("_") and m.name not in _NOT_COMMANDS
    }
    assert names == {m.__name__.rsplit(".", 1)[1] for m in COMMAND_MODULES}
    for module in COMMAND_MODULES:
        assert callable(module.register) and callable(module.run), module.__name__
    # each command's parser dispatches to the run() of the module that registered it
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    owner = {
        _MODULE_OF.get(name, name.replace("-", "_")): p.get_default("handler")
        for name, p in sub.choices.items()
    }
    assert owner == {m.__name__.rsplit(".", 1)[1]: m.run for m in COMMAND_MODULES}


def test_modules_and_functions_stay_small():
    import ast

    root = Path(simdask.cli.__file__).parent
    files = [*root.glob("*.py"), root.parent / "write" / "settings.py", root.parent / "queries.py"]
    for f in files:
        source = f.read_text(encoding="utf-8")
        assert source.count("\n") <= 500, f
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno - node.lineno + 1 <= 80, (f, node.name)


@pytest.mark.parametrize(
    ("raised", "status", "message"),
    [
        (ClusterError("no scheduler"), 4, "simdask: error: no scheduler"),
        (DocumentNotFoundError("no document"), 1, "simdask: error: no document"),
        (SimdaskError("broken"), 1, "simdask: error: broken"),
        (KeyboardInterrupt(), 130, "simdask: interrupted"),
        (BrokenPipeError(), 0, ""),
    ],
)
def test_exceptions_map_to_exit_statuses(monkeypatch, capsys, raised, status, message):
    def boom(args):
        raise raised

    monkeypatch.setattr(stats_cmd, "run", boom)  # main() reads module.run when it builds
    assert main(["stats", "nowhere"]) == status
    assert capsys.readouterr().err.strip() == message


def test_bad_cluster_settings_exit_2_before_the_command_runs(monkeypatch, capsys):
    monkeypatch.setenv("SIMDASK_CONFIG", "")
    assert main(["cluster", "--workers", "0"]) == 2
    assert "--workers: expected an integer >= 1, found 0" in capsys.readouterr().err
    assert main(["cluster", "--local", "--scheduler", "tcp://x:1"]) == 2
    assert "--local cannot be combined" in capsys.readouterr().err
    assert main(["cluster", "-o", "json"]) == 0


def _given_settings(exhaustive: bool):
    """Which settings a call gives (the others ``None``): every subset of them (8,192 calls
    per index, ~10 CPU s), or none, each alone, all but each one, and all."""
    if exhaustive:
        yield from itertools.product(*[(False, True) for _ in INDEX_SETTINGS])
        return
    n = len(INDEX_SETTINGS)
    yield (False,) * n
    yield (True,) * n
    for i in range(n):
        yield tuple(j == i for j in range(n))
        yield tuple(j != i for j in range(n))


@pytest.mark.parametrize("exhaustive", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_update_config_merges_given_settings_into_the_stored_ones(
    tmp_path, monkeypatch, exhaustive
):
    opened: list[Catalog] = []

    class Spy(Catalog):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            opened.append(self)

    monkeypatch.setattr(settings_module, "Catalog", Spy)
    stored = IndexConfig(
        hash_bits=30, shards=5, threshold=7.5, top_k=9, max_df=40, seed=3, lsh="8x2"
    )
    Index.create(tmp_path / "idx", stored).close()
    values = {"hash_bits": 20, "shards": 2, "threshold": 50.0, "top_k": 3, "max_df": 2, "slack": 2}
    values |= {"similarity_mode": "exact", "auto_budget": 1000, "heavy_df": 7, "lsh": "4x3"}
    values |= {"exclude_quotes": True, "exclude_bibliography": True, "candidates": True}
    calls = 0
    for chosen in _given_settings(exhaustive):
        given = {n: values[n] if c else None for n, c in zip(INDEX_SETTINGS, chosen, strict=True)}
        calls += any(chosen)
        for where, base in ((tmp_path / "idx", stored), (tmp_path / "none", IndexConfig())):
            got = update_config(where, given)
            expected = dict(base.to_dict())
            changed = False
            for name, value in given.items():
                if value is not None:
                    expected[name] = value
                    changed = True
            assert (got.to_dict() if got is not None else None) == (
                expected if changed else None
            ), given
    assert calls == (2 ** len(INDEX_SETTINGS) - 1 if exhaustive else 2 * len(INDEX_SETTINGS) + 1)
    assert len(opened) == calls  # opened for its settings, then closed:
    for catalog in opened:
        with pytest.raises(sqlite3.ProgrammingError, match="closed"):
            catalog.conn.execute("SELECT 1")
    assert not (tmp_path / "none").exists()  # reading settings creates nothing
    with pytest.raises(ConfigError, match=r"hash_bits must be in 16\.\.64, got 65"):
        update_config(tmp_path / "idx", {"hash_bits": 65})
    with pytest.raises(ConfigError, match=r"unknown index settings \['hash'\]"):
        update_config(tmp_path / "idx", {"hash": 20})


def test_worker_cache_default_is_on_exactly_when_the_cluster_outlives_the_run():
    for choice, outlives in itertools.product((None, True, False), (True, False)):
        expected = outlives if choice is None else choice
        assert use_worker_cache(choice, cluster_outlives_run=outlives) is expected
    kinds = {
        "local": ClusterSpec(),
        "scheduler": ClusterSpec(kind="scheduler", scheduler="tcp://h:8786"),
        "ssh": ClusterSpec(kind="ssh", ssh_hosts=("a", "b")),
    }
    assert {k: s.outlives_run for k, s in kinds.items()} == {
        "local": False,
        "scheduler": True,
        "ssh": False,
    }


def _query_inputs(tmp_path: Path, docs: dict[str, str]) -> tuple[list[Path], dict[str, str]]:
    """Query files: a copy of an indexed document, short texts, an unrelated long text."""
    texts = {
        "copy.txt": docs["d003"],
        "four.txt": "one two three four",
        "five.txt": "one two three four five",
        "two.txt": "Hello, world!",
        "other.txt": " ".join(f"zz{i}" for i in range(40)),
    }
    for name, t in texts.items():
        (tmp_path / name).write_text(t, encoding="utf-8")
    (tmp_path / "empty.txt").write_text("   ", encoding="utf-8")  # no text: not readable
    return [tmp_path / n for n in texts] + [tmp_path / "empty.txt", tmp_path / "missing.txt"], texts


def test_query_files_on_an_empty_index_flags_short_texts_and_unreadable_files(tmp_path):
    paths, texts = _query_inputs(tmp_path, make_docs(6, seed=2))
    with Index.create(tmp_path / "idx", IndexConfig(shards=2)) as idx:
        batch = query_files(idx, paths, 0.0)
    assert batch.k == 5
    assert [r.key for r in batch.results] == list(texts)
    assert {r.key: r.too_short for r in batch.results} == {
        k: len(words(t)) < 5 for k, t in texts.items()
    }
    assert all(r.matches == [] for r in batch.results)
    assert [e.key for e in batch.unreadable] == ["empty.txt", "missing.txt"]


@pytest.mark.integration
def test_query_files_matches_query_many_and_flags_short_texts(tmp_path, client):
    docs = make_docs(10, seed=4)
    write_txt(docs, tmp_path / "docs")
    paths, texts = _query_inputs(tmp_path, docs)
    with Index.create(tmp_path / "idx", IndexConfig(shards=3)) as idx:
        idx.update([tmp_path / "docs"], client=client)
        batch = query_files(idx, paths, 1.0)
        expected = idx.query_many(list(texts.values()), 1.0)
    assert [r.key for r in batch.results] == list(texts)
    assert [r.matches for r in batch.results] == expected
    assert batch.results[0].matches[0].key == "docs/d003.txt"
    assert {r.key: r.too_short for r in batch.results} == {
        k: len(words(t)) < 5 for k, t in texts.items()
    }
    assert [e.key for e in batch.unreadable] == ["empty.txt", "missing.txt"]


_PROBE = """\
import sys
import simdask.cli
from simdask.cli.main import build_parser
build_parser()
print(sorted({m.split('.')[0] for m in sys.modules} & {'dask', 'distributed', 'zarr'}))
"""


@pytest.mark.system
def test_importing_the_cli_loads_neither_dask_distributed_nor_zarr():
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.system
@pytest.mark.parametrize("command", _commands())
def test_every_command_has_help(command):
    p = run(command, "--help")
    assert p.returncode == 0 and p.stdout.startswith(f"usage: simdask {command}")
