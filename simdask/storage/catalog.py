"""The SQLite catalog: documents, runs, per-file errors, the similarity table and index metadata.

Everything a run changes is committed in :meth:`Catalog.commit_run`, one transaction that
also records the new current generation (DESIGN §2).
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simdask import failpoints
from simdask.config import FORMAT_VERSION, READABLE_VERSIONS, IndexConfig
from simdask.errors import DiskFullError, DocumentNotFoundError, IndexDamagedError, IndexFormatError
from simdask.kernels.changes import DocumentRow, KnownDocument
from simdask.storage.catalog_values import stored_config, stored_int, stored_json
from simdask.storage.chunk_table import read_chunk_table
from simdask.storage.commit import (
    COMMIT_STEPS,
    SIMILARITY_INDEX,
    CommitContext,
    RunChanges,
    commit_cache,
    temp_ids,
)
from simdask.storage.diskspace import catalog_error
from simdask.storage.lists import FLOORS_META, ensure_floors, ensure_list_tables
from simdask.storage.lists import refill_candidates as _refill
from simdask.storage.quoted_chunks import ensure_reverse_table
from simdask.storage.reads import REVERSE
from simdask.storage.segment_catalog import SegmentTables
from simdask.storage.sql import rows_in

__all__ = ["Catalog", "DocumentRow", "PairRow", "RunChanges"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    n_chunks INTEGER NOT NULL,
    n_words INTEGER NOT NULL,
    status TEXT NOT NULL,
    text_pack TEXT,
    text_offset INTEGER,
    text_length INTEGER,
    added_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_source ON documents (source);
CREATE TABLE IF NOT EXISTS free_ids (doc_id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS shards (shard INTEGER PRIMARY KEY, generation INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id INTEGER PRIMARY KEY,
    started_at REAL NOT NULL,
    finished_at REAL,
    generation INTEGER,
    status TEXT NOT NULL,
    summary TEXT
);
CREATE TABLE IF NOT EXISTS errors (
    run_id INTEGER NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL, message TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS similarity (
    doc INTEGER NOT NULL,
    other INTEGER NOT NULL,
    shared INTEGER NOT NULL,
    similarity REAL NOT NULL,
    PRIMARY KEY (doc, other)
) WITHOUT ROWID;
"""
_SCHEMA += SIMILARITY_INDEX + ";\n"


_DOC_COLS = (
    "doc_id, key, source, content_hash, n_chunks, n_words, status,"
    " text_pack, text_offset, text_length"
)


@dataclass(frozen=True)
class PairRow:
    """One directed similarity: ``doc`` is ``similarity`` percent similar to ``other``."""

    doc: str
    other: str
    similarity: float
    shared: int
    doc_chunks: int
    other_chunks: int
    reverse_shared: int | None = None  #: ``other``'s chunks in ``doc`` (quotations: term.md)

    def to_dict(self) -> dict[str, Any]:
        """The row as the JSONL output of ``simdask similar`` prints it."""
        return {
            "doc": self.doc,
            "other": self.other,
            "similarity": self.similarity,
            "shared": self.shared,
            "doc_chunks": self.doc_chunks,
            "other_chunks": self.other_chunks,
        }


