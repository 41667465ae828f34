"""Candidate partners in the index: the content n-gram postings per range and each
document's ranked partners.

* The content n-gram postings (:mod:`simdask.kernels.content_ngrams`) are one segment per
  range of the feature-ID space in their own shard store, ``<index>/candidates``
  (:func:`candidate_store`: the raw, memory-mappable layout of
  :class:`~simdask.storage.local_store.LocalShardStore`, ``gen-NNNNNN/shard-NNNN``, written
  durably by the run's tasks before the commit). Which generation of each range is current
  is the catalog's ``candidate_segments`` metadata, committed with the run; segments no
  committed state names are removed by the next run (:func:`remove_unreferenced`).
* ``candidates (doc, rank, other, score)``: each document's best ``depth`` partners by the
  score of :mod:`simdask.kernels.candidate_scores`, rank 0 first, changed by a run's commit
  (:func:`write_candidates`, one step of :mod:`simdask.storage.commit`) for the documents
  whose lists it recomputed.

The settings (:class:`~simdask.kernels.candidate_scores.CandidateConfig`) are the catalog's
``candidates`` metadata. :func:`candidate_partners` is what the aligning stages read. An
index of the earlier layout (a ``candidate_features`` table of per-document blobs) has no
segments: its next run computes every list again and drops that table.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simdask.errors import IndexDamagedError
from simdask.kernels.candidate_scores import CandidateConfig
from simdask.kernels.partner_rule import PartnerRule, chosen_count
from simdask.storage.local_store import LocalShardStore
from simdask.storage.sql import connection, insert_values, rows_in

__all__ = [
    "CANDIDATE_META",
    "SEGMENTS_META",
    "CandidateChanges",
    "candidate_partners",
    "candidate_scores",
    "candidate_store",
    "ensure_candidate_tables",
    "remove_unreferenced",
    "rule_partners",
    "stored_candidate_config",
    "stored_segments",
    "write_candidates",
]

#: the catalog metadata holding the settings (JSON); absent: no candidates stored yet
CANDIDATE_META = "candidates"
#: the catalog metadata naming the current segment of each range (JSON ``{range: generation}``)
SEGMENTS_META = "candidate_segments"
#: the folder of the content n-gram segments inside the index folder
STORE_DIR = "candidates"

_TABLES = """
CREATE TABLE IF NOT EXISTS candidates (
    doc INTEGER NOT NULL,
    rank INTEGER NOT NULL,
    other INTEGER NOT NULL,
    score INTEGER NOT NULL,
    PRIMARY KEY (doc, rank)
) WITHOUT ROWID;
"""


@dataclass
class CandidateChanges:
    """What a run changes: ``segments`` (range -> generation: the current content n-gram
    segments after the run), the lists of ``replaced`` removed and ``rows`` ``(doc, other,
    score)`` (best first per doc) inserted; ``full``: every list is replaced."""

    config: CandidateConfig
    segments: dict[int, int] = field(default_factory=dict)
    replaced: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    rows: tuple[np.ndarray, np.ndarray, np.ndarray] = field(
        default_factory=lambda: (np.zeros(0, np.int64),) * 3
    )
    full: bool = False
    #: the index keeps no candidates (its setting turned off): tables emptied, settings gone
    off: bool = False


#: candidate rows inserted per piece: a build's rows become Python values one piece at a time
#: (a million rows of four columns, ~160 MB, where all of them at once held ~3 GB at 400k)
INSERT_ROWS = 1 << 20


def candidate_store(index_path: str | Path) -> LocalShardStore:
    """The shard store of the content n-gram segments of the index at ``index_path``."""
    return LocalShardStore(Path(index_path) / STORE_DIR)


def stored_segments(db: Any) -> dict[int, int] | None:
    """The committed segments (range -> generation); None if the index has none (no
    candidates yet, or the earlier layout)."""
    row = connection(db).execute("SELECT value FROM meta WHERE name = ?", (SEGMENTS_META,))
    found = row.fetchone()
    if found is None:
        return None
    try:
        return {int(r): int(g) for r, g in json.loads(found[0]).items()}
    except (ValueError, TypeError, AttributeError) as e:
        raise IndexDamagedError(
            f"expected the candidate segments as a JSON object, found {found[0]!r}"
        ) from e


def remove_unreferenced(store: LocalShardStore, segments: dict[int, int] | None) -> int:
    """Delete the segments of ``store`` that ``segments`` (the committed ones) does not
    name, e.g. those of the run before the last commit or of an interrupted run (call with
    the writer lock); returns how many."""
    live = set() if segments is None else {(g, r) for r, g in segments.items()}
    gone = [(g, r) for g in store.generations() for r in store.stored_ranges(g)]
    gone = [(g, r) for g, r in gone if (g, r) not in live]
    for g, r in gone:
        store.remove_shard(g, r)
    for g in store.generations():  # temporary files of an interrupted write
        if not store.stored_ranges(g):
            store.remove_generation(g)
    return len(gone)


def ensure_candidate_tables(db: Any) -> None:
    """Create the two tables if the catalog has none (an index from before them)."""
    _create(connection(db))


def _create(c: sqlite3.Connection) -> None:
    for statement in _TABLES.split(";"):
        if statement.strip():
            c.execute(statement)


def write_candidates(c: sqlite3.Connection, ch: CandidateChanges | None) -> None:
    """Apply ``ch`` inside the caller's transaction (no-op for None)."""
    if ch is None:
        return
    _create(c)
    c.execute("DROP TABLE IF EXISTS candidate_features")  # the earlier layout
    if ch.off:
        c.execute("DELETE FROM candidates")
        c.execute("DELETE FROM meta WHERE name IN (?, ?)", (CANDIDATE_META, SEGMENTS_META))
        return
    if ch.full:
        c.execute("DELETE FROM candidates")
    else:
        values = np.unique(np.asarray(ch.replaced, np.int64)).tolist()
        for i in range(0, len(values), 5000):
            part = values[i : i + 5000]
            c.execute(f"DELETE FROM candidates WHERE doc IN ({','.join('?' * len(part))})", part)
    doc, other, score = (np.asarray(a, np.int64) for a in ch.rows)
    rank = _ranks(doc)
    for i in range(0, len(doc), INSERT_ROWS):  # Python values for one piece at a time
        part = slice(i, i + INSERT_ROWS)
        insert_values(
            c,
            "INSERT INTO candidates (doc, rank, other, score)",
            [doc[part].tolist(), rank[part].tolist(), other[part].tolist(), score[part].tolist()],
        )
    meta = json.dumps(ch.config.to_dict(), sort_keys=True)
    segs = json.dumps({str(r): int(g) for r, g in sorted(ch.segments.items())})
    c.executemany(
        "INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)",
        [(CANDIDATE_META, meta), (SEGMENTS_META, segs)],
    )


