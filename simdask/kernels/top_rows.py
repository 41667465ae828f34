"""Each document's best rows: the ranking of similarity rows (:func:`top_k_rows`) and the fold
that keeps the best ``top_k`` rows a document of rows arriving block by block
(:class:`RowFold`), in bounded memory.

A row is ``(doc, other, shared, similarity)``; a document's rows rank by highest similarity,
then lowest ``other``. Every ``(doc, other)`` comes from one block in the similarity stage, so
within a document the ranking is a strict order, and the best ``k`` of a union of rows are the
best ``k`` of the best ``k`` of its parts: folding is exact, whatever the cuts.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from simdask.errors import ConfigError
from simdask.kernels.arrays import run_starts

__all__ = ["PART_DOCS", "RowFold", "Rows", "is_ranked", "list_bars", "narrow", "top_k_rows"]

#: similarity rows as four columns ``(doc, other, shared, similarity)``
Rows = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def top_k_rows(
    doc: np.ndarray, other: np.ndarray, shared: np.ndarray, sim: np.ndarray, k: int
) -> Rows:
    """Keep each doc's best ``k`` rows: highest similarity, then lowest ``other`` (deterministic).

    Returns the four arrays filtered and sorted by ``(doc, -similarity, other)`` (equal rows
    in their input order). Rows already in that order (:func:`is_ranked`) are not sorted
    again, and when none is cut the input arrays themselves are returned. Rows whose
    similarity ranks as their ``shared`` count does within a document (the similarity stage's
    rows: ``containment(shared, |doc|)``) are sorted by one packed integer key
    (:func:`_counted_order`, ~5x faster than the three-key lexsort); any other input falls
    back to the lexsort, with the same result.
    """
    if is_ranked(doc, other, sim):
        if len(doc) == 0:
            return doc, other, shared, sim
        rank = _ranks(doc)
        if int(rank.max()) < k:
            return doc, other, shared, sim
        cut = rank < k
        return doc[cut], other[cut], shared[cut], sim[cut]
    order = _counted_order(doc, other, shared, sim)
    if order is None:
        order = np.lexsort((other, -sim, doc))
    keep = order[_ranks(doc[order]) < k]
    return doc[keep], other[keep], shared[keep], sim[keep]


def _ranks(sdoc: np.ndarray) -> np.ndarray:
    """Rank of each row within its document (int64) for rows sorted by document."""
    idx = np.arange(len(sdoc))
    return idx - np.maximum.accumulate(np.where(run_starts(sdoc), idx, 0))


def is_ranked(doc: np.ndarray, other: np.ndarray, sim: np.ndarray) -> bool:
    """Whether the rows are in :func:`top_k_rows` order already: ascending ``doc``, then
    descending ``sim``, then ascending ``other`` (ties allowed: a stable sort leaves them).
    Costs a few bytes a row (boolean temporaries), none of the sort's index arrays."""
    if len(doc) < 2:
        return True
    d0, d1 = doc[:-1], doc[1:]
    if not bool(np.all(d1 >= d0)):
        return False
    same = d1 == d0
    s0, s1 = sim[:-1], sim[1:]
    ok = (s1 < s0) | ((s1 == s0) & (other[1:] >= other[:-1]))
    return bool(np.all(ok | ~same))


def _counted_order(
    doc: np.ndarray, other: np.ndarray, shared: np.ndarray, sim: np.ndarray
) -> np.ndarray | None:
    """The stable order by ``(doc, -similarity, other)`` from a stable argsort of one uint64
    key ``doc | max - shared | other``, or None when that key does not give it: widths over 64
    bits, negative values, or a document whose similarity does not rank as ``shared`` (checked
    on the sorted rows: within a document, similarity non-increasing and equal exactly where
    ``shared`` is equal; then the two orders are the same)."""
    if len(doc) == 0:
        return np.zeros(0, np.int64)
    lows = (int(doc.min()), int(other.min()), int(shared.min()))
    if min(lows) < 0:
        return None
    db, ob, sb = (int(x.max()).bit_length() for x in (doc, other, shared))
    if db + ob + sb > 64:
        return None
    s = np.uint64((1 << sb) - 1) - shared.astype(np.uint64)
    key = (doc.astype(np.uint64) << np.uint64(ob + sb)) | (s << np.uint64(ob))
    key |= other.astype(np.uint64)
    order = np.argsort(key, kind="stable")
    del key, s
    d, sh, sm = doc[order], shared[order], sim[order]
    same = d[1:] == d[:-1]
    ok = (sm[1:] <= sm[:-1]) & ((sm[1:] == sm[:-1]) == (sh[1:] == sh[:-1]))
    return order if bool(np.all(ok | ~same)) else None


