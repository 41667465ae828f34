"""Reclaiming the catalog's free pages (issue 30 item 13).

Deleting rows (documents removed, similarity lists replaced, checksums of old segments) leaves
free pages in ``catalog.sqlite`` that SQLite reuses but never gives back to the filesystem: a
catalog of 65 MB was found half free. Garbage collection (with the writer lock) calls
:func:`vacuum_if_it_pays` after each run: when at least :data:`FREE_SHARE` of the file and at
least :data:`FREE_MIN` bytes are free pages, it runs ``VACUUM`` (the whole database rewritten,
then the write-ahead log truncated) and reports the bytes it freed. ``VACUUM`` needs room for
a copy of the catalog; with less than twice the catalog's size free on its disk, or when a
reader holds it busy, it is left for the next run. Readers in other processes keep reading
their snapshot meanwhile (WAL).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from simdask.storage.diskspace import free_bytes
from simdask.storage.sql import connection

__all__ = ["FREE_MIN", "FREE_SHARE", "free_pages", "vacuum_if_it_pays"]

#: the share of the catalog's pages that must be free before a VACUUM pays
FREE_SHARE = 0.25
#: and the bytes of free pages at least (small catalogs are not worth rewriting)
FREE_MIN = 8 << 20


def free_pages(db: Any) -> tuple[int, int, int]:
    """``(page size in bytes, pages in the file, free pages)`` of an open catalog."""
    c = connection(db)
    size = int(c.execute("PRAGMA page_size").fetchone()[0])
    pages = int(c.execute("PRAGMA page_count").fetchone()[0])
    free = int(c.execute("PRAGMA freelist_count").fetchone()[0])
    return size, pages, free


def vacuum_if_it_pays(db: Any, path: Path, share: float = FREE_SHARE, least: int = FREE_MIN) -> int:
    """``VACUUM`` the catalog ``db`` (file ``path``) when its free pages are at least ``share``
    of it and ``least`` bytes (see the module docstring); returns the bytes the file shrank
    by (0: not due, no room, or busy). Call outside a transaction, with the writer lock."""
    size, pages, free = free_pages(db)
    if free * size < least or free < share * pages:
        return 0
    if free_bytes(path.parent) < 2 * pages * size:
        return 0  # VACUUM writes the whole catalog again: next time, when there is room
    c = connection(db)
    try:
        c.execute("VACUUM")
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.OperationalError:  # busy (a reader mid-transaction) or the disk filled
        return 0
    return (pages - free_pages(db)[1]) * size