def _ranks(doc: np.ndarray) -> np.ndarray:
    """The rank of each row within its run of equal ``doc`` (rows grouped by doc)."""
    if len(doc) == 0:
        return np.zeros(0, np.int64)
    first = np.ones(len(doc), dtype=bool)
    first[1:] = doc[1:] != doc[:-1]
    starts = np.flatnonzero(first)
    return np.arange(len(doc)) - np.repeat(starts, np.diff(np.append(starts, len(doc))))


def stored_candidate_config(db: Any) -> CandidateConfig | None:
    """The settings the stored candidates were computed with; None if there are none."""
    row = connection(db).execute("SELECT value FROM meta WHERE name = ?", (CANDIDATE_META,))
    found = row.fetchone()
    if found is None:
        return None
    try:
        return CandidateConfig.from_dict(json.loads(found[0]))
    except (ValueError, TypeError) as e:
        raise IndexDamagedError(f"expected candidate settings as JSON, found {found[0]!r}") from e


def _has_tables(c: sqlite3.Connection) -> bool:
    q = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'candidates'"
    return bool(c.execute(q).fetchone()[0])


_OUT = (
    "SELECT s.doc, s.other, s.shared, d.key FROM similarity s"
    " JOIN documents d ON d.doc_id = s.other WHERE s.doc IN {in}"
)
_IN = (
    "SELECT s.other, s.doc, s.shared, d.key FROM similarity s"
    " JOIN documents d ON d.doc_id = s.doc WHERE s.other IN {in}"
)


