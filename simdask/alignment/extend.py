"""Extension: seeds clustered into passages by their gaps in both texts, recursively
(Sanchez-Perez et al. 2014, Algorithm 1). A fragment of one text is a run of sentences
holding seeds with at most ``gap`` seedless sentences between them and no barrier (excluded
text) inside; a passage is a pair of fragments whose summed tf-isf vectors pass the
validation cosine, else its seeds are clustered again with gaps one smaller."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

__all__ = ["CosineLookup", "Fragment", "fragments", "integrate", "join_in_order", "trim"]


class CosineLookup(Protocol):
    """The sentence cosine of A and B on demand (:class:`.pairs.SentenceCosine`)."""

    def best_in_b(self, rows: np.ndarray, first: int, last: int) -> tuple[np.ndarray, ...]:
        """Per A sentence in ``rows``: the largest cosine with B's sentences ``first..last``
        and the first B sentence with it."""
        ...

    def best_in_a(self, cols: np.ndarray, first: int, last: int) -> tuple[np.ndarray, ...]:
        """Per B sentence in ``cols``: the same over A's sentences ``first..last``."""
        ...

    def pairs(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """The cosine of the sentence pairs ``(i[k], j[k])``."""
        ...


@dataclass(frozen=True)
class Fragment:
    """Sentences ``a_first..a_last`` of A against ``b_first..b_last`` of B (inclusive), the
    cosine ``score`` of the two, and the seeds that made it (int64 ``(n, 2)``)."""

    a_first: int
    a_last: int
    b_first: int
    b_last: int
    score: float
    seeds: np.ndarray


def fragments(index: np.ndarray, gap: int, barriers: np.ndarray) -> list[tuple[int, int]]:
    """Runs ``(first, last)`` of the sorted distinct sentence numbers in ``index`` split where
    more than ``gap`` sentences lie between two or a barrier separates them (``barriers``:
    cumulative count of barriers up to each sentence). In plain Python: the extension calls
    this on a few seeds at a time, thousands of times a pair, where numpy's per-call cost
    was half the aligner's time (the same runs as the vectorised form, tests/test_extend.py)."""
    if len(index) == 0:
        return []
    u = sorted(set(index.tolist()))
    b = barriers[u].tolist()
    out = []
    first = prev = u[0]
    for x, bx, bp in zip(u[1:], b[1:], b[:-1], strict=True):
        if x - prev > gap + 1 or bx != bp:
            out.append((first, prev))
            first = x
        prev = x
    out.append((first, prev))
    return out


def _inside(values: np.ndarray, first: int, last: int) -> np.ndarray:
    return (values >= first) & (values <= last)


def integrate(
    seeds: np.ndarray,
    gaps: tuple[int, int],
    barriers: tuple[np.ndarray, np.ndarray],
    similarity: Callable[[tuple[int, int], tuple[int, int]], float],
    threshold: float,
    min_gap: int = 0,
    min_seeds: int = 1,
    single_threshold: float = 0.0,
) -> list[Fragment]:
    """The passages the seeds (sentence pairs, int64 ``(n, 2)``) extend to with ``gaps``
    (A, B) in sentences; ``similarity(a_range, b_range)`` validates each against
    ``threshold``; a failed one is retried on its own seeds with gaps one smaller (not
    below ``min_gap``). A passage of a single seed needs ``single_threshold`` too."""
    out: list[Fragment] = []
    for fa in fragments(seeds[:, 0], gaps[0], barriers[0]):
        s1 = seeds[_inside(seeds[:, 0], *fa)]
        if len(s1) < min_seeds:
            continue
        for fb in fragments(s1[:, 1], gaps[1], barriers[1]):
            s2 = s1[_inside(s1[:, 1], *fb)]
            if len(s2) < min_seeds:
                continue
            for fa2 in fragments(s2[:, 0], gaps[0], barriers[0]):
                s3 = s2[_inside(s2[:, 0], *fa2)]
                if len(s3) < min_seeds:
                    continue
                fb2 = (int(s3[:, 1].min()), int(s3[:, 1].max()))
                score = similarity(fa2, fb2)
                if score >= threshold and (len(s3) > 1 or score >= single_threshold):
                    out.append(Fragment(*fa2, *fb2, score, s3))
                elif max(gaps) > min_gap:
                    smaller = (max(gaps[0] - 1, min_gap), max(gaps[1] - 1, min_gap))
                    out += integrate(
                        s3,
                        smaller,
                        barriers,
                        similarity,
                        threshold,
                        min_gap,
                        min_seeds,
                        single_threshold,
                    )
    return out


def join_in_order(
    found: list[Fragment],
    gap: int,
    barriers: tuple[np.ndarray, np.ndarray],
    similarity: Callable[[tuple[int, int], tuple[int, int]], float],
    threshold: float,
) -> list[Fragment]:
    """Passages (not overlapping in A) joined with the next one in A when at most ``gap``
    sentences of A lie between them, its B fragment starts after theirs (a summary runs
    through its source in order), no barrier separates them and the joined pair still
    validates (``similarity`` >= ``threshold``)."""
    out: list[Fragment] = []
    for f in sorted(found, key=lambda f: f.a_first):
        if out:
            p = out[-1]
            ok = (
                f.a_first - p.a_last - 1 <= gap
                and f.b_first >= p.b_first
                and barriers[0][f.a_first] == barriers[0][p.a_last]
                and barriers[1][f.b_last] == barriers[1][p.b_first]
            )
            if ok:
                ra, rb = (p.a_first, f.a_last), (p.b_first, max(p.b_last, f.b_last))
                score = similarity(ra, rb)
                if score >= threshold:
                    out[-1] = Fragment(*ra, *rb, score, np.concatenate([p.seeds, f.seeds]))
                    continue
        out.append(f)
    return out


def trim(
    f: Fragment,
    cos: CosineLookup,
    similarity: Callable[[tuple[int, int], tuple[int, int]], float],
    strong_cosine: float = 1.0,
) -> Fragment:
    """``f`` narrowed to its mutually best seeds: those ``(i, j)`` where ``j`` is the sentence
    of the B fragment most similar to ``i`` (by ``cos``, the sentence cosine; the first on a
    tie) and ``i`` the sentence of the A fragment most similar to ``j``, or whose cosine is
    at least ``strong_cosine``; stray seeds at the ends widen a passage past the copied text.
    The score is recomputed; ``f`` itself when nothing changes or no seed would be left."""
    s = f.seeds
    _, best_b = cos.best_in_b(s[:, 0], f.b_first, f.b_last)
    _, best_a = cos.best_in_a(s[:, 1], f.a_first, f.a_last)
    strong = cos.pairs(s[:, 0], s[:, 1]) >= strong_cosine
    kept = s[((s[:, 1] == best_b) & (s[:, 0] == best_a)) | strong]
    if len(kept) == 0:
        return f
    ra = (int(kept[:, 0].min()), int(kept[:, 0].max()))
    rb = (int(kept[:, 1].min()), int(kept[:, 1].max()))
    if ra == (f.a_first, f.a_last) and rb == (f.b_first, f.b_last):
        return f
    return Fragment(*ra, *rb, similarity(ra, rb), kept)
