"""When each document was first indexed, and its file's modification time (issue 31, item 13:
"who was first"), in the catalog table ``document_dates``, by key.

A row is written after the commit of the run that adds a key (its ``first_indexed``, seconds
since the epoch, is then never changed: a later edit, a re-chunk or a rebuild keeps it) and
updated with the file's modification time (``modified``) by every run that reads a new version
of the file. A row outlives its document: a key indexed again after a removal keeps the date it
was first indexed. The table is created by the first write (an index made before it has none:
its documents read as undated). Written in its own transaction after a run's commit: a crash
between the two leaves the run's new documents undated, never a wrong date.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from simdask.storage.sql import connection, rows_in

__all__ = ["SCHEMA", "dates_of", "record_dates"]

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS document_dates ("
    "key TEXT PRIMARY KEY, first_indexed REAL NOT NULL, modified REAL)"
)


def record_dates(
    catalog: Any, when: float, keys: Iterable[str], modified: Mapping[str, float]
) -> None:
    """Record ``keys`` (added or modified by a run committed at ``when``, seconds since the
    epoch): a key without a row gets ``first_indexed = when``; every key gets its file's
    ``modified`` time when known (``modified``: by key; seconds since the epoch)."""
    conn = connection(catalog)
    rows = [(k, float(when), modified.get(k)) for k in keys]
    if not rows:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(SCHEMA)
        conn.executemany(
            "INSERT INTO document_dates (key, first_indexed, modified) VALUES (?, ?, ?)"
            " ON CONFLICT(key) DO UPDATE SET"
            " modified = COALESCE(excluded.modified, document_dates.modified)",
            rows,
        )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def dates_of(db: Any, keys: Iterable[str]) -> dict[str, tuple[float, float | None]]:
    """``{key: (first_indexed, modified or None)}`` of the keys that have a row (none in an
    index without the table)."""
    try:
        sql = "SELECT key, first_indexed, modified FROM document_dates WHERE key IN {in}"
        return {k: (f, m) for k, f, m in rows_in(db, sql, list(keys))}
    except sqlite3.OperationalError as e:
        if "no such table" in str(e):
            return {}
        raise
