"""A range's merge in pieces of its chunk-ID span (pure numpy; issue 13 items 2 and 5).

The inputs of a range's merge are sorted by chunk ID: each chunking task's pair keys (a
*run*: packed uint64 ``chunk << 32 | doc`` or wide ``(n, 2)`` rows, see
:mod:`simdask.kernels.postings`) and the CSR arrays of the old segments. So a piece
``[a, b)`` of the range's chunk IDs can be merged alone, from the rows of each input whose
chunk lies in it, and the pieces' CSR arrays put end to end (offsets shifted) are the range's.

:func:`piece_bounds` cuts the span so that each piece holds about ``piece`` postings (at most
``1.5 * piece`` plus the largest posting list, whatever the range's size), from a sample of
every input's chunk IDs (:func:`run_sample`, :func:`csr_sample`); :func:`run_slice` and
:func:`csr_slice` take one piece of an input, reading only its rows (inputs may be memory
maps). Offsets of a slice start at 0; :func:`shift` puts them after the earlier pieces'.
"""

from __future__ import annotations

import bisect

import numpy as np

__all__ = [
    "MERGE_PIECE_POSTINGS",
    "csr_sample",
    "csr_slice",
    "piece_bounds",
    "run_cuts",
    "run_sample",
    "run_slice",
    "sample_step",
]

#: postings a merge piece holds (about): the merge's transient memory is ~120 bytes a posting
#: of a piece (docs/scale.md, "Merge in pieces"), whatever the range's size
MERGE_PIECE_POSTINGS = 1 << 22


def sample_step(piece: int, n_inputs: int) -> int:
    """Postings between two samples of one input: a piece's estimated size is off by less
    than a step per input at each of its two ends, so ``piece // (4 * n_inputs)`` keeps the
    error under half a piece."""
    return max(1, piece // (4 * max(1, n_inputs)))


def _run_chunks(run: np.ndarray, rows: slice) -> np.ndarray:
    """Chunk IDs (uint64) of the rows ``rows`` (a slice) of a run of pair keys."""
    if run.ndim == 2:
        return np.asarray(run[rows, 0], dtype=np.uint64)
    return np.asarray(run[rows], dtype=np.uint64) >> np.uint64(32)


def run_sample(run: np.ndarray, step: int) -> np.ndarray:
    """Chunk IDs (uint64) of rows ``0, step, 2*step, ...`` of a sorted run of pair keys."""
    return _run_chunks(run, slice(None, None, step))


def csr_sample(keys: np.ndarray, offsets: np.ndarray, step: int) -> np.ndarray:
    """Chunk IDs (uint64) of postings ``0, step, 2*step, ...`` of CSR postings (``offsets``
    may be uint32 or uint64; not copied whole)."""
    n = int(offsets[-1]) if len(offsets) else 0
    if n == 0:
        return np.zeros(0, np.uint64)
    pos = np.arange(0, n, step, dtype=np.uint64).astype(np.asarray(offsets[:1]).dtype)
    chunk = np.searchsorted(offsets, pos, side="right") - 1
    return np.asarray(keys[chunk], dtype=np.uint64)


def piece_bounds(samples: list[np.ndarray], step: int, piece: int, lo: int, hi: int) -> list[int]:
    """Cut ``[lo, hi)`` into pieces of about ``piece`` postings: ``[lo, b_1, ..., hi]``
    (Python ints, increasing) where each sample (chunk IDs of postings ``step`` apart in one
    input) stands for ``step`` postings. Every ``piece // step``-th sample of their sorted
    union becomes a bound (equal ones once: a chunk's postings stay in one piece)."""
    every = max(1, piece // step)
    parts = [s for s in samples if len(s)]
    if not parts:
        return [lo, hi]
    merged = np.sort(np.concatenate(parts))
    cuts = np.unique(merged[every::every])
    out = [lo, *(int(c) for c in cuts.tolist() if lo < int(c) < hi), hi]
    return out


def _first_at_least(run: np.ndarray, chunk: int) -> int:
    """The first row of a sorted run whose chunk ID is ``>= chunk`` (binary search reading
    ~log2(n) rows)."""
    if chunk >= 2**64:
        return len(run)
    if run.ndim == 2:
        col = run[:, 0]
        return bisect.bisect_left(range(len(run)), chunk, key=lambda i: int(col[i]))
    key = np.uint64(chunk << 32) if chunk < 2**32 else None
    if key is None:
        return len(run)
    return int(np.searchsorted(run, key))


def run_cuts(run: np.ndarray, bounds: list[int]) -> list[int]:
    """For each bound, the first row of a sorted run whose chunk ID is ``>= bound``: piece
    ``i`` of the run is rows ``cuts[i]:cuts[i + 1]``."""
    return [_first_at_least(run, b) for b in bounds]


def run_slice(run: np.ndarray, a: int, b: int) -> np.ndarray:
    """The rows of a sorted run whose chunk ID is in ``[a, b)``, copied into memory."""
    i, j = _first_at_least(run, a), _first_at_least(run, b)
    return np.array(run[i:j])


def csr_slice(
    keys: np.ndarray, offsets: np.ndarray, docs: np.ndarray, a: int, b: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The postings of chunks in ``[a, b)`` of CSR postings (possibly memory maps; offsets
    uint32 or uint64), copied: ``(chunk_keys, offsets (uint64, from 0), doc_ids)``."""
    dtype = np.asarray(keys[:0]).dtype
    if a >= 2**64 or (dtype == np.uint32 and a >= 2**32):
        i = len(keys)
    else:
        i = int(np.searchsorted(keys, np.array(a, dtype=dtype)))
    if b >= 2**64 or (dtype == np.uint32 and b >= 2**32):
        j = len(keys)
    else:
        j = int(np.searchsorted(keys, np.array(b, dtype=dtype)))
    off = np.asarray(offsets[i : j + 1], dtype=np.uint64)
    start = int(off[0]) if len(off) else 0
    out_off = off - np.uint64(start) if len(off) else np.zeros(1, np.uint64)
    end = int(off[-1]) if len(off) else 0
    return np.array(keys[i:j]), out_off, np.array(docs[start:end])
