"""Write a raw segment piece by piece (issue 13 items 2 and 5): a range merged in pieces of
its chunk-ID span (:mod:`simdask.kernels.merge_pieces`) appends each piece's CSR arrays to the
files of the raw layout (:func:`~simdask.storage.shard_codec.write_raw`) in a temporary
directory, which :meth:`SegmentWriter.close` completes (metadata, key sample, offsets dtype)
and renames into place. The files are byte for byte those :func:`write_raw` writes for the
whole range at once; memory holds one piece at a time.

:class:`PieceCollector` is the same interface for a store that is not raw or absent: the
pieces are put together in memory (what such a merge returned before).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from simdask.errors import IndexFormatError
from simdask.storage.block_sums import BLOCK_ARRAYS, write_sidecar
from simdask.storage.shard_codec import KEY_SAMPLE, KEY_SAMPLE_STEP
from simdask.storage.zarr_raw import group_metadata, raw_array_metadata

__all__ = ["OFFSET32_LIMIT", "PieceCollector", "SegmentWriter"]

#: elements converted at a time when the offsets written so far are widened to uint64
_CONVERT_BLOCK = 1 << 20
#: offsets at or above this are stored as uint64 (:func:`~simdask.storage.shard_codec.
#: disk_dtype`: uint32 while a shard has fewer than 2**32 postings)
OFFSET32_LIMIT = 2**32


class _Appender:
    """One array's data file ``<dir>/<name>/c/0``, appended to."""

    def __init__(self, tmp: Path, name: str):
        self.dir = tmp / name
        (self.dir / "c").mkdir(parents=True)
        self.path = self.dir / "c" / "0"
        self.file = open(self.path, "wb")  # noqa: SIM115 (closed by finish)
        self.length = 0
        self.dtype: np.dtype | None = None

    def append(self, arr: np.ndarray, dtype: npt.DTypeLike) -> None:
        little = np.dtype(dtype).newbyteorder("<")
        if self.dtype is None:
            self.dtype = little
        if len(arr):
            # file.write, not ndarray.tofile: a full disk is OSError(ENOSPC), not a short write
            self.file.write(np.ascontiguousarray(arr, dtype=little).data)
        self.length += len(arr)

    def finish(self, dtype: npt.DTypeLike) -> None:
        """Close the file and write the metadata (no data file for an empty array)."""
        if not self.file.closed:
            self.file.close()
        if self.length == 0:
            os.remove(self.path)
            os.rmdir(self.dir / "c")
        (self.dir / "zarr.json").write_bytes(raw_array_metadata(np.dtype(dtype), self.length))


