"""A query's reads of a raw shard with ``pread``: only the bytes it needs, nothing mapped.

A memory-mapped lookup touches few pages, but the kernel maps (and counts in the process's
resident set) whole folios of the page cache around each one: a cold query of a 20-page
document against 100,000 documents mapped all 2.1 GB of the shards, and its time and
resident set grew with the index. Here a lookup reads, with one system call per stretch of
nearby elements (:func:`~simdask.kernels.key_lookup.coalesce_ranges`):

* the shard's ``key_sample`` (``chunk_keys[::step]``, written with the segment by
  :mod:`simdask.storage.shard_codec`; 1/``step`` of the keys, read once per open segment),
* one window of ``step`` keys per distinct window holding a looked-up chunk ID,
* two offsets and the posting list of each chunk found.

So a query reads O(query chunks x (window + posting list)) bytes plus the sample. The blocks
holding what is read are verified against their recorded checksums first, once per process
(:func:`~simdask.storage.verified.verify_read`). A read the
page cache holds is one system call (``RWF_NOWAIT``); the others of a gather are announced
together (``POSIX_FADV_WILLNEED``) before they are read, so that a cold query does not wait
for each 4 KiB window in turn (:func:`_read_ranges`). The numpy work is in
:mod:`simdask.kernels.key_lookup`; this module only reads.
"""

from __future__ import annotations

import errno
import os
from typing import Any

import numpy as np

from simdask.errors import IndexFormatError
from simdask.kernels.arrays import expand_ranges
from simdask.kernels.key_lookup import coalesce_ranges, sample_windows, window_positions
from simdask.kernels.postings import find_keys
from simdask.storage.verified import verify_read
from simdask.storage.zarr_raw import RawArrayFile, load_array

__all__ = ["GAP_BYTES", "gather", "read_subset_direct", "stored_sample"]

#: ranges whose gap is at most this many bytes are read in one system call
GAP_BYTES = 8192
#: ``preadv`` flag: only what the page cache holds (None where the system has none)
_NOWAIT = getattr(os, "RWF_NOWAIT", None)
#: ``posix_fadvise`` advice: start reading these bytes now (None where there is none)
_WILLNEED = getattr(os, "POSIX_FADV_WILLNEED", None) if hasattr(os, "posix_fadvise") else None


