"""The writer (simdask/writer.py): the commit as one transaction with a failure point before
every write, the lock taken once, an index created only in a new or empty folder, and garbage
collection that removes only what simdask made."""

from __future__ import annotations

import ast
import inspect
import os
import textwrap
from pathlib import Path

import numpy as np
import pytest

from simdask import Index, IndexConfig
from simdask.errors import IndexExistsError, IndexLockedError, NotAnIndexError
from simdask.failpoints import FailpointError
from simdask.storage import catalog as catalog_mod
from simdask.storage import commit as commit_mod
from simdask.storage.catalog import Catalog, DocumentRow, RunChanges
from simdask.writer import COMMIT_FAILPOINTS, COMPACTION_FAILPOINTS
from tests.helpers.cli import run

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1] / "simdask"


def _hits(path: Path) -> list[ast.Call]:
    tree = ast.parse(path.read_text())
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "hit"
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == "failpoints"
    ]


def test_the_enumerated_failpoints_are_all_the_writer_has():
    """Every failure point in the writer and the catalog commit is in COMMIT_FAILPOINTS (which
    the crash test enumerates); every write of the commit is a listed step."""
    names = {n for n, _ in COMMIT_FAILPOINTS}
    assert len(names) == len(COMMIT_FAILPOINTS)
    listed = names | {n for n, _ in COMPACTION_FAILPOINTS}  # the writer commits compactions too
    dynamic = 0
    owners = ("writer.py", "write/run_commit.py", "storage/catalog.py", "storage/commit.py")
    for path in (ROOT / name for name in owners):
        for call in _hits(path):
            arg = call.args[0]
            if isinstance(arg, ast.Constant):
                assert arg.value in listed, f"{path.name}: failpoint {arg.value!r} is not listed"
            else:
                dynamic += 1  # the one before each step of Catalog.commit_run
    assert dynamic == 1
    # every step function of commit.py is run, in the listed order, each with its point
    steps = [
        f
        for name, f in vars(commit_mod).items()
        if inspect.isfunction(f) and list(inspect.signature(f).parameters) == ["c", "run"]
    ]
    assert set(steps) == set(commit_mod.COMMIT_STEPS)
    assert [f"commit.{f.__name__[1:]}" for f in commit_mod.COMMIT_STEPS] == [
        n for n, _ in COMMIT_FAILPOINTS if n.startswith("commit.")
    ][:-2]
    # Catalog.commit_run itself executes nothing but BEGIN and COMMIT (all writes are steps)
    src = textwrap.dedent(inspect.getsource(catalog_mod.Catalog.commit_run))
    executed = [
        n.args[0].value
        for n in ast.walk(ast.parse(src))
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr.startswith("execute")
    ]
    assert executed == ["BEGIN IMMEDIATE", "COMMIT"]
    # committed from the first point after COMMIT on, and from there to the end
    flags = [c for _, c in COMMIT_FAILPOINTS]
    first = flags.index(True)
    assert COMMIT_FAILPOINTS[first][0] == "commit.after_COMMIT" and all(flags[first:])


def _changes(doc_ids: list[int], generation: int) -> RunChanges:
    docs = [DocumentRow(d, f"k{d}", "src", f"h{d}", 10, 14, "indexed") for d in doc_ids]
    rows = (
        np.array(doc_ids[:1], dtype=np.int64),
        np.array(doc_ids[1:2], dtype=np.int64),
        np.array([5], dtype=np.int64),
        np.array([50.0]),
    )
    return RunChanges(
        upserted=docs,
        deleted=[],
        rows=rows,
        rows_replaced=np.array(doc_ids),
        reverse_replaced=np.array(doc_ids),
        trim=np.array(doc_ids),
        top_k=10,
        manifests={0: [(generation, 1, 1)]},
        errors=[],
        skipped_chunks=0,
    )


def _snapshot(cat: Catalog) -> tuple:
    return (
        cat.generation,
        [d.key for d in cat.documents()],
        cat.counts()["similarity_rows"],
        cat.shard_generations(),
    )