def _similarity_partners(c: sqlite3.Connection, ids: list[int]) -> dict[int, list[int]]:
    """Each doc ID's partners by its stored similarity rows in both directions (``doc ->
    other`` and ``other -> doc``), most shared chunks first, ties by key (so that an index
    built incrementally and one built at once, whose doc IDs differ, rank alike)."""
    best: dict[int, dict[int, tuple[int, str]]] = {d: {} for d in ids}
    for sql in (_OUT, _IN):
        for d, p, shared, key in rows_in(c, sql, ids):
            got = best[int(d)].get(int(p))
            if got is None or shared > got[0]:
                best[int(d)][int(p)] = (int(shared), str(key))
    return {
        d: [p for p, _ in sorted(ps.items(), key=lambda t: (-t[1][0], t[1][1]))]
        for d, ps in best.items()
    }


def candidate_partners(conn: Any, doc_ids: Iterable[int], k: int) -> dict[int, list[int]]:
    """Up to ``k`` partner doc IDs of each of ``doc_ids``, best first: its stored candidates
    (shared informative content n-grams), then its stored similarity partners (both
    directions, most shared chunks first) not among them. Every asked doc ID is a key (an
    empty list if it has neither). ``conn``: the catalog's SQLite connection (or the catalog),
    read in whatever transaction it is in (a read snapshot, or the run's commit, which sees
    the rows it has written)."""
    c = connection(conn)
    ids = [int(d) for d in doc_ids]
    out: dict[int, list[int]] = {d: [] for d in ids}
    if k <= 0 or not ids:
        return out
    if _has_tables(c):
        sql = f"SELECT doc, other FROM candidates WHERE rank < {int(k)} AND doc IN {{in}}"
        for d, o in rows_in(c, sql + " ORDER BY doc, rank", ids):
            out[int(d)].append(int(o))
    for d, partners in _similarity_partners(c, ids).items():
        lst = out[d]
        for o in partners:
            if len(lst) >= k:
                break
            if o not in lst:
                lst.append(o)
    return out


def candidate_scores(conn: Any, doc_ids: Iterable[int], k: int) -> dict[int, list[tuple[int, int]]]:
    """Up to ``k`` stored candidates of each of ``doc_ids`` as ``(other, score)``, best
    first (``score``: the stored retrieval score, :mod:`simdask.kernels.candidate_scores`; only
    the stored candidates, not the similarity partners :func:`candidate_partners` adds).
    Every asked doc ID is a key (an empty list if it has none)."""
    c = connection(conn)
    ids = [int(d) for d in doc_ids]
    out: dict[int, list[tuple[int, int]]] = {d: [] for d in ids}
    if k <= 0 or not ids or not _has_tables(c):
        return out
    sql = f"SELECT doc, other, score FROM candidates WHERE rank < {int(k)} AND doc IN {{in}}"
    for d, o, score in rows_in(c, sql + " ORDER BY doc, rank", ids):
        out[int(d)].append((int(o), int(score)))
    return out


def rule_partners(conn: Any, doc_ids: Iterable[int], rule: PartnerRule) -> dict[int, list[int]]:
    """The partners of each of ``doc_ids`` to align by ``rule``
    (:class:`~simdask.kernels.partner_rule.PartnerRule`), best first: the prefix of its
    stored candidates the rule chooses (at most ``rule.cap``), then its stored similarity
    partners (both directions, most shared chunks first) not among them while it holds fewer
    than ``rule.least`` (an index without candidates: its ``least`` best similarity
    partners, the fixed top k of before). Every asked doc ID is a key."""
    ids = [int(d) for d in doc_ids]
    scored = candidate_scores(conn, ids, rule.cap)
    out: dict[int, list[int]] = {}
    for d in ids:
        lst = scored[d]
        n = chosen_count(np.array([s for _, s in lst], dtype=np.int64), rule)
        out[d] = [o for o, _ in lst[:n]]
    short = [d for d in ids if len(out[d]) < rule.least]
    if short:
        for d, partners in _similarity_partners(connection(conn), short).items():
            kept = out[d]
            for o in partners:
                if len(kept) >= rule.least:
                    break
                if o not in kept:
                    kept.append(o)
    return out
