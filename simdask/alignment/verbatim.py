"""Verbatim passages: runs of exact sorted chunks shared by the two texts, as word spans.

Chunk matches ``(i, j)`` (window ``i`` of A equal to window ``j`` of B) on one diagonal
``i - j`` whose windows are at most ``gap`` words apart form a run; runs that follow each
other in both texts (at most ``gap`` words apart in each, in the same order) are joined, so a
copy with a word changed, inserted or dropped here and there stays one passage. Word-exact
boundaries: where a sentence-level passage is mostly verbatim, these spans replace it.
"""

from __future__ import annotations

import numpy as np

from simdask.alignment.passage import Passage

__all__ = ["prefer_verbatim", "verbatim_runs"]


def _diagonal_runs(ia: np.ndarray, ib: np.ndarray, gap: int, breaks) -> np.ndarray:
    """Runs of matches on one diagonal: int64 rows ``(a_first, a_last, b_first, b_last)``
    (window numbers), sorted by ``a_first``."""
    diag = ia - ib
    order = np.lexsort((ia, diag))
    d, a, b = diag[order], ia[order], ib[order]
    new = np.ones(len(a), dtype=bool)
    new[1:] = (d[1:] != d[:-1]) | (a[1:] - a[:-1] > gap)
    new[1:] |= (breaks[0][a[1:]] != breaks[0][a[:-1]]) | (breaks[1][b[1:]] != breaks[1][b[:-1]])
    starts = np.flatnonzero(new)
    ends = np.r_[starts[1:], len(a)] - 1
    runs = np.stack([a[starts], a[ends], b[starts], b[ends]], axis=1)
    return runs[np.argsort(runs[:, 0], kind="stable")]


def verbatim_runs(
    ia: np.ndarray, ib: np.ndarray, k: int, gap: int, breaks: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """Verbatim passages from chunk matches ``(ia, ib)`` (window numbers of ``k`` words):
    int64 rows ``(a_first_word, a_last_word, b_first_word, b_last_word)``, sorted by A,
    not overlapping in A; runs are never joined across a break (``breaks``: per word of A
    and of B, the count of excluded spans before it)."""
    ba, bb = breaks

    def same(a_end: int, a_start: int, b_end: int, b_start: int) -> bool:
        return ba[a_end] == ba[a_start] and bb[b_end] == bb[max(b_start, 0)]

    if len(ia) == 0:
        return np.zeros((0, 4), dtype=np.int64)
    runs = _diagonal_runs(ia, ib, gap, breaks)
    out: list[list[int]] = []
    for a0, a1, b0, b1 in runs.tolist():
        if out:
            p = out[-1]
            if 0 < a0 - p[1] <= gap and -k < b0 - p[3] <= gap and same(p[1], a0, p[3], b0):
                p[1], p[3] = max(p[1], a1), max(p[3], b1)
                continue
            if a0 <= p[1]:  # overlaps the previous run in A: keep the longer
                if a1 - a0 > p[1] - p[0]:
                    out[-1] = [a0, a1, b0, b1]
                continue
        out.append([a0, a1, b0, b1])
    arr = np.asarray(out, dtype=np.int64).reshape(-1, 4)
    arr[:, 1] += k - 1
    arr[:, 3] += k - 1
    return arr


def _overlap(p: Passage, q: Passage) -> int:
    return max(0, min(p.a_end, q.a_end) - max(p.a_start, q.a_start))


def _joined(pieces: list[Passage], kind: str) -> list[Passage]:
    """Pieces (sorted by A) that follow each other in the same order in B joined into one
    passage (of ``kind`` when it joins several pieces: the words between them differ)."""
    out: list[Passage] = []
    for v in pieces:
        last = out[-1] if out else None
        if last is not None and v.b_start >= last.b_end:
            score = min(last.score, v.score)
            k = "verbatim" if kind == "verbatim" else kind
            out[-1] = Passage(last.a_start, v.a_end, last.b_start, v.b_end, k, score)
        else:
            out.append(v)
    return out


def prefer_verbatim(
    passages: list[Passage], verbatim: list[Passage], share: float
) -> list[Passage]:
    """``passages`` with each one whose A span the ``verbatim`` passages cover to at least
    ``share`` replaced by those (word-exact spans), plus the verbatim passages overlapping
    none of them; sorted by ``a_start``, overlaps in A resolved in favour of the longer."""
    result: list[Passage] = []
    used: set[int] = set()
    for p in passages:
        inside = [i for i, v in enumerate(verbatim) if _overlap(p, v) > 0]
        covered = sum(_overlap(p, verbatim[i]) for i in inside)
        if inside and covered >= share * (p.a_end - p.a_start):
            result += _joined([verbatim[i] for i in inside if i not in used], p.kind)
        else:
            result.append(p)
        used.update(inside)
    result += [v for i, v in enumerate(verbatim) if i not in used]
    result.sort(key=lambda p: (p.a_start, -(p.a_end - p.a_start)))
    out: list[Passage] = []
    for p in result:
        if out and p.a_start < out[-1].a_end:
            if p.a_end - p.a_start > out[-1].a_end - out[-1].a_start:
                out[-1] = p
            continue
        out.append(p)
    return out
