"""The catalog's SQLite connection for the storage modules that query it.

Only ``storage/`` writes SQL. Its query functions take either a
:class:`~simdask.storage.catalog.Catalog` (what code outside storage passes) or a bare
``sqlite3.Connection`` (the storage modules among themselves, and tests on an in-memory
database)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["connection", "rows_in"]

#: values per ``IN (...)`` list (SQLite's default limit on variables is 32,766)
BATCH = 5000


def connection(db: Any) -> sqlite3.Connection:
    """The SQLite connection of ``db``: a Catalog's ``conn``, or ``db`` itself."""
    return getattr(db, "conn", db)


def rows_in(db: Any, sql: str, values: Sequence[Any]) -> Iterator[tuple]:
    """The rows of ``sql`` run once per batch of ``values``, where ``sql`` holds one ``{in}``
    that becomes ``(?, ?, ...)`` for the batch: ``"SELECT key FROM documents WHERE doc_id IN
    {in}"``. Like one ``IN`` over all values, a value given twice matches once. Rows come
    batch by batch, in SQLite's order within each batch."""
    conn, values = connection(db), list(dict.fromkeys(values))
    for i in range(0, len(values), BATCH):
        part = values[i : i + BATCH]
        yield from conn.execute(sql.format(**{"in": f"({','.join('?' * len(part))})"}), part)
