"""When documents came into an index (issue 31 items 9 and 13), seconds since the epoch (UTC).

* From the ``documents`` table: each document's first-indexed and last-changed times, and
  which documents a committed run added or modified (:func:`document_dates`,
  :func:`run_documents`; the batch overview).
* The table ``document_dates``, by key ("who was first"): when a key was first indexed and its
  file's modification time. A row is written after the commit of the run that adds a key (its
  ``first_indexed`` is then never changed: a later edit, a re-chunk or a rebuild keeps it) and
  updated with the file's modification time (``modified``) by every run that reads a new
  version of the file. A row outlives its document: a key indexed again after a removal keeps
  the date it was first indexed. The table is created by the first write (an index made before
  it has none: its documents read as undated). Written in its own transaction after a run's
  commit: a crash between the two leaves the run's new documents undated, never a wrong date.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from simdask.storage.sql import connection, rows_in

__all__ = ["SCHEMA", "dates_of", "document_dates", "record_dates", "run_documents"]

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


def document_dates(db: Any, keys: Iterable[str] | None = None) -> dict[str, tuple[float, float]]:
    """``{key: (added_at, updated_at)}`` of every document (or of those of ``keys`` that
    exist): when it was first indexed and when it was last added or modified (seconds since
    the epoch)."""
    sql = "SELECT key, added_at, updated_at FROM documents"
    conn = connection(db)
    rows = (
        conn.execute(sql) if keys is None else rows_in(conn, sql + " WHERE key IN {in}", list(keys))
    )
    return {str(k): (float(a), float(u)) for k, a, u in rows}


def run_documents(db: Any, run_id: int | None = None) -> tuple[int | None, list[str]]:
    """``(run id, keys)``: the documents the committed run ``run_id`` (None: the last one that
    indexed documents) added or modified and that are still as it left them, by key. A run
    writes its documents with its commit time, so they are those whose ``updated_at`` is the
    run's ``finished_at``. ``(None, [])`` when there is no such run."""
    conn = connection(db)
    where = (
        "run_id = ?" if run_id is not None else ("json_extract(summary, '$.compaction') IS NULL")
    )
    args = (int(run_id),) if run_id is not None else ()
    row = conn.execute(
        f"SELECT run_id, finished_at FROM runs WHERE status = 'committed' AND {where}"
        " ORDER BY run_id DESC LIMIT 1",
        args,
    ).fetchone()
    if row is None:
        return None, []
    keys = conn.execute(
        "SELECT key FROM documents WHERE updated_at = ? ORDER BY key", (row[1],)
    ).fetchall()
    return int(row[0]), [str(k) for (k,) in keys]
