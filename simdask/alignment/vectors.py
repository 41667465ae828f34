"""tf-isf sentence vectors of two texts over their own vocabulary (Sanchez-Perez et al.
2014): each sentence of either text is a "document", the sentences of both texts the
"collection"; a term's weight in a sentence is its count times ``log(|D| / sentences with
the term)``. Pure numpy: sparse entries per text; the similarity of sentence pairs is
:mod:`.pairs` (blocked, bounded memory).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "SentenceVectors",
    "fragment_cosine",
    "sentence_vectors",
]


@dataclass(frozen=True)
class SentenceVectors:
    """Sparse tf-isf vectors of one text's sentences: entries ``(term, weight)`` sorted by
    sentence, sentence ``s`` owning ``offsets[s]:offsets[s + 1]``; ``norm`` (Euclidean) and
    ``size`` (distinct terms) per sentence."""

    term: np.ndarray
    weight: np.ndarray
    offsets: np.ndarray
    norm: np.ndarray
    size: np.ndarray
    n_terms: int


def _entries(term: np.ndarray, sent: np.ndarray, n_sent: int, n_terms: int):
    key = sent * n_terms + term
    uniq, counts = np.unique(key, return_counts=True)
    return uniq // n_terms, uniq % n_terms, counts.astype(np.float64)


def sentence_vectors(
    terms: tuple[np.ndarray, np.ndarray],
    sents: tuple[np.ndarray, np.ndarray],
    n_sents: tuple[int, int],
    n_terms: int,
) -> tuple[SentenceVectors, SentenceVectors]:
    """The vectors of texts A and B from their term IDs (``0 <= id < n_terms``, one per
    content word) and the sentence of each word; isf over the sentences of both texts."""
    parts = [_entries(t, s, n, n_terms) for t, s, n in zip(terms, sents, n_sents, strict=True)]
    df = np.zeros(n_terms, dtype=np.float64)
    for _, term, _ in parts:
        df += np.bincount(term, minlength=n_terms)
    isf = np.log(max(sum(n_sents), 1) / np.maximum(df, 1.0))
    out = []
    for (sent, term, tf), n in zip(parts, n_sents, strict=True):
        weight = tf * isf[term]
        offsets = np.searchsorted(sent, np.arange(n + 1))
        norm = np.sqrt(np.bincount(sent, weight * weight, minlength=n))
        size = np.bincount(sent, minlength=n).astype(np.float64)
        out.append(SentenceVectors(term, weight, offsets, norm, size, n_terms))
    return out[0], out[1]


def _fragment(v: SentenceVectors, first: int, last: int) -> np.ndarray:
    lo, hi = v.offsets[first], v.offsets[last + 1]
    return np.bincount(v.term[lo:hi], v.weight[lo:hi], minlength=v.n_terms)


def fragment_cosine(
    a: SentenceVectors, a_range: tuple[int, int], b: SentenceVectors, b_range: tuple[int, int]
) -> float:
    """Cosine of the sums of the vectors of sentences ``a_range`` (first, last; inclusive)
    of A and ``b_range`` of B (the validation of a passage), in [0, 1]."""
    x, y = _fragment(a, *a_range), _fragment(b, *b_range)
    # sqrt(x . x) is what np.linalg.norm computes for a vector, bit for bit, without its
    # per-call checks (a pair validates thousands of fragments)
    denom = math.sqrt(x.dot(x)) * math.sqrt(y.dot(y))
    return float(x.dot(y) / denom) if denom > 0 else 0.0
