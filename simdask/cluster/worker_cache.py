"""Segments cached in worker processes between runs (DESIGN §3.4, issue "shard cache").

A long-lived cluster (``--scheduler``) keeps, in each worker process, the segments (a range's
base or delta postings of one generation, :mod:`simdask.storage.segments`) its merge and
compaction tasks last read or wrote. The next task needing a range is sent to the worker
holding its segments and starts from the cached copies instead of reading (shared filesystem)
or receiving (no shared filesystem) them. An entry is used only when the index, the shard
layout and the generation all match, so a stale copy can never be used:

* ``index_id``: a random ID stored in the catalog when the index is created (an index removed
  and created again at the same path gets a new one);
* ``layout``: the config fields that decide shard contents (k, hash bits, seed, shard count);
* ``generation``: a generation writes at most one segment per range and never rewrites it,
  so a matching generation is the same data.

Memory is bounded: at most ``SIMDASK_WORKER_CACHE_BYTES`` bytes per worker process (default: a
quarter of the worker's memory limit, or 1 GiB without one), least recently used entries go
first. A segment a merge wrote into a shared raw store is cached memory-mapped
(:func:`simdask.engine.merge_stage.merge_task`): page cache, not a copy in the worker's heap.
Before each run, segments no longer in the committed manifest are dropped
(:func:`simdask.engine.merge_stage.cache_retain`). The cache
lives in the worker process: a restarted worker starts empty, and a miss only costs a read.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass

from simdask.storage.shards import ShardData

__all__ = [
    "CacheEntry",
    "ShardCache",
    "cache_clear",
    "cache_entries",
    "cache_limit_bytes",
    "cache_stats",
    "worker_cache",
]

_ENV_LIMIT = "SIMDASK_WORKER_CACHE_BYTES"


@dataclass(frozen=True)
class CacheEntry:
    """One cached shard: which index, layout, shard and generation, and its size in bytes."""

    index_id: str
    layout: str
    shard: int
    generation: int
    nbytes: int


class ShardCache:
    """A byte-bounded LRU map ``(index_id, layout, shard, generation) -> ShardData``.

    Thread-safe (a worker may run several tasks at once).
    """

    def __init__(self, limit_bytes: int):
        self.limit_bytes = int(limit_bytes)
        self._data: OrderedDict[tuple[str, str, int, int], ShardData] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def nbytes(self) -> int:
        """Bytes held."""
        with self._lock:
            return sum(d.nbytes for d in self._data.values())

    def get(self, index_id: str, layout: str, shard: int, generation: int) -> ShardData | None:
        """The cached segment, or None."""
        key = (index_id, layout, shard, generation)
        with self._lock:
            data = self._data.get(key)
            if data is None:
                self.misses += 1
                return None
            self.hits += 1
            self._data.move_to_end(key)
            return data

    def put(self, index_id: str, layout: str, shard: int, data: ShardData) -> bool:
        """Cache ``data`` (a segment of generation ``data.generation``); False if it is larger
        than the whole cache. Other segments of the range stay (the run that wrote this one
        may still fail to commit)."""
        if data.nbytes > self.limit_bytes:
            return False
        key = (index_id, layout, shard, data.generation)
        with self._lock:
            self._data[key] = data
            self._data.move_to_end(key)
            total = sum(d.nbytes for d in self._data.values())
            while total > self.limit_bytes:
                _, dropped = self._data.popitem(last=False)
                total -= dropped.nbytes
        return True

    def drop(self, entry: CacheEntry) -> int:
        """Drop one entry; returns the bytes freed (0 if it was gone)."""
        key = (entry.index_id, entry.layout, entry.shard, entry.generation)
        with self._lock:
            data = self._data.pop(key, None)
        return 0 if data is None else data.nbytes

    def entries(self) -> list[CacheEntry]:
        """What is cached, least recently used first."""
        with self._lock:
            return [CacheEntry(*k, d.nbytes) for k, d in self._data.items()]

    def clear(self) -> None:
        """Drop everything."""
        with self._lock:
            self._data.clear()


def cache_limit_bytes() -> int:
    """Bytes this process may cache: ``$SIMDASK_WORKER_CACHE_BYTES``, else a quarter of the
    Dask worker's memory limit, else 1 GiB."""
    if os.environ.get(_ENV_LIMIT):
        return int(os.environ[_ENV_LIMIT])
    try:
        from distributed import get_worker  # loads dask: only when a run needs it

        limit = get_worker().memory_manager.memory_limit
    except (ImportError, ValueError, AttributeError):
        limit = None
    return int(limit) // 4 if limit else 2**30


_cache: ShardCache | None = None
_cache_lock = threading.Lock()


def worker_cache() -> ShardCache:
    """This process's cache (created on first use)."""
    global _cache
    with _cache_lock:
        if _cache is None:
            _cache = ShardCache(cache_limit_bytes())
        return _cache


def cache_entries() -> list[tuple[str, str, int, int, int]]:
    """This process's entries as plain tuples (for ``client.run``)."""
    return [
        (e.index_id, e.layout, e.shard, e.generation, e.nbytes) for e in worker_cache().entries()
    ]


def cache_stats() -> tuple[int, int, int]:
    """This process's ``(hits, misses, bytes held)`` (for ``client.run``)."""
    cache = worker_cache()
    return cache.hits, cache.misses, cache.nbytes


def cache_clear() -> int:
    """Empty this process's cache (for ``client.run``); returns the bytes freed."""
    cache = worker_cache()
    n = cache.nbytes
    cache.clear()
    return n
