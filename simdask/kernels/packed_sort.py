"""Sorting several non-negative integer columns as one packed uint64 key.

``np.sort`` of one uint64 array (a vectorised sort, no index array) is several times cheaper
than ``np.argsort`` or ``np.lexsort`` followed by gathering every column through the order
(the gathers are random reads). When the columns' values fit side by side in 64 bits, each
column shifted left by the widths of those after it, one sorted packed array holds the
columns in lexicographic order and unpacks with shifts and masks. Each function here takes
that path when the values fit and the general one otherwise; both give the same result
(tests/test_packed_sort.py). Used by the candidate partners' kernels
(:mod:`simdask.kernels.candidate_ranges`, :mod:`simdask.kernels.content_ngrams`). Pure numpy.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bit_width", "distinct_pairs", "group_floor", "sums_by_key", "top_per_row"]


def bit_width(a: np.ndarray) -> int:
    """Bits needed for the largest value of the non-negative integer array ``a`` (0 when
    empty or all zero)."""
    return int(a.max()).bit_length() if len(a) else 0


def _pack(columns: list[np.ndarray], widths: list[int]) -> np.ndarray:
    """The columns side by side (the first the most significant), as uint64."""
    out = np.zeros(len(columns[0]), np.uint64)
    for col, width in zip(columns, widths, strict=True):
        out <<= np.uint64(width)
        out |= col.astype(np.uint64, copy=False)
    return out


def _unpack(packed: np.ndarray, width: int, shift: int) -> np.ndarray:
    """The column of ``width`` bits at ``shift`` bits from the right of ``packed``."""
    return (packed >> np.uint64(shift)) & np.uint64((1 << width) - 1)


def distinct_pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pairs ``(a[i], b[i])`` of two non-negative integer arrays sorted by
    ``a``, then ``b``, in the arrays' dtypes. Input already so sorted costs one pass."""
    if len(a) == 0:
        return a, b
    ordered = bool(np.all((a[1:] > a[:-1]) | ((a[1:] == a[:-1]) & (b[1:] >= b[:-1]))))
    if not ordered:
        wa, wb = bit_width(a), bit_width(b)
        if wa + wb <= 64:
            packed = np.sort(_pack([a, b], [wa, wb]))
            a = _unpack(packed, wa, wb).astype(a.dtype)
            b = _unpack(packed, wb, 0).astype(b.dtype)
        else:
            order = np.lexsort((b, a))
            a, b = a[order], b[order]
    keep = np.ones(len(a), dtype=bool)
    keep[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    return a[keep], b[keep]


def sums_by_key(key: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct ``key`` (uint64) and the int64 sum of ``w`` (non-negative integers)
    over each."""
    if len(key) == 0:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64)
    key = np.asarray(key, np.uint64)
    w = np.asarray(w, np.int64)
    wk, ww = bit_width(key), bit_width(w)
    if wk + ww <= 64 and int(w.min()) >= 0:
        packed = np.sort(_pack([key, w], [wk, ww]))
        key = packed >> np.uint64(ww)
        w = _unpack(packed, ww, 0).astype(np.int64)
    else:
        order = np.argsort(key)  # sums do not depend on the order of equal keys
        key, w = key[order], w[order]
    new = np.ones(len(key), dtype=bool)
    new[1:] = key[1:] != key[:-1]
    starts = np.flatnonzero(new)
    return key[starts], np.add.reduceat(w, starts)


def top_per_row(
    row: np.ndarray, other: np.ndarray, score: np.ndarray, depth: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``depth`` best ``(row, other, score)`` triples of each row (non-negative
    integers; distinct ``(row, other)``): by row ascending, then score descending, ties to
    the smaller ``other``; int64."""
    row, other, score = (np.asarray(x, np.int64) for x in (row, other, score))
    if len(row) == 0:
        return row, other, score
    wr, ws, wo = bit_width(row), bit_width(score), bit_width(other)
    if wr + ws + wo <= 64 and int(score.min()) >= 0:
        top = (1 << ws) - 1
        packed = np.sort(_pack([row, top - score, other], [wr, ws, wo]))
        row = _unpack(packed, wr, ws + wo).astype(np.int64)
        score = top - _unpack(packed, ws, wo).astype(np.int64)
        other = _unpack(packed, wo, 0).astype(np.int64)
    else:
        order = np.lexsort((other, -score, row))
        row, other, score = row[order], other[order], score[order]
    new = np.ones(len(row), dtype=bool)
    new[1:] = row[1:] != row[:-1]
    starts = np.flatnonzero(new)
    rank = np.arange(len(row)) - np.repeat(starts, np.diff(np.append(starts, len(row))))
    keep = rank < depth
    return row[keep], other[keep], score[keep]


def group_floor(row: np.ndarray, score: np.ndarray, depth: int) -> np.ndarray:
    """A mask keeping, of each run of equal ``row`` (rows grouped, e.g. sorted), the entries
    whose ``score`` is at least the run's ``depth``-th largest: every entry that
    :func:`top_per_row` could keep (ties at the floor included), so that it sorts only those.
    One ``np.partition`` per run longer than ``depth`` (a loop over the runs)."""
    keep = np.ones(len(row), dtype=bool)
    if len(row) <= depth:
        return keep
    new = np.ones(len(row), dtype=bool)
    new[1:] = row[1:] != row[:-1]
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], len(row))
    long = np.flatnonzero(ends - starts > depth)
    for a, b in zip(starts[long].tolist(), ends[long].tolist(), strict=True):
        part = score[a:b]
        cut = b - a - depth  # the depth-th largest sits here in ascending order
        keep[a:b] = part >= np.partition(part, cut)[cut]
    return keep
