"""Which documents a run adds, modifies and deletes, by key (for the run summary), read from
the catalog before the run commits."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simdask.storage.sql import connection, rows_in

if TYPE_CHECKING:
    from simdask.storage.commit import RunChanges

__all__ = ["changed_keys"]


def changed_keys(conn: Any, changes: RunChanges) -> dict[str, list[str]]:
    """``{"added": [...], "modified": [...], "deleted": [...]}``: keys of the documents the
    uncommitted run ``changes`` (a :class:`~simdask.storage.commit.RunChanges`) adds (key not
    in the catalog), modifies (content hash differs) and deletes, each sorted. ``conn``: the
    catalog (or its connection), still at the state before the run."""
    conn = connection(conn)
    upserted = {d.key: d.content_hash for d in changes.upserted}
    sql = "SELECT key, content_hash FROM documents WHERE key IN {in}"
    old: dict[str, str] = dict(rows_in(conn, sql, list(upserted)))
    if changes.replace_all:
        gone = [r[0] for r in conn.execute("SELECT key FROM documents")]
    else:
        sql = "SELECT key FROM documents WHERE doc_id IN {in}"
        gone = [r[0] for r in rows_in(conn, sql, [int(d) for d in changes.deleted])]
    return {
        "added": sorted(k for k in upserted if k not in old),
        "modified": sorted(k for k, h in upserted.items() if k in old and old[k] != h),
        "deleted": sorted(k for k in gone if k not in upserted),
    }
