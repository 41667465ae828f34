"""tf-isf sentence vectors of two texts over their own vocabulary (Sanchez-Perez et al.
2014): each sentence of either text is a "document", the sentences of both texts the
"collection"; a term's weight in a sentence is its count times ``log(|D| / sentences with
the term)``. Pure numpy: sparse entries per text, joined on their shared terms; the results
are dense ``(sentences of A, sentences of B)`` arrays (8 bytes a sentence pair each).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "SentenceVectors",
    "fragment_cosine",
    "sentence_similarity",
    "sentence_vectors",
    "shared_rare",
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


def _by_term(v: SentenceVectors, shared: np.ndarray):
    """The entries of ``v`` whose term is shared, sorted by term: (term, sentence, weight)."""
    sent = np.repeat(np.arange(len(v.norm)), np.diff(v.offsets))
    keep = np.flatnonzero(shared[v.term])
    order = keep[np.argsort(v.term[keep], kind="stable")]
    return v.term[order], sent[order], v.weight[order]


def _joined(a: SentenceVectors, b: SentenceVectors, keep: np.ndarray):
    """Every pair of entries (one of A, one of B) with the same term, for the terms ``keep``
    (bool per term): the sentence-pair index (``i * sentences of B + j``) and the product of
    the two weights of each."""
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


def sentence_similarity(a: SentenceVectors, b: SentenceVectors) -> tuple[np.ndarray, np.ndarray]:
    """The cosine (tf-isf) and Dice (distinct terms) of every sentence of A with every
    sentence of B: two float arrays of shape ``(sentences of A, sentences of B)``, in [0, 1].

    Sparse: every pair of entries (one of A, one of B) with the same term adds its product
    to its sentence pair (``bincount``), so the cost is the number of such entry pairs."""
    na, nb = len(a.norm), len(b.norm)
    pair, product = _joined(a, b, _shared(a, b))
    dot = np.bincount(pair, product, minlength=na * nb).reshape(na, nb)
    inter = np.bincount(pair, minlength=na * nb).reshape(na, nb)
    with np.errstate(divide="ignore", invalid="ignore"):
        cos = dot / np.outer(a.norm, b.norm)
        dice = 2.0 * inter / (a.size[:, None] + b.size[None, :])
    return np.nan_to_num(cos, nan=0.0, posinf=0.0), np.nan_to_num(dice, nan=0.0, posinf=0.0)


def shared_rare(a: SentenceVectors, b: SentenceVectors, max_share: float) -> np.ndarray:
    """Per sentence pair (A, B), how many terms the two share that are rare: held by at most
    ``max_share`` of all sentences of both texts, or by 2 (bool array, shape as
    :func:`sentence_similarity`'s: whether any)."""
    na, nb = len(a.norm), len(b.norm)
    df = np.bincount(a.term, minlength=a.n_terms) + np.bincount(b.term, minlength=b.n_terms)
    rare = _shared(a, b) & (df <= max(2.0, max_share * (na + nb)))
    pair, _ = _joined(a, b, rare)
    return np.bincount(pair, minlength=na * nb).reshape(na, nb) > 0


def _fragment(v: SentenceVectors, first: int, last: int) -> np.ndarray:
    lo, hi = v.offsets[first], v.offsets[last + 1]
    return np.bincount(v.term[lo:hi], v.weight[lo:hi], minlength=v.n_terms)


def fragment_cosine(
    a: SentenceVectors, a_range: tuple[int, int], b: SentenceVectors, b_range: tuple[int, int]
) -> float:
    """Cosine of the sums of the vectors of sentences ``a_range`` (first, last; inclusive)
    of A and ``b_range`` of B (the validation of a passage), in [0, 1]."""
    x, y = _fragment(a, *a_range), _fragment(b, *b_range)
    denom = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(np.dot(x, y) / denom) if denom > 0 else 0.0
