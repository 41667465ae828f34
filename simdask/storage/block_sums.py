"""Per-block checksums of a raw segment's large arrays (issue 30 item 3): a reader verifies only
the blocks it reads, not the whole file.

Beside the data file ``<array>/c/0`` of ``chunk_keys``, ``offsets`` and ``doc_ids`` a raw segment
holds ``<array>/blocks.xxh3``: the xxh3-64 of each :data:`BLOCK_BYTES`-byte block of the data
file (the last block may be shorter). The sidecar is written with the segment (same temporary
directory, so same fsync and rename: :func:`simdask.storage.durable.publish`), recorded in the
catalog's checksum table like every segment file (and so hashed whole by a reader before it is
trusted: 1/512 of the data), and removed with the segment.

Format: :data:`MAGIC` (8 bytes), the block size and the data file's size (two little-endian
uint64), then one little-endian uint64 per block. Pure computation and file formats; the
per-process bookkeeping of what was verified is :mod:`simdask.storage.verified`.
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path

import numpy as np
import xxhash

from simdask.errors import IndexFormatError

__all__ = [
    "BLOCK_ARRAYS",
    "BLOCK_BYTES",
    "MAGIC",
    "SIDECAR",
    "block_range",
    "block_sums",
    "file_block_sums",
    "read_sidecar",
    "sidecar_bytes",
    "sidecar_name",
    "write_sidecar",
]

#: bytes per checksummed block: 4 KiB, a page (a query's lookups hash ~1.4x the bytes they
#: read, 16 KiB blocks ~4.4x, 64 KiB ~8.8x; the sidecar is 1/512 of the data, hashed whole at
#: first open; measured in docs/benchmarks.md, "Verifying what is read")
BLOCK_BYTES = 4096
#: the first bytes of a sidecar
MAGIC = b"SDXXB\x00\x00\x01"
#: the sidecar's file name inside an array's directory
SIDECAR = "blocks.xxh3"
#: the arrays of a raw segment that get block checksums (those a query reads in pieces)
BLOCK_ARRAYS = ("chunk_keys", "offsets", "doc_ids")
_HEADER = len(MAGIC) + 16


def block_sums(data: bytes | memoryview | mmap.mmap, block: int = BLOCK_BYTES) -> np.ndarray:
    """The xxh3-64 (uint64) of each ``block``-byte block of ``data`` (the last one may be
    shorter; none for empty data)."""
    # views released on the way out, errors included: a view alive in a traceback would make
    # closing a memory map raise BufferError and hide the error itself
    with memoryview(data) as whole, whole.cast("B") as view:
        n = -(-len(view) // block)
        out = np.empty(n, np.uint64)
        for i in range(n):
            with view[i * block : (i + 1) * block] as piece:
                out[i] = xxhash.xxh3_64_intdigest(piece)
    return out


#: blocks read from a file at a time by :func:`file_block_sums`
READ_BLOCKS = 256


def file_block_sums(path: str | os.PathLike[str], block: int = BLOCK_BYTES) -> np.ndarray:
    """:func:`block_sums` of a file's bytes, read ``READ_BLOCKS`` blocks at a time (no memory
    map: a file of any size, in bounded memory)."""
    parts = []
    with open(path, "rb") as f:
        while buf := f.read(block * READ_BLOCKS):
            parts.append(block_sums(buf, block))
    return np.concatenate(parts) if parts else np.zeros(0, np.uint64)


def sidecar_bytes(sums: np.ndarray, size: int, block: int = BLOCK_BYTES) -> bytes:
    """The sidecar of a data file of ``size`` bytes whose block checksums are ``sums``."""
    head = MAGIC + np.array([block, size], "<u8").tobytes()
    return head + np.asarray(sums, "<u8").tobytes()


def sidecar_name(array: str) -> str:
    """The sidecar's name relative to a segment directory, for array ``array``."""
    return f"{array}/{SIDECAR}"


def write_sidecar(array_dir: Path, block: int = BLOCK_BYTES) -> None:
    """Write ``array_dir/blocks.xxh3`` for the data file ``array_dir/c/0`` (nothing when the
    array has no data file). Written into the segment's temporary directory, made durable
    and renamed with it."""
    data = array_dir / "c" / "0"
    if not data.exists():
        return
    sums = file_block_sums(data, block)
    (array_dir / SIDECAR).write_bytes(sidecar_bytes(sums, data.stat().st_size, block))


def read_sidecar(path: str | os.PathLike[str], size: int) -> tuple[int, np.ndarray]:
    """``(block size in bytes, block checksums)`` of the sidecar at ``path`` for a data file of
    ``size`` bytes. Raises :class:`~simdask.errors.IndexFormatError` when it is not a sidecar
    of such a file."""
    raw = Path(path).read_bytes()
    if len(raw) < _HEADER or raw[: len(MAGIC)] != MAGIC:
        raise IndexFormatError(f"{path}: expected a block checksum file, found other bytes")
    block, found = (int(x) for x in np.frombuffer(raw, "<u8", 2, len(MAGIC)))
    n = -(-size // block) if block > 0 else -1
    if found != size or len(raw) != _HEADER + 8 * n:
        raise IndexFormatError(
            f"{path}: expected the block checksums of a {size}-byte file, found "
            f"{(len(raw) - _HEADER) // 8} checksums of a {found}-byte file in {block}-byte blocks"
        )
    return block, np.frombuffer(raw, "<u8", n, _HEADER).astype(np.uint64)


def block_range(starts: np.ndarray, ends: np.ndarray, block: int) -> np.ndarray:
    """The sorted, distinct indices of the ``block``-byte blocks covering the byte ranges
    ``[starts[i], ends[i])`` (empty ranges cover none)."""
    starts = np.asarray(starts, np.int64)
    ends = np.asarray(ends, np.int64)
    keep = ends > starts
    first = starts[keep] // block
    last = (ends[keep] - 1) // block
    if not len(first):
        return np.zeros(0, np.int64)
    counts = last - first + 1
    within = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    return np.unique(np.repeat(first, counts) + within)
