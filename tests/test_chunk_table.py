"""The |A| array kept in the catalog (simdask.storage.chunk_table) and the keys a run can tell
before reading its items (simdask.ingest.sources.item_keys), against brute-force references."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.ingest.sources import item_keys, list_items
from simdask.storage.chunk_table import read_chunk_table, update_chunk_table

pytestmark = pytest.mark.unit


def _catalog() -> sqlite3.Connection:
    """The two tables the array follows: the documents' |A| and the current generation."""
    c = sqlite3.connect(":memory:", isolation_level=None)
    c.execute("CREATE TABLE documents (doc_id INTEGER PRIMARY KEY, n_chunks INTEGER NOT NULL)")
    c.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    c.execute("INSERT INTO meta VALUES ('generation', '0')")
    return c


def _commit(c, gen: int, deleted: list[int], upserted: dict[int, int], replace_all=False):
    """One commit as simdask.storage.commit runs it: document rows, the array, generation."""
    c.execute("BEGIN IMMEDIATE")
    if replace_all:
        c.execute("DELETE FROM documents")
    c.executemany("DELETE FROM documents WHERE doc_id = ?", ((d,) for d in deleted))
    c.executemany("INSERT OR REPLACE INTO documents VALUES (?, ?)", upserted.items())
    previous = int(c.execute("SELECT value FROM meta WHERE name = 'generation'").fetchone()[0])
    changes = [(d, 0) for d in deleted] + list(upserted.items())
    update_chunk_table(c, previous, gen, changes, replace_all)
    c.execute("UPDATE meta SET value = ? WHERE name = 'generation'", (str(gen),))
    c.execute("COMMIT")


def _expected(docs: dict[int, int]) -> list[int]:
    out = [0] * (max(docs, default=-1) + 1)
    for d, n in docs.items():
        out[d] = n
    return out


_op = st.tuples(
    st.sampled_from(["commit", "commit", "commit", "rebuild", "old_writer"]),
    st.lists(st.integers(0, 2500), max_size=40),  # doc IDs touched (some past the capacity)
    st.lists(st.integers(0, 10**6), min_size=40, max_size=40),  # their new |A| (0: delete)
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_op, min_size=1, max_size=12))
def test_array_follows_every_commit(ops):
    """In-place updates, growth past the capacity, full rebuilds and commits by a writer that
    does not know the array (then it is rebuilt from the documents table) all read back as
    the documents table says."""
    c = _catalog()
    docs: dict[int, int] = {}
    for gen, (kind, ids, values) in enumerate(ops, start=1):
        new = {d: v for d, v in zip(ids, values, strict=False) if v}
        gone = sorted({d for d, v in zip(ids, values, strict=False) if not v} & docs.keys())
        if kind == "old_writer":  # documents and generation change, the array does not
            c.executemany("DELETE FROM documents WHERE doc_id = ?", ((d,) for d in gone))
            c.executemany("INSERT OR REPLACE INTO documents VALUES (?, ?)", new.items())
            c.execute("UPDATE meta SET value = ? WHERE name = 'generation'", (str(gen),))
        else:
            _commit(c, gen, [] if kind == "rebuild" else gone, new, kind == "rebuild")
        if kind == "rebuild":
            docs = dict(new)
        else:
            for d in gone:
                docs.pop(d)
            docs.update(new)
        got = read_chunk_table(c, gen)
        want = _expected(docs)  # past the highest doc ID: zeros (free IDs) or nothing
        assert got.dtype == np.int64
        assert got[: len(want)].tolist() == want and not got[len(want) :].any()


def test_in_place_update_writes_only_the_changed_entries():
    """A commit changing a few documents of many keeps the stored BLOB (same capacity) and
    changes exactly their entries."""
    c = _catalog()
    _commit(c, 1, [], {d: d + 1 for d in range(5000)})
    size = c.execute("SELECT length(data) FROM chunk_table").fetchone()[0]
    _commit(c, 2, [7, 4999], {12: 99, 5000: 3})
    assert c.execute("SELECT length(data) FROM chunk_table").fetchone()[0] == size
    got = read_chunk_table(c, 2)
    want = {d: d + 1 for d in range(5000)} | {12: 99, 5000: 3}
    want.pop(7), want.pop(4999)
    assert got.tolist() == _expected(want)


def test_a_wrong_generation_reads_the_documents_table():
    c = _catalog()
    _commit(c, 1, [], {0: 5, 3: 8})
    c.execute("UPDATE documents SET n_chunks = 6 WHERE doc_id = 0")  # as another writer would
    assert read_chunk_table(c, 1).tolist() == [5, 0, 0, 8]  # the array of generation 1
    assert read_chunk_table(c, 2).tolist() == [6, 0, 0, 8]  # not generation 2's: rebuilt


def test_item_keys_are_the_keys_the_tasks_read(tmp_path):
    """Files: their key; JSONL lines: their id (string or integer), with the prefix; lines
    without a usable id: None."""
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("one two three four five")
    (folder / "sub" / "b.md").write_text("six seven eight nine ten")
    lines = [
        json.dumps({"id": "x/1", "text": "t"}),
        json.dumps({"id": 17, "text": "t"}),
        "not json",
        json.dumps({"text": "no id"}),
        json.dumps({"id": 1.5, "text": "t"}),
        json.dumps([1, 2]),
        json.dumps({"id": "é", "text": "t"}),
    ]
    jl = tmp_path / "d.jsonl"
    jl.write_text("\n".join(lines) + "\n", encoding="utf-8")
    items = list_items([folder, jl], prefix="A/")
    assert item_keys(items) == [
        "A/docs/a.txt",
        "A/docs/sub/b.md",
        "A/x/1",
        "A/17",
        None,
        None,
        None,
        None,
        "A/é",
    ]
