"""Checksums of the files a run writes (shard array files, text packs), kept in the catalog.

Each committed file has a row ``(name, size, xxh3)`` in the catalog's ``files`` table:
``name`` relative to the index folder (``shards/gen-000003/shard-0007/doc_ids/c/0``,
``texts/r000003-b000001.pack``), ``size`` in bytes, ``xxh3`` the 64-bit XXH3 of the bytes as
16 hex digits. The rows of a run are written in the run's commit transaction (step
``commit.file_checksums``), which also drops the rows of files no longer current (shards of
replaced generations, packs no document points to), and records the table's own checksum
(:data:`DIGEST_META`), so that a damaged table is never taken for an index without checksums.
Readers hash a file the first time a process opens it (:mod:`simdask.storage.verified`;
then one ``stat`` while it is unchanged; a query's ``pread`` lookups verify only the blocks they
read against the segment's block checksum sidecars, :mod:`simdask.storage.block_sums`, which
are recorded here like every segment file); ``simdask check`` hashes everything. Shards
kept under a URL (``--shard-store``) are recorded as their upload hashed them
(:func:`uploaded_files`, from each shard's completion marker) and hashed by ``check`` only
(readers rely on the zstd checksum of every compressed chunk). Kept in this module so that it can
follow the shard storage format.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import xxhash

from simdask.errors import IndexDamagedError
from simdask.storage.sql import connection

__all__ = [
    "BLOCK",
    "DIGEST_META",
    "FILES_TABLE",
    "PACK_INDEX",
    "digest",
    "drop_stale",
    "pack_name",
    "record_digest",
    "recorded",
    "run_files",
    "segment_files",
    "shard_files",
    "shard_prefix",
    "table_digest",
    "uploaded_files",
]

#: the catalog table of checksums (created by the first commit that writes one)
FILES_TABLE = (
    "CREATE TABLE IF NOT EXISTS files (name TEXT PRIMARY KEY, size INTEGER NOT NULL,"
    " xxh3 TEXT NOT NULL)"
)
#: the documents' index by text pack (whether a pack is still used: one lookup)
PACK_INDEX = "CREATE INDEX IF NOT EXISTS documents_pack ON documents (text_pack)"
#: the ``meta`` row holding :func:`table_digest` of the ``files`` table (recorded by every
#: commit; an index without it was written before the table had a checksum)
DIGEST_META = "files_xxh3"
#: bytes read at a time when hashing (memory stays bounded for any file size)
BLOCK = 4 * 2**20


def digest(path: str | os.PathLike[str]) -> tuple[int, str]:
    """``(size in bytes, xxh3-64 as 16 hex digits)`` of a file, read in blocks of
    :data:`BLOCK` bytes."""
    h = xxhash.xxh3_64()
    size = 0
    with open(path, "rb") as f:
        while block := f.read(BLOCK):
            h.update(block)
            size += len(block)
    return size, h.hexdigest()


def shard_prefix(generation: int, shard: int) -> str:
    """The name prefix (relative to the index folder) of one shard's files."""
    return f"shards/gen-{generation:06d}/shard-{shard:04d}/"


def pack_name(pack: str) -> str:
    """The name (relative to the index folder) of a text pack."""
    return f"texts/{pack}"


def shard_files(shard_dir: Path, generation: int, shard: int) -> Iterator[tuple[str, Path]]:
    """``(name, path)`` of every file of a local shard directory, in sorted order."""
    prefix = shard_prefix(generation, shard)
    for p in sorted(shard_dir.rglob("*")):
        if p.is_file():
            yield prefix + p.relative_to(shard_dir).as_posix(), p


def run_files(
    store: Any,
    text_root: Path,
    shards: dict[int, int],
    packs: Iterable[str],
    others: Iterable[tuple[str, Path]] = (),
    hasher: Callable[[Path], tuple[int, str]] = digest,
) -> list[tuple[str, int, str]]:
    """The ``(name, size, xxh3)`` rows of the files one run wrote: the segments ``{range:
    generation}`` (one per range a run or compaction writes) of the shard ``store`` (a local
    one's hashed here; a URL store's as it recorded them at upload, :func:`uploaded_files`),
    the ``packs`` under ``text_root`` and the ``others`` ``(name, path)`` (LSH files).
    ``hasher``: :func:`digest`, or one that gives what it gives from digests taken ahead
    (:class:`~simdask.storage.digest_ahead.DigestsAhead`)."""
    rows = []
    shard_root = store.local_root
    if shard_root is not None:
        for shard, gen in sorted(shards.items()):
            d = shard_root / f"gen-{gen:06d}" / f"shard-{shard:04d}"
            rows += [(name, *hasher(p)) for name, p in shard_files(d, gen, shard)]
    rows += uploaded_files(store, shards)
    rows += [(pack_name(p), *hasher(text_root / p)) for p in sorted(set(packs))]
    return rows + [(name, *hasher(path)) for name, path in others]


