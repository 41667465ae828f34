"""The candidate tables (simdask/storage/candidate_store.py) on an in-memory catalog: a commit's
changes applied (full and incremental), the segments' manifest read back, candidate_partners'
order (stored candidates, then similarity rows not among them), damaged metadata refused,
the segments no commit names removed."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from simdask.errors import IndexDamagedError
from simdask.kernels.candidate_scores import CandidateConfig
from simdask.storage import candidate_store as store_module
from simdask.storage.candidate_store import (
    CandidateChanges,
    candidate_partners,
    candidate_store,
    remove_unreferenced,
    stored_candidate_config,
    stored_segments,
    write_candidates,
)
from simdask.storage.shards import ShardData
from tests.helpers.candidates import small_catalog

pytestmark = pytest.mark.unit


def _conn() -> sqlite3.Connection:
    return small_catalog()


def _rows(*triples):
    return tuple(np.array(col, np.int64) for col in zip(*triples, strict=True))


def test_partners_before_any_candidates_are_the_similarity_rows():
    c = _conn()
    rows = [(1, 2, 5, 5.0), (1, 3, 9, 9.0), (4, 1, 7, 70.0)]
    c.executemany("INSERT INTO similarity VALUES (?, ?, ?, ?)", rows)
    # both directions (4 -> 1 makes 4 a partner of 1), most shared chunks first
    assert candidate_partners(c, [1, 7], 5) == {1: [3, 4, 2], 7: []}
    # ties by key, not by doc ID
    c.execute("UPDATE documents SET key = 'a' WHERE doc_id = 3")
    c.execute("UPDATE similarity SET shared = 5 WHERE other = 3")
    assert candidate_partners(c, [1], 5)[1] == [4, 3, 2]
    assert stored_candidate_config(c) is None and stored_segments(c) is None


def test_full_then_incremental_changes():
    c, cfg = _conn(), CandidateConfig(max_df=9, depth=3)
    c.execute("CREATE TABLE candidate_features (doc_id INTEGER PRIMARY KEY, ids BLOB)")
    write_candidates(
        c,
        CandidateChanges(
            cfg, {0: 1, 2: 1}, rows=_rows((1, 2, 50), (1, 3, 10), (2, 1, 50)), full=True
        ),
    )
    c.execute("INSERT INTO similarity VALUES (1, 4, 3, 80.0), (1, 2, 3, 70.0)")
    assert stored_candidate_config(c) == cfg and stored_segments(c) == {0: 1, 2: 1}
    gone = "SELECT count(*) FROM sqlite_master WHERE name = 'candidate_features'"
    assert c.execute(gone).fetchone()[0] == 0  # the earlier layout's table dropped
    assert candidate_partners(c, [1, 2], 2) == {1: [2, 3], 2: [1]}
    assert candidate_partners(c, [1], 3) == {1: [2, 3, 4]}  # then the similarity rows
    # document 2 deleted: its features and list go, document 1's list is replaced
    ch = CandidateChanges(
        cfg, {0: 2, 1: 2, 2: 1}, np.array([1, 2, 4]), _rows((1, 4, 20), (4, 1, 20))
    )
    write_candidates(c, ch)
    c.execute("DELETE FROM similarity WHERE 2 IN (doc, other)")  # as the run's commit does
    assert stored_segments(c) == {0: 2, 1: 2, 2: 1}
    assert candidate_partners(c, [1, 2, 4], 1) == {1: [4], 2: [], 4: [1]}
    ranks = c.execute("SELECT doc, rank, other FROM candidates ORDER BY doc, rank").fetchall()
    assert ranks == [(1, 0, 4), (4, 0, 1)]
    write_candidates(c, None)  # a run without candidate changes changes nothing
    assert c.execute("SELECT count(*) FROM candidates").fetchone()[0] == 2
    write_candidates(c, CandidateChanges(cfg, full=True, off=True))  # the setting turned off
    assert stored_segments(c) is None and stored_candidate_config(c) is None
    assert c.execute("SELECT count(*) FROM candidates").fetchone()[0] == 0


def test_rows_written_in_pieces_are_all_rows_ranked_per_doc(monkeypatch):
    """A build's rows are inserted a piece at a time (bounded memory): every row, each
    document's ranks counted across the pieces' borders."""
    monkeypatch.setattr(store_module, "INSERT_ROWS", 2)
    c = _conn()
    rows = [(1, 2, 50), (1, 3, 40), (1, 4, 30), (2, 1, 50), (3, 1, 40), (3, 5, 9), (3, 6, 8)]
    write_candidates(c, CandidateChanges(CandidateConfig(), rows=_rows(*rows), full=True))
    got = c.execute("SELECT doc, rank, other, score FROM candidates ORDER BY doc, rank")
    assert got.fetchall() == [
        (1, 0, 2, 50), (1, 1, 3, 40), (1, 2, 4, 30), (2, 0, 1, 50),
        (3, 0, 1, 40), (3, 1, 5, 9), (3, 2, 6, 8),
    ]  # fmt: skip


def test_damaged_metadata_is_refused():
    c, cfg = _conn(), CandidateConfig()
    write_candidates(c, CandidateChanges(cfg, {0: 1}, full=True))
    c.execute("UPDATE meta SET value = '[1, 2]' WHERE name = 'candidate_segments'")
    with pytest.raises(IndexDamagedError, match="candidate segments as a JSON object"):
        stored_segments(c)
    c.execute("UPDATE meta SET value = 'nope' WHERE name = 'candidates'")
    with pytest.raises(IndexDamagedError, match="candidate settings"):
        stored_candidate_config(c)


def test_segments_no_commit_names_are_removed(tmp_path):
    store = candidate_store(tmp_path)
    seg = ShardData(
        0, 16, np.array([3], np.uint32), np.array([0, 2], np.uint64), np.array([1, 2], np.uint32)
    )
    for g, r in [(1, 0), (1, 1), (2, 0), (3, 1)]:
        store.write(g, r, seg)
    (store.root / "gen-000004").mkdir()  # an interrupted write's empty generation
    assert remove_unreferenced(store, {0: 2, 1: 1}) == 2
    held = {(g, r) for g in store.generations() for r in store.stored_ranges(g)}
    assert held == {(1, 1), (2, 0)} and store.generations() == [1, 2]
    assert store.read(2, 0).doc_ids.tolist() == [1, 2]
    assert remove_unreferenced(store, None) == 2 and store.generations() == []
