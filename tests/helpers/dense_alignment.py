"""Dense references for the aligner's sentence-pair similarity (:mod:`simdask.alignment.pairs`).

``dense_similarity`` and ``dense_shared_rare`` are the aligner's former implementation: full
``(sentences of A, sentences of B)`` arrays from one ``bincount`` over every pair of entries
(one of A, one of B) with the same term, sorted by term. The blocked code must give exactly
(bit for bit) their values. ``DenseCosine`` serves a dense cosine matrix through the interface
the extension and filtering use (:class:`simdask.alignment.extend.CosineLookup`).
"""

from __future__ import annotations

import numpy as np

from simdask.alignment.vectors import SentenceVectors


def _by_term(v: SentenceVectors, shared: np.ndarray):
    sent = np.repeat(np.arange(len(v.norm)), np.diff(v.offsets))
    keep = np.flatnonzero(shared[v.term])
    order = keep[np.argsort(v.term[keep], kind="stable")]
    return v.term[order], sent[order], v.weight[order]


def _joined(a: SentenceVectors, b: SentenceVectors, keep: np.ndarray):
    nb = len(b.norm)
    ta, sa, wa = _by_term(a, keep)
    tb, sb, wb = _by_term(b, keep)
    lo = np.searchsorted(tb, ta, side="left")
    count = np.searchsorted(tb, ta, side="right") - lo
    total = int(count.sum())
    ia = np.repeat(np.arange(len(ta)), count)
    ib = np.repeat(lo - (np.cumsum(count) - count), count) + np.arange(total)
    return sa[ia] * nb + sb[ib], wa[ia] * wb[ib]


def _shared(a: SentenceVectors, b: SentenceVectors) -> np.ndarray:
    shared = np.zeros(a.n_terms, dtype=bool)
    shared[a.term] = True
    in_b = np.zeros(a.n_terms, dtype=bool)
    in_b[b.term] = True
    return shared & in_b


def dense_similarity(a: SentenceVectors, b: SentenceVectors) -> tuple[np.ndarray, np.ndarray]:
    """Cosine and Dice of every sentence pair, dense ``(na, nb)`` float arrays."""
    na, nb = len(a.norm), len(b.norm)
    pair, product = _joined(a, b, _shared(a, b))
    dot = np.bincount(pair, product, minlength=na * nb).reshape(na, nb)
    inter = np.bincount(pair, minlength=na * nb).reshape(na, nb)
    with np.errstate(divide="ignore", invalid="ignore"):
        cos = dot / np.outer(a.norm, b.norm)
        dice = 2.0 * inter / (a.size[:, None] + b.size[None, :])
    return np.nan_to_num(cos, nan=0.0, posinf=0.0), np.nan_to_num(dice, nan=0.0, posinf=0.0)


def dense_shared_rare(a: SentenceVectors, b: SentenceVectors, max_share: float) -> np.ndarray:
    """Per sentence pair: whether the two share a term held by at most ``max_share`` of all
    sentences of both texts (or by 2)."""
    na, nb = len(a.norm), len(b.norm)
    df = np.bincount(a.term, minlength=a.n_terms) + np.bincount(b.term, minlength=b.n_terms)
    rare = _shared(a, b) & (df <= max(2.0, max_share * (na + nb)))
    pair, _ = _joined(a, b, rare)
    return np.bincount(pair, minlength=na * nb).reshape(na, nb) > 0


class DenseCosine:
    """A dense cosine matrix (A sentences x B sentences) as a cosine lookup."""

    def __init__(self, cos: np.ndarray) -> None:
        self.cos = cos

    def best_in_b(self, rows, first: int, last: int):
        block = self.cos[np.asarray(rows), first : last + 1]
        return block.max(axis=1), first + block.argmax(axis=1)

    def best_in_a(self, cols, first: int, last: int):
        block = self.cos[first : last + 1, np.asarray(cols)]
        return block.max(axis=0), first + block.argmax(axis=0)

    def pairs(self, i, j) -> np.ndarray:
        return self.cos[np.asarray(i), np.asarray(j)]