@pytest.mark.parametrize("point", [n for n, c in COMMIT_FAILPOINTS if n.startswith("commit.")])
def test_catalog_commit_is_all_or_nothing(tmp_path, monkeypatch, point):
    cat = Catalog(tmp_path / "c.sqlite", create=True)
    cat.init_meta(IndexConfig(shards=16))
    run1 = cat.start_run()
    cat.commit_run(run1, run1, _changes([0, 1], run1), {})
    old = _snapshot(cat)
    run2 = cat.start_run()
    monkeypatch.setenv("SIMDASK_FAILPOINTS", f"{point}:raise")
    with pytest.raises(FailpointError):
        cat.commit_run(run2, run2, _changes([2, 3], run2), {})
    monkeypatch.delenv("SIMDASK_FAILPOINTS")
    assert not cat.conn.in_transaction
    committed = point == "commit.after_COMMIT"
    assert cat.run_status(run2) == ("committed" if committed else "running")
    other = Catalog(tmp_path / "c.sqlite")  # what another process sees
    if committed:
        assert _snapshot(other) == (2, ["k0", "k1", "k2", "k3"], 2, {0: 2})
    else:
        assert _snapshot(other) == old == (1, ["k0", "k1"], 1, {0: 1})
    cat.fail_run(run2, "x")  # never turns a committed run into a failed one
    assert cat.run_status(run2) == ("committed" if committed else "failed")


def test_the_lock_is_taken_once(tmp_path):
    idx = Index.create(tmp_path / "i", IndexConfig(shards=2))
    with idx.writer() as w:
        assert w.collect_garbage() == {
            "segments": 0,
            "generations": 0,
            "lsh_generations": 0,
            "packs": 0,
            "temp_files": 0,
            "work": 0,
            "catalog_bytes_freed": 0,
        }  # held: ok
        with pytest.raises(IndexLockedError, match="another update is running"):
            idx.collect_garbage()  # a second writer, even in this process, is refused
    assert idx.collect_garbage()["generations"] == 0  # released
    idx.close()


def _tree(path: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(path)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(path.rglob("*"))
    }


def _user_folder(path: Path) -> Path:
    (path / "work").mkdir(parents=True)
    (path / "work" / "thesis.txt").write_text("my own work, not simdask's")
    (path / "essays").mkdir()
    (path / "essays" / "smith.txt").write_text("an essay")
    (path / "notes.txt").write_text("notes")
    return path


@pytest.mark.parametrize("how", ["create", "open_or_create"])
def test_a_folder_that_is_not_an_index_is_refused_untouched(tmp_path, how):
    folder = _user_folder(tmp_path / "docs")
    before = _tree(folder)
    with pytest.raises(NotAnIndexError, match=r"not a simdask index .* 3 entries.*swap INDEX"):
        getattr(Index, how)(folder, IndexConfig())
    assert _tree(folder) == before
    assert issubclass(NotAnIndexError, IndexExistsError)


