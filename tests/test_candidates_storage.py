"""The candidate tables (simdask/storage/candidates.py) on an in-memory catalog: a commit's
changes applied (full and incremental), the features read back, candidate_partners' order
(stored candidates, then similarity rows not among them), a damaged blob refused."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from simdask.errors import IndexDamagedError
from simdask.kernels.candidates import CandidateConfig
from simdask.storage.candidates import (
    CandidateChanges,
    candidate_partners,
    read_features,
    stored_candidate_config,
    write_candidates,
)

pytestmark = pytest.mark.unit


def _conn() -> sqlite3.Connection:
    c = sqlite3.connect(":memory:")
    c.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    c.execute(
        "CREATE TABLE similarity (doc INTEGER, other INTEGER, shared INTEGER, similarity REAL)"
    )
    c.execute("CREATE TABLE documents (doc_id INTEGER PRIMARY KEY, key TEXT)")
    c.executemany("INSERT INTO documents VALUES (?, ?)", [(i, f"k{i}") for i in range(1, 8)])
    return c


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
    assert stored_candidate_config(c) is None and read_features(c, CandidateConfig()) == {}


def test_full_then_incremental_changes():
    c, cfg = _conn(), CandidateConfig(max_df=9, depth=3)
    feats = {1: np.array([5, 9], np.uint32), 2: np.array([9], np.uint32), 3: np.zeros(0, np.uint32)}
    write_candidates(
        c, CandidateChanges(cfg, feats, rows=_rows((1, 2, 50), (1, 3, 10), (2, 1, 50)), full=True)
    )
    c.execute("INSERT INTO similarity VALUES (1, 4, 3, 80.0), (1, 2, 3, 70.0)")
    assert stored_candidate_config(c) == cfg
    got = read_features(c, cfg)
    assert sorted(got) == [1, 2, 3] and got[1].tolist() == [5, 9] and len(got[3]) == 0
    assert candidate_partners(c, [1, 2], 2) == {1: [2, 3], 2: [1]}
    assert candidate_partners(c, [1], 3) == {1: [2, 3, 4]}  # then the similarity rows
    # document 2 deleted: its features and list go, document 1's list is replaced
    ch = CandidateChanges(
        cfg,
        {4: np.array([5], np.uint32)},
        np.array([2]),
        np.array([1, 2, 4]),
        _rows((1, 4, 20), (4, 1, 20)),
    )
    write_candidates(c, ch)
    c.execute("DELETE FROM similarity WHERE 2 IN (doc, other)")  # as the run's commit does
    assert sorted(read_features(c, cfg)) == [1, 3, 4]
    assert candidate_partners(c, [1, 2, 4], 1) == {1: [4], 2: [], 4: [1]}
    ranks = c.execute("SELECT doc, rank, other FROM candidates ORDER BY doc, rank").fetchall()
    assert ranks == [(1, 0, 4), (4, 0, 1)]
    write_candidates(c, None)  # a run without candidate changes changes nothing
    assert c.execute("SELECT count(*) FROM candidates").fetchone()[0] == 2


def test_a_damaged_feature_blob_is_refused():
    c, cfg = _conn(), CandidateConfig()
    write_candidates(c, CandidateChanges(cfg, {1: np.array([1, 2], np.uint32)}, full=True))
    c.execute("UPDATE candidate_features SET ids = x'010203'")
    with pytest.raises(IndexDamagedError, match="multiple of 4 bytes, found 3"):
        read_features(c, cfg)
    c.execute("UPDATE meta SET value = 'nope' WHERE name = 'candidates'")
    with pytest.raises(IndexDamagedError, match="candidate settings"):
        stored_candidate_config(c)
