"""Sentence-pair similarity of two texts in bounded memory: the tf-isf cosine and the Dice
coefficient of sentence pairs (sentence of A, sentence of B), computed in blocks.

Two texts of ``na`` and ``nb`` sentences have ``na * nb`` sentence pairs (two 300-page books:
about 2 * 10**8), so nothing here holds them all. Work goes in *tiles*: rows of A (a run of
sentences) against a range of B's sentences, at most ``block`` sentence pairs and at most
``block`` entries of A each; the entries of A and B sharing a term are joined in pieces of at
most ``block`` entry pairs (a term held by very many sentences of both texts makes many
pieces, never a large array). Every temporary is therefore O(``block``).

- :func:`similar_pairs` keeps only the pairs the seeding needs (those passing the lowest seed
  thresholds and sharing a rare term) and counts the pairs passing other thresholds (the
  "uniformly similar" rule), stopping early once that count reaches a limit.
- :class:`SentenceCosine` gives the cosine of sentence pairs on demand: the best B sentence
  of a range for given A sentences (and the reverse), and the cosine of given pairs.

Results are bit-identical to the dense definition (``dot / outer(norms)``): a pair's weight
products are always summed in increasing term order starting from 0.0, sequentially
(``bincount``, or ``np.add.at`` when a tile's join takes several pieces), as the dense
``bincount`` over all entry pairs sorted by term did.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from simdask.alignment.vectors import SentenceVectors

__all__ = ["DEFAULT_BLOCK", "SentenceCosine", "SentencePairs", "rare_terms", "similar_pairs"]

#: sentence pairs (and entries, and joined entry pairs) per tile
DEFAULT_BLOCK = 1 << 18


@dataclass(frozen=True)
class _Side:
    """One text's entries sorted by (term, sentence): ``key = term * sentences + sentence``."""

    vectors: SentenceVectors
    key: np.ndarray
    sent: np.ndarray
    weight: np.ndarray


def _side(v: SentenceVectors) -> _Side:
    n = len(v.norm)
    sent = np.repeat(np.arange(n, dtype=np.int64), np.diff(v.offsets))
    key = v.term.astype(np.int64) * n + sent
    order = np.argsort(key, kind="stable")
    return _Side(v, key[order], sent[order], v.weight[order])


