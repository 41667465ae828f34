"""The commit's bulk writes (storage/sql.py ``insert_values``, commit.py ``_insert_rows``):
multi-row INSERTs leave exactly what ``executemany`` row by row leaves, at every batch
boundary; similarity rows committed into an empty table (presorted, plain INSERT, the index on
``other`` built afterwards) or into a filled one (INSERT OR REPLACE) give the table the rows a
reference dict gives, the last row of a repeated key winning, and the index is there after
every commit, also after a failure between the load and the index build."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask import IndexConfig
from simdask.errors import SimdaskError
from simdask.failpoints import FailpointError
from simdask.storage import sql
from simdask.storage.catalog import Catalog, DocumentRow, RunChanges
from simdask.storage.commit import temp_ids

pytestmark = pytest.mark.unit

_TABLE = (
    "CREATE TABLE t (a INTEGER NOT NULL, b INTEGER NOT NULL, v REAL, s TEXT,"
    " PRIMARY KEY (a, b)) WITHOUT ROWID"
)


def _table(c: sqlite3.Connection) -> list[tuple]:
    return c.execute("SELECT a, b, v, s FROM t ORDER BY a, b").fetchall()


_rows = st.lists(
    st.tuples(
        st.integers(0, 6),
        st.integers(-(2**40), 2**40) | st.integers(0, 3),
        st.floats(allow_nan=False),
        st.text(max_size=3),
    ),
    max_size=60,
)


@settings(max_examples=80, deadline=None)
@given(_rows, st.integers(4, 40))
def test_insert_values_leaves_what_executemany_leaves(rows, variables):
    """Under OR REPLACE (repeated keys: the later row wins) and with any batch size."""
    old = sql.VARIABLES
    sql.VARIABLES = variables  # 1..10 rows a statement: boundaries everywhere
    try:
        got, want = sqlite3.connect(":memory:"), sqlite3.connect(":memory:")
        for c in (got, want):
            c.execute(_TABLE)
        head = "INSERT OR REPLACE INTO t (a, b, v, s)"
        n = sql.insert_values(got, head, [list(col) for col in zip(*rows, strict=True)] or [[]] * 4)
        want.executemany(head + " VALUES (?, ?, ?, ?)", rows)
        assert n == len(rows)
        assert _table(got) == _table(want)
        expected = {(a, b): (a, b, v, s) for a, b, v, s in rows}  # last one wins
        assert _table(got) == sorted(expected.values())
    finally:
        sql.VARIABLES = old


def test_insert_values_with_an_expression_per_row_and_bad_input():
    c = sqlite3.connect(":memory:")
    c.execute(_TABLE)
    sql.insert_values(
        c, "INSERT INTO t (a, b, v, s)", [[1, 2], [3, 4], [5, 6]], "(?, ?, ? * 2, 'x')"
    )
    assert _table(c) == [(1, 3, 10.0, "x"), (2, 4, 12.0, "x")]
    with pytest.raises(SimdaskError, match="expected 2 placeholders"):
        sql.insert_values(c, "INSERT INTO t (a, b)", [[7], [8]], "(?)")
    with pytest.raises(SimdaskError, match="equal length"):
        sql.insert_values(c, "INSERT INTO t (a, b)", [[7], [8, 9]])
    assert sql.insert_values(c, "INSERT INTO t (a, b)", [[], []]) == 0


def _changes(n_docs: int, rows: tuple, *, replaced: np.ndarray, trim=()) -> RunChanges:
    docs = [DocumentRow(d, f"k{d}", "src", f"h{d}", 10, 14, "indexed") for d in range(n_docs)]
    return RunChanges(
        upserted=docs,
        deleted=[],
        rows=tuple(np.asarray(a) for a in rows),
        rows_replaced=replaced,
        reverse_replaced=replaced,
        trim=np.asarray(trim, np.int64),
        top_k=1000,
        manifests={},
        errors=[],
        skipped_chunks=0,
    )


def _rows(rng: np.random.Generator, n_docs: int, n: int, repeats: bool) -> tuple:
    doc = rng.integers(0, n_docs, n)
    other = rng.integers(0, n_docs, n)
    if not repeats:
        key = np.unique(doc * n_docs + other)
        doc, other = rng.permutation(np.stack([key // n_docs, key % n_docs]), axis=1)
    shared = rng.integers(1, 50, len(doc))
    return doc, other, shared, rng.random(len(doc)) * 100


def _similarity(cat: Catalog) -> list[tuple]:
    return cat.conn.execute(
        "SELECT doc, other, shared, similarity FROM similarity ORDER BY doc, other"
    ).fetchall()


def _reference(*batches: tuple) -> list[tuple]:
    out: dict = {}
    for rows in batches:
        for d, o, s, v in zip(*(a.tolist() for a in rows), strict=True):
            out[d, o] = (d, o, s, v)
    return sorted(out.values())


def _has_index(cat: Catalog) -> bool:
    plan = cat.conn.execute(
        "EXPLAIN QUERY PLAN SELECT doc FROM similarity WHERE other = 3"
    ).fetchall()
    return any("similarity_other" in str(r) for r in plan)


@pytest.mark.parametrize("repeats", [False, True])
def test_rows_into_an_empty_then_a_filled_table(tmp_path, repeats):
    """First commit: an empty table (bulk path unless keys repeat); second: a filled one."""
    rng = np.random.default_rng(3 + repeats)
    cat = Catalog(tmp_path / "c.sqlite", create=True)
    cat.init_meta(IndexConfig(shards=16))
    first = _rows(rng, 40, 600, repeats)
    run = cat.start_run()
    cat.commit_run(run, run, _changes(40, first, replaced=np.arange(40)), {})
    assert _similarity(cat) == _reference(first)
    assert _has_index(cat)
    second = _rows(rng, 40, 200, True)
    run = cat.start_run()
    cat.commit_run(run, run, _changes(40, second, replaced=np.zeros(0, np.int64)), {})
    assert _similarity(cat) == _reference(first, second)
    assert _has_index(cat)
    assert cat.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_failure_between_load_and_index_build_rolls_back(tmp_path, monkeypatch):
    cat = Catalog(tmp_path / "c.sqlite", create=True)
    cat.init_meta(IndexConfig(shards=16))
    rows = _rows(np.random.default_rng(5), 30, 300, False)
    run = cat.start_run()
    monkeypatch.setenv("SIMDASK_FAILPOINTS", "commit.similarity_index:raise")
    with pytest.raises(FailpointError):
        cat.commit_run(run, run, _changes(30, rows, replaced=np.arange(30)), {})
    monkeypatch.delenv("SIMDASK_FAILPOINTS")
    other = Catalog(tmp_path / "c.sqlite")
    assert _similarity(other) == [] and _has_index(other)
    run = cat.start_run()
    cat.commit_run(run, run, _changes(30, rows, replaced=np.arange(30)), {})
    assert _similarity(other) == _reference(rows) and _has_index(other)


def test_documents_into_an_empty_then_a_filled_table(tmp_path):
    """A first commit (documents in any order: plain INSERT) then one replacing a document
    (OR REPLACE): rows as given, ``added_at`` kept from the first, the cache size as before."""
    cat = Catalog(tmp_path / "c.sqlite", create=True)
    cat.init_meta(IndexConfig(shards=16))
    cache = cat.conn.execute("PRAGMA cache_size").fetchone()
    empty = tuple(np.zeros(0, t) for t in (np.int64, np.int64, np.int64, np.float64))
    ch = _changes(50, empty, replaced=np.zeros(0, np.int64))
    ch.upserted = ch.upserted[::-1]
    run = cat.start_run()
    cat.commit_run(run, run, ch, {})
    assert cat.documents() == sorted(ch.upserted, key=lambda d: d.doc_id)
    assert cat.conn.execute("PRAGMA cache_size").fetchone() == cache
    first = dict(cat.conn.execute("SELECT doc_id, added_at FROM documents").fetchall())
    new = DocumentRow(7, "k7", "src", "changed", 12, 15, "indexed")
    ch2 = _changes(0, empty, replaced=np.zeros(0, np.int64))
    ch2.upserted = [new]
    run = cat.start_run()
    cat.commit_run(run, run, ch2, {})
    assert cat.document("k7") == new
    added, updated = cat.conn.execute(
        "SELECT added_at, updated_at FROM documents WHERE doc_id = 7"
    ).fetchone()
    assert added == first[7] <= updated


def test_temp_ids_from_arrays_and_iterables_with_repeats():
    c = sqlite3.connect(":memory:")
    temp_ids(c, "t_x", np.array([5, 3, 5, 9], np.uint32))
    assert [r[0] for r in c.execute("SELECT id FROM t_x ORDER BY id")] == [3, 5, 9]
    temp_ids(c, "t_x", (i % 4 for i in range(10)))  # refilled, not added to
    assert [r[0] for r in c.execute("SELECT id FROM t_x ORDER BY id")] == [0, 1, 2, 3]
    temp_ids(c, "t_x", [])
    assert c.execute("SELECT COUNT(*) FROM t_x").fetchone() == (0,)
