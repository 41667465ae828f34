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

A full build keeps no process holding every heavy posting: each merged range (a range of chunk
keys) builds the sets of its own heavy chunks, as ranks local to the range
(:func:`range_sets`, kept on the worker that holds the range); per block of documents the
candidates with light evidence (:func:`block_candidates`) get their overlap in each range
(:func:`range_overlap`), and the sum over ranges, the chunks being split among the ranges, is
the overlap over all of them (:func:`bounded_block_rows`): the same rows whatever the split.

Incremental runs keep the cutoff (amortised re-bounds): a chunk whose count crosses it changes
no stored value (light or heavy, every counted chunk is counted), only whether a pair sharing
it has light evidence; that is taken as of the run that computes the pair (a new or changed
document's pairs with the counts after the run), and the other holders of the chunk are not
recomputed. Once the index has grown or shrunk by :data:`REBOUND_GROWTH` since the cutoff was
chosen (:func:`needs_rebound`), a run recomputes every list with a cutoff chosen again: like a
geometric resize, the re-bounds cost at most about twice the last one in all.

So a pair whose similarity counted over the light chunks (``df <= cutoff``) reaches the
threshold in either direction is stored with its exact value wherever the top-k lists take it;
a pair below that is not stored, however much it shares through chunks above the cutoff
(set phrases, templates): docs/design.md "Bounded all-pairs work" states it and
docs/scale.md measures it.
"""

from __future__ import annotations

import numpy as np

from simdask.kernels.arrays import expand_ranges
from simdask.kernels.heavy import HeavySets, heavy_postings, light_work
from simdask.kernels.postings import ShardData
from simdask.kernels.similarity import (
    count_block_keys,
    directed_rows,
    need_counts,
    row_slices,
)
from simdask.kernels.top_rows import Rows, top_k_rows

__all__ = [
    "CANDIDATE_SLICE",
    "REBOUND_GROWTH",
    "SET_STEP",
    "SUB_BLOCK_KEYS",
    "Candidates",
    "block_candidates",
    "bounded_block_rows",
    "bounded_cutoff",
    "light_evidence",
    "needs_rebound",
    "range_overlap",
    "range_sets",
    "set_overlap",
]

#: growth (or shrinking) factor of the index since its cutoff was chosen at which a run re-bounds
REBOUND_GROWTH = 2.0
#: counted pairs :func:`block_candidates` decodes at once (int32 temporaries, ~40 bytes each)
CANDIDATE_SLICE = 1 << 21
#: ``(doc, other, light count)`` of a block's candidate pairs (int64, int64, int32)
Candidates = tuple[np.ndarray, np.ndarray, np.ndarray]

#: light pair keys :func:`block_candidates` counts at once (a sub-block of whole rows): its
#: counts take ~16 bytes a distinct pair, ~64 MiB at 2**22 keys, whatever the block's size
SUB_BLOCK_KEYS = 1 << 22

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


def needs_rebound(bound_docs: int | None, n_docs: int, growth: float = REBOUND_GROWTH) -> bool:
    """Whether an incremental run on a bounded index chooses its cutoff again: the index's
    documents ``n_docs`` (doc-ID space) are at least ``growth`` times, or at most a
    ``growth``-th of, ``bound_docs`` (those when the cutoff was chosen; None: not recorded,
    an index bounded before re-bounds existed: never)."""
    if bound_docs is None or bound_docs <= 0:
        return False
    return n_docs >= growth * bound_docs or n_docs * growth <= bound_docs


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


def range_sets(shard: ShardData, cutoff: int, max_df: int | None, n_docs: int) -> HeavySets:
    """The heavy chunks (``cutoff < df <= max_df``) of one merged range as per-document sorted
    ranks local to the range (``0..n_heavy-1`` in key order; uint16 when the range has at most
    65,536 heavy chunks, else uint32). Memory: the range's heavy postings, ~40 bytes each while
    building, 2-4 bytes each kept, plus ``8 (n_docs + 1)`` bytes of offsets."""
    sets = HeavySets.build([heavy_postings(shard, cutoff, max_df)], n_docs)
    if sets.n_heavy > 1 << 16:
        return sets
    return HeavySets(sets.offsets, sets.ranks.astype(np.uint16), sets.n_heavy)


def block_candidates(
    parts: list[np.ndarray],
    doc_lo: int,
    n_chunks: np.ndarray,
    threshold: float,
    sub_keys: int = SUB_BLOCK_KEYS,
) -> Candidates:
    """A bounded block's candidates: its counted light pair keys (``i * n_docs + o`` pairing
    ``doc_lo + i`` with ``o``, :func:`~simdask.kernels.similarity.count_block_keys`) whose
    light count alone reaches the threshold in one direction (:func:`light_evidence`), as
    ``(doc, other, light count)``. The keys are counted by sub-blocks of whole rows of at
    most ``sub_keys`` keys (:func:`~simdask.kernels.similarity.row_slices`: the same counts,
    cut at row boundaries), each decoded :data:`CANDIDATE_SLICE` pairs at a time, so that
    beyond the parts the task holds one sub-block's counts (~16 bytes a distinct pair), not
    the whole block's."""
    n_docs = len(n_chunks)
    need = need_counts(n_chunks, threshold)
    out: list[Candidates] = [(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32))]
    for sub in row_slices(parts, n_docs, sub_keys):
        keys, shared = count_block_keys(sub, n_docs)
        for lo in range(0, len(keys), CANDIDATE_SLICE):
            d, o = np.divmod(keys[lo : lo + CANDIDATE_SLICE].astype(np.int64), n_docs)
            s = shared[lo : lo + CANDIDATE_SLICE]
            d += doc_lo
            ok = light_evidence(d, o, s, need)
            out.append((d[ok], o[ok], s[ok].astype(np.int32)))
        del keys, shared
    d, o, s = (np.concatenate([c[i] for c in out]) for i in range(3))
    return d, o, s


def range_overlap(sets: HeavySets, cand: Candidates) -> np.ndarray:
    """The candidates' overlap through one range's heavy chunks (:func:`range_sets`): per pair,
    ``|heavy(d) ∩ heavy(o)|`` counted in this range (int32); only pairs whose documents both
    hold a heavy chunk here are searched (:func:`set_overlap`)."""
    d, o = cand[0], cand[1]
    sizes = sets.sizes
    out = np.zeros(len(d), np.int32)
    both = np.flatnonzero((sizes[d] > 0) & (sizes[o] > 0))
    if len(both):
        out[both] = set_overlap(sets, d[both], o[both])
    return out


def bounded_block_rows(
    cand: Candidates,
    overlaps: list[np.ndarray],
    n_chunks: np.ndarray,
    threshold: float,
    top_k: int,
) -> Rows:
    """A bounded block's rows: each candidate's light count plus its overlaps in every range
    (:func:`range_overlap`; the ranges split the heavy chunks, so the sum is the overlap over
    all of them) is its count over all counted chunks; rows over ``threshold`` percent both
    ways, best ``top_k`` per document."""
    d, o, s = cand
    shared = s.astype(np.int64)
    for ov in overlaps:
        shared += ov
    need = need_counts(n_chunks, threshold)
    keep = shared >= np.minimum(need[d], need[o])
    return top_k_rows(*directed_rows(d[keep], o[keep], shared[keep], n_chunks, threshold), top_k)
