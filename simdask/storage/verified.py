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
from pathlib import Path

import xxhash

__all__ = ["MAX_REMEMBERED", "file_xxh3", "forget", "remembered", "verify_problems"]

#: files a process remembers as verified (beyond: forgotten all at once and hashed again)
MAX_REMEMBERED = 1 << 16

_lock = threading.Lock()
_verified: dict[str, tuple[int, ...]] = {}


def file_xxh3(path: str | os.PathLike[str]) -> str:
    """xxh3-64 of a file's bytes as 16 hex digits (as :func:`simdask.storage.checksums.digest`),
    hashed over a read-only memory map (no copy into the process)."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return xxhash.xxh3_64_hexdigest(b"")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            if hasattr(m, "madvise"):  # sequential: the kernel reads ahead in large steps
                m.madvise(mmap.MADV_SEQUENTIAL)
            return xxhash.xxh3_64_hexdigest(m)


def _identity(st: os.stat_result, xxh3: str) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, int(xxh3, 16))


def verify_problems(root: Path, files: Iterable[tuple[str, int, str]]) -> list[str]:
    """What is wrong with the files ``(name relative to root, recorded size in bytes, recorded
    xxh3)``: missing, another size, or other contents than recorded (empty: all verified).
    Files verified before in this process and unchanged since cost one ``stat``; the others
    are hashed whole. Thread-safe."""
    out = []
    for name, size, xxh3 in files:
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
    return out


def remembered() -> int:
    """How many files this process remembers as verified."""
    with _lock:
        return len(_verified)


def forget() -> None:
    """Forget every file verified in this process (the next open hashes it again)."""
    with _lock:
        _verified.clear()
