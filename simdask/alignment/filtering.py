"""Filtering: overlapping passages resolved (Sanchez-Perez et al. 2014, §3.3: of a pivot and
the passages overlapping it in A, only the one of the best quality is kept), passages too
short in either text dropped."""

from __future__ import annotations

import numpy as np

from simdask.alignment.extend import CosineLookup, Fragment

__all__ = ["drop_short", "resolve_overlaps"]


def _sim(cos: CosineLookup, a_first: int, a_last: int, b: Fragment) -> float:
    """Mean over sentences ``a_first..a_last`` of A of their best cosine within ``b``'s
    B fragment (0 for an empty range)."""
    if a_last < a_first or b.b_last < b.b_first:
        return 0.0
    best, _ = cos.best_in_b(np.arange(a_first, a_last + 1), b.b_first, b.b_last)
    return float(best.mean())


def _quality(x: Fragment, y: Fragment, cos: CosineLookup) -> float:
    """q_y(x): similarity of x's part overlapping y plus the rest weighted by what is left."""
    lo, hi = max(x.a_first, y.a_first), min(x.a_last, y.a_last)
    overlap = _sim(cos, lo, hi, x)
    before = _sim(cos, x.a_first, lo - 1, x)
    after = _sim(cos, hi + 1, x.a_last, x)
    n_before, n_after = max(lo - x.a_first, 0), max(x.a_last - hi, 0)
    rest = (before * n_before + after * n_after) / max(n_before + n_after, 1)
    return overlap + (1.0 - overlap) * rest


def _overlaps(x: Fragment, y: Fragment) -> bool:
    return x.a_first <= y.a_last and y.a_first <= x.a_last


def resolve_overlaps(found: list[Fragment], cos: CosineLookup) -> list[Fragment]:
    """Passages no two of which share a sentence of A, sorted by their start in A: while a
    passage (the first in A) overlaps others, of it and those only the best by quality
    survives (``cos``: the sentence cosine, :class:`.pairs.SentenceCosine`)."""
    cases = sorted(found, key=lambda f: (f.a_first, f.a_last, f.b_first))
    while True:
        pivot = next((p for p in cases if any(o is not p and _overlaps(p, o) for o in cases)), None)
        if pivot is None:
            return cases
        group = [o for o in cases if o is not pivot and _overlaps(pivot, o)]
        best, best_q = pivot, -1.0
        for o in group:
            for x, y in ((o, pivot), (pivot, o)):
                q = _quality(x, y, cos)
                if q > best_q:
                    best, best_q = x, q
        losers = {id(o) for o in [pivot, *group] if o is not best}
        cases = [c for c in cases if id(c) not in losers]


def drop_short(spans: list[tuple[int, int, int, int]], min_chars: int) -> list[bool]:
    """Per passage ``(a_start, a_end, b_start, b_end)``: whether both spans are at least
    ``min_chars`` characters long."""
    return [a1 - a0 >= min_chars and b1 - b0 >= min_chars for a0, a1, b0, b1 in spans]