class SegmentWriter:
    """The raw segment of range ``[lo, hi)`` written into the new directory ``tmp`` piece by
    piece, in chunk-ID order; ``publish(tmp)`` puts the finished directory in place and
    returns the bytes stored.

    Offsets are written as uint32 while they fit (as
    :func:`~simdask.storage.shard_codec.disk_dtype` stores them): the piece whose offsets
    pass :data:`OFFSET32_LIMIT` first widens the file written so far to uint64."""

    def __init__(self, tmp: Path, lo: int, hi: int, publish: Callable[[Path], int]) -> None:
        tmp.mkdir(parents=True)
        self.tmp, self.lo, self.hi, self.publish = tmp, lo, hi, publish
        self.arrays = {n: _Appender(tmp, n) for n in ("chunk_keys", "offsets", "doc_ids")}
        self.sample = _Appender(tmp, KEY_SAMPLE)
        self.off_dtype: np.dtype = np.dtype(np.uint32)
        self.key_dtype: np.dtype | None = None
        self.n_keys = 0
        self.n_postings = 0
        self.arrays["offsets"].append(np.zeros(1, np.uint64), self.off_dtype)

    def append(self, keys: np.ndarray, offsets: np.ndarray, docs: np.ndarray) -> None:
        """Add one piece's CSR arrays (``offsets`` from 0), after every earlier piece's keys."""
        dtype = np.dtype(np.asarray(keys).dtype)
        if self.key_dtype is None:
            self.key_dtype = dtype
        elif dtype != self.key_dtype:
            raise IndexFormatError(
                f"segment pieces of range [{self.lo}, {self.hi}): expected "
                f"{self.key_dtype.name} chunk keys as in the first piece, found {dtype.name}"
            )
        first = (-self.n_keys) % KEY_SAMPLE_STEP
        self.sample.append(np.asarray(keys[first::KEY_SAMPLE_STEP]), dtype)
        self.arrays["chunk_keys"].append(keys, dtype)
        shifted = np.asarray(offsets[1:], dtype=np.uint64) + np.uint64(self.n_postings)
        if self.off_dtype == np.uint32 and len(shifted) and int(shifted[-1]) >= OFFSET32_LIMIT:
            self._widen()
        self.arrays["offsets"].append(shifted, self.off_dtype)
        self.arrays["doc_ids"].append(docs, np.uint32)
        self.n_keys += len(keys)
        self.n_postings += len(docs)

    def _widen(self) -> None:
        """Rewrite the offsets written so far as uint64 and append uint64 from now on."""
        off = self.arrays["offsets"]
        off.file.close()
        src = np.memmap(off.path, dtype="<u4", mode="r")
        wide = off.path.with_name(off.path.name + ".u8")
        with open(wide, "wb") as f:
            for i in range(0, len(src), _CONVERT_BLOCK):
                f.write(src[i : i + _CONVERT_BLOCK].astype("<u8").data)
        del src
        os.replace(wide, off.path)
        off.file = open(off.path, "ab")  # noqa: SIM115 (closed by finish)
        self.off_dtype = off.dtype = np.dtype("<u8")

    def close(self) -> int:
        """Finish the files and put the segment in place; returns bytes stored."""
        keys = np.dtype(np.uint32) if self.key_dtype is None else self.key_dtype
        attrs = {"lo": self.lo, "hi": self.hi, "key_sample_step": KEY_SAMPLE_STEP}
        (self.tmp / "zarr.json").write_bytes(group_metadata(attrs))
        self.arrays["chunk_keys"].finish(keys)
        self.arrays["doc_ids"].finish(np.uint32)
        self.arrays["offsets"].finish(self.off_dtype)
        self.sample.finish(keys)
        for name in BLOCK_ARRAYS:  # the block checksums readers verify (block_sums.py)
            write_sidecar(self.tmp / name)
        return self.publish(self.tmp)

    def discard(self) -> None:
        """Close the files and remove the temporary directory (nothing is published)."""
        for a in (*self.arrays.values(), self.sample):
            if not a.file.closed:
                a.file.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
        with contextlib.suppress(OSError):  # the generation's directory, if nothing else is
            self.tmp.parent.rmdir()


class PieceCollector:
    """:class:`SegmentWriter`'s interface, the pieces put together in memory:
    :meth:`close` returns the range's CSR arrays ``(chunk_keys, offsets, doc_ids)``."""

    def __init__(self) -> None:
        self.keys: list[np.ndarray] = []
        self.offsets: list[np.ndarray] = [np.zeros(1, np.uint64)]
        self.docs: list[np.ndarray] = []
        self.n_postings = 0

    def append(self, keys: np.ndarray, offsets: np.ndarray, docs: np.ndarray) -> None:
        self.keys.append(keys)
        self.offsets.append(np.asarray(offsets[1:], np.uint64) + np.uint64(self.n_postings))
        self.docs.append(np.asarray(docs, np.uint32))
        self.n_postings += len(docs)

    def close(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        out = (
            np.concatenate(self.keys),
            np.concatenate(self.offsets),
            np.concatenate(self.docs),
        )
        self.keys = self.offsets = self.docs = []
        return out