def _row_blocks(v: SentenceVectors, rows: np.ndarray, width: int, block: int) -> Iterator:
    """Consecutive slices of ``rows`` (sorted sentence numbers) of at most ``block // width``
    rows and at most ``block`` entries (at least one row each)."""
    height = max(1, block // width)
    lengths = v.offsets[rows + 1] - v.offsets[rows]
    ends = np.cumsum(lengths)
    r0 = 0
    while r0 < len(rows):
        before = ends[r0] - lengths[r0]
        by_entries = int(np.searchsorted(ends, before + block, side="right"))
        r1 = min(r0 + height, len(rows), max(by_entries, r0 + 1))
        yield rows[r0:r1]
        r0 = r1


def _entries(v: SentenceVectors, rows: np.ndarray):
    """The entries of sentences ``rows``, in (row, term) order: term, row position, weight."""
    lo = v.offsets[rows]
    n = v.offsets[rows + 1] - lo
    idx = np.repeat(lo - (np.cumsum(n) - n), n) + np.arange(int(n.sum()))
    return v.term[idx], np.repeat(np.arange(len(rows)), n), v.weight[idx]


def _tile(x: SentenceVectors, y: _Side, rows: np.ndarray, cols: tuple[int, int], block: int, rare):
    """Dot products, shared-term counts and (given ``rare``, bool per term) shared rare-term
    counts of sentences ``rows`` of X against sentences ``cols[0] <= j < cols[1]`` of Y:
    arrays of shape ``(len(rows), cols[1] - cols[0])``."""
    c0, c1 = cols
    width = c1 - c0
    size = len(rows) * width
    term, pos, weight = _entries(x, rows)
    base = term * len(y.vectors.norm)
    lo = np.searchsorted(y.key, base + c0)
    count = np.searchsorted(y.key, base + c1) - lo
    ends = np.cumsum(count)
    total = int(ends[-1]) if len(ends) else 0
    dot: np.ndarray = np.zeros(size)
    inter = np.zeros(size, dtype=np.int64)
    shared_rare = np.zeros(size, dtype=np.int64) if rare is not None else None
    for p0 in range(0, total, block):
        if total <= block:
            k = np.repeat(np.arange(len(count)), count)
            ib = np.arange(total) - np.repeat(ends - count - lo, count)
        else:
            p = np.arange(p0, min(p0 + block, total))
            k = np.searchsorted(ends, p, side="right")
            ib = p - (ends[k] - count[k] - lo[k])
        cell = pos[k] * width + (y.sent[ib] - c0)
        product = weight[k] * y.weight[ib]
        if total <= block:
            dot = np.bincount(cell, product, minlength=size)
            inter = np.bincount(cell, minlength=size)
        else:  # several pieces: add each product in order (exactly as one bincount would)
            np.add.at(dot, cell, product)
            inter += np.bincount(cell, minlength=size)
        del product
        if shared_rare is not None:
            shared_rare += np.bincount(cell[rare[term[k]]], minlength=size)
    shape = (len(rows), width)
    return (
        dot.reshape(shape),
        inter.reshape(shape),
        (None if shared_rare is None else shared_rare.reshape(shape)),
    )


def _cosine(dot: np.ndarray, norm_x: np.ndarray, norm_y: np.ndarray) -> np.ndarray:
    """``dot / outer(norm_x, norm_y)``, 0 where undefined (in place: ``dot`` is reused)."""
    denom = np.outer(norm_x, norm_y)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(dot, denom, out=dot)
    return np.nan_to_num(dot, copy=False, nan=0.0, posinf=0.0)


def _dice(inter: np.ndarray, size_x: np.ndarray, size_y: np.ndarray) -> np.ndarray:
    dice = np.multiply(inter, 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(dice, np.add.outer(size_x, size_y), out=dice)
    return np.nan_to_num(dice, copy=False, nan=0.0, posinf=0.0)


def rare_terms(a: SentenceVectors, b: SentenceVectors, max_share: float) -> np.ndarray:
    """Per term (bool): held by sentences of both texts and by at most ``max_share`` of all
    sentences of both (or by 2)."""
    df_a = np.bincount(a.term, minlength=a.n_terms)
    df_b = np.bincount(b.term, minlength=b.n_terms)
    n = len(a.norm) + len(b.norm)
    return (df_a > 0) & (df_b > 0) & (df_a + df_b <= max(2.0, max_share * n))


@dataclass(frozen=True)
class SentencePairs:
    """The sentence pairs ``(i[k], j[k])`` kept by :func:`similar_pairs` (sorted by ``i``,
    then ``j``) with their cosine and Dice; ``counted``: how many of all sentence pairs
    passed the counting thresholds; ``stopped``: the count reached its limit and the scan
    stopped there (the pairs are then incomplete)."""

    i: np.ndarray
    j: np.ndarray
    cos: np.ndarray
    dice: np.ndarray
    counted: int
    stopped: bool

    def passing(self, cos_min: float, dice_min: float) -> np.ndarray:
        """The kept pairs with ``cos >= cos_min`` and ``dice >= dice_min``: int64 ``(n, 2)``."""
        ok = (self.cos >= cos_min) & (self.dice >= dice_min)
        return np.stack([self.i[ok], self.j[ok]], axis=1).astype(np.int64)


def similar_pairs(
    a: SentenceVectors,
    b: SentenceVectors,
    keep: tuple[float, float],
    count: tuple[float, float],
    rare: np.ndarray | None = None,
    stop_count: int | None = None,
    block: int = DEFAULT_BLOCK,
) -> SentencePairs:
    """The sentence pairs of A and B whose cosine and Dice are at least ``keep`` (and, given
    ``rare`` (bool per term, :func:`rare_terms`), that share a rare term), and the number of
    all sentence pairs whose cosine and Dice are at least ``count``. With ``stop_count``, the
    scan stops as soon as that number reaches it. Memory: O(``block``) besides the result."""
    na, nb = len(a.norm), len(b.norm)
    y = _side(b)
    width = max(1, min(nb, block))
    parts: list[tuple[np.ndarray, ...]] = []
    counted, stopped = 0, False
    for rows in _row_blocks(a, np.arange(na), width, block) if nb else ():
        for c0 in range(0, nb, width):
            c1 = min(c0 + width, nb)
            dot, inter, shared_rare = _tile(a, y, rows, (c0, c1), block, rare)
            cos = _cosine(dot, a.norm[rows], b.norm[c0:c1])
            dice = _dice(inter, a.size[rows], b.size[c0:c1])
            counted += int(np.count_nonzero((cos >= count[0]) & (dice >= count[1])))
            ok = (cos >= keep[0]) & (dice >= keep[1])
            if shared_rare is not None:
                ok &= shared_rare > 0
            ti, tj = np.nonzero(ok)
            parts.append((rows[ti], tj + c0, cos[ti, tj], dice[ti, tj]))
            if stop_count is not None and counted >= stop_count:
                stopped = True
                break
        if stopped:
            break
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return SentencePairs(empty, empty, np.zeros(0), np.zeros(0), counted, stopped)
    i, j, cos, dice = (np.concatenate(p) for p in zip(*parts, strict=True))
    order = np.lexsort((j, i))
    return SentencePairs(i[order], j[order], cos[order], dice[order], counted, stopped)


def _best(x: SentenceVectors, y: _Side, rows: np.ndarray, first: int, last: int, block: int):
    """For each sentence of X in ``rows``: the largest cosine with a sentence ``first..last``
    of Y and the first such sentence."""
    uniq, inverse = np.unique(rows, return_inverse=True)
    best = np.full(len(uniq), -np.inf)
    where = np.zeros(len(uniq), dtype=np.int64)
    width = max(1, min(last - first + 1, block))
    start = 0
    for part in _row_blocks(x, uniq, width, block):
        sl = slice(start, start + len(part))
        for c0 in range(first, last + 1, width):
            c1 = min(c0 + width, last + 1)
            dot, _, _ = _tile(x, y, part, (c0, c1), block, None)
            cos = _cosine(dot, x.norm[part], y.vectors.norm[c0:c1])
            arg = cos.argmax(axis=1)
            value = cos[np.arange(len(part)), arg]
            better = value > best[sl]  # strictly: ties keep the earlier sentence
            best[sl] = np.where(better, value, best[sl])
            where[sl] = np.where(better, arg + c0, where[sl])
        start += len(part)
    return best[inverse], where[inverse]


@dataclass(frozen=True)
class SentenceCosine:
    """The tf-isf cosine of sentence pairs of A and B, computed on demand in tiles of at most
    ``block`` pairs (build with :meth:`of`). When all sentence pairs fit in one tile, the
    whole matrix is computed once, at the first lookup, and kept."""

    a: _Side
    b: _Side
    block: int
    cache: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, a: SentenceVectors, b: SentenceVectors, block: int = DEFAULT_BLOCK):
        """The cosine of the sentences of A and B (tiles of ``block`` pairs)."""
        return cls(_side(a), _side(b), block)

    def _dense(self) -> np.ndarray | None:
        a, b = self.a.vectors, self.b.vectors
        na, nb = len(a.norm), len(b.norm)
        if na * nb > self.block or len(a.term) > self.block:
            return None
        if "cos" not in self.cache:
            dot, _, _ = _tile(a, self.b, np.arange(na), (0, nb), self.block, None)
            self.cache["cos"] = _cosine(dot, a.norm, b.norm)
        return self.cache["cos"]

    def best_in_b(self, rows: np.ndarray, first: int, last: int):
        """Per A sentence in ``rows``: the largest cosine with B's sentences ``first..last``
        (inclusive) and the first B sentence with it (float64 and int64 arrays)."""
        dense = self._dense()
        if dense is not None:
            part = dense[np.asarray(rows), first : last + 1]
            return part.max(axis=1), first + part.argmax(axis=1)
        return _best(self.a.vectors, self.b, np.asarray(rows), first, last, self.block)

    def best_in_a(self, cols: np.ndarray, first: int, last: int):
        """Per B sentence in ``cols``: the largest cosine with A's sentences ``first..last``
        and the first A sentence with it."""
        dense = self._dense()
        if dense is not None:
            part = dense[first : last + 1, np.asarray(cols)]
            return part.max(axis=0), first + part.argmax(axis=0)
        return _best(self.b.vectors, self.a, np.asarray(cols), first, last, self.block)

    def pairs(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """The cosine of the sentence pairs ``(i[k], j[k])`` (float64)."""
        dense = self._dense()
        if dense is not None:
            return dense[np.asarray(i), np.asarray(j)]
        return _pair_cosine(self.a.vectors, self.b, np.asarray(i), np.asarray(j), self.block)


def _pair_cosine(a: SentenceVectors, y: _Side, i: np.ndarray, j: np.ndarray, block: int):
    """The cosine of the pairs ``(i[k], j[k])``, in pieces of at most ``block`` entries of A."""
    b = y.vectors
    out = np.zeros(len(i))
    lengths = a.offsets[i + 1] - a.offsets[i]
    ends = np.cumsum(lengths)
    k0 = 0
    while k0 < len(i):
        before = ends[k0] - lengths[k0]
        k1 = max(int(np.searchsorted(ends, before + block, side="right")), k0 + 1)
        rows, cols = i[k0:k1], j[k0:k1]
        term, pos, weight = _entries(a, rows)
        target = term * len(b.norm) + cols[pos]
        at = np.minimum(np.searchsorted(y.key, target), max(len(y.key) - 1, 0))
        hit = (y.key[at] == target) if len(y.key) else np.zeros(len(at), bool)
        dot = np.bincount(pos[hit], weight[hit] * y.weight[at[hit]], minlength=k1 - k0)
        with np.errstate(divide="ignore", invalid="ignore"):
            cos = dot / (a.norm[rows] * b.norm[cols])
        out[k0:k1] = np.nan_to_num(cos, nan=0.0, posinf=0.0)
        k0 = k1
    return out
