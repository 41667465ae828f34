"""Reading the stored similarity rows in batches, for the exports of
:mod:`simdask.read.result_export` (the SQL stays in ``storage/``): the rows best first, a batch at a
time, each checked against its domain; the doc-ID bounds a partitioned reader splits; one
partition read from the catalog file by a task."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from simdask.errors import ConfigError, IndexDamagedError
from simdask.storage.sql import connection

__all__ = ["checked_row", "doc_id_bounds", "pair_batches", "partition_rows"]

# the seventh column: ``other``'s chunks in ``doc`` where quotations make the two directions
# differ (the ``quoted_reverse`` table, docs/term.md), else the row's own count
_SQL = (
    "SELECT a.key, b.key, s.similarity, s.shared, a.n_chunks, b.n_chunks,"
    " COALESCE(q.reverse, s.shared) FROM similarity s"
    " JOIN documents a ON a.doc_id = s.doc JOIN documents b ON b.doc_id = s.other"
    " LEFT JOIN quoted_reverse q ON q.doc = s.doc AND q.other = s.other"
    " WHERE s.similarity >= ?"
)
_ORDER = " ORDER BY s.similarity DESC, a.key, b.key"


def checked_row(r: tuple[Any, ...], where: Any) -> tuple[Any, ...]:
    """A row ``(doc, other, similarity, shared, doc_chunks, other_chunks, reverse_shared)``
    whose values are in their domain; otherwise :class:`IndexDamagedError` (damage, never
    output)."""
    if not 0.0 <= r[2] <= 100.0 + 1e-9 or not 0 <= r[3] <= r[4]:
        raise IndexDamagedError(
            f"the catalog {where} holds an impossible similarity row: {r[0]!r} -> {r[1]!r} "
            f"{r[2]} % with {r[3]} shared of {r[4]} chunks; run `simdask check` on the index"
        )
    return r


def pair_batches(
    db: Any, min_similarity: float, size: int, doc_range: tuple[int, int] | None = None
) -> Iterator[list[tuple[Any, ...]]]:
    """The stored directed rows (of the documents with doc IDs in ``doc_range``, or all) of at
    least ``min_similarity`` percent, best first, ``size`` at a time from one SQL cursor
    (unchecked: :func:`checked_row`)."""
    where, args = "", ()  # type: tuple[str, tuple[int, ...]]
    if doc_range is not None:
        where, args = " AND s.doc >= ? AND s.doc < ?", doc_range
    cur = connection(db).execute(_SQL + where + _ORDER, (min_similarity, *args))
    while rows := cur.fetchmany(size):
        yield rows


def doc_id_bounds(db: Any) -> tuple[int, int]:
    """``(1 + the largest doc ID, similarity rows)`` of the catalog."""
    conn = connection(db)
    top = conn.execute("SELECT COALESCE(MAX(doc_id), 0) + 1 FROM documents").fetchone()[0]
    rows = conn.execute("SELECT COUNT(*) FROM similarity").fetchone()[0]
    return int(top), int(rows)


def partition_rows(
    catalog: str, generation: int, doc_range: tuple[int, int], min_similarity: float, size: int
) -> list[tuple[Any, ...]]:
    """The checked rows of the documents with doc IDs in ``doc_range``, read from the catalog
    file ``catalog`` (read-only) if it is still at ``generation``; else :class:`ConfigError`."""
    conn = sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)
    try:
        found = conn.execute("SELECT value FROM meta WHERE name = 'generation'").fetchone()
        if found is None or int(found[0]) != generation:
            raise ConfigError(
                f"the index at {Path(catalog).parent} was updated after pairs_frame() was "
                f"made (generation {generation}, now {found and found[0]}): make the frame again"
            )
        batches = pair_batches(conn, min_similarity, size, doc_range)
        return [checked_row(r, catalog) for b in batches for r in b]
    finally:
        conn.close()
