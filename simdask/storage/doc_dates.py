"""When documents came into an index (issue 31 items 9 and 13): each document's first-indexed
and last-changed times, and which documents a committed run added or modified. Read-only SQL,
kept in storage so that no SQL is written outside it. Times are seconds since the epoch (UTC).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from simdask.storage.sql import connection, rows_in

__all__ = ["document_dates", "run_documents"]


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
