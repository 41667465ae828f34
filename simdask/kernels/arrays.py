"""Small sorted-array primitives the other kernels share: runs of equal values and CSR range
expansion. Pure numpy, no I/O."""

from __future__ import annotations

import numpy as np

__all__ = ["add_grown", "expand_ranges", "run_lengths", "run_starts"]


def run_starts(a: np.ndarray) -> np.ndarray:
    """Boolean mask (length ``len(a)``): True where a run of equal values starts in ``a``
    (position 0, and every ``i`` with ``a[i] != a[i - 1]``)."""
    new = np.empty(len(a), dtype=bool)
    if len(a):
        new[0] = True
        np.not_equal(a[1:], a[:-1], out=new[1:])
    return new


def run_lengths(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values of sorted ``keys`` and how often each occurs (uint32)."""
    if len(keys) == 0:
        return keys, np.zeros(0, np.uint32)
    starts = np.flatnonzero(run_starts(keys))
    counts = np.empty(len(starts), dtype=np.uint32)
    counts[:-1] = np.diff(starts)
    counts[-1] = len(keys) - starts[-1]
    return keys[starts], counts


def expand_ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(starts[i], starts[i] + counts[i])`` (int64): the positions of
    CSR lists given their starts and lengths (``counts`` >= 0)."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    first = np.zeros(len(counts), dtype=np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    shift = np.asarray(starts, dtype=np.int64) - first
    return np.arange(total, dtype=np.int64) + np.repeat(shift, counts)


def add_grown(total: np.ndarray, part: np.ndarray) -> np.ndarray:
    """``total + part`` for per-document sums of maybe different lengths, the shorter read as
    zero-padded: in place when ``part`` is not longer, else into a grown copy (returned)."""
    if len(part) > len(total):
        total = np.concatenate([total, np.zeros(len(part) - len(total), total.dtype)])
    total[: len(part)] += part
    return total
