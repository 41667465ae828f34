"""Content verification of the files a reader opens (issue 30 item 3): each file's xxh3 against
the one recorded at its commit (:mod:`simdask.storage.checksums`), once per process and file
state.

A query reads only the pages of a segment it needs, so a flipped byte in a posting list, an
offset or a key could otherwise give a plausible, in-range wrong answer. Before a reader first
opens a segment's files (or a text pack) in a process, each file is hashed whole (xxh3-64 over
a memory map of the file: no copy, about the speed of reading the page cache; the cost is
measured in docs/benchmarks.md, "Verifying what is read") and compared with its recorded
checksum. A file that matched is remembered by its identity ``(device, inode, size,
modification and change time in ns)``, so later opens in the process cost one ``stat``; a file
rewritten, replaced or touched since is hashed again. The change time cannot be set back by a
user, so a file edited in place is always seen.

Large arrays read in pieces (issue 30 item 3 follow-up): a raw segment's ``chunk_keys``,
``offsets`` and ``doc_ids`` data files carry per-block checksums (:mod:`simdask.storage.
block_sums`). A reader that reads them only with :func:`verify_read` (a query's ``pread``
lookups, :mod:`simdask.storage.direct_reads`) asks for ``lazy`` verification: such a file of
at least :data:`WHOLE_LIMIT` bytes is then not hashed at open; its sidecar is (hashed whole
against the catalog like any file), and each block is hashed the first time it is read in the
process (a bitset per file, dropped when the file's identity changes). Every other reader
(whole reads, memory maps, older segments without sidecars, compressed or URL segments) hashes
whole files as before.

What this does not see: a byte that changes on the disk below the filesystem (no write, so no
new change time) after the file was verified in a long-running process (``serve``, a
notebook); ``simdask check`` hashes everything again, whatever a process remembers.

Pure I/O and hashing: no catalog access (callers pass the recorded ``(name, size, xxh3)``).
"""

from __future__ import annotations

import mmap
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xxhash

from simdask.errors import IndexFormatError, damaged
from simdask.storage.block_sums import BLOCK_ARRAYS, SIDECAR, block_range, read_sidecar

__all__ = [
    "MAX_REMEMBERED",
    "WHOLE_LIMIT",
    "file_xxh3",
    "forget",
    "hashed_bytes",
    "remembered",
    "verify_mapped",
    "verify_problems",
    "verify_read",
]

#: files a process remembers as verified (beyond: forgotten all at once and hashed again)
MAX_REMEMBERED = 1 << 16
#: files smaller than this (bytes) are hashed whole even when they have block checksums
WHOLE_LIMIT = 4 * 2**20
_LAZY_SUFFIXES = tuple(f"/{name}/c/0" for name in BLOCK_ARRAYS)

_lock = threading.Lock()
_verified: dict[str, tuple[int, ...]] = {}
#: bytes hashed by readers in this process (whole files and blocks), for measurements
_hashed = [0]


@dataclass
class _Blocks:
    """A data file verified block by block: its identity when registered, its recorded
    ``(size, xxh3)``, its block size and checksums and which blocks matched."""

    ident: tuple[int, ...]
    name: str
    recorded: tuple[int, str]
    block: int
    sums: np.ndarray
    done: np.ndarray


#: (device, inode) -> the block state of a file registered by a lazy verification
_blocks: dict[tuple[int, int], _Blocks] = {}


