"""The SQLite catalog: documents, runs, per-file errors, the similarity table and index metadata.

Everything a run changes is committed in :meth:`Catalog.commit_run`, one transaction that
also records the new current generation (DESIGN §2).
"""

from __future__ import annotations

import dataclasses
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

from simdask.config import FORMAT_VERSION, READABLE_VERSIONS, IndexConfig
from simdask.errors import DocumentNotFoundError, IndexFormatError

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
CREATE INDEX IF NOT EXISTS similarity_other ON similarity (other);
"""

#: the segments of each chunk-ID range (its manifest) and the tombstones hiding postings of
#: removed or modified documents in older segments (:mod:`simdask.kernels.segments`);
#: ``ranges.dead``: estimated postings of the range hidden by tombstones
_SEGMENT_SCHEMA = """
CREATE TABLE IF NOT EXISTS segments (
    shard INTEGER NOT NULL,
    generation INTEGER NOT NULL,
    keys INTEGER NOT NULL,
    postings INTEGER NOT NULL,
    PRIMARY KEY (shard, generation)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tombstones (
    generation INTEGER NOT NULL, doc_id INTEGER NOT NULL, PRIMARY KEY (generation, doc_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ranges (shard INTEGER PRIMARY KEY, dead REAL NOT NULL);
"""


_DOC_COLS = (
    "doc_id, key, source, content_hash, n_chunks, n_words, status,"
    " text_pack, text_offset, text_length"
)


@dataclass(frozen=True)
class DocumentRow:
    """One indexed document as the catalog knows it."""

    doc_id: int
    key: str
    source: str
    content_hash: str
    n_chunks: int
    n_words: int
    status: str
    text_pack: str | None = None
    text_offset: int | None = None
    text_length: int | None = None


@dataclass(frozen=True)
class PairRow:
    """One directed similarity: ``doc`` is ``similarity`` percent similar to ``other``."""

    doc: str
    other: str
    similarity: float
    shared: int
    doc_chunks: int
    other_chunks: int

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


@dataclass
class RunChanges:
    """Everything one run changes in the catalog, committed by :meth:`Catalog.commit_run`.

    ``upserted``: ``(doc_id, key, source, content_hash, n_chunks, n_words, status, text_pack,
    text_offset, text_length)`` of new and modified documents; ``deleted``: doc IDs removed
    (their IDs become free). Similarity: rows *of* ``rows_replaced`` and rows *to*
    ``reverse_replaced`` are deleted, then ``rows`` (``doc, other, shared, percent`` arrays)
    inserted, then the lists of ``trim`` documents cut to ``top_k``. ``manifests``: the new
    segment list ``[(generation, keys, postings)]`` of each range this run changed;
    ``tombstones``: doc IDs whose older postings this run hides (at the run's generation);
    ``dead``: the new estimate of tombstoned postings of ranges whose estimate changed.
    ``replace_all``: a full build replacing everything.
    """

    upserted: list[tuple]
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
    tombstones: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int64))
    dead: dict[int, float] = dataclasses.field(default_factory=dict)


_REPLACED_TABLES = (
    "documents",
    "similarity",
    "free_ids",
    "shards",
    "segments",
    "tombstones",
    "ranges",
)


def _commit_segments(c: sqlite3.Connection, generation: int, ch: RunChanges) -> None:
    """The segment part of a commit: new manifests, tombstones and dead-posting estimates;
    tombstones older than every segment hide nothing any more and are dropped."""
    for shard, segs in sorted(ch.manifests.items()):
        c.execute("DELETE FROM segments WHERE shard = ?", (int(shard),))
        c.executemany(
            "INSERT INTO segments (shard, generation, keys, postings) VALUES (?, ?, ?, ?)",
            ((int(shard), int(g), int(k), int(p)) for g, k, p in segs),
        )
    c.executemany(
        "INSERT OR IGNORE INTO tombstones (generation, doc_id) VALUES (?, ?)",
        ((int(generation), int(d)) for d in ch.tombstones),
    )
    c.executemany(
        "INSERT OR REPLACE INTO ranges (shard, dead) VALUES (?, ?)",
        ((int(s), float(v)) for s, v in sorted(ch.dead.items())),
    )
    c.execute("DELETE FROM tombstones WHERE generation <= (SELECT MIN(generation) FROM segments)")


def _temp_ids(c: sqlite3.Connection, name: str, ids: Iterable[int]) -> None:
    c.execute(f"CREATE TEMP TABLE IF NOT EXISTS {name} (id INTEGER PRIMARY KEY)")
    c.execute(f"DELETE FROM {name}")
    c.executemany(f"INSERT OR IGNORE INTO {name} (id) VALUES (?)", ((int(i),) for i in ids))


class Catalog:
    """A connection to ``catalog.sqlite`` of one index."""

    def __init__(self, path: str | Path, *, create: bool = False):
        self.path = Path(path)
        if not create and not self.path.exists():
            raise IndexFormatError(f"expected a catalog at {self.path}, found no file")
        self.conn = sqlite3.connect(str(self.path), timeout=60, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        if create:
            self.conn.executescript(_SCHEMA)
        if create or not self._has_table("segments"):
            self.conn.executescript(_SEGMENT_SCHEMA)

    def _has_table(self, name: str) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        return row is not None

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
        """Record format version, config and generation 0 in a new catalog."""
        with self.transaction() as c:
            c.executemany(
                "INSERT INTO meta (name, value) VALUES (?, ?)",
                [
                    ("format_version", str(FORMAT_VERSION)),
                    ("config", json.dumps(config.to_dict(), sort_keys=True)),
                    ("generation", "0"),
                    ("skipped_chunks", "0"),
                    ("index_id", uuid.uuid4().hex),
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
        """Check the format version and return the stored config."""
        version = self.meta("format_version")
        if version not in {str(v) for v in READABLE_VERSIONS}:
            raise IndexFormatError(
                f"index at {self.path.parent} has format version {version!r}; "
                f"this simdask reads versions {', '.join(map(str, READABLE_VERSIONS))}"
            )
        raw = self.meta("config")
        if raw is None:
            raise IndexFormatError(f"index at {self.path.parent} has no stored config")
        return IndexConfig.from_dict(json.loads(raw))

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
        return int(self.meta("generation") or 0)

    # --- runs -----------------------------------------------------------------------------
    def start_run(self) -> int:
        """Record a started run; returns its ID."""
        with self.transaction() as c:
            cur = c.execute(
                "INSERT INTO runs (started_at, status) VALUES (?, 'running')", (time.time(),)
            )
            return int(cur.lastrowid)

    def fail_run(self, run_id: int, message: str) -> None:
        """Mark a run as failed (nothing else changes)."""
        with self.transaction() as c:
            c.execute(
                "UPDATE runs SET status = 'failed', finished_at = ?, summary = ? WHERE run_id = ?",
                (time.time(), json.dumps({"error": message}), run_id),
            )

    def commit_run(self, run_id: int, generation: int, ch: RunChanges, summary: dict) -> None:
        """Commit everything a run changed in one transaction (see :class:`RunChanges`)."""
        now = time.time()
        doc, other, shared, sim = ch.rows
        with self.transaction() as c:
            if ch.replace_all:
                for table in _REPLACED_TABLES:
                    c.execute(f"DELETE FROM {table}")
            _temp_ids(c, "t_rows_of", ch.rows_replaced)
            _temp_ids(c, "t_rows_to", ch.reverse_replaced)
            _temp_ids(c, "t_trim", ch.trim)
            c.execute("DELETE FROM similarity WHERE doc IN (SELECT id FROM t_rows_of)")
            c.execute("DELETE FROM similarity WHERE other IN (SELECT id FROM t_rows_to)")
            c.executemany("DELETE FROM documents WHERE doc_id = ?", ((int(d),) for d in ch.deleted))
            c.executemany(
                "INSERT OR IGNORE INTO free_ids (doc_id) VALUES (?)",
                ((int(d),) for d in ch.deleted),
            )
            c.executemany(
                "INSERT OR REPLACE INTO documents (doc_id, key, source, content_hash, n_chunks,"
                " n_words, status, text_pack, text_offset, text_length, added_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                " COALESCE((SELECT added_at FROM documents WHERE doc_id = ?), ?), ?)",
                ((*d, d[0], now, now) for d in ch.upserted),
            )
            c.executemany("DELETE FROM free_ids WHERE doc_id = ?", ((d[0],) for d in ch.upserted))
            c.executemany(
                "INSERT OR REPLACE INTO similarity (doc, other, shared, similarity)"
                " VALUES (?, ?, ?, ?)",
                zip(doc.tolist(), other.tolist(), shared.tolist(), sim.tolist(), strict=True),
            )
            c.execute(
                "DELETE FROM similarity WHERE (doc, other) IN (SELECT doc, other FROM ("
                " SELECT doc, other, ROW_NUMBER() OVER (PARTITION BY doc"
                "  ORDER BY similarity DESC, other ASC) AS rn"
                " FROM similarity WHERE doc IN (SELECT id FROM t_trim)) WHERE rn > ?)",
                (ch.top_k,),
            )
            _commit_segments(c, generation, ch)
            c.executemany(
                "INSERT INTO errors (run_id, key, kind, message) VALUES (?, ?, ?, ?)",
                ((run_id, *e) for e in ch.errors),
            )
            c.execute(
                "UPDATE runs SET status = 'committed', finished_at = ?, generation = ?,"
                " summary = ? WHERE run_id = ?",
                (now, generation, json.dumps(summary, sort_keys=True), run_id),
            )
            c.execute("UPDATE meta SET value = ? WHERE name = 'generation'", (str(generation),))
            c.execute(
                "INSERT OR REPLACE INTO meta (name, value) VALUES ('skipped_chunks', ?)",
                (str(int(ch.skipped_chunks)),),
            )
            if ch.config is not None:
                c.execute(
                    "UPDATE meta SET value = ? WHERE name = 'config'",
                    (json.dumps(ch.config.to_dict(), sort_keys=True),),
                )
            for t in ("t_rows_of", "t_rows_to", "t_trim"):
                c.execute(f"DROP TABLE {t}")

    def shard_generations(self) -> dict[int, int]:
        """The newest segment generation of each range (a range changes exactly when this
        changes)."""
        return dict(self.conn.execute("SELECT shard, MAX(generation) FROM segments GROUP BY shard"))

    def segments(self) -> dict[int, list[tuple[int, int, int]]]:
        """The committed manifest: ``{range: [(generation, keys, postings)]}``, oldest first."""
        out: dict[int, list[tuple[int, int, int]]] = {}
        rows = self.conn.execute(
            "SELECT shard, generation, keys, postings FROM segments ORDER BY shard, generation"
        )
        for s, g, k, p in rows:
            out.setdefault(s, []).append((g, k, p))
        return out

    def tombstones(self) -> tuple[np.ndarray, np.ndarray]:
        """``(doc IDs, generations)`` of the tombstones still in force (int64 arrays)."""
        rows = self.conn.execute("SELECT doc_id, generation FROM tombstones").fetchall()
        arr = np.array(rows, dtype=np.int64).reshape(-1, 2)
        return arr[:, 0], arr[:, 1]

    def dead_postings(self) -> dict[int, float]:
        """Estimated postings hidden by tombstones, per range."""
        return dict(self.conn.execute("SELECT shard, dead FROM ranges"))

    def legacy_shards(self) -> dict[int, int]:
        """``{shard: generation}`` of an index written before segments (format of the
        ``shards`` table), to migrate."""
        if not self._has_table("shards"):
            return {}
        return dict(self.conn.execute("SELECT shard, generation FROM shards").fetchall())

    def migrate_shards(self, manifests: dict[int, list[tuple[int, int, int]]]) -> None:
        """Record the segments of a pre-segment index (one per range) and empty ``shards``."""
        with self.transaction() as c:
            for shard, segs in manifests.items():
                c.executemany(
                    "INSERT OR REPLACE INTO segments (shard, generation, keys, postings)"
                    " VALUES (?, ?, ?, ?)",
                    ((int(shard), int(g), int(k), int(p)) for g, k, p in segs),
                )
            c.execute("DELETE FROM shards")
            c.execute(
                "UPDATE meta SET value = ? WHERE name = 'format_version'", (str(FORMAT_VERSION),)
            )

    def abandon_stale_runs(self) -> int:
        """Mark runs left 'running' by a killed process as 'abandoned' (call under the lock)."""
        with self.transaction() as c:
            return c.execute(
                "UPDATE runs SET status = 'abandoned' WHERE status = 'running'"
            ).rowcount

    def known_documents(self) -> dict[str, tuple[int, str, str]]:
        """``key -> (doc_id, content_hash, source)`` of every document."""
        rows = self.conn.execute("SELECT key, doc_id, content_hash, source FROM documents")
        return {k: (d, h, s) for k, d, h, s in rows}

    def allocate_ids(self, n: int) -> list[int]:
        """``n`` doc IDs for new documents: recycled free IDs first (lowest first), then new ones.

        Nothing is reserved: the IDs become used when the run commits.
        """
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
        """Documents not in ``changed`` whose full ``top_k`` list holds a row to a changed one.

        Such a list may have pruned a match that now belongs in it, so it is recomputed.
        """
        with self.transaction() as c:
            _temp_ids(c, "t_changed", changed)
            rows = c.execute(
                "SELECT s.doc FROM similarity s WHERE s.doc IN ("
                " SELECT DISTINCT doc FROM similarity WHERE other IN (SELECT id FROM t_changed))"
                " AND s.doc NOT IN (SELECT id FROM t_changed)"
                " GROUP BY s.doc HAVING COUNT(*) >= ?",
                (top_k,),
            ).fetchall()
            c.execute("DROP TABLE t_changed")
        return np.array(sorted(r[0] for r in rows), dtype=np.uint32)

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
            "summary": json.loads(row[4] or "{}"),
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
        "SELECT a.key, b.key, s.similarity, s.shared, a.n_chunks, b.n_chunks FROM similarity s"
        " JOIN documents a ON a.doc_id = s.doc JOIN documents b ON b.doc_id = s.other"
    )

    def pairs_of(self, key: str, min_similarity: float = 0.0) -> list[PairRow]:
        """Stored rows of one document (``doc = key``), best first."""
        doc = self.document(key)
        rows = self.conn.execute(
            self._PAIR_SQL + " WHERE s.doc = ? AND s.similarity >= ?"
            " ORDER BY s.similarity DESC, b.key",
            (doc.doc_id, min_similarity),
        ).fetchall()
        return [PairRow(*r) for r in rows]

    def all_pairs(self, min_similarity: float = 0.0) -> Iterator[PairRow]:
        """All stored directed rows, best first."""
        cur = self.conn.execute(
            self._PAIR_SQL + " WHERE s.similarity >= ? ORDER BY s.similarity DESC, a.key, b.key",
            (min_similarity,),
        )
        for r in cur:
            yield PairRow(*r)