def narrow(a: np.ndarray) -> np.ndarray:
    """``a`` as uint32 when it holds integers in ``0 .. 2**32 - 1`` (a copy), else ``a``
    itself: the same values in 4 bytes instead of 8."""
    if a.dtype.kind not in "iu" or a.dtype.itemsize <= 4:
        return a
    if len(a) and (int(a.min()) < 0 or int(a.max()) > np.iinfo(np.uint32).max):
        return a
    return a.astype(np.uint32)


def list_bars(
    doc: np.ndarray, other: np.ndarray, sim: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For rows ranked and cut to ``k`` a document (:func:`top_k_rows` output): the documents
    holding ``k`` rows and their ``k``-th row's ``(sim, other)``, the bar a new row of that
    document must pass to enter its list. Returns ``(docs, sim, other)``."""
    if len(doc) < k or k < 1:
        return doc[:0], sim[:0], other[:0]
    starts = np.flatnonzero(run_starts(doc))
    counts = np.diff(np.append(starts, len(doc)))
    last = starts[counts >= k] + (k - 1)
    return doc[last], sim[last], other[last]


#: documents a :class:`RowFold` part covers (consecutive doc IDs): a fold sorts at most
#: ``1.5 * top_k`` rows of each, ~5.8 M rows at ``top_k`` 117 (~0.4 GB of temporaries when every
#: list is full; all documents at once at 1M was ~5 GB, docs/scale.md)
PART_DOCS = 1 << 15


def _map_rows(f: Callable[[np.ndarray], np.ndarray], rows: Rows) -> Rows:
    """``f`` applied to each of the four columns."""
    return f(rows[0]), f(rows[1]), f(rows[2]), f(rows[3])


class _Part:
    """A range of documents' kept rows (ranked, cut) and the rows waiting to be folded in."""

    __slots__ = ("kept", "n_kept", "n_waiting", "waiting")

    def __init__(self) -> None:
        self.kept: Rows | None = None
        self.n_kept = 0
        self.waiting: list[Rows] = []
        self.n_waiting = 0


class RowFold:
    """The best ``top_k`` rows per document of rows arriving block by block, exactly
    :func:`top_k_rows` of all of them, in memory bounded by the kept rows.

    - **Parts.** Documents are cut into ranges of ``part_docs`` doc IDs; each part keeps its
      rows ranked and cut, and folds its waiting rows in once they number at least
      ``max(min_rows, its kept rows / 2)``. A fold sorts one part, never all rows, and each
      row is sorted about three times.
    - **Bars.** A document whose list holds ``top_k`` rows has a bar, its ``top_k``-th row:
      an arriving row not ranking above it can never enter the list and is dropped on
      arrival (counted in ``dropped``), before it is copied or waits.
    - **Narrow columns.** Kept and waiting rows hold integer columns as uint32 when their
      values fit (:func:`narrow`): 20 bytes a row instead of 32, in the result too (the
      same values: the commit stores Python ints).

    The driver holds the kept rows (at most ``top_k`` a document), up to half as many again
    waiting, and one part's fold temporaries.
    """

    def __init__(self, top_k: int, min_rows: int, part_docs: int = PART_DOCS):
        if top_k < 1 or part_docs < 1:
            raise ConfigError(f"expected top_k >= 1 and part_docs >= 1, found {top_k}, {part_docs}")
        self.top_k, self.min_rows, self.part_docs = top_k, min_rows, part_docs
        self.parts: dict[int, _Part] = {}
        self.bar_sim = np.zeros(0)
        self.bar_other = np.zeros(0, np.int64)
        self.dtypes: list[np.dtype] | None = None
        self.folds = self.dropped = 0

    @property
    def n_waiting(self) -> int:
        """Rows waiting to be folded in, all parts."""
        return sum(p.n_waiting for p in self.parts.values())

    @property
    def n_kept(self) -> int:
        """Rows kept (ranked and cut), all parts."""
        return sum(p.n_kept for p in self.parts.values())

    def add(self, rows: Rows) -> None:
        """Take one block's rows ``(doc, other, shared, similarity)`` (doc IDs >= 0)."""
        dts = [c.dtype for c in rows]
        self.dtypes = dts if self.dtypes is None else list(map(np.result_type, self.dtypes, dts))
        doc, other, shared, sim = rows
        if not len(doc):
            return
        self._grow(int(doc.max()) + 1)
        bs = self.bar_sim[doc]
        better = (sim > bs) | ((sim == bs) & (other < self.bar_other[doc]))
        del bs
        n_better = int(np.count_nonzero(better))
        self.dropped += len(doc) - n_better
        if n_better == 0:
            return
        cols: Rows = (doc, other, shared, sim)
        if n_better < len(doc):
            cols = (doc[better], other[better], shared[better], sim[better])
        del better
        part = cols[0] // self.part_docs
        if len(part) > 1 and not bool(np.all(part[1:] >= part[:-1])):
            order = np.argsort(part, kind="stable")
            part = part[order]
            cols = _map_rows(lambda c: c[order], cols)
        cols = _map_rows(narrow, cols)
        starts = np.flatnonzero(run_starts(part))
        ends = np.append(starts[1:], len(part))
        for lo, hi in zip(starts.tolist(), ends.tolist(), strict=True):
            p = self.parts.setdefault(int(part[lo]), _Part())
            d, o, sh, si = (c[lo:hi].copy() for c in cols)  # copies: the block goes
            p.waiting.append((d, o, sh, si))
            p.n_waiting += hi - lo
            if p.n_waiting >= max(self.min_rows, p.n_kept // 2):
                self._fold(p)

    def _grow(self, n: int) -> None:
        """Bars for doc IDs below ``n`` (new ones: none, every row passes)."""
        have = len(self.bar_sim)
        if n <= have:
            return
        n = max(n, 2 * have)
        self.bar_sim = np.concatenate([self.bar_sim, np.full(n - have, -np.inf)])
        fill = np.full(n - have, np.iinfo(np.int64).max, np.int64)
        self.bar_other = np.concatenate([self.bar_other, fill])

    def _fold(self, p: _Part) -> None:
        parts = ([p.kept] if p.kept is not None else []) + p.waiting
        p.kept, p.waiting, p.n_waiting = None, [], 0
        doc, other, shared, sim = (np.concatenate([x[i] for x in parts]) for i in range(4))
        del parts
        kept = top_k_rows(doc, other, shared, sim, self.top_k)
        p.kept, p.n_kept = kept, len(kept[0])
        del doc, other, shared, sim
        d, s, o = list_bars(kept[0], kept[1], kept[3], self.top_k)
        self.bar_sim[d] = s
        self.bar_other[d] = o
        self.folds += 1

    def result(self, release: Callable[[], object] | None = None) -> Rows | None:
        """The folded rows ``(doc, other, shared, similarity)``, ranked and cut as
        :func:`top_k_rows` gives them (the same values; integer columns as uint32 where they
        fit, :func:`narrow`). None: no row came. Empties the fold, one column at a time: at
        most the kept rows and one column twice. ``release`` is called once the parts of
        each column are freed (the engine passes :func:`~simdask.cluster.heap.trim_heap`:
        the parts lie in the heap, the result's columns do not, so untrimmed the process
        would hold both)."""
        if self.dtypes is None:
            return None
        for p in self.parts.values():
            if p.waiting:
                self._fold(p)
        kept = [self.parts[key].kept for key in sorted(self.parts)]
        self.parts = {}
        columns: list[list[np.ndarray] | None] = [
            [k[i] for k in kept if k is not None] for i in range(4)
        ]
        del kept
        out = []
        for i, dt in enumerate(self.dtypes):
            col = columns[i]
            out.append(np.concatenate(col) if col else np.zeros(0, narrow(np.zeros(0, dt)).dtype))
            columns[i] = None  # this column's parts go
            if release is not None:
                release()
        return out[0], out[1], out[2], out[3]
