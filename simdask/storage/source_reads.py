"""Read-only catalog queries about where documents came from: the indexed sources above and
below a path, a source's document under a path, and documents holding the same content as others.

They serve the writer's checks before a run (:mod:`simdask.write.collisions`: the same files
indexed twice through a parent and a child folder) and the run summary's list of identical
copies. Each takes the catalog (or its SQLite connection, :func:`simdask.storage.sql.connection`)
and uses the ``documents`` table's indexes (``key``, ``source``) where it can.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from simdask.storage.sql import connection, rows_in

__all__ = ["identical_copies", "key_under", "sources_above", "sources_below"]


def sources_above(db: Any, path: str) -> list[str]:
    """The indexed sources (resolved paths) that are folders holding ``path`` (a resolved
    absolute path), nearest first. Costs one indexed lookup per ancestor folder."""
    conn = connection(db)
    out: list[str] = []
    parent = os.path.dirname(path)
    while parent and parent != path:
        if conn.execute("SELECT 1 FROM documents WHERE source = ? LIMIT 1", (parent,)).fetchone():
            out.append(parent)
        path, parent = parent, os.path.dirname(parent)
    return out


def sources_below(db: Any, path: str) -> list[str]:
    """The indexed sources strictly inside the folder ``path`` (resolved), sorted: a range
    scan of the ``source`` index (``/`` is followed by ``0`` in code-point order)."""
    conn = connection(db)
    base = path.rstrip(os.sep) + os.sep
    rows = conn.execute(
        "SELECT DISTINCT source FROM documents WHERE source >= ? AND source < ? ORDER BY source",
        (base, base[:-1] + chr(ord(os.sep) + 1)),
    )
    return [r[0] for r in rows]


def key_under(db: Any, source: str, rel: str) -> str | None:
    """The key of a document of ``source`` read from the file ``rel`` inside it (keys of a
    folder's documents end with ``/`` + their path inside it; ``rel`` empty: the source is
    that file, any of its keys), or None when it has none."""
    conn = connection(db)
    if not rel:
        row = conn.execute(
            "SELECT key FROM documents WHERE source = ? ORDER BY key LIMIT 1", (source,)
        ).fetchone()
        return None if row is None else row[0]
    tail = "/" + rel.replace(os.sep, "/")
    row = conn.execute(
        "SELECT key FROM documents WHERE source = ? AND substr(key, -?) = ? ORDER BY key LIMIT 1",
        (source, len(tail), tail),
    ).fetchone()
    return None if row is None else row[0]


def identical_copies(db: Any, keys: Iterable[str]) -> list[tuple[str, str]]:
    """``(key, other key)`` for each of ``keys`` whose content hash another indexed document
    holds (the first such other key in key order), sorted: the same file (or JSONL text)
    indexed under two keys. Costs two indexed lookups per key: the writer that calls it
    creates the index of content hashes the first time (one scan of ``documents``, once)."""
    connection(db).execute(
        "CREATE INDEX IF NOT EXISTS documents_content_hash ON documents (content_hash)"
    )
    sql = "SELECT key, content_hash FROM documents WHERE key IN {in}"
    mine = dict(rows_in(db, sql, list(keys)))
    if not mine:
        return []
    holders: dict[str, list[str]] = {}
    sql = "SELECT content_hash, key FROM documents WHERE content_hash IN {in} ORDER BY key"
    for digest, key in rows_in(db, sql, sorted(set(mine.values()))):
        holders.setdefault(digest, []).append(key)
    out = []
    for key, digest in sorted(mine.items()):
        others = [k for k in holders.get(digest, []) if k != key]
        if others:
            out.append((key, others[0]))
    return out
