"""The heavy-only search of the ``exact`` mode on collapsed heavy sets (issue 13; docs/realtext.md).

Documents ``q`` whose heavy chunks alone could give a row are compared with every document
holding a heavy chunk: ``|heavy(q) ∩ heavy(o)|`` for all ``o``, best ``top_k`` per ``q``. In
boilerplate the heavy chunks come in blocks (the chunks of one licence paragraph are held by
exactly the same documents) and many documents hold exactly the same heavy set (the same
template), so the dense problem is much smaller than ``queries x documents x heavy chunks``:

* **groups**: heavy chunks held by exactly the same documents become one column weighted by
  their number, ``|heavy(a) ∩ heavy(b)| = Σ_g w_g [g ⊆ a] [g ⊆ b]`` (exact);
* **distinct sets**: documents with the same heavy set have the same overlap with everyone, so
  the product is taken between distinct sets only (``left @ right.T``, float32, exact: every
  sum is an integer below 2**24);
* **top-k per query without sorting**: a weighted histogram of the overlaps over the distinct
  sets (multiplicities as weights) gives each query's ``top_k``-th largest overlap ``v``; the
  rows are then every document above ``v`` and the lowest document IDs at ``v``, read off the
  overlaps expanded to documents in ID order.

On the 21,554 man pages: 1,009 heavy chunks form 453 groups; the 18,311 documents holding one
have 10,168 distinct heavy sets, the 12,064 queries 7,664.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simdask.kernels.heavy import HeavyBits
from simdask.kernels.measures import containment
from simdask.kernels.top_rows import Rows

__all__ = ["HeavyGroups", "heavy_only_rows"]


@dataclass(frozen=True)
class HeavyGroups:
    """The heavy sets of :class:`~simdask.kernels.heavy.HeavyBits` collapsed.

    ``set_of[row]``: the distinct heavy set of bitset row ``row`` (int64); ``mult[s]``: how many
    rows hold set ``s`` (int64); ``right[s, g]``: 1 when set ``s`` holds group ``g`` (float32
    0/1; a group is the heavy chunks held by exactly the same documents); ``left[s, g]``: the
    same times the group's number of chunks (float32), so that ``left[a] @ right[b]`` is the
    overlap of sets ``a`` and ``b`` in chunks; ``sizes[s]``: ``|set s|`` in chunks (int64).
    """

    set_of: np.ndarray
    mult: np.ndarray
    left: np.ndarray
    right: np.ndarray
    sizes: np.ndarray

    @classmethod
    def build(cls, bits: HeavyBits) -> HeavyGroups:
        """Distinct rows of the bitsets, then identical columns over them grouped."""
        words = bits.words  # one row of words per document
        if len(words) == 0:
            z = np.zeros((0, 0), np.float32)
            return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), z, z, np.zeros(0, np.int64))
        uniq, set_of, mult = np.unique(words, axis=0, return_inverse=True, return_counts=True)
        n_sets = len(uniq)
        dense = np.unpackbits(uniq.astype("<u8").view(np.uint8), axis=1, bitorder="little")
        cols = np.packbits(dense.T, axis=1)  # one packed column per heavy rank
        ucols, weight = np.unique(cols, axis=0, return_counts=True)
        held = ucols.any(axis=1)  # the all-zero column: ranks past the last heavy chunk
        right = np.unpackbits(ucols[held], axis=1, count=n_sets).T.astype(np.float32)
        left = right * weight[held].astype(np.float32)[None, :]
        sizes = np.rint(left.sum(axis=1, dtype=np.float64)).astype(np.int64)
        return cls(
            set_of.reshape(-1).astype(np.int64),
            mult.astype(np.int64),
            np.ascontiguousarray(left),
            np.ascontiguousarray(right),
            sizes,
        )

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays."""
        arrays = (self.set_of, self.mult, self.left, self.right, self.sizes)
        return sum(a.nbytes for a in arrays)