def gather(
    raw: RawArrayFile, starts: np.ndarray, lengths: np.ndarray, gap_bytes: int = GAP_BYTES
) -> np.ndarray:
    """The elements ``raw[starts[i] : starts[i] + lengths[i]]`` of every range, concatenated
    (``starts`` ascending; ranges may overlap), read with ``pread`` (no memory map), ranges
    at most ``gap_bytes`` apart in one call."""
    lengths = np.asarray(lengths, np.int64)
    if raw.path is None:  # an unwritten chunk: every element is the fill value
        return np.full(int(lengths.sum()), raw.fill, dtype=raw.dtype)
    size = raw.dtype.itemsize
    r_start, r_end, first = coalesce_ranges(starts, lengths, gap_bytes // size)
    if len(r_end) and (int(r_start[0]) < 0 or int(r_end.max()) > raw.length):
        raise IndexFormatError(
            f"{raw.path}: expected reads within its {raw.length} elements, "
            f"found a range up to {int(r_end.max())}"
        )
    buf = np.empty(int((r_end - r_start).sum()), raw.dtype)
    view = memoryview(buf.data).cast("B")
    fd = os.open(raw.path, os.O_RDONLY)
    try:
        starts_b, ends_b = (r_start * size).tolist(), (r_end * size).tolist()
        verify_read(fd, raw.path, starts_b, ends_b)  # the blocks read, once per process
        _read_ranges(fd, raw.path, view, starts_b, ends_b)
    finally:
        os.close(fd)
    if len(buf) == int(lengths.sum()):  # disjoint ranges read without gaps: buf is the answer
        return buf
    if len(buf) >= 64 * len(lengths):  # few long ranges (posting lists): copied as slices
        pieces = zip(first.tolist(), lengths.tolist(), strict=True)
        return np.concatenate([buf[f : f + n] for f, n in pieces])
    return buf[expand_ranges(first, lengths)]


def _read_ranges(
    fd: int, path: str | os.PathLike[str], view: memoryview, starts: list[int], ends: list[int]
) -> None:
    """Read the byte ranges ``[starts[i], ends[i])`` of the file ``fd`` into ``view``, one
    after the other. Ranges the page cache holds are read at once (``RWF_NOWAIT``); the
    others are first all announced to the kernel (``POSIX_FADV_WILLNEED``: it starts
    reading them together, a cold read no longer waits for each before asking the next),
    then read."""
    pending = []
    at = 0
    for s, e in zip(starts, ends, strict=True):
        got = _read_cached(fd, view[at : at + e - s], s)
        if got < e - s:
            pending.append((at + got, s + got, e))
        at += e - s
    if len(pending) > 1 and _WILLNEED is not None:
        for _, s, e in pending:
            os.posix_fadvise(fd, s, e - s, _WILLNEED)
    for at, s, e in pending:
        got = os.preadv(fd, [view[at : at + e - s]], s)
        if got != e - s:
            raise IndexFormatError(f"{path}: expected {e - s} bytes at offset {s}, read {got}")


def _read_cached(fd: int, view: memoryview, offset: int) -> int:
    """Bytes of ``view`` read from ``offset`` without waiting for the disk: those at its
    start that the page cache holds (0 where ``RWF_NOWAIT`` is not supported)."""
    global _NOWAIT
    if _NOWAIT is None:
        return 0
    try:
        return os.preadv(fd, [view], offset, _NOWAIT)
    except BlockingIOError:  # not (wholly) in the page cache
        return 0
    except OSError as e:
        if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
            raise
        _NOWAIT = None  # this system reads no other way
        return 0


def stored_sample(arrays: dict[str, Any]) -> tuple[int, np.ndarray] | None:
    """``(step, keys[::step])`` of a raw shard opened by
    :meth:`~simdask.storage.shards.ShardStore.open_arrays` that stores a key sample (read
    once, then kept in ``arrays``), else None."""
    files = arrays.get("files")
    if files is None or "key_sample" not in files:
        return None
    if "key_sample_loaded" not in arrays:
        step, raw = files["key_sample"]
        arrays["key_sample_loaded"] = (step, load_array(raw))
    return arrays["key_sample_loaded"]


def read_subset_direct(
    arrays: dict[str, Any], ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(chunk IDs present, offsets (uint64), doc IDs (uint32))`` of the sorted, distinct
    ``ids`` in a raw shard with a stored key sample (see the module docstring), read with
    ``pread``; ``ids`` in the dtype of the shard's keys."""
    files = arrays["files"]
    keys_raw: RawArrayFile = files["chunk_keys"]
    stored = stored_sample(arrays)
    if stored is None:
        raise IndexFormatError("expected a raw shard with a stored key sample, found none")
    step, sample = stored
    ids, w_start, w_len = sample_windows(sample, step, keys_raw.length, ids)
    window_keys = gather(keys_raw, w_start, w_len, gap_bytes=0)
    present, at = find_keys(window_keys, ids)
    pos = window_positions(w_start, w_len, at)
    offsets = np.zeros(len(pos) + 1, dtype=np.uint64)
    if not len(pos):
        return present, offsets, np.zeros(0, np.uint32)
    bounds = gather(files["offsets"], pos, np.full(len(pos), 2)).astype(np.int64)
    bounds = bounds.reshape(-1, 2)
    df = bounds[:, 1] - bounds[:, 0]
    np.cumsum(df, out=offsets[1:])
    doc_ids = gather(files["doc_ids"], bounds[:, 0], df).astype(np.uint32, copy=False)
    return present, offsets, doc_ids