def test_a_file_is_refused_and_an_empty_folder_accepted(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(NotAnIndexError, match="is a file"):
        Index.create(f)
    assert f.read_text() == "x"
    empty = tmp_path / "empty"
    empty.mkdir()
    Index.create(empty).close()
    # what an interrupted creation leaves (a lock file, a temporary catalog) is simdask's own
    again = tmp_path / "again"
    again.mkdir()
    (again / "writer.lock").write_text("")
    (again / ".catalog-0123456789ab.sqlite").write_text("half written")
    with Index.create(again) as idx:
        assert idx.stats()["documents"] == 0
    assert sorted(p.name for p in again.iterdir()) == ["catalog.sqlite", "writer.lock"]
    with pytest.raises(IndexExistsError, match="already exists"):
        Index.create(again)


def test_garbage_collection_removes_only_its_own_files(tmp_path):
    idx = Index.create(tmp_path / "i", IndexConfig(shards=2))
    own = [
        "shards/gen-000005/shard-0000/chunk_keys/c0",
        "lsh/gen-000005/sig-0000.npy",
        "texts/r000005-b000000.pack",
        "work/run-000005/buckets/b0",
        "work/probe-0123456789ab.txt",
        "work/probe-0123456789ab-01234567.reply",
    ]
    users = [
        "shards/gen-mine/data.txt",
        "lsh/gen-mine/data.txt",
        "lsh/gen-5/data.txt",
        "texts/notes.pack",
        "texts/r5.pack",
        "work/thesis.txt",
        "work/run-old/draft.txt",
        "work/mine/a.txt",
    ]
    for rel in own + users:
        (idx.path / rel).parent.mkdir(parents=True, exist_ok=True)
        (idx.path / rel).write_text(rel)
    got = idx.collect_garbage()
    # the segment gen-000005/shard-0000 goes, and with it its emptied generation folder
    assert got == {
        "segments": 1,
        "generations": 0,
        "lsh_generations": 1,
        "packs": 1,
        "temp_files": 0,
        "work": 3,
        "catalog_bytes_freed": 0,
    }
    for rel in own:
        assert not (idx.path / rel).exists(), rel
    for rel in users:
        assert (idx.path / rel).read_text() == rel
    assert (idx.path / "work").is_dir()  # not empty: kept
    for rel in users:
        if rel.startswith("work/"):
            os.remove(idx.path / rel)
    (idx.path / "work" / "run-old").rmdir()
    (idx.path / "work" / "mine").rmdir()
    idx.collect_garbage()
    assert not (idx.path / "work").exists()  # empty: removed
    idx.close()


@pytest.mark.system
def test_cli_refuses_swapped_index_and_source(tmp_path):
    """`simdask update SOURCE INDEX` by mistake: the documents folder is refused as an index,
    nothing in it changes, and the would-be source is not created."""
    docs = _user_folder(tmp_path / "docs")
    before = _tree(docs)
    p = run("update", docs, tmp_path / "my-index", "--workers", 1, check=False)
    assert p.returncode == 1, p.stderr
    assert "simdask: error:" in p.stderr and "not a simdask index" in p.stderr
    assert "swap INDEX and SOURCE" in p.stderr
    assert _tree(docs) == before
    assert not (tmp_path / "my-index").exists()


def test_garbage_collection_removes_the_temp_file_of_a_pack_a_killed_run_was_writing(tmp_path):
    """Issue 30 item 13: a run killed while writing a text pack left a hidden .tmp forever."""
    idx = Index.create(tmp_path / "i", IndexConfig(shards=2))
    texts = tmp_path / "i" / "texts"
    texts.mkdir(exist_ok=True)
    left = texts / ".r000007-b000003.pack.0123abcd.tmp"
    left.write_bytes(b"half a pack")
    mine = texts / ".notes.tmp"  # not a name simdask gives: never removed
    mine.write_bytes(b"x")
    assert idx.collect_garbage()["temp_files"] == 1
    assert not left.exists() and mine.exists()


def test_garbage_collection_removes_a_segment_write_never_put_in_place(tmp_path):
    """A worker killed while writing a segment (or an attempt of a task that lost to a retry
    of it) leaves its temporary folder inside a committed generation, where nothing removed
    it: garbage collection does (as a temp file), the segments and other names stay."""
    idx = Index.create(tmp_path / "i", IndexConfig(shards=2))
    gen = tmp_path / "i" / "shards" / "gen-000001"
    stray = gen / ".tmp-shard-0000-0123abcd" / "doc_ids" / "c" / "0"
    segment = gen / "shard-0000" / "doc_ids" / "c" / "0"
    mine = gen / ".tmp-notes"  # not a name simdask gives: never removed
    for p in (stray, segment, mine):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"\x00" * 8)
    with idx.writer() as w:  # the segment (range 0, generation 1) kept as if still read
        assert w.collect_garbage(keep=[(0, 1)])["temp_files"] == 1
    assert not stray.parent.parent.parent.exists()
    assert segment.exists() and mine.exists()
    idx.close()
