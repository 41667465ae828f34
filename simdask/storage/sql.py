"""The catalog's SQLite connection for the storage modules that query it.

Only ``storage/`` writes SQL. Its query functions take either a
:class:`~simdask.storage.catalog.Catalog` (what code outside storage passes) or a bare
``sqlite3.Connection`` (the storage modules among themselves, and tests on an in-memory
database)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from simdask.errors import SimdaskError

__all__ = ["connection", "insert_values", "rows_in"]

#: values per ``IN (...)`` list (SQLite's default limit on variables is 32,766)
BATCH = 5000
#: bound values per multi-row ``INSERT`` (SQLite's smallest build limit on variables: 999)
VARIABLES = 999


def connection(db: Any) -> sqlite3.Connection:
    """The SQLite connection of ``db``: a Catalog's ``conn``, or ``db`` itself."""
    return getattr(db, "conn", db)


def rows_in(db: Any, sql: str, values: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
    """The rows of ``sql`` run once per batch of ``values``, where ``sql`` holds one ``{in}``
    that becomes ``(?, ?, ...)`` for the batch: ``"SELECT key FROM documents WHERE doc_id IN
    {in}"``. Like one ``IN`` over all values, a value given twice matches once. Rows come
    batch by batch, in SQLite's order within each batch."""
    conn, values = connection(db), list(dict.fromkeys(values))
    for i in range(0, len(values), BATCH):
        part = values[i : i + BATCH]
        yield from conn.execute(sql.format(**{"in": f"({','.join('?' * len(part))})"}), part)


def insert_values(db: Any, head: str, columns: Sequence[list[Any]], row: str | None = None) -> int:
    """Insert the rows ``zip(*columns)`` with ``head`` (``"INSERT INTO t (a, b)"``), as
    multi-row ``VALUES`` statements of up to ``VARIABLES // len(columns)`` rows each. Like
    ``executemany`` over the rows, in their order (under ``OR REPLACE`` a later row of a key
    replaces an earlier one), at less than half its cost per row: the statement is stepped
    once per batch instead of once per row. ``row``: the template of one row, with one ``?``
    per column (default ``(?, ?, ...)``). Returns the number of rows."""
    conn, width = connection(db), len(columns)
    row = row or f"({', '.join('?' * width)})"
    if row.count("?") != width:
        raise SimdaskError(
            f"expected {width} placeholders in the row {row!r}, found {row.count('?')}"
        )
    n = len(columns[0]) if width else 0
    if any(len(col) != n for col in columns):
        raise SimdaskError(f"expected columns of equal length, found {[len(c) for c in columns]}")
    flat: list[Any] = [None] * (n * width)
    for j, col in enumerate(columns):
        flat[j::width] = col
    per = max(1, VARIABLES // width)
    full = f"{head} VALUES {', '.join([row] * per)}"
    for i in range(0, n - n % per, per):
        conn.execute(full, flat[i * width : (i + per) * width])
    if n % per:
        conn.execute(f"{head} VALUES {', '.join([row] * (n % per))}", flat[(n - n % per) * width :])
    return n