def heavy_only_rows(
    bits: HeavyBits,
    queries: np.ndarray,
    n_chunks: np.ndarray,
    threshold: float,
    top_k: int,
    cells: int = 1 << 22,
    groups: HeavyGroups | None = None,
) -> Rows:
    """Rows ``q -> o`` through heavy chunks only, for documents ``q`` of ``queries`` (each
    holding a heavy chunk): every ``o != q`` with ``100 |heavy(q) ∩ heavy(o)| / |q| >=
    threshold`` percent, best ``top_k`` per ``q`` (largest overlap, then lowest ``o``).

    ``groups``: :meth:`HeavyGroups.build` of ``bits`` (built here when None). Memory: tiles of
    about ``cells`` (set, set) or (query, document) cells, ~16 bytes each. Returns ``(doc,
    other, shared, similarity)`` sorted by query (in ``queries`` order), overlap descending,
    ``other`` ascending; the shared count is the heavy overlap, a lower bound of the true count
    (:func:`~simdask.kernels.heavy.merge_rows` keeps the larger).
    """
    g = HeavyGroups.build(bits) if groups is None else groups
    queries = np.asarray(queries, np.int64)
    if len(queries) == 0 or len(g.mult) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    qrow = bits.row_of[queries]
    qset = g.set_of[qrow]
    # a count s passes when 100 s / |q| >= threshold: screened with a margin here (as an
    # integer, s >= need), checked exactly with the rows' own float expression at the end
    need = np.ceil(np.maximum(threshold * n_chunks[queries] / 100.0 - 1e-6, 0.5))
    need = need.astype(np.int64)
    n_sets = len(g.mult)
    by_set = np.argsort(qset, kind="stable")
    sets, first = np.unique(qset[by_set], return_index=True)
    bounds = np.append(first, len(by_set))
    step = max(1, cells // n_sets)
    width = np.int16 if g.sizes.max() < 2**15 else np.int32
    parts = []
    for lo in range(0, len(sets), step):
        hi = min(len(sets), lo + step)
        counts = (g.left[sets[lo:hi]] @ g.right.T).astype(width)  # exact integers
        hist = _histograms(counts, g.mult, int(g.sizes.max()))
        pos = by_set[bounds[lo] : bounds[hi]]  # query positions, grouped by set
        local = np.repeat(np.arange(hi - lo), np.diff(bounds[lo : hi + 1]))
        parts.append(_select(counts, hist, local, pos, queries, qrow, g, need, top_k, bits, cells))
    p, other, shared = (np.concatenate([x[i] for x in parts]) for i in range(3))
    order = np.lexsort((other, -shared, p))
    doc, other, shared = queries[p[order]], other[order], shared[order]
    sim = containment(shared, n_chunks[doc])
    keep = sim >= threshold
    return doc[keep], other[keep], shared[keep], sim[keep]


def _histograms(counts: np.ndarray, mult: np.ndarray, top: int) -> np.ndarray:
    """Per row of ``counts`` (overlaps with every distinct set): how many documents have each
    overlap ``0 .. top`` (int64 ``(rows, top + 1)``; a set counts ``mult`` times)."""
    w = mult.astype(np.float64)
    h = np.empty((counts.shape[0], top + 1), np.int64)
    for r in range(counts.shape[0]):  # one bincount a row: no (rows x sets) index array
        h[r] = np.rint(np.bincount(counts[r], weights=w, minlength=top + 1))
    return h


def _select(
    counts: np.ndarray,
    hist: np.ndarray,
    local: np.ndarray,
    pos: np.ndarray,
    queries: np.ndarray,
    qrow: np.ndarray,
    g: HeavyGroups,
    need: np.ndarray,
    top_k: int,
    bits: HeavyBits,
    cells: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The best ``top_k`` rows of the queries at positions ``pos`` (their distinct set:
    row ``local`` of ``counts`` and ``hist``) as ``(position, other, overlap)`` int64 arrays."""
    own = g.sizes[g.set_of[qrow[pos]]]  # a query's overlap with itself
    h = hist[local]
    h[np.arange(len(pos)), own] -= 1  # not itself
    above = np.cumsum(h[:, ::-1], axis=1)[:, ::-1]  # above[i, c]: others with overlap >= c
    kth = (above >= top_k).sum(axis=1) - 1  # the top_k-th largest overlap (-1: fewer)
    v = np.maximum(kth, need[pos])  # rows: overlaps > v, and the lowest IDs at v
    top = above.shape[1]
    n_above = np.where(v + 1 < top, above[np.arange(len(pos)), np.minimum(v + 1, top - 1)], 0)
    room = top_k - n_above
    out = []
    step = max(1, cells // max(1, len(g.set_of)))
    for lo in range(0, len(pos), step):
        sl = slice(lo, lo + step)
        d = counts[local[sl]][:, g.set_of]  # (queries, documents in ID order)
        d[np.arange(d.shape[0]), qrow[pos[sl]]] = -1  # not itself
        i, j = np.nonzero(d >= np.minimum(v[sl], top)[:, None].astype(d.dtype))
        c = d[i, j].astype(np.int64)
        tie = c == v[sl][i]
        rank = np.cumsum(tie) - 1  # place among the ties, by ID (rows in order)
        rank -= np.concatenate([[0], np.cumsum(tie)])[np.searchsorted(i, i)]
        ok = ~tie | (rank < room[sl][i])
        i, j, c = i[ok], j[ok], c[ok]
        out.append((pos[sl][i], bits.docs[j].astype(np.int64), c))
    p, other, overlap = (np.concatenate([x[k] for x in out]) for k in range(3))
    return p, other, overlap
