"""Memory-mapped segments kept open in a process between incremental runs (issue 14).

A delta run looks up the changed documents' chunk IDs in every range's committed segments.
Mapped afresh each run, every lookup faults its pages into the process again (the kernel maps
file pages 64 KiB around each fault): about 6,000 lookups into a range touch nearly every
64 KiB block of its ``chunk_keys`` and ``offsets``, so the faults cost what the range weighs,
not what the run adds (16 ranges of a 100,000-document index: 93 ms of lookups mapped afresh
against 31 ms on kept maps, measured in one process). A :class:`KeptMaps` keeps the opened
arrays of local (raw) segments for the next run, checked against the files' identity (device,
inode, size, modification time of the data files and the group metadata) at every use, so an
index removed and created again, or restored from a backup, at the same path is opened anew.
The maps kept are bounded by ``budget`` bytes of file size (least recently used dropped
first); resident pages count in the process's RSS.

A kept segment of at least :data:`SAMPLE_MIN_KEYS` keys used a second time also gets a sparse
sample of its keys (every :data:`~simdask.kernels.key_lookup.SAMPLE_STEP`-th, 1/128 of the
keys in memory; ``arrays["key_sample"]``, used by :meth:`ShardStore.read_subset`): a lookup
then touches the big key array within one window of 128 keys instead of at ~12 places across
it (16 ranges at 100,000 documents, one process, load ~5: 68-82 ms of binary searches against
10-11 ms). Not at the first use: the sample reads the whole key array once, which a process
that runs once (``simdask update``) would pay for nothing.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from simdask.kernels.key_lookup import SAMPLE_STEP, key_sample
from simdask.storage.shards import ShardStore

__all__ = ["KEPT_MAP_BYTES", "SAMPLE_MIN_KEYS", "KeptMaps", "kept_maps"]

#: bytes of segment files a process keeps mapped by default (the file sizes of the kept arrays)
KEPT_MAP_BYTES = 4 << 30
#: keys from which a segment kept and used again gets a sparse sample of its keys
SAMPLE_MIN_KEYS = 1 << 16


def _identity(paths: list[Path]) -> tuple[Any, ...] | None:
    """``(device, inode, size, mtime_ns)`` of each file, None if one is missing."""
    out = []
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            return None
        out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


class KeptMaps:
    """Opened arrays of local raw segments (:meth:`ShardStore.open_arrays`), kept between
    calls of :meth:`open_arrays` while their files stay the same; at most ``budget`` bytes of
    files, least recently used dropped first. Thread-safe. Segments that cannot be
    memory-mapped (compressed, remote) are opened each time, not kept."""

    def __init__(self, budget: int = KEPT_MAP_BYTES):
        self.budget = int(budget)
        self.nbytes = 0
        self._lock = threading.Lock()
        self._kept: OrderedDict[
            tuple[Any, ...], tuple[list[Path], tuple[Any, ...], dict[str, Any], int]
        ] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def open_arrays(self, store: ShardStore, generation: int, shard: int) -> dict[str, Any]:
        """``store.open_arrays(generation, shard)``, from the kept maps when the segment's
        files are those mapped before."""
        seg = Path(store.path(generation, shard))
        key = (str(seg), str(store.key_dtype))
        with self._lock:
            hit = self._kept.get(key)
        if hit is not None:
            paths, ident, arrays, _ = hit
            if _identity(paths) == ident:
                with self._lock:
                    if key in self._kept:
                        self._kept.move_to_end(key)
                self._add_sample(arrays)
                return arrays
            self._drop(key)
        arrays = store.open_arrays(generation, shard)
        maps = [arrays.get(name) for name in ("chunk_keys", "offsets", "doc_ids")]
        files = [m.filename for m in maps if isinstance(m, np.memmap) and m.filename]
        if len(files) < len(maps):
            return arrays  # compressed, remote or an empty array: read as it is, not kept
        paths = [seg / "zarr.json"] + [Path(f) for f in files]
        now = _identity(paths)
        if now is None:
            return arrays
        size = sum(i[2] for i in now)
        if size > self.budget:
            return arrays
        self.prune()  # segments removed since (their maps hold deleted files open)
        with self._lock:
            old = self._kept.pop(key, None)
            if old is not None:
                self.nbytes -= old[3]
            self._kept[key] = (paths, now, arrays, size)
            self.nbytes += size
            while self.nbytes > self.budget and self._kept:
                _, (_, _, _, n) = self._kept.popitem(last=False)
                self.nbytes -= n
        return arrays

    @staticmethod
    def _add_sample(arrays: dict[str, Any]) -> None:
        keys = arrays["chunk_keys"]
        if "key_sample" in arrays or not isinstance(keys, np.ndarray):
            return
        if len(keys) >= SAMPLE_MIN_KEYS:
            arrays["key_sample"] = (SAMPLE_STEP, key_sample(keys, SAMPLE_STEP))

    def _drop(self, key: tuple[Any, ...]) -> None:
        with self._lock:
            old = self._kept.pop(key, None)
            if old is not None:
                self.nbytes -= old[3]

    def prune(self) -> int:
        """Forget the kept maps whose files changed or are gone (a segment garbage-collected
        after a compaction or an update): their maps would hold the deleted files open, and
        their disk space, for as long as the process lives. Returns how many went."""
        with self._lock:
            items = list(self._kept.items())
        gone = [key for key, (paths, ident, _, _) in items if _identity(paths) != ident]
        for key in gone:
            self._drop(key)
        return len(gone)

    def clear(self) -> None:
        """Forget every kept map."""
        with self._lock:
            self._kept.clear()
            self.nbytes = 0


_process_maps: KeptMaps | None = None
_process_lock = threading.Lock()


def kept_maps(budget: int = KEPT_MAP_BYTES) -> KeptMaps:
    """This process's :class:`KeptMaps` (created on first use with ``budget`` bytes)."""
    global _process_maps
    with _process_lock:
        if _process_maps is None:
            _process_maps = KeptMaps(budget)
        return _process_maps