def uploaded_files(store: Any, shards: dict[int, int]) -> list[tuple[str, int, str]]:
    """The ``(name, size, xxh3)`` rows of the segments ``{range: generation}`` of a URL shard
    store, as the store recorded them at upload (``store.recorded_files``; hashed from the
    bytes sent, none for a local store), named as local shard files are."""
    rows = []
    for shard, gen in sorted(shards.items()):
        prefix = shard_prefix(gen, shard)
        files = store.recorded_files(gen, shard)
        rows += [(prefix + name, size, x) for name, (size, x) in sorted(files.items())]
    return rows


def drop_stale(c: sqlite3.Connection) -> None:
    """Delete the rows of files no longer current: segment files of a (range, generation)
    the ``segments`` table does not name, packs no document points to. Inside the commit."""
    c.execute(
        "DELETE FROM files WHERE name LIKE 'shards/%' AND substr(name, 1, 29) NOT IN"
        " (SELECT printf('shards/gen-%06d/shard-%04d/', generation, shard) FROM segments)"
    )
    c.execute(PACK_INDEX)  # one indexed lookup per recorded pack, not a scan of documents
    c.execute(
        "DELETE FROM files WHERE name LIKE 'texts/%' AND NOT EXISTS"
        " (SELECT 1 FROM documents WHERE text_pack = substr(files.name, 7))"
    )


def table_digest(rows: Iterable[tuple[str, int, str]]) -> str:
    """The checksum of the checksum table: xxh3-64 (16 hex digits) of its rows ``(name, size,
    xxh3)`` in name order, kept in the catalog's ``meta`` as :data:`DIGEST_META`."""
    h = xxhash.xxh3_64()
    for name, size, xxh3 in sorted(rows):
        h.update(f"{name}\0{int(size)}\0{xxh3}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def record_digest(c: sqlite3.Connection) -> None:
    """Store :func:`table_digest` of the ``files`` table as it now is (inside the commit, after
    its rows changed)."""
    rows = c.execute("SELECT name, size, xxh3 FROM files").fetchall()
    c.execute(
        "INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", (DIGEST_META, table_digest(rows))
    )


def recorded(c: Any) -> dict[str, tuple[int, str]]:
    """``{name: (size, xxh3)}`` of every recorded file (empty for an index written before
    checksums were recorded: no ``files`` table and no :data:`DIGEST_META`).

    Raises :class:`~simdask.errors.IndexDamagedError` when the table cannot be read, is
    missing while its digest is recorded, or differs from its recorded digest: a checksum
    table that cannot be trusted is damage, never "an older index"."""
    c = connection(c)
    try:
        tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        want = c.execute("SELECT value FROM meta WHERE name = ?", (DIGEST_META,)).fetchone()
        if "files" not in tables:
            if want is None:
                return {}  # an index written before checksums were recorded
            raise _untrusted("its table of file checksums is missing")
        rows = c.execute("SELECT name, size, xxh3 FROM files").fetchall()
        out = {str(name): (int(size), str(xxh3)) for name, size, xxh3 in rows}
    except (sqlite3.DatabaseError, TypeError, ValueError) as e:
        raise _untrusted(f"its table of file checksums cannot be read ({e})") from None
    if want is not None and table_digest((n, s, x) for n, (s, x) in out.items()) != want[0]:
        raise _untrusted(
            f"its table of file checksums ({len(out)} rows) differs from the checksum "
            f"recorded for it ({DIGEST_META} {want[0]})"
        )
    return out


def _untrusted(what: str) -> IndexDamagedError:
    return IndexDamagedError(
        f"the catalog is damaged: {what}; run `simdask check INDEX` to list all damage, then "
        "restore the index folder from a backup, or rebuild it with "
        "`simdask update INDEX SOURCE... --rebuild`"
    )


def segment_files(
    recorded: dict[str, tuple[int, str]],
) -> dict[str, list[tuple[str, int, str]]]:
    """The recorded shard files grouped by segment: ``{shard_prefix: [(name, size in bytes,
    xxh3)]}`` (one pass over the rows; a reader checks a segment's few files without
    scanning every recorded file)."""
    out: dict[str, list[tuple[str, int, str]]] = {}
    for name, (size, xxh3) in recorded.items():
        if name.startswith("shards/"):
            cut = name.find("/", name.find("/", 7) + 1) + 1  # after shards/gen-G/shard-S/
            out.setdefault(name[:cut], []).append((name, size, xxh3))
    return out
