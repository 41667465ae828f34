"""A full disk during a run, as one clear error: where, how much is free, about how much the
run needs (the run is not committed; the index keeps its previous generation)."""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from simdask.errors import REPAIR_HINT, DiskFullError, IndexDamagedError

__all__ = [
    "CATALOG_ROOM",
    "catalog_error",
    "disk_full",
    "estimate_run_bytes",
    "free_bytes",
    "is_disk_full",
]

#: bytes SQLite needs free beside the catalog to open it (its ``-wal`` and ``-shm`` files,
#: created even by a reader; 32 KiB of shared memory and the log's first pages): below this,
#: an I/O error from the catalog means a full disk, not damage
CATALOG_ROOM = 1 << 20


def is_disk_full(error: BaseException | None) -> bool:
    """Whether ``error`` (or an exception it was raised from) means the disk is full:
    ``OSError`` ENOSPC/EDQUOT, or SQLite's "database or disk is full"."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if isinstance(error, sqlite3.OperationalError) and "disk is full" in str(error):
            return True
        error = error.__cause__ or error.__context__
    return False


def estimate_run_bytes(shard_bytes: int, source_paths: Iterable[str]) -> int:
    """About the bytes a run writes beside the current index (a rough upper bound): a new
    generation of the shards (``shard_bytes``, the current one's size, as each changed shard
    is rewritten) plus 3 bytes per byte of the sources read (the new postings, ~12 bytes per
    word of ~6 bytes, in the shards and the work folder's chunk files, and the text packs)."""
    total = 0
    for p in set(source_paths):
        try:
            total += os.stat(p).st_size
        except OSError:
            continue
    return shard_bytes + 3 * total


def free_bytes(path: Path) -> int:
    """Free bytes on the filesystem of ``path`` (0 if it cannot be read)."""
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return 0


def _fmt(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def disk_full(
    error: BaseException, index_path: Path, needed: int, free_at_start: int, unchanged: str
) -> DiskFullError | None:
    """The :class:`DiskFullError` for ``error`` if it means the disk is full, else None.
    ``needed``: about the bytes the run writes (:func:`estimate_run_bytes`); the run filled
    the ``free_at_start`` bytes, so it needs more than that; ``unchanged`` says what state the
    index keeps (what the run wrote has been removed again)."""
    if not is_disk_full(error):
        return None
    where = getattr(error, "filename", None) or index_path
    if needed > free_at_start:
        need = f"about {_fmt(needed)} free (at least {_fmt(needed - free_at_start)} more)"
    else:  # the estimate was too low (e.g. a file system charging whole blocks per file)
        need = f"more than {_fmt(free_at_start)} free"
    return DiskFullError(
        f"disk full writing {where}: the run filled the {_fmt(free_at_start)} free on the "
        f"filesystem of {index_path} and needs {need}: free space or put the index on another "
        f"disk; {unchanged}"
    )


def catalog_error(catalog: Path, error: sqlite3.DatabaseError) -> DiskFullError | IndexDamagedError:
    """The error for an SQLite failure on the catalog file ``catalog``: a full disk (SQLite
    says so, or an I/O error while less than :data:`CATALOG_ROOM` bytes are free on its
    filesystem: opening a WAL database creates files beside it) is :class:`DiskFullError`,
    one line naming the path and the space needed, never "damaged"; anything else is
    :class:`IndexDamagedError`."""
    free = free_bytes(catalog.parent)
    io = isinstance(error, sqlite3.OperationalError) and "disk I/O error" in str(error)
    if is_disk_full(error) or (io and free < CATALOG_ROOM):
        return DiskFullError(
            f"disk full: SQLite cannot use the catalog {catalog} ({error}) with {_fmt(free)} "
            f"free on the filesystem of {catalog.parent}: it needs about {_fmt(CATALOG_ROOM)} "
            "free there (for its write-ahead log and shared-memory files); free space on that "
            "disk and run the command again (nothing was changed)"
        )
    return IndexDamagedError(
        f"the catalog {catalog} is damaged (SQLite: {error}); run `simdask check "
        f"{catalog.parent}`, then {REPAIR_HINT}"
    )