class Catalog(SegmentTables):
    """A connection to ``catalog.sqlite`` of one index (its segment tables:
    :class:`~simdask.storage.segment_catalog.SegmentTables`)."""

    def __init__(self, path: str | Path, *, create: bool = False):
        self.path = Path(path)
        if not create and not self.path.exists():
            raise IndexFormatError(f"expected a catalog at {self.path}, found no file")
        self.conn = sqlite3.connect(str(self.path), timeout=60, isolation_level=None)
        try:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")  # durable COMMIT: GC follows it
            if create:
                self.conn.executescript(_SCHEMA)
            self._ensure_segment_tables(create)
            ensure_list_tables(self.conn)
            ensure_reverse_table(self.conn)
        except sqlite3.DatabaseError as e:
            self.conn.close()
            raise self.damaged(e) from None

    def damaged(self, error: sqlite3.DatabaseError) -> IndexDamagedError | DiskFullError:
        """The error for a catalog SQLite cannot read (truncated, overwritten), or cannot use
        for want of disk space (not damage: :func:`~simdask.storage.diskspace.catalog_error`)."""
        return catalog_error(self.path, error)

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # --- metadata -------------------------------------------------------------------------
    def init_meta(self, config: IndexConfig) -> None:
        """Record format version, config (its range count a number) and generation 0."""
        stored = json.dumps({**config.to_dict(), "shards": config.ranges}, sort_keys=True)
        with self.transaction() as c:
            c.executemany(
                "INSERT INTO meta (name, value) VALUES (?, ?)",
                [
                    ("format_version", str(FORMAT_VERSION)),
                    ("config", stored),
                    ("generation", "0"),
                    ("skipped_chunks", "0"),
                    ("index_id", uuid.uuid4().hex),
                    (FLOORS_META, "1"),
                ],
            )

    def set_meta(self, name: str, value: str) -> None:
        """Record a metadata value."""
        with self.transaction() as c:
            c.execute("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", (name, value))

    def meta(self, name: str) -> str | None:
        """A metadata value, or None."""
        row = self.conn.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return None if row is None else row[0]

    def check_format(self) -> IndexConfig:
        """Check the format version and return the stored config (a catalog SQLite cannot
        read raises :class:`IndexDamagedError` naming the file)."""
        try:
            version = self.meta("format_version")
            raw = self.meta("config")
        except sqlite3.DatabaseError as e:
            raise self.damaged(e) from None
        if version not in {str(v) for v in READABLE_VERSIONS}:
            raise IndexFormatError(
                f"index at {self.path.parent} has format version {version!r}; "
                f"this simdask reads versions {', '.join(map(str, READABLE_VERSIONS))}"
            )
        return stored_config(raw, self.path)

    @property
    def index_id(self) -> str:
        """A random ID given to the index when it was created (recorded now for indexes made
        before it existed): tells worker-side shard caches of two indexes apart."""
        value = self.meta("index_id")
        if value is None:
            with self.transaction() as c:
                c.execute(
                    "INSERT OR IGNORE INTO meta (name, value) VALUES ('index_id', ?)",
                    (uuid.uuid4().hex,),
                )
            value = self.meta("index_id")
        return str(value)

    @property
    def generation(self) -> int:
        """The current (last committed) generation."""
        return stored_int(self.meta("generation") or None, "meta.generation", self.path)

    # --- runs -----------------------------------------------------------------------------
    def start_run(self) -> int:
        """Record a started run; returns its ID."""
        with self.transaction() as c:
            cur = c.execute(
                "INSERT INTO runs (started_at, status) VALUES (?, 'running')", (time.time(),)
            )
            if cur.lastrowid is None:  # sqlite3 sets it after an INSERT
                raise IndexFormatError("expected the new run's row ID, found none")
            return int(cur.lastrowid)

    def fail_run(self, run_id: int, message: str) -> None:
        """Mark a running run as failed (nothing else changes; a committed run stays so)."""
        with self.transaction() as c:
            c.execute(
                "UPDATE runs SET status = 'failed', finished_at = ?, summary = ?"
                " WHERE run_id = ? AND status = 'running'",
                (time.time(), json.dumps({"error": message}), run_id),
            )

    def commit_run(
        self, run_id: int, generation: int, ch: RunChanges, summary: dict[str, Any]
    ) -> None:
        """Commit everything a run changed in one transaction (see :class:`RunChanges`).

        The statements are the steps of :data:`COMMIT_STEPS`, with the failure point
        ``commit.<step>`` before each, ``commit.before_COMMIT`` and ``commit.after_COMMIT``
        (see :data:`COMMIT_FAILPOINTS`). Anything raised before COMMIT rolls the transaction
        back; once COMMIT has returned, the run is committed.
        """
        run = CommitContext(run_id, generation, ch, json.dumps(summary, sort_keys=True))
        c = self.conn
        with commit_cache(c):
            c.execute("BEGIN IMMEDIATE")
            try:
                for step in COMMIT_STEPS:
                    failpoints.hit(f"commit.{step.__name__[1:]}")
                    step(c, run)
                failpoints.hit("commit.before_COMMIT")
                c.execute("COMMIT")
            except BaseException:
                self.rollback_open()
                raise
        failpoints.hit("commit.after_COMMIT")

    def rollback_open(self) -> None:
        """Roll back a transaction left open on this connection (e.g. by an interrupt)."""
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def run_status(self, run_id: int) -> str | None:
        """``running``, ``committed``, ``failed`` or ``abandoned`` (None: no such run), as
        committed (a transaction left open on this connection is rolled back first)."""
        self.rollback_open()
        row = self.conn.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None else str(row[0])

    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """Reads inside see one committed state (a deferred transaction, no lock taken); a
        block nested in another shares the outer one's state."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

    def text_packs(self) -> set[str]:
        """Names of the text packs holding the text of some document."""
        rows = self.conn.execute(
            "SELECT DISTINCT text_pack FROM documents WHERE text_pack IS NOT NULL"
        )
        return {r[0] for r in rows}

    def unused_packs(self, packs: Iterable[str]) -> list[str]:
        """Those of ``packs`` no document's text is in (a lookup each, by the index the
        commits create; see :data:`~simdask.storage.checksums.PACK_INDEX`)."""
        q = "SELECT 1 FROM documents WHERE text_pack = ? LIMIT 1"
        return [p for p in packs if self.conn.execute(q, (p,)).fetchone() is None]

    def abandon_stale_runs(self) -> int:
        """Mark runs left 'running' by a killed process as 'abandoned' (call under the lock)."""
        with self.transaction() as c:
            return c.execute(
                "UPDATE runs SET status = 'abandoned' WHERE status = 'running'"
            ).rowcount

    def known_documents(self) -> dict[str, KnownDocument]:
        """``key -> (doc_id, content_hash, source)`` of every document."""
        rows = self.conn.execute("SELECT key, doc_id, content_hash, source FROM documents")
        return {k: KnownDocument(d, h, s) for k, d, h, s in rows}

    def known_for(
        self, keys: Iterable[str], sources: Iterable[str] = ()
    ) -> dict[str, KnownDocument]:
        """``key -> (doc_id, content_hash, source)`` of the documents with these keys, and of
        every document of these sources (indexed lookups: costs what they return)."""
        out: dict[str, KnownDocument] = {}
        for col, values in (("key", sorted(set(keys))), ("source", sorted(set(sources)))):
            for i in range(0, len(values), 500):
                part = values[i : i + 500]
                rows = self.conn.execute(
                    "SELECT key, doc_id, content_hash, source FROM documents"
                    f" WHERE {col} IN ({','.join('?' * len(part))})",
                    part,
                )
                out.update((k, KnownDocument(d, h, s)) for k, d, h, s in rows)
        return out

    def n_documents(self, limit: int | None = None) -> int:
        """Rows of the documents table (indexed documents, too-short ones included), counted
        up to ``limit`` (None: all)."""
        if limit is None:
            return int(self.conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0])
        q = "SELECT COUNT(*) FROM (SELECT 1 FROM documents LIMIT ?)"
        return int(self.conn.execute(q, (int(limit),)).fetchone()[0])

    def chunk_table(self) -> np.ndarray:
        """``|A|`` by doc ID (int64; 0 for free IDs) of the committed generation, read as one
        array (:mod:`simdask.storage.chunk_table`)."""
        return read_chunk_table(self.conn, self.generation)

    def chunk_counts(self) -> dict[int, int]:
        """``doc_id -> n_chunks`` of every document."""
        return dict(self.conn.execute("SELECT doc_id, n_chunks FROM documents").fetchall())

    def allocate_ids(self, n: int) -> list[int]:
        """``n`` doc IDs for new documents: recycled free IDs first (lowest first), then new
        ones. Nothing is reserved: the IDs become used when the run commits."""
        free = [
            r[0]
            for r in self.conn.execute("SELECT doc_id FROM free_ids ORDER BY doc_id LIMIT ?", (n,))
        ]
        top = self.conn.execute(
            "SELECT MAX(m) FROM (SELECT MAX(doc_id) AS m FROM documents"
            " UNION ALL SELECT MAX(doc_id) FROM free_ids)"
        ).fetchone()[0]
        start = -1 if top is None else int(top)
        return free + list(range(start + 1, start + 1 + n - len(free)))

    def refill_candidates(self, changed: np.ndarray, top_k: int) -> np.ndarray:
        """Documents not in ``changed`` whose list lost a row to a changed one and may now
        lack a partner left out of it (:func:`~simdask.storage.lists.refill_candidates`):
        they are recomputed. Records the floors of an index written before them first."""
        ensure_floors(self.conn, top_k)
        with self.transaction() as c:
            temp_ids(c, "t_changed", changed)
            out = _refill(c, "t_changed", top_k)
            c.execute("DROP TABLE t_changed")
        return out

    def last_run(self) -> dict[str, Any] | None:
        """The last committed run that indexed documents (compactions are left out): id,
        generation, times and summary."""
        row = self.conn.execute(
            "SELECT run_id, started_at, finished_at, generation, summary FROM runs"
            " WHERE status = 'committed' AND json_extract(summary, '$.compaction') IS NULL"
            " ORDER BY run_id DESC LIMIT 1"
        ).fetchone()
        if row is None:
            return None
        return {
            "run_id": row[0],
            "started_at": row[1],
            "finished_at": row[2],
            "generation": row[3],
            "summary": stored_json(row[4] or "{}", "runs.summary", self.path),
        }

    def errors_of_run(self, run_id: int) -> list[tuple[str, str, str]]:
        """``(key, kind, message)`` of every per-file error recorded by a run."""
        return self.conn.execute(
            "SELECT key, kind, message FROM errors WHERE run_id = ? ORDER BY rowid", (run_id,)
        ).fetchall()

    # --- documents ------------------------------------------------------------------------
    def document(self, key: str) -> DocumentRow:
        """The document with this key."""
        row = self.conn.execute(
            f"SELECT {_DOC_COLS} FROM documents WHERE key = ?",
            (key,),
        ).fetchone()
        if row is None:
            raise DocumentNotFoundError(f"no document with key {key!r} in the index")
        return DocumentRow(*row)

    def documents(self) -> list[DocumentRow]:
        """All documents, by doc ID."""
        rows = self.conn.execute(f"SELECT {_DOC_COLS} FROM documents ORDER BY doc_id").fetchall()
        return [DocumentRow(*r) for r in rows]

    def documents_by_id(self, doc_ids: Iterable[int]) -> list[DocumentRow]:
        """The documents of the given doc IDs (unknown IDs are left out), by doc ID."""
        sql = f"SELECT {_DOC_COLS} FROM documents WHERE doc_id IN {{in}}"
        rows = rows_in(self.conn, sql, [int(i) for i in doc_ids])
        return sorted((DocumentRow(*r) for r in rows), key=lambda d: d.doc_id)

    def keys_of(self, doc_ids: list[int]) -> dict[int, str]:
        """``{doc_id: key}`` of the given doc IDs (unknown IDs are left out)."""
        out: dict[int, str] = {}
        for i in range(0, len(doc_ids), 5000):
            part = doc_ids[i : i + 5000]
            marks = ",".join("?" * len(part))
            out.update(
                self.conn.execute(
                    f"SELECT doc_id, key FROM documents WHERE doc_id IN ({marks})", part
                ).fetchall()
            )
        return out

    def counts(self) -> dict[str, int]:
        """Numbers of documents (all, indexed, too short), similarity rows, chunk occurrences."""
        c = self.conn
        n_docs, n_chunks, n_words = c.execute(
            "SELECT COUNT(*), COALESCE(SUM(n_chunks), 0), COALESCE(SUM(n_words), 0) FROM documents"
        ).fetchone()
        too_short = c.execute(
            "SELECT COUNT(*) FROM documents WHERE status = 'too_short'"
        ).fetchone()[0]
        rows = c.execute("SELECT COUNT(*) FROM similarity").fetchone()[0]
        return {
            "documents": n_docs,
            "too_short": too_short,
            "chunk_sets_total": n_chunks,
            "words": n_words,
            "similarity_rows": rows,
        }

    # --- similarity -----------------------------------------------------------------------
    _PAIR_SQL = (
        "SELECT a.key, b.key, s.similarity, s.shared, a.n_chunks, b.n_chunks, COALESCE(q.reverse,"
        " s.shared) FROM similarity s JOIN documents a ON a.doc_id = s.doc JOIN documents b ON"
        " b.doc_id = s.other LEFT JOIN quoted_reverse q ON q.doc = s.doc AND q.other = s.other"
    )

    def pairs_of(self, key: str, min_similarity: float = 0.0) -> list[PairRow]:
        """Stored rows of one document (``doc = key``), best first."""
        doc = self.document(key)
        rows = self.conn.execute(
            self._PAIR_SQL + " WHERE s.doc = ? AND s.similarity >= ?"
            " ORDER BY s.similarity DESC, b.key",
            (doc.doc_id, min_similarity),
        ).fetchall()
        return [self._pair(r) for r in rows]

    def _pair(self, r: tuple[Any, ...]) -> PairRow:
        """A stored row as a :class:`PairRow`; a value outside its domain (similarity outside
        0..100 percent, more shared chunks than the document has) is damage, never output."""
        row = PairRow(*r)
        if not 0.0 <= row.similarity <= 100.0 + 1e-9 or not 0 <= row.shared <= row.doc_chunks:
            raise IndexDamagedError(
                f"the catalog {self.path} holds an impossible similarity row: {row.doc!r} -> "
                f"{row.other!r} {row.similarity} % with {row.shared} shared of "
                f"{row.doc_chunks} chunks; run `simdask check {self.path.parent}`, then restore "
                "the index folder from a backup or rebuild it (`simdask update INDEX SOURCE... "
                "--rebuild`)"
            )
        return row

    def all_pairs(self, min_similarity: float = 0.0) -> Iterator[PairRow]:
        """All stored directed rows, best first."""
        cur = self.conn.execute(
            self._PAIR_SQL + " WHERE s.similarity >= ? ORDER BY s.similarity DESC, a.key, b.key",
            (min_similarity,),
        )
        for r in cur:
            yield self._pair(r)

    def pair_rows(self, min_similarity: float = 0.0, key: str | None = None) -> list[PairRow]:
        """Stored directed rows of which either direction is at least ``min_similarity``
        percent (the reverse from the shared count), all or those touching ``key`` (as ``doc``
        or as ``other``): what :func:`simdask.read.undirected_pairs.undirected` makes pairs of."""
        where = f" WHERE (s.similarity >= ? OR {REVERSE} >= ?)"
        args: tuple[Any, ...] = (min_similarity, min_similarity)
        if key is not None:
            doc = self.document(key)
            where += " AND (s.doc = ? OR s.other = ?)"
            args += (doc.doc_id, doc.doc_id)
        rows = self.conn.execute(self._PAIR_SQL + where, args).fetchall()
        return [self._pair(r) for r in rows]
