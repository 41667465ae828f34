"""Exact passages kept out of excluded text (issue 28): a run of shared 5-word windows may
reach a few words into a quotation, a template or chunks over ``max_df`` (a window counts
unless *all* its words are excluded), and may bridge a short excluded stretch. The run's
words are cut where the word in either text is excluded; what is left of at least ``k``
words is a passage. On one diagonal, word ``i`` of A is matched with word ``i - d`` of B, so
both sides are cut alike.
"""

from __future__ import annotations

import numpy as np

from simdask.evidence.excluded import inside_words
from simdask.kernels.exclusions import merge_spans

__all__ = ["common_marks", "excluded_words", "kept_runs"]


def excluded_words(
    starts: np.ndarray, ends: np.ndarray, marks: list[tuple[int, int, str]]
) -> np.ndarray:
    """Per word (character spans ``starts``/``ends``): whether it lies inside one of the
    excluded ``(start, end, kind)`` marks (bool array)."""
    spans = merge_spans([(s, e) for s, e, _ in marks])
    return inside_words(np.asarray(starts, np.int64), np.asarray(ends, np.int64), spans)


def common_marks(
    hit: np.ndarray, starts: np.ndarray, ends: np.ndarray, k: int
) -> list[tuple[int, int, str]]:
    """The character spans of the ``k``-word windows flagged in ``hit`` (shared chunks held
    by more than ``max_df`` documents), merged, each of kind ``common``."""
    idx = np.flatnonzero(hit).tolist()
    last = len(ends) - 1
    runs = merge_spans([(int(starts[i]), int(ends[min(i + k - 1, last)])) for i in idx])
    return [(s, e, "common") for s, e in runs]


def kept_runs(
    i0: int, j0: int, last: int, ex_a: np.ndarray, ex_b: np.ndarray, k: int
) -> list[tuple[int, int]]:
    """The word ranges ``(lo, hi)`` (A's word indexes, ``hi`` included) of the run of words
    ``i0..last`` of A (matched from word ``j0`` of B on) in which no word of either text is
    excluded, each of at least ``k`` words."""
    n = last - i0 + 1
    bad = ex_a[i0 : last + 1] | ex_b[j0 : j0 + n]
    if not bad.any():
        return [(i0, last)] if n >= k else []
    ok = np.concatenate([[False], ~bad, [False]])
    edges = np.flatnonzero(ok[1:] != ok[:-1])
    out = []
    for lo, hi in zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True):
        if hi - lo >= k:
            out.append((i0 + lo, i0 + hi - 1))
    return out
