"""Extension: seeds clustered into passages by their gaps in both texts, recursively
(Sanchez-Perez et al. 2014, Algorithm 1). A fragment of one text is a run of sentences
holding seeds with at most ``gap`` seedless sentences between them and no barrier (excluded
text) inside; a passage is a pair of fragments whose summed tf-isf vectors pass the
validation cosine, else its seeds are clustered again with gaps one smaller."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
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


def _split(seeds: list[tuple[int, int]], col: int, gap: int, barrier: list[int]) -> list:
    """``seeds`` grouped by the runs of their column ``col`` (:func:`fragments` of that
    column), the groups in run order, each in the order of ``seeds``: what masking the seeds
    by each run gives."""
    values = sorted({s[col] for s in seeds})
    prev = values[0]
    run = 0
    run_of = {}
    for x in values:
        if x - prev > gap + 1 or barrier[x] != barrier[prev]:
            run += 1
        run_of[x] = run
        prev = x
    if run == 0:
        return [seeds]
    groups: list[list[tuple[int, int]]] = [[] for _ in range(run + 1)]
    for s in seeds:
        groups[run_of[s[col]]].append(s)
    return groups


def _widest_gap(values: list[int]) -> int:
    """The largest difference of two consecutive distinct ``values`` (0 for one value)."""
    u = sorted(set(values))
    return max((y - x for x, y in pairwise(u)), default=0)


@dataclass(frozen=True)
class _Extension:
    """The settings of one :func:`integrate` call; the seeds are lists of ``(a, b)`` tuples."""

    barriers: tuple[list[int], list[int]]
    similarity: Callable[[tuple[int, int], tuple[int, int]], float]
    threshold: float
    min_gap: int
    min_seeds: int
    single_threshold: float

    def extend(self, seeds: list, ga: int, gb: int, out: list) -> None:
        """Algorithm 1 on ``seeds`` with gaps ``ga``, ``gb``: the passages found appended to
        ``out`` as ``(a_range, b_range, score, seeds)``."""
        ms, (bar_a, bar_b) = self.min_seeds, self.barriers
        for s1 in _split(seeds, 0, ga, bar_a):
            if len(s1) < ms:
                continue
            for s2 in _split(s1, 1, gb, bar_b):
                if len(s2) < ms:
                    continue
                for s3 in _split(s2, 0, ga, bar_a) if len(s2) > 1 else (s2,):
                    if len(s3) < ms:
                        continue
                    ra = (min(s[0] for s in s3), max(s[0] for s in s3))
                    rb = (min(s[1] for s in s3), max(s[1] for s in s3))
                    score = self.similarity(ra, rb)
                    if score >= self.threshold and (len(s3) > 1 or score >= self.single_threshold):
                        out.append((ra, rb, score, s3))
                    elif max(ga, gb) > self.min_gap:
                        self.retry(s3, ga, gb, out)

    def retry(self, seeds: list, ga: int, gb: int, out: list) -> None:
        """``seeds``, a fragment that failed validation at gaps ``ga``, ``gb``, extended again
        with gaps one smaller. While they still form that one fragment (no run of either
        text splits: no barrier lies inside a fragment, so only its widest gaps decide), it
        has the same sentences and score and fails again: those levels are skipped."""
        m = self.min_gap
        ga, gb = max(ga - 1, m), max(gb - 1, m)
        wa = _widest_gap([s[0] for s in seeds])
        wb = _widest_gap([s[1] for s in seeds])
        while wa <= ga + 1 and wb <= gb + 1:
            if max(ga, gb) <= m:
                return
            ga, gb = max(ga - 1, m), max(gb - 1, m)
        self.extend(seeds, ga, gb, out)


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
    (A, B) in sentences; ``similarity(a_range, b_range)`` (a pure function) validates each
    against ``threshold``; a failed one is retried on its own seeds with gaps one smaller
    (not below ``min_gap``). A passage of a single seed needs ``single_threshold`` too.

    In plain Python over lists of seed tuples (a pair calls this on a few seeds at a time
    thousands of times, where numpy's per-call cost was most of the time), and a failed
    fragment's gap levels at which it cannot split are skipped: the same passages, in the
    same order, as the recursion level by level (tests/test_extend.py)."""
    if len(seeds) == 0:
        return []
    ext = _Extension(
        (barriers[0].tolist(), barriers[1].tolist()),
        similarity,
        threshold,
        min_gap,
        min_seeds,
        single_threshold,
    )
    found: list = []
    ext.extend([(a, b) for a, b in seeds.tolist()], gaps[0], gaps[1], found)
    return [
        Fragment(ra[0], ra[1], rb[0], rb[1], score, np.array(s, dtype=np.int64).reshape(-1, 2))
        for ra, rb, score, s in found
    ]


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
