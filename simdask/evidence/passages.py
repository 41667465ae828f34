"""Evidence for one pair: exact similarity (true chunks, no hashing) and matching passages.

Passages are found from the shared chunks' positions: every window ``i`` of document A whose
sorted chunk also occurs at window ``j`` of B is a match on the diagonal ``i - j``; matches on
one diagonal whose windows are at most ``2 k`` words apart are merged into one passage (so a
copied passage with a word changed here and there stays one passage), and passages on
different diagonals are reported separately (so reordered text is still found and paired).
Offsets are character offsets into each document's text as indexed (``simdask text``).
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from simdask.evidence.passages_np import (
    LARGE_CHARS,
    chunk_keys,
    distinct,
    matched_runs,
    word_table,
)
from simdask.kernels.similarity import containment
from simdask.kernels.text import WORD_PATTERN, normalize, words

__all__ = ["PairEvidence", "Passage", "compare_texts", "word_offsets"]


@dataclass(frozen=True)
class Passage:
    """Matching text: ``[doc_start, doc_end)`` in A and ``[other_start, other_end)`` in B
    (characters), ``words`` words long in A, made of ``chunks`` shared chunks."""

    doc_start: int
    doc_end: int
    other_start: int
    other_end: int
    words: int
    chunks: int


@dataclass
class PairEvidence:
    """Exact comparison of two texts; similarities in percent."""

    similarity: float
    reverse_similarity: float
    shared: int
    doc_chunks: int
    other_chunks: int
    passages: list[Passage] = field(default_factory=list)
    offsets_exact: bool = True
    #: large texts only: some passages were left out (see :mod:`.passages_np`)
    passages_truncated: bool = False

    def to_dict(self) -> dict:
        """JSON-ready form."""
        d = asdict(self)
        d["passages"] = [asdict(p) for p in self.passages]
        return d

    def report(self, doc: str, other: str, hashed_similarity: float) -> dict:
        """The report of ``simdask report --format json``: keys, exact similarities both
        ways, shared chunks, the hashed similarity (percent) and the difference, passages."""
        d = self.to_dict()
        return {
            "doc": doc,
            "other": other,
            "similarity": self.similarity,
            "reverse_similarity": self.reverse_similarity,
            "shared": self.shared,
            "hashed_similarity": hashed_similarity,
            "difference": hashed_similarity - self.similarity,
            **{
                k: d[k]
                for k in (
                    "doc_chunks",
                    "other_chunks",
                    "offsets_exact",
                    "passages_truncated",
                    "passages",
                )
            },
        }


def word_offsets(text: str) -> tuple[list[str], list[tuple[int, int]], bool]:
    """The words of ``text`` (as :func:`simdask.kernels.text.words`) with character spans.

    Spans come from matching words in the original text and normalising each; where NFKC
    changes word boundaries (rare: e.g. a fraction sign splitting into digits) the words still
    follow the definition, the spans are those of the original token, and the flag is False.
    """
    out_words: list[str] = []
    spans: list[tuple[int, int]] = []
    for m in WORD_PATTERN.finditer(unicodedata.normalize("NFC", text)):
        for w in WORD_PATTERN.findall(normalize(m.group())):
            out_words.append(w)
            spans.append(m.span())
    reference = words(text)
    if out_words == reference and len(unicodedata.normalize("NFC", text)) == len(text):
        return out_words, spans, True
    # fall back: the definition's words, spans spread over the text proportionally
    n = max(1, len(reference))
    approx = [(len(text) * i // n, len(text) * (i + 1) // n) for i in range(len(reference))]
    return reference, approx, False


def _windows(ws: list[str], k: int) -> list[tuple[str, ...]]:
    return [tuple(sorted(ws[i : i + k])) for i in range(len(ws) - k + 1)]


def compare_texts(
    a: str,
    b: str,
    k: int = 5,
    min_chunks: int = 2,
    min_words: int = 0,
    large: bool | None = None,
    drop_shared: Callable[[set], set] | None = None,
) -> PairEvidence:
    """Exact similarity of ``a`` to ``b`` and back, and their matching passages (those of at
    least ``min_chunks`` shared chunks and ``min_words`` words), ordered by position in ``a``.

    ``min_words`` only hides short passages (``report --min-match``); the similarities still
    count every shared chunk. ``large``: compare in numpy with 64-bit chunk keys and bounded
    passages (see :mod:`simdask.evidence.passages_np`); None: when the texts together are
    longer than :data:`~simdask.evidence.passages_np.LARGE_CHARS` characters.
    ``drop_shared``: given the shared chunks (sorted word tuples), those to leave out of the
    count and the passages, e.g. chunks held by more than ``max_df`` documents of the index
    (:func:`simdask.doc_freq.common_filter`; the numpy path for large texts ignores it)."""
    if large or (large is None and len(a) + len(b) > LARGE_CHARS):
        ev = _compare_large(a, b, k, min_chunks)
        ev.passages = [p for p in ev.passages if p.words >= min_words]
        return ev
    wa, sa, exact_a = word_offsets(a)
    wb, sb, exact_b = word_offsets(b)
    ca, cb = _windows(wa, k), _windows(wb, k)
    set_a, set_b = set(ca), set(cb)
    shared = set_a & set_b
    if drop_shared is not None and shared:
        shared -= drop_shared(shared)
    ev = PairEvidence(
        similarity=containment(len(shared), len(set_a)),
        reverse_similarity=containment(len(shared), len(set_b)),
        shared=len(shared),
        doc_chunks=len(set_a),
        other_chunks=len(set_b),
        offsets_exact=exact_a and exact_b,
    )
    where_b = defaultdict(list)
    for j, c in enumerate(cb):
        if c in shared:
            where_b[c].append(j)
    diagonals: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for i, c in enumerate(ca):
        for j in where_b.get(c, ()):
            diagonals[i - j].append((i, j))
    runs = []
    for matches in diagonals.values():
        start = prev = matches[0]
        count = 1
        for m in matches[1:]:
            if m[0] - prev[0] <= 2 * k:
                prev, count = m, count + 1
                continue
            runs.append((start, prev, count))
            start = prev = m
            count = 1
        runs.append((start, prev, count))
    found = []
    for (i0, j0), (i1, j1), count in sorted(runs):
        if count < min_chunks:
            continue
        a_end, b_end = i1 + k - 1, j1 + k - 1
        found.append(
            Passage(sa[i0][0], sa[a_end][1], sb[j0][0], sb[b_end][1], a_end - i0 + 1, count)
        )
    kept = [p for p in found if not any(_inside(p, q) for q in found if q is not p)]
    ev.passages = [p for p in kept if p.words >= min_words]
    return ev


def _compare_large(a: str, b: str, k: int, min_chunks: int) -> PairEvidence:
    """:func:`compare_texts` in numpy (memory about 40 bytes per word, no Python object per
    word or chunk)."""
    ha, sa0, sa1, exact_a = word_table(a)
    ka = chunk_keys(ha, k)
    del ha
    hb, sb0, sb1, exact_b = word_table(b)
    kb = chunk_keys(hb, k)
    del hb
    ua, ub = distinct(ka), distinct(kb)
    shared = np.intersect1d(ua, ub, assume_unique=True)
    ev = PairEvidence(
        similarity=containment(len(shared), len(ua)),
        reverse_similarity=containment(len(shared), len(ub)),
        shared=len(shared),
        doc_chunks=len(ua),
        other_chunks=len(ub),
        offsets_exact=exact_a and exact_b,
    )
    del ua, ub
    i0, j0, i1, count, ev.passages_truncated = matched_runs(ka, kb, shared, k, min_chunks)
    found = [
        Passage(
            int(sa0[x0]),
            int(sa1[x1 + k - 1]),
            int(sb0[y0]),
            int(sb1[y0 + x1 - x0 + k - 1]),
            x1 - x0 + k,
            c,
        )
        for x0, y0, x1, c in zip(i0.tolist(), j0.tolist(), i1.tolist(), count.tolist(), strict=True)
    ]
    ev.passages = [p for p in found if not any(_inside(p, q) for q in found if q is not p)]
    return ev


def _inside(p: Passage, q: Passage) -> bool:
    """``p`` lies within ``q`` in both documents and is not the larger: a chance match of a
    few words inside a copied passage, which adds nothing to it."""
    return (
        q.doc_start <= p.doc_start
        and p.doc_end <= q.doc_end
        and q.other_start <= p.other_start
        and p.other_end <= q.other_end
        and (q.chunks, q.words) > (p.chunks, p.words)
    )
