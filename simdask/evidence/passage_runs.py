"""An exact passage, and the passages of diagonal runs of shared windows (:mod:`.passages`):
each run's words cut where either text's word is excluded (:func:`~.trim.kept_runs`)."""

from __future__ import annotations

from dataclasses import dataclass

from simdask.evidence.trim import kept_runs

__all__ = ["Passage", "run_passages"]


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


def run_passages(runs, bounds_a, bounds_b, ex_a, ex_b, k: int, min_chunks: int) -> list:
    """Passages of the diagonal runs ``(i0, j0, i1, count)`` (window indexes) of at least
    ``min_chunks`` matches, cut out of excluded words (:func:`~.trim.kept_runs`)."""
    (a0, a1), (b0, b1) = bounds_a, bounds_b
    found = []
    for i0, j0, i1, count in runs:
        if count < min_chunks:
            continue
        d = i0 - j0
        for lo, hi in kept_runs(i0, j0, i1 + k - 1, ex_a, ex_b, k):
            found.append(
                Passage(
                    int(a0[lo]), int(a1[hi]), int(b0[lo - d]), int(b1[hi - d]), hi - lo + 1, count
                )
            )
    return found
