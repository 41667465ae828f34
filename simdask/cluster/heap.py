"""Giving a worker's freed heap memory back to the operating system.

simdask's own LocalCluster starts its workers with ``MALLOC_TRIM_THRESHOLD_`` at 4 GiB
(:data:`simdask.cluster.connect.WORKER_MALLOC_ENV`: fresh memory is slow to touch on VMs), so
glibc keeps whatever a worker freed in its heap (allocations below
``MALLOC_MMAP_THRESHOLD_``, 32 MiB) and the process's RSS stays at its high-water mark. When a
stage has just dropped a large part of what it held (the similarity stage, once the merged
shards are replaced by the blocks' compact views), :func:`trim_heap` returns those pages at
once, so that the memory the blocks then need is not added on top of the memory the shards
left behind (docs/scale.md, "Worker memory in the similarity stage").
"""

from __future__ import annotations

import ctypes
import ctypes.util

import psutil

__all__ = ["trim_heap"]


def _malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library has none (macOS, musl)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None


def trim_heap() -> int:
    """``malloc_trim(0)`` in this process: free heap pages (every arena, also between blocks
    in use) go back to the operating system. Returns the bytes of resident memory released
    (0 where there is no ``malloc_trim``); takes milliseconds."""
    trim = _malloc_trim()
    if trim is None:
        return 0
    proc = psutil.Process()
    before = proc.memory_info().rss
    trim(0)
    return max(0, before - proc.memory_info().rss)
