"""The catalog tables of per-range segments (DESIGN §3, issue 14): which segments make up each
chunk-ID range (its manifest), the tombstones hiding postings of removed or modified documents
in older segments, and the estimated postings they hide per range.

:class:`SegmentTables` is a part of :class:`~simdask.storage.catalog.Catalog` (its reads and
the migration of a format-1 index); the writes of a run are steps of its commit
(:mod:`simdask.storage.commit`).
"""

from __future__ import annotations

import sqlite3

import numpy as np

from simdask.config import FORMAT_VERSION

__all__ = ["SEGMENT_SCHEMA", "SEGMENT_TABLES", "SegmentTables"]

#: the segments of each chunk-ID range (its manifest) and the tombstones hiding postings of
#: removed or modified documents in older segments (:mod:`simdask.kernels.segment_merge`);
#: ``ranges.dead``: estimated postings of the range hidden by tombstones
SEGMENT_SCHEMA = """
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

#: the segment tables a full build empties
SEGMENT_TABLES = ("segments", "tombstones", "ranges")


class SegmentTables:
    """Reads of the segment tables (a mixin of :class:`~simdask.storage.catalog.Catalog`,
    which provides ``conn`` and ``transaction``)."""

    conn: sqlite3.Connection

    def _has_table(self, name: str) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        return row is not None

    def _ensure_segment_tables(self, create: bool) -> None:
        """Create the segment tables in a new catalog or one written before they existed."""
        if create or not self._has_table("segments"):
            self.conn.executescript(SEGMENT_SCHEMA)

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
        """``{shard: generation}`` of an index written before segments (format 1: the
        ``shards`` table), to migrate."""
        if not self._has_table("shards"):
            return {}
        return dict(self.conn.execute("SELECT shard, generation FROM shards").fetchall())

    def migrate_shards(self, manifests: dict[int, list[tuple[int, int, int]]]) -> None:
        """Record the segments of a format-1 index (one per range), empty ``shards`` and set
        the format version (the one migration path, 1 -> 2)."""
        with self.transaction() as c:  # type: ignore[attr-defined]
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
