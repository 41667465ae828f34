"""The commit of one run: the statements of its single catalog transaction, as named steps.

Each step is one write; :meth:`simdask.storage.catalog.Catalog.commit_run` runs them in order
inside ``BEGIN IMMEDIATE ... COMMIT``, with a failure point before each (``commit.<step>``) and
around COMMIT, so that crash tests interrupt the commit at every write in turn.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simdask.config import IndexConfig
from simdask.errors import damaged
from simdask.kernels.changes import DocumentRow
from simdask.storage.aligned_tables import TotalsPlan, remember_tracked, settle
from simdask.storage.candidate_store import CandidateChanges, write_candidates
from simdask.storage.checksums import FILES_TABLE, drop_stale, record_digest
from simdask.storage.chunk_table import update_chunk_table
from simdask.storage.lists import RESERVE_INDEX, RESERVE_INDEX_NAME, rebalance, touched_lists
from simdask.storage.lsh_store import LshManifest
from simdask.storage.quoted_chunks import QuotedChanges, write_quoted
from simdask.storage.segment_catalog import SEGMENT_TABLES
from simdask.storage.sql import insert_values

__all__ = [
    "COMMIT_CACHE_KIB",
    "COMMIT_FAILPOINTS",
    "COMMIT_STEPS",
    "SIMILARITY_INDEX",
    "CommitContext",
    "RunChanges",
    "check_rows",
    "commit_cache",
    "temp_ids",
]

#: the similarity table's secondary index (rows *to* a document), by name and statement
SIMILARITY_INDEX_NAME = "similarity_other"
SIMILARITY_INDEX = f"CREATE INDEX IF NOT EXISTS {SIMILARITY_INDEX_NAME} ON similarity (other)"
#: similarity rows turned into Python objects at a time (about 150 MB of them)
_ROWS_PER_PASS = 1 << 20
#: SQLite's page cache during a commit, KiB (default 2 MiB): the pages a commit changes stay
#: in memory instead of spilling to the WAL and being written again
COMMIT_CACHE_KIB = 256 * 1024


@dataclass
class RunChanges:
    """Everything one run changes in the catalog, committed by :meth:`Catalog.commit_run`.

    ``upserted``: the new and modified documents; ``deleted``: doc IDs removed
    (their IDs become free). Similarity: rows *of* ``rows_replaced`` and rows *to*
    ``reverse_replaced`` are deleted, then ``rows`` (``doc, other, shared, percent`` arrays)
    inserted (with ``reserve`` rows and ``floors`` ``(doc, similarity, other)`` of the lists
    computed whole), then the lists of ``trim`` documents and of those that lost a row ranked
    again: ``top_k`` shown, down to ``depth`` in reserve (:mod:`simdask.storage.lists`;
    ``depth`` 0: ``top_k``). ``manifests``: the new
    segment list ``[(generation, keys, postings)]`` of each range this run changed;
    ``tombstones``: doc IDs whose older postings this run hides (at the run's generation);
    ``dead``: the new estimate of tombstoned postings of ranges whose estimate changed.
    ``replace_all``: a full build replacing everything.
    ``meta``: catalog metadata set in the same transaction (the MinHash LSH manifest ``lsh``).
    """

    upserted: list[DocumentRow]
    deleted: list[int]
    rows: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    rows_replaced: np.ndarray
    reverse_replaced: np.ndarray
    trim: np.ndarray
    top_k: int
    manifests: dict[int, list[tuple[int, int, int]]]
    errors: list[tuple[str, str, str]]
    skipped_chunks: int
    replace_all: bool = False
    config: IndexConfig | None = None
    #: ``(name, size, xxh3)`` of the files this run wrote (see :mod:`simdask.storage.checksums`)
    files: list[tuple[str, int, str]] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=dict)
    tombstones: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    dead: dict[int, float] = field(default_factory=dict)
    reserve: tuple[Any, ...] = field(
        default_factory=lambda: (np.zeros(0, np.int64),) * 3 + (np.zeros(0),)
    )
    floors: tuple[Any, ...] = field(
        default_factory=lambda: (np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64))
    )
    depth: int = 0
    #: the candidate partners' changes (:mod:`simdask.storage.candidate_store`); None: unchanged
    candidates: CandidateChanges | None = None
    #: what the commit does about aligned pairs and totals (:mod:`simdask.storage.aligned_tables`;
    #: None: no aligning, tracked documents kept correct or left without a total)
    totals: TotalsPlan | None = None
    #: filled by the commit: what it did about totals
    #: (:func:`simdask.storage.aligned_tables.settle`)
    totals_done: dict[str, int] = field(default_factory=dict)
    #: the quoted chunks' changes (:mod:`simdask.storage.quoted_chunks`; None: no quote stage)
    quoted: QuotedChanges | None = None


def temp_ids(c: sqlite3.Connection, name: str, ids: Iterable[int]) -> None:
    """Fill the temporary table ``name`` (created if needed) with the integers ``ids``."""
    c.execute(f"CREATE TEMP TABLE IF NOT EXISTS {name} (id INTEGER PRIMARY KEY)")
    c.execute(f"DELETE FROM {name}")
    arr = ids if isinstance(ids, np.ndarray) else np.fromiter((int(i) for i in ids), np.int64)
    insert_values(c, f"INSERT INTO {name} (id)", [np.unique(arr.astype(np.int64)).tolist()])


@contextmanager
def commit_cache(c: sqlite3.Connection, kib: int = COMMIT_CACHE_KIB) -> Iterator[None]:
    """SQLite's page cache of ``c`` at ``kib`` KiB inside (a commit), as before after."""
    before = int(c.execute("PRAGMA cache_size").fetchone()[0])
    c.execute(f"PRAGMA cache_size = {-int(kib)}")
    try:
        yield
    finally:
        c.execute(f"PRAGMA cache_size = {before}")


@dataclass(frozen=True)
class CommitContext:
    """What the steps of one commit write: the run, its generation, changes and summary."""

    run_id: int
    generation: int
    ch: RunChanges
    summary: str  # JSON
    now: float = field(default_factory=time.time)


def _remember_tracked(c: sqlite3.Connection, run: CommitContext) -> None:
    remember_tracked(c)  # by key, before documents change


def _aligned_totals(c: sqlite3.Connection, run: CommitContext) -> None:
    ch = run.ch
    quiet = not (ch.upserted or ch.deleted or ch.replace_all or len(ch.rows[0]) or len(ch.trim))
    if ch.totals is None and quiet and not len(ch.rows_replaced) and not len(ch.reverse_replaced):
        return  # e.g. a compaction: no document and no similarity row changed
    upserted = [d.doc_id for d in ch.upserted]
    plan = ch.totals or TotalsPlan()
    ch.totals_done = settle(c, plan, upserted, ch.deleted, ch.replace_all)


def _replace_all(c: sqlite3.Connection, run: CommitContext) -> None:
    if run.ch.replace_all:  # a full build: everything is replaced
        tables = ("documents", "similarity", "reserve", "floors", "free_ids", "shards")
        for table in (*tables, *SEGMENT_TABLES):
            c.execute(f"DELETE FROM {table}")


def _temp_tables(c: sqlite3.Connection, run: CommitContext) -> None:
    temp_ids(c, "t_rows_of", run.ch.rows_replaced)
    temp_ids(c, "t_rows_to", run.ch.reverse_replaced)
    temp_ids(c, "t_trim", run.ch.trim)
    touched_lists(c, "t_rows_to", "t_rows_of", "t_trim")


def _rows_of(c: sqlite3.Connection, run: CommitContext) -> None:
    for table in ("similarity", "reserve", "floors"):
        c.execute(f"DELETE FROM {table} WHERE doc IN (SELECT id FROM t_rows_of)")


def _rows_to(c: sqlite3.Connection, run: CommitContext) -> None:
    for table in ("similarity", "reserve"):
        c.execute(f"DELETE FROM {table} WHERE other IN (SELECT id FROM t_rows_to)")


def _delete_documents(c: sqlite3.Connection, run: CommitContext) -> None:
    c.executemany("DELETE FROM documents WHERE doc_id = ?", ((int(d),) for d in run.ch.deleted))


def _free_ids(c: sqlite3.Connection, run: CommitContext) -> None:
    c.executemany(
        "INSERT OR IGNORE INTO free_ids (doc_id) VALUES (?)", ((int(d),) for d in run.ch.deleted)
    )


def _empty(c: sqlite3.Connection, table: str) -> bool:
    """Whether ``table`` holds no row (as this transaction sees it)."""
    return c.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is None


def _upsert_documents(c: sqlite3.Connection, run: CommitContext) -> None:
    """Write the documents (a replaced one keeps its ``added_at``); into an empty table (a
    first or full build) as plain multi-row INSERTs."""
    head = (
        "INSERT OR REPLACE INTO documents (doc_id, key, source, content_hash, n_chunks,"
        " n_words, status, text_pack, text_offset, text_length, added_at, updated_at)"
    )
    docs = run.ch.upserted
    distinct = len({d.doc_id for d in docs}) == len({d.key for d in docs}) == len(docs)
    if docs and distinct and _empty(c, "documents"):
        docs = sorted(docs, key=lambda d: d.doc_id)  # the rowid B-tree grows at its end
        cols = [list(col) for col in zip(*(d.columns() for d in docs), strict=True)]
        now = [run.now] * len(docs)
        insert_values(c, head.replace(" OR REPLACE", ""), [*cols, now, now])
        return
    c.executemany(
        f"{head} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
        " COALESCE((SELECT added_at FROM documents WHERE doc_id = ?), ?), ?)",
        ((*d.columns(), d.doc_id, run.now, run.now) for d in docs),
    )


def _use_ids(c: sqlite3.Connection, run: CommitContext) -> None:
    if not _empty(c, "free_ids"):  # a first or full build has none
        ids = ((d.doc_id,) for d in run.ch.upserted)
        c.executemany("DELETE FROM free_ids WHERE doc_id = ?", ids)


def _chunk_table(c: sqlite3.Connection, run: CommitContext) -> None:
    previous = int(c.execute("SELECT value FROM meta WHERE name = 'generation'").fetchone()[0])
    changes = [*((int(d), 0) for d in run.ch.deleted)]
    changes += [(d.doc_id, d.n_chunks) for d in run.ch.upserted]
    update_chunk_table(c, previous, run.generation, changes, run.ch.replace_all)


def _key_order(doc: np.ndarray, other: np.ndarray) -> tuple[np.ndarray | None, bool]:
    """The stable order sorting rows by ``(doc, other)`` (the similarity table's key), None if
    they are sorted already; and whether the keys are distinct. Holds 24 bytes a row at most
    (the key, the order, the sorted key), not a sorted copy of the rows."""
    key = doc.astype(np.int64) << 32 | other.astype(np.int64)
    if len(key) < 2 or bool(np.all(key[1:] > key[:-1])):
        return None, True
    order = np.argsort(key, kind="stable")
    key = key[order]
    return order, bool(np.all(key[1:] != key[:-1]))


def _insert_sorted(
    c: sqlite3.Connection, head: str, cols: tuple[Any, ...], order: np.ndarray | None
) -> None:
    """Insert rows ``cols`` in ``order`` (None: as they are), one slice of
    ``_ROWS_PER_PASS`` rows gathered and turned into Python objects at a time."""
    for i in range(0, len(cols[0]), _ROWS_PER_PASS):
        at = slice(i, i + _ROWS_PER_PASS) if order is None else order[i : i + _ROWS_PER_PASS]
        insert_values(c, head, [a[at].tolist() for a in cols])


def _insert_rows(c: sqlite3.Connection, run: CommitContext) -> None:
    """Insert the rows sorted by the table's key (the B-tree grows at its right edge). Into an
    empty table (a first or full build) with distinct keys: plain INSERT, with the index on
    ``other`` dropped and built again afterwards (step ``similarity_index``) from sorted
    input, instead of updated in random order row by row."""
    cols = run.ch.rows
    if not len(cols[0]):
        return
    order, distinct = _key_order(cols[0], cols[1])
    head = "INSERT OR REPLACE INTO similarity (doc, other, shared, similarity)"
    if distinct and _empty(c, "similarity"):
        c.execute(f"DROP INDEX IF EXISTS {SIMILARITY_INDEX_NAME}")
        head = "INSERT INTO similarity (doc, other, shared, similarity)"
    _insert_sorted(c, head, cols, order)


def _insert_deep(c: sqlite3.Connection, run: CommitContext) -> None:
    """Insert the reserve rows and the floors of the lists computed whole. Into an empty
    reserve (a full build) the index on ``other`` is built after the rows, from sorted input."""
    head = "INSERT OR REPLACE INTO reserve (doc, other, shared, similarity)"
    cols = run.ch.reserve
    order, _ = _key_order(cols[0], cols[1])
    bulk = len(cols[0]) > 0 and _empty(c, "reserve")
    if bulk:
        c.execute(f"DROP INDEX IF EXISTS {RESERVE_INDEX_NAME}")
    _insert_sorted(c, head, cols, order)
    if bulk:
        c.execute(RESERVE_INDEX)
    head = "INSERT OR REPLACE INTO floors (doc, similarity, other)"
    insert_values(c, head, [a.tolist() for a in run.ch.floors])


def _similarity_index(c: sqlite3.Connection, run: CommitContext) -> None:
    c.execute(SIMILARITY_INDEX)  # built again if _insert_rows dropped it


def _trim_rows(c: sqlite3.Connection, run: CommitContext) -> None:
    depth = max(run.ch.depth, run.ch.top_k)
    rebalance(c, "t_trim", run.ch.top_k, depth)


def _segments(c: sqlite3.Connection, run: CommitContext) -> None:
    for shard, segs in sorted(run.ch.manifests.items()):  # each changed range's new manifest
        c.execute("DELETE FROM segments WHERE shard = ?", (int(shard),))
        c.executemany(
            "INSERT INTO segments (shard, generation, keys, postings) VALUES (?, ?, ?, ?)",
            ((int(shard), int(g), int(k), int(p)) for g, k, p in segs),
        )


def _tombstones(c: sqlite3.Connection, run: CommitContext) -> None:
    c.executemany(
        "INSERT OR IGNORE INTO tombstones (generation, doc_id) VALUES (?, ?)",
        ((int(run.generation), int(d)) for d in run.ch.tombstones),
    )


def _dead_postings(c: sqlite3.Connection, run: CommitContext) -> None:
    c.executemany(
        "INSERT OR REPLACE INTO ranges (shard, dead) VALUES (?, ?)",
        ((int(s), float(v)) for s, v in sorted(run.ch.dead.items())),
    )


def _old_tombstones(c: sqlite3.Connection, run: CommitContext) -> None:
    # tombstones older than every segment hide nothing any more
    c.execute("DELETE FROM tombstones WHERE generation <= (SELECT MIN(generation) FROM segments)")


def _file_checksums(c: sqlite3.Connection, run: CommitContext) -> None:
    c.execute(FILES_TABLE)
    c.executemany("INSERT OR REPLACE INTO files (name, size, xxh3) VALUES (?, ?, ?)", run.ch.files)
    drop_stale(c)
    record_digest(c)  # the checksum table's own checksum


def _errors(c: sqlite3.Connection, run: CommitContext) -> None:
    c.executemany(
        "INSERT INTO errors (run_id, key, kind, message) VALUES (?, ?, ?, ?)",
        ((run.run_id, *e) for e in run.ch.errors),
    )


def _run_record(c: sqlite3.Connection, run: CommitContext) -> None:
    c.execute(
        "UPDATE runs SET status = 'committed', finished_at = ?, generation = ?,"
        " summary = ? WHERE run_id = ?",
        (run.now, run.generation, run.summary, run.run_id),
    )


def _generation(c: sqlite3.Connection, run: CommitContext) -> None:
    c.execute("UPDATE meta SET value = ? WHERE name = 'generation'", (str(run.generation),))


def _skipped_chunks(c: sqlite3.Connection, run: CommitContext) -> None:
    c.execute(
        "INSERT OR REPLACE INTO meta (name, value) VALUES ('skipped_chunks', ?)",
        (str(int(run.ch.skipped_chunks)),),
    )


def _config(c: sqlite3.Connection, run: CommitContext) -> None:
    if run.ch.config is not None:
        c.execute(
            "UPDATE meta SET value = ? WHERE name = 'config'",
            (json.dumps(run.ch.config.to_dict(), sort_keys=True),),
        )


def _meta(c: sqlite3.Connection, run: CommitContext) -> None:
    c.executemany(
        "INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", sorted(run.ch.meta.items())
    )
    if "lsh" in run.ch.meta:  # checksums of LSH files the new manifest no longer reads go
        man = LshManifest.from_json(run.ch.meta["lsh"])
        live = man.file_names() if man is not None else set()
        names = [r[0] for r in c.execute("SELECT name FROM files WHERE name LIKE 'lsh/%'")]
        c.executemany("DELETE FROM files WHERE name = ?", ((n,) for n in names if n not in live))
        record_digest(c)


def _drop_temp_tables(c: sqlite3.Connection, run: CommitContext) -> None:
    for t in ("t_rows_of", "t_rows_to", "t_trim"):
        c.execute(f"DROP TABLE {t}")
    c.execute("DROP TABLE IF EXISTS t_tracked_keys")


#: The statements of :meth:`Catalog.commit_run`, in order: one transaction.
def _candidates(c: sqlite3.Connection, run: CommitContext) -> None:
    write_candidates(c, run.ch.candidates)


def _quoted_chunks(c: sqlite3.Connection, run: CommitContext) -> None:
    cfg = run.ch.config
    if cfg is not None:  # a compaction changes no document
        write_quoted(c, run.ch.quoted, cfg.exclude_quotes)


COMMIT_STEPS = (
    _remember_tracked,
    _replace_all,
    _temp_tables,
    _rows_of,
    _rows_to,
    _delete_documents,
    _free_ids,
    _upsert_documents,
    _use_ids,
    _chunk_table,
    _candidates,
    _quoted_chunks,
    _insert_rows,
    _insert_deep,
    _similarity_index,
    _trim_rows,
    _aligned_totals,
    _segments,
    _tombstones,
    _dead_postings,
    _old_tombstones,
    _file_checksums,
    _errors,
    _run_record,
    _generation,
    _skipped_chunks,
    _config,
    _meta,
    _drop_temp_tables,
)

#: The failure points of :meth:`Catalog.commit_run` in the order a commit reaches them, each
#: with whether the run is committed there (only ``commit.after_COMMIT``).
COMMIT_FAILPOINTS: tuple[tuple[str, bool], ...] = (
    *((f"commit.{step.__name__[1:]}", False) for step in COMMIT_STEPS),
    ("commit.before_COMMIT", False),
    ("commit.after_COMMIT", True),
)


def check_rows(ch: RunChanges) -> None:
    """Refuse to commit similarity rows outside their domain (0..100 percent, shared chunks
    >= 0): computed from damaged shards (:class:`IndexDamagedError`, the index unchanged)."""
    _, _, shared, sim = ch.rows
    bad = (sim < 0) | (sim > 100.0 + 1e-9) | (shared < 0)
    if len(sim) and bad.any():
        i = int(bad.argmax())
        raise damaged(
            f"this run computed {int(bad.sum())} similarities outside 0..100 % (e.g. "
            f"{float(sim[i]):.2f} % from {int(shared[i])} shared chunks) from the stored shards; "
            "nothing was committed"
        )
