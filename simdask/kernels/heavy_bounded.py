"""Bounded all-pairs work on phrase-rich text (issue 33): pure numpy kernels, no I/O.

The adaptive cutoff of :func:`~simdask.kernels.heavy.choose_cutoff` lets the light chunks cost
up to :data:`~simdask.kernels.heavy.WORK_PER_POSTING` pair emissions per posting and makes at
most ``max_heavy`` chunks heavy; on text with many mid-frequency set phrases (hundreds to
thousands of holders each) the light work then grows with the square of the corpus. A full
build in the ``informative`` or ``auto`` mode whose light work at that cutoff is above
``light_budget`` pair emissions per posting and above ``light_floor`` in all
(:class:`~simdask.config.IndexConfig`) is **bounded** instead:

* the cutoff is lowered to the largest df whose light work fits ``light_budget`` per posting
  (or ``light_floor`` pair emissions, whichever is larger: below it a build is never bounded;
  :func:`bounded_cutoff`): the pairs emitted are at most ``light_budget`` times the postings,
  linear in the corpus whatever its phrase statistics;
* a candidate pair ``(A, B)`` (sharing at least one light chunk) is kept only when its light
  count alone reaches the threshold in one direction: ``light >= min(need[A], need[B])``
  (:func:`light_evidence`; ``need`` from :func:`~simdask.kernels.similarity.need_counts`);
* the kept pairs get their exact overlap over every other chunk (``cutoff < df <= max_df``)
  from the per-document sorted ranks of those chunks (:class:`~simdask.kernels.heavy.HeavySets`,
  :func:`set_overlap`), so every stored value is the count over all counted chunks.

So a pair whose similarity counted over the light chunks (``df <= cutoff``) reaches the
threshold in either direction is stored with its exact value wherever the top-k lists take it;
a pair below that is not stored, however much it shares through chunks above the cutoff
(set phrases, templates): docs/design.md "Bounded all-pairs work" states it and
docs/scale.md measures it.
"""

from __future__ import annotations

import numpy as np

from simdask.kernels.arrays import expand_ranges
from simdask.kernels.heavy import HeavySets, light_work

__all__ = ["SET_STEP", "bounded_cutoff", "light_evidence", "set_overlap"]

#: heavy ranks :func:`set_overlap` gathers at once (both sides; ~40 bytes each in temporaries)
SET_STEP = 1 << 22


def bounded_cutoff(
    values: np.ndarray,
    counts: np.ndarray,
    n_postings: int,
    cutoff: int | None,
    light_budget: int | None,
    floor: int = 0,
) -> int | None:
    """The lowered cutoff of a bounded build, or None when the build is not bounded.

    ``(values, counts)``: the df histogram of the counted chunks; ``cutoff``: the adaptive
    cutoff (None: no chunk heavy). The budget is ``max(light_budget * n_postings, floor)``
    pair emissions. Not bounded (None) when ``light_budget`` is None or the light work at
    ``cutoff`` (:func:`~simdask.kernels.heavy.light_work`) fits the budget. Otherwise the
    largest histogram df whose light work fits it (at least 1: a chunk held by one document
    emits nothing)."""
    if light_budget is None:
        return None
    budget = max(int(light_budget) * int(n_postings), int(floor))
    if light_work(values, counts, cutoff) <= budget:
        return None
    v = np.asarray(values, np.int64)
    c = np.asarray(counts, np.int64)
    cum = np.cumsum(c * (v * (v - 1) // 2))
    fits = np.flatnonzero(cum <= budget)
    return max(1, int(v[fits[-1]])) if len(fits) else 1


def light_evidence(d: np.ndarray, o: np.ndarray, light: np.ndarray, need: np.ndarray) -> np.ndarray:
    """Which pairs ``(d[i], o[i])`` with light counts ``light`` a bounded build keeps: those
    whose light count alone reaches ``min(need[d], need[o])`` (bool mask)."""
    return light >= np.minimum(need[d], need[o])


def set_overlap(sets: HeavySets, d: np.ndarray, o: np.ndarray, step: int = SET_STEP) -> np.ndarray:
    """``|heavy(d[i]) ∩ heavy(o[i])|`` per pair (int64) from the sorted heavy ranks of
    ``sets``. The ranks of ``o``'s sets, tagged with the pair's position (``i << 32 | rank``),
    are sorted as gathered (positions ascend, ranks ascend within a document), so each rank of
    ``d``'s sets is one binary search into them. Pairs are taken so that about ``step`` ranks
    of both sides are gathered at once; cost ``O((|heavy(d)| + |heavy(o)|) log)`` a pair."""
    d = np.asarray(d, np.int64)
    o = np.asarray(o, np.int64)
    out = np.zeros(len(d), np.int64)
    if len(d) == 0:
        return out
    sizes = sets.sizes
    la, lb = sizes[d], sizes[o]
    cum = np.cumsum(la + lb)
    cuts = np.searchsorted(cum, np.arange(step, int(cum[-1]), step), side="right")
    bounds = np.unique(np.concatenate([[0], cuts, [len(d)]]))
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        out[lo:hi] = _overlap_slice(sets, d[lo:hi], o[lo:hi], la[lo:hi], lb[lo:hi])
    return out


def _overlap_slice(
    sets: HeavySets, d: np.ndarray, o: np.ndarray, la: np.ndarray, lb: np.ndarray
) -> np.ndarray:
    """:func:`set_overlap` of one slice of pairs (``la``, ``lb``: their set sizes)."""
    m = len(d)
    pos = np.arange(m, dtype=np.uint64)
    ka = (np.repeat(pos, la) << np.uint64(32)) | sets.ranks[
        expand_ranges(sets.offsets[d], la)
    ].astype(np.uint64)
    kb = (np.repeat(pos, lb) << np.uint64(32)) | sets.ranks[
        expand_ranges(sets.offsets[o], lb)
    ].astype(np.uint64)
    if len(ka) == 0 or len(kb) == 0:
        return np.zeros(m, np.int64)
    at = np.searchsorted(kb, ka)
    hit = at < len(kb)
    hit[hit] = kb[at[hit]] == ka[hit]
    return np.bincount((ka[hit] >> np.uint64(32)).astype(np.int64), minlength=m)
