"""Passages inside other passages (issue 31 item 7): a chance match of a few words inside a
copied passage adds nothing to it, and two copies of a long text give thousands of them.
Pure numpy on the passages' offsets (:class:`~simdask.evidence.passages.Passage`)."""

from __future__ import annotations

import numpy as np

__all__ = ["outermost"]

#: passages compared with all others at once in :func:`outermost` (a block of rows)
_BLOCK = 512


def outermost(found: list) -> list:
    """The passages of ``found`` (in their order) that lie inside no other (within it in
    both documents and not the larger: a chance match of a few words inside a copied passage,
    which adds nothing to it), by blocks of numpy comparisons: the
    same answer as testing every pair in Python, in O(n^2 / 64) vector work instead of
    O(n^2) calls (a licence text can give thousands of passages). Most passages inside
    another lie inside one of the largest (chance matches inside a long copied passage):
    those are found first, against the :data:`_BLOCK` largest only, and only the rest is
    compared with every passage (two copies of a 285 kB licence: 108,000 passages, of which
    a handful are compared with all)."""
    if len(found) < 2:
        return list(found)
    cols = np.array(
        [(p.doc_start, p.doc_end, p.other_start, p.other_end, p.chunks, p.words) for p in found],
        dtype=np.int64,
    )
    largest = cols[np.lexsort((-cols[:, 5], -cols[:, 4]))[:_BLOCK]]
    inner = _inside_any(cols, largest)
    rest = np.flatnonzero(~inner)
    inner[rest] = _inside_any(cols[rest], cols)
    return [p for p, drop in zip(found, inner.tolist(), strict=True) if not drop]


def _inside_any(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Per passage of ``rows`` (the columns of :func:`outermost`), whether it lies inside
    one of ``cols`` (and is not the larger), by blocks of :data:`_BLOCK` rows."""
    ds, de, os_, oe, ch, wd = cols.T
    inner = np.zeros(len(rows), dtype=bool)
    for lo in range(0, len(rows), _BLOCK):
        p = rows[lo : lo + _BLOCK, :, None]  # rows: p; columns: every q
        larger = (ch > p[:, 4]) | ((ch == p[:, 4]) & (wd > p[:, 5]))
        within = (ds <= p[:, 0]) & (p[:, 1] <= de) & (os_ <= p[:, 2]) & (p[:, 3] <= oe)
        inner[lo : lo + _BLOCK] = (within & larger).any(axis=1)
    return inner
