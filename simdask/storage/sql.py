"""The catalog's SQLite connection for the storage modules that query it.

Only ``storage/`` writes SQL. Its query functions take either a
:class:`~simdask.storage.catalog.Catalog` (what code outside storage passes) or a bare
``sqlite3.Connection`` (the storage modules among themselves, and tests on an in-memory
database)."""

from __future__ import annotations

import sqlite3
from typing import Any

__all__ = ["connection"]


def connection(db: Any) -> sqlite3.Connection:
    """The SQLite connection of ``db``: a Catalog's ``conn``, or ``db`` itself."""
    return getattr(db, "conn", db)
