"""Giving a worker's freed heap memory back to the operating system.

simdask's own LocalCluster starts its workers with ``MALLOC_TRIM_THRESHOLD_`` at 4 GiB
(:data:`simdask.cluster.connect.WORKER_MALLOC_ENV`: fresh memory is slow to touch on VMs), so
glibc keeps whatever a worker freed in its heap (allocations below
``MALLOC_MMAP_THRESHOLD_``, 32 MiB) and the process's RSS stays at its high-water mark. When a
stage has just dropped a large part of what it held (the similarity stage, once the merged
shards are replaced by the blocks' compact views), :func:`trim_heap` returns those pages at
once, so that the memory the blocks then need is not added on top of the memory the shards
left behind (docs/scale.md, "Worker memory in the similarity stage"); and after each block of
the similarity stage :func:`trim_grown` returns the heap the block's tasks freed, so that it
does not stay resident on top of what the worker holds for the rest of the stage (the heap in
use while a block's tasks run is not lowered by it).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import time

import psutil

__all__ = ["TRIM_STEP_BYTES", "heap_in_use", "trim_grown", "trim_heap", "trim_when_freed"]

#: growth of a process's resident memory not in malloc's use (bytes) since its last
#: :func:`trim_grown` above which the next call returns the free heap: the freed heap a
#: similarity-stage worker keeps resident between two blocks is bounded by about this much
#: (docs/scale.md, "Worker heap between blocks")
TRIM_STEP_BYTES = 256 << 20

#: this process's resident bytes not in malloc's use right after its last :func:`trim_grown`
#: that trimmed (0: none yet)
_after_trim = [0]


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (glibc 2.33 and later): byte counts over every arena."""

    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


def _malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library has none (macOS, musl)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None


def _mallinfo2():
    """glibc's ``mallinfo2`` with its result type set, or None (older glibc, macOS, musl)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        info = ctypes.CDLL(name).mallinfo2
    except (OSError, AttributeError):
        return None
    info.restype = _MallInfo2
    return info


def heap_in_use() -> int:
    """Bytes this process's malloc has handed out and not had back (heap chunks in use plus
    mmapped blocks, every arena), or 0 where glibc's ``mallinfo2`` is missing. Walks malloc's
    free lists: about a millisecond for a heap of a few GiB in 1 MiB pieces."""
    info = _mallinfo2()
    if info is None:
        return 0
    got = info()
    return int(got.uordblks) + int(got.hblkhd)


def trim_heap() -> int:
    """``malloc_trim(0)`` in this process: free heap pages (every arena, also between blocks
    in use) go back to the operating system. Returns the bytes of resident memory released
    (0 where there is no ``malloc_trim``). Costs about 0.25 s per GiB released (2 GiB in
    0.5 s on the 2-core VM of docs/scale.md, at load ~15)."""
    trim = _malloc_trim()
    if trim is None:
        return 0
    proc = psutil.Process()
    before = proc.memory_info().rss
    trim(0)
    return max(0, before - proc.memory_info().rss)


def trim_when_freed(keys: list, dask_worker=None, timeout: float = 5.0) -> int:
    """On a Dask worker (``Client.run``): once it holds none of ``keys`` (data the client has
    released; the scheduler frees them shortly after their last dependent ran; at most
    ``timeout`` seconds), :func:`trim_heap`. Returns its bytes released."""
    deadline = time.monotonic() + timeout
    while any(k in dask_worker.data for k in keys) and time.monotonic() < deadline:
        time.sleep(0.01)
    return trim_heap()


def trim_grown(step: int = TRIM_STEP_BYTES) -> int:
    """:func:`trim_heap` when this process's resident memory not in malloc's use (RSS minus
    :func:`heap_in_use`: freed heap kept resident, code, Python's own arenas) has grown by
    more than ``step`` bytes since the last call of this function that trimmed (the first
    call: when it is above ``step``); nothing otherwise. Memory a task still holds while this
    runs (another block's task, on another thread) is in malloc's use, so it neither sets off
    a trim nor raises the mark the next call compares with; where ``mallinfo2`` is missing the
    whole RSS counts. Run on every worker after each similarity block (``Client.run``), it
    keeps what a worker's tasks freed from piling up in its heap at a cost of ~0.25 s a GiB
    returned only when a block left that much. Returns the bytes of resident memory released
    (0 when it did not trim)."""
    held = psutil.Process().memory_info().rss - heap_in_use()
    if held - _after_trim[0] <= step:
        return 0
    released = trim_heap()
    _after_trim[0] = held - released
    return released
