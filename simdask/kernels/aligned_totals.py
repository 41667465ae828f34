"""Aligned coverage as word intervals, and a document's total: the share of its words inside
passages found in any other document (issue 29 item 2).

A pair's passages are kept per side as word-index intervals ``[first, end)`` over the words
of that side's text (the aligner's words, :func:`simdask.alignment.segment.word_spans`): a
word counts when it lies wholly inside a passage. A document's total is the size of the
union of its intervals from every source over its word count, so that it can be recomputed
from the stored intervals when a source goes, without aligning again. Pure numpy, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from simdask.kernels.exclusions import excluded_spans, merge_spans
from simdask.kernels.words import WORD_PATTERN, normalize

__all__ = [
    "covered_words",
    "doc_total",
    "excluded_text",
    "intervals_from_bytes",
    "intervals_to_bytes",
    "word_intervals",
]


def word_intervals(
    starts: np.ndarray, ends: np.ndarray, spans: Iterable[tuple[int, int]]
) -> np.ndarray:
    """``(m, 2)`` int64 word-index intervals ``[first, end)``, sorted and disjoint, of the
    words (code-point spans ``[starts[i], ends[i])``, in text order) lying wholly inside the
    union of ``spans`` (code points)."""
    merged = np.asarray(merge_spans([(int(s), int(e)) for s, e in spans if e > s]), np.int64)
    if len(starts) == 0 or len(merged) == 0:
        return np.zeros((0, 2), np.int64)
    k = np.searchsorted(merged[:, 0], starts, side="right") - 1
    inside = (k >= 0) & (merged[np.maximum(k, 0), 1] >= ends)
    return _runs(inside)


def _runs(inside: np.ndarray) -> np.ndarray:
    """The runs of True in a bool array as ``(m, 2)`` ``[first, end)`` intervals."""
    edge = np.diff(np.concatenate([[0], inside.astype(np.int8), [0]]))
    return np.stack([np.flatnonzero(edge == 1), np.flatnonzero(edge == -1)], axis=1).astype(
        np.int64
    )


def covered_words(intervals: Sequence[np.ndarray]) -> int:
    """How many word indices lie in the union of the ``(m, 2)`` interval arrays."""
    parts = [np.asarray(x, np.int64).reshape(-1, 2) for x in intervals]
    both = np.concatenate([np.zeros((0, 2), np.int64), *parts])
    both = both[both[:, 1] > both[:, 0]]
    if len(both) == 0:
        return 0
    both = both[np.argsort(both[:, 0], kind="stable")]
    reach = np.maximum.accumulate(both[:, 1])
    # a new run starts where an interval begins after everything before it has ended
    start_new = np.concatenate([[True], both[1:, 0] > reach[:-1]])
    run_id = np.cumsum(start_new) - 1
    firsts = both[start_new, 0]
    lasts = np.zeros(len(firsts), np.int64)
    np.maximum.at(lasts, run_id, both[:, 1])
    return int((lasts - firsts).sum())


def doc_total(
    n_words: int, by_source: Mapping[int, np.ndarray]
) -> tuple[float, list[tuple[int, float]]]:
    """``(total, sources)`` of a document of ``n_words`` words whose passages from each
    source (doc ID -> ``(m, 2)`` word intervals) are ``by_source``: the share (0..1) of its
    words in the union of all of them, and ``(source, share)`` per source with a share > 0,
    largest first (ties by source). 0 and no sources for a text without words."""
    if n_words <= 0:
        return 0.0, []
    shares = [(s, covered_words([iv]) / n_words) for s, iv in by_source.items()]
    sources = sorted(((s, x) for s, x in shares if x > 0), key=lambda t: (-t[1], t[0]))
    return covered_words(list(by_source.values())) / n_words, sources


def intervals_to_bytes(intervals: np.ndarray) -> bytes:
    """The stored form of ``(m, 2)`` intervals: little-endian int32 pairs."""
    return np.asarray(intervals, "<i4").reshape(-1, 2).tobytes()


def intervals_from_bytes(blob: bytes | None) -> np.ndarray:
    """``(m, 2)`` int64 intervals from :func:`intervals_to_bytes`' form."""
    if not blob:
        return np.zeros((0, 2), np.int64)
    return np.frombuffer(blob, "<i4").reshape(-1, 2).astype(np.int64)


def excluded_text(
    text: str, quotes: bool, bibliography: bool, template_chunks: frozenset[tuple[str, ...]], k: int
) -> list[tuple[int, int]]:
    """The merged code-point spans of ``text`` an index leaves out: quotations and the
    reference list (when excluded) and the words of every ``k``-word window whose sorted
    words are a chunk of a template text (``template_chunks``: sorted word tuples)."""
    out = [(s, e) for s, e, _ in excluded_spans(text, quotes, bibliography)]
    if template_chunks:
        found = list(WORD_PATTERN.finditer(text))
        ws = [normalize(m.group()) for m in found]
        for i in range(len(ws) - k + 1):
            if tuple(sorted(ws[i : i + k])) in template_chunks:
                out.append((found[i].start(), found[i + k - 1].end()))
    return merge_spans(out)
