"""``simdask backup INDEX DEST``: a copy of one committed generation, taken while runs go on.

The catalog is copied first with SQLite's online backup (one read transaction: one committed
state, whatever a writer does meanwhile). That copy's ``files`` table names every file of
that state (segments, text packs, LSH files; :mod:`simdask.storage.checksums`) with its size
and xxh3; each is copied and hashed. Files are never changed once committed, only deleted by
garbage collection once newer generations no longer need them: a file gone before it was
copied means a newer generation was committed meanwhile, and the backup starts again from
that one (at most :data:`ATTEMPTS` times). The catalog is put in place last, so a DEST
without ``catalog.sqlite`` is an unfinished backup. No writer lock is taken: runs are never
blocked.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from simdask.errors import ConfigError, IndexDamagedError, IndexNotFoundError
from simdask.storage import checksums

__all__ = ["ATTEMPTS", "BackupResult", "backup_index"]

#: how many times a backup starts again after garbage collection removed a file it needed
ATTEMPTS = 5
_CATALOG = "catalog.sqlite"


@dataclass(frozen=True)
class BackupResult:
    """A finished backup: the generation copied, the files and bytes copied (besides the
    catalog), and how many attempts it took."""

    generation: int
    files: int
    bytes: int
    attempts: int


class _Gone(Exception):
    """A file of the snapshot was removed before it was copied (a newer generation)."""


def _snapshot_catalog(source: Path, target: Path) -> tuple[int, dict[str, tuple[int, str]]]:
    """Copy the catalog at ``source`` to ``target`` as one committed state; returns its
    generation and its recorded files."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)  # all pages in one step: one read transaction, one state
            row = dst.execute("SELECT value FROM meta WHERE name = 'generation'").fetchone()
            store = dst.execute("SELECT value FROM meta WHERE name = 'shard_store'").fetchone()
            files = checksums.recorded(dst)
        finally:
            dst.close()
    finally:
        src.close()
    if store is not None and store[0]:
        raise ConfigError(
            f"the index keeps its shards at {store[0]}: back that store up with its own tools; "
            "simdask backup copies an index folder whose shards are inside it"
        )
    if not files:
        raise ConfigError(
            f"the index at {source.parent} records no file checksums (written by an older "
            "simdask): run `simdask update` on it once, then back it up"
        )
    return int(row[0]) if row else 0, files


def _copy_files(index: Path, dest: Path, files: dict[str, tuple[int, str]]) -> int:
    """Copy and verify every file of the snapshot; raises :class:`_Gone` for a file garbage
    collection removed, :class:`IndexDamagedError` for one that differs from its record."""
    total = 0
    for name, (size, xxh3) in sorted(files.items()):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copyfile(index / name, target)
        except FileNotFoundError:
            raise _Gone(name) from None
        found = checksums.digest(target)
        if found != (size, xxh3):
            raise IndexDamagedError(
                f"{index / name}: expected {size} bytes with xxh3 {xxh3} as recorded, found "
                f"{found[0]} bytes with xxh3 {found[1]}; run `simdask check {index}`"
            )
        total += size
    return total


def backup_index(index: str | os.PathLike[str], dest: str | os.PathLike[str]) -> BackupResult:
    """Copy the last committed generation of the index folder ``index`` to the new (or
    empty) folder ``dest``; ``dest`` then opens as that index (``simdask check`` clean)."""
    index, dest = Path(index), Path(dest)
    if not (index / _CATALOG).is_file():
        raise IndexNotFoundError(f"no simdask index at {index}: expected {index / _CATALOG}")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ConfigError(f"expected DEST to be a new or empty folder, found {dest} holding files")
    for attempt in range(1, ATTEMPTS + 1):
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        staged = dest / f".{_CATALOG}.partial"
        generation, files = _snapshot_catalog(index / _CATALOG, staged)
        try:
            nbytes = _copy_files(index, dest, files)
        except _Gone:
            continue  # a newer generation was committed and collected: start again
        os.replace(staged, dest / _CATALOG)
        return BackupResult(generation, len(files), nbytes, attempt)
    raise ConfigError(
        f"could not copy one generation of {index} in {ATTEMPTS} attempts: runs committed "
        "and collected its files faster than they could be copied; try again between runs"
    )