def file_xxh3(path: str | os.PathLike[str]) -> str:
    """xxh3-64 of a file's bytes as 16 hex digits (as :func:`simdask.storage.checksums.digest`),
    hashed over a read-only memory map (no copy into the process)."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return xxhash.xxh3_64_hexdigest(b"")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            if hasattr(m, "madvise"):  # sequential: the kernel reads ahead in large steps
                m.madvise(mmap.MADV_SEQUENTIAL)
            _count(len(m))
            return xxhash.xxh3_64_hexdigest(m)


def _count(n: int) -> None:
    with _lock:
        _hashed[0] += n


def hashed_bytes() -> int:
    """Bytes readers hashed in this process so far (whole files and blocks)."""
    with _lock:
        return _hashed[0]


def _identity(st: os.stat_result, xxh3: str) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, int(xxh3, 16))


def verify_problems(
    root: Path, files: Iterable[tuple[str, int, str]], lazy: bool = False
) -> list[str]:
    """What is wrong with the files ``(name relative to root, recorded size in bytes, recorded
    xxh3)``: missing, another size, or other contents than recorded (empty: all verified).
    Files verified before in this process and unchanged since cost one ``stat``; the others
    are hashed whole, except with ``lazy`` (the caller reads the large arrays only through
    :func:`verify_read`): a large array data file whose block checksum sidecar is among
    ``files`` is checked for its size and registered for block verification. Thread-safe."""
    files = list(files)
    deferred = _deferred(files) if lazy else {}
    out = []
    for name, size, xxh3 in files:
        if name in deferred:
            continue
        p = root / name
        try:
            st = os.stat(p)
        except FileNotFoundError:
            out.append(f"{name} is missing (expected {size} bytes)")
            continue
        if st.st_size != size:
            out.append(f"{name} has {st.st_size} bytes, expected {size}")
            continue
        key = str(p)
        ident = _identity(st, xxh3)
        with _lock:
            if _verified.get(key) == ident:
                continue
        found = file_xxh3(p)
        if found != xxh3:
            out.append(f"{name} has other contents than recorded (xxh3 {found}, expected {xxh3})")
            continue
        with _lock:
            if len(_verified) >= MAX_REMEMBERED:
                _verified.clear()
            _verified[key] = ident
    if not out:
        for name, (size, xxh3) in deferred.items():
            out += _register(root, name, (size, xxh3))
    return out


def _deferred(files: list[tuple[str, int, str]]) -> dict[str, tuple[int, str]]:
    """``{name: (size, xxh3)}`` of the files a lazy verification leaves to block checks."""
    names = {name for name, _, _ in files}
    return {
        name: (size, xxh3)
        for name, size, xxh3 in files
        if size >= WHOLE_LIMIT
        and name.endswith(_LAZY_SUFFIXES)
        and name[: -len("c/0")] + SIDECAR in names
    }


def _register(root: Path, name: str, recorded: tuple[int, str]) -> list[str]:
    """Register the data file ``name`` (its sidecar verified) for block verification; its
    problems (missing, another size, a sidecar that does not fit it)."""
    p = root / name
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return [f"{name} is missing (expected {recorded[0]} bytes)"]
    if st.st_size != recorded[0]:
        return [f"{name} has {st.st_size} bytes, expected {recorded[0]}"]
    ident = _identity(st, recorded[1])
    with _lock:
        known = _blocks.get((st.st_dev, st.st_ino))
        if _verified.get(str(p)) == ident or (known is not None and known.ident == ident):
            return []
    try:
        block, sums = read_sidecar(p.parent.parent / SIDECAR, st.st_size)
    except IndexFormatError as e:
        return [str(e)]
    state = _Blocks(ident, name, recorded, block, sums, np.zeros(len(sums), bool))
    with _lock:
        if len(_blocks) >= MAX_REMEMBERED:
            _blocks.clear()
        _blocks[(st.st_dev, st.st_ino)] = state
    return []


def verify_read(fd: int, path: str | os.PathLike[str], starts: list[int], ends: list[int]) -> None:
    """Verify the blocks of the open file ``fd`` (at ``path``) covering the byte ranges
    ``[starts[i], ends[i])`` about to be read, when a lazy :func:`verify_problems` registered
    it (else nothing: it was hashed whole, or has no recorded checksum). Each block is hashed
    once per process; a file whose identity changed since is hashed whole against its recorded
    checksum. Raises :class:`~simdask.errors.IndexDamagedError` on a mismatch."""
    st = os.fstat(fd)
    with _lock:
        state = _blocks.get((st.st_dev, st.st_ino))
    if state is None:
        return
    if _identity(st, state.recorded[1]) != state.ident:
        found = file_xxh3(path)
        if found != state.recorded[1]:
            raise damaged(
                f"{state.name} has other contents than recorded (xxh3 {found}, expected "
                f"{state.recorded[1]})"
            )
        with _lock:
            state.ident = _identity(st, state.recorded[1])
            state.done[:] = True
        return
    need = block_range(np.asarray(starts), np.asarray(ends), state.block)
    need = need[~state.done[need]]
    if not len(need):
        return
    runs = np.flatnonzero(np.diff(need) != 1) + 1  # consecutive blocks: one pread each
    firsts, lasts = need[np.r_[0, runs]].tolist(), need[np.r_[runs - 1, -1]].tolist()
    for first, last in zip(firsts, lasts, strict=True):
        _check_run(fd, state, first, last)


def _check_run(fd: int, state: _Blocks, first: int, last: int) -> None:
    """Hash the blocks ``first..last`` of ``fd`` (one read) against ``state``'s checksums."""
    size = state.block
    data = memoryview(os.pread(fd, (last - first + 1) * size, first * size))
    _count(len(data))
    sums = state.sums[first : last + 1].tolist()
    for i, want in enumerate(sums):
        if xxhash.xxh3_64_intdigest(data[i * size : (i + 1) * size]) != want:
            b = first + i
            raise damaged(
                f"{state.name}: block {b} (bytes {b * size} to "
                f"{b * size + len(data[i * size : (i + 1) * size])}) has other contents than "
                "its recorded block checksum"
            )
    state.done[first : last + 1] = True


def verify_mapped(path: str | os.PathLike[str]) -> None:
    """Before a file is read through a memory map (any of its pages): :func:`verify_read` of
    all of it when a lazy verification registered it (its blocks not yet verified are hashed),
    else nothing. Costs nothing while no file is registered."""
    with _lock:
        if not _blocks:
            return
    fd = os.open(path, os.O_RDONLY)
    try:
        verify_read(fd, path, [0], [os.fstat(fd).st_size])
    finally:
        os.close(fd)


def remembered() -> int:
    """How many files this process remembers as verified."""
    with _lock:
        return len(_verified)


def forget() -> None:
    """Forget every file verified in this process (the next open hashes it again)."""
    with _lock:
        _verified.clear()
        _blocks.clear()
