"""Candidate partners per range of the content n-gram's ID space (the scalable form).

The content n-gram postings (:mod:`simdask.kernels.content_ngrams`) live as one CSR segment
per range of the feature-ID space (a :class:`~simdask.kernels.postings.ShardData`, like the
sorted chunk's). A run:

1. splits its documents' ``(feature, doc)`` pairs by range (:func:`split_by_range`);
2. per range, drops the postings of the documents it recomputes or deletes and merges in the
   new ones (:func:`merge_range`), which also names the documents whose list may change:
   the holders (after the run) of every feature whose document frequency changed and is at
   most ``max_df`` before or after, and at least 2 before or after (a feature below 2 or
   above ``max_df`` on both sides weighs 0 on both);
3. per block of target documents, every range emits the weighted pairs of its features
   held by a target with ``2 <= df <= max_df`` summed per pair (:func:`block_entries`), and
   the block's parts are summed and cut to each target's best ``depth``
   (:func:`block_top`).

Scores are sums of integer weights (:func:`~simdask.kernels.candidate_scores.weight_table`), so
the result does not depend on how ranges and blocks split the work: a run recomputing the
affected documents' lists gets what a full build gets.

**Normalised scores** (``CandidateConfig.normalise``, issue 29: a long source shares more
rare word pairs with any text on its topic than the short source a summary was made from):
a document's *weight mass* is the sum of the weights of its features (:func:`range_mass`,
summed over the ranges: an integer), and the stored score of ``(d, e)`` is
``round(NORM_SCALE * shared / (sqrt(mass_d) * sqrt(mass_e)))`` (:func:`normalised_scores`),
in ``0..NORM_SCALE`` (``shared <= min(mass_d, mass_e)``): cosine-like, 1 (x ``NORM_SCALE``)
for two documents with the same features. Within one document's list ``mass_d`` is a
constant, so the ranking is by ``shared / sqrt(mass_e)``. A document's mass changes only
when a feature it holds changes weight, i.e. when it is new or affected; the lists that
hold such a document must be recomputed too (:func:`block_neighbours`).

A *partner filter* (``allowed``: a boolean mask by doc ID) keeps only the partners it marks,
e.g. the documents of a source collection (PAN's task: suspicious documents are checked
against the sources). Pure numpy, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from simdask.kernels.arrays import expand_ranges
from simdask.kernels.candidate_scores import weight_table
from simdask.kernels.packed_sort import distinct_pairs, group_floor, sums_by_key, top_per_row
from simdask.kernels.postings import ShardData, shard_ranges

__all__ = [
    "NORM_SCALE",
    "RangeMerge",
    "block_entries",
    "block_neighbours",
    "block_top",
    "csr_of_pairs",
    "mass_vector",
    "merge_range",
    "normalised_scores",
    "range_mass",
    "split_by_range",
]

#: a pair key is ``row << ROW_SHIFT | other`` (doc IDs are uint32)
ROW_SHIFT = 32
_LOW = (1 << ROW_SHIFT) - 1
#: a normalised score is this times the cosine-like ratio (module docstring)
NORM_SCALE = 1_000_000_000


def split_by_range(
    ids: np.ndarray, docs: np.ndarray, hash_bits: int, n_ranges: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The distinct pairs ``(ids[i], docs[i])`` (feature IDs, doc IDs) of each of the
    ``n_ranges`` ranges of the ``hash_bits``-bit ID space, sorted by feature then doc; doc
    IDs as uint32."""
    ids, docs = distinct_pairs(np.asarray(ids), np.asarray(docs, np.uint32))
    bounds = [lo for lo, _ in shard_ranges(hash_bits, n_ranges)] + [1 << hash_bits]
    cuts = np.searchsorted(ids, np.asarray(bounds, dtype=np.uint64))
    return [(ids[a:b], docs[a:b]) for a, b in pairwise(cuts)]


def csr_of_pairs(ids: np.ndarray, docs: np.ndarray, lo: int, hi: int) -> ShardData:
    """The postings of the sorted distinct pairs ``(ids, docs)`` of range ``[lo, hi)``."""
    if len(ids) == 0:
        return ShardData.empty(lo, hi)
    new = np.ones(len(ids), dtype=bool)
    new[1:] = ids[1:] != ids[:-1]
    starts = np.flatnonzero(new)
    offsets = np.append(starts, len(ids)).astype(np.uint64)
    return ShardData(lo, hi, ids[starts], offsets, np.asarray(docs, np.uint32))


@dataclass(frozen=True)
class RangeMerge:
    """One range after a run: ``data`` (its postings), ``affected`` (sorted uint32 doc IDs
    whose list the run may change through this range's features), ``entries`` (partner
    entries of a full scoring of the range: ``sum(df * (df - 1))`` over its features with
    ``2 <= df <= max_df``), ``changed`` (False: nothing of the range changed)."""

    data: ShardData
    affected: np.ndarray
    entries: int
    changed: bool


def range_entries(data: ShardData, max_df: int) -> int:
    """``sum(df * (df - 1))`` over the features of ``data`` with ``2 <= df <= max_df``."""
    df: np.ndarray = np.diff(np.asarray(data.offsets, np.int64))
    df = df[(df >= 2) & (df <= max_df)]
    return int(np.sum(df * (df - 1)))


def merge_range(
    old: ShardData, new_ids: np.ndarray, new_docs: np.ndarray, dropped: np.ndarray, max_df: int
) -> RangeMerge:
    """``old`` without the postings of ``dropped`` (sorted doc IDs) and with the sorted
    distinct pairs ``(new_ids, new_docs)``; the documents affected (module docstring)."""
    offsets = np.asarray(old.offsets, np.int64)
    docs = np.asarray(old.doc_ids, np.uint32)
    old_df = np.diff(offsets)
    gone = np.isin(docs, dropped) if len(dropped) else np.zeros(len(docs), dtype=bool)
    if not len(new_ids) and not gone.any():
        return RangeMerge(old, np.zeros(0, np.uint32), range_entries(old, max_df), False)
    new_ids = np.asarray(new_ids)
    keys = np.asarray(old.chunk_keys)
    keys = keys.astype(np.promote_types(keys.dtype, new_ids.dtype), copy=False)
    feat = np.repeat(keys, old_df)
    ids, ds = distinct_pairs(
        np.concatenate([feat[~gone], new_ids.astype(keys.dtype)]),
        np.concatenate([docs[~gone], np.asarray(new_docs, np.uint32)]),
    )
    data = csr_of_pairs(ids, ds, old.lo, old.hi)
    if len(keys) == 0:  # nothing before (a build): every feature of the range changed
        changed = data.chunk_keys.astype(keys.dtype, copy=False)
    else:
        changed = _sorted_distinct(np.concatenate([feat[gone], new_ids.astype(keys.dtype)]))
    before = _df_of(keys, old_df, changed)
    after = _df_of(data.chunk_keys, np.diff(data.offsets.astype(np.int64)), changed)
    weighs = (np.minimum(before, after) <= max_df) & (np.maximum(before, after) >= 2)
    pos = np.searchsorted(data.chunk_keys, changed[weighs & (after > 0)])
    starts = data.offsets[pos].astype(np.int64)
    held = data.doc_ids[expand_ranges(starts, data.offsets[pos + 1].astype(np.int64) - starts)]
    return RangeMerge(data, np.unique(held), range_entries(data, max_df), True)


def _sorted_distinct(a: np.ndarray) -> np.ndarray:
    """The distinct values of ``a`` sorted (``np.union1d``'s result; one ``np.sort``, cheaper
    than the hash table ``np.unique`` builds for tens of millions of values)."""
    a = np.sort(a)
    keep = np.ones(len(a), dtype=bool)
    keep[1:] = a[1:] != a[:-1]
    return a[keep]


def _df_of(keys: np.ndarray, df: np.ndarray, features: np.ndarray) -> np.ndarray:
    """The document frequency (int64) of each of ``features`` in postings of sorted ``keys``
    with frequencies ``df`` (0 when absent)."""
    out = np.zeros(len(features), dtype=np.int64)
    if len(keys) == 0:
        return out
    pos = np.minimum(np.searchsorted(keys, features), len(keys) - 1)
    found = keys[pos] == features
    out[found] = df[pos[found]]
    return out


def block_entries(
    data: ShardData, targets: np.ndarray, max_df: int, allowed: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The partner entries of the block ``targets`` (sorted distinct uint32 doc IDs) from the
    features of ``data``: pair keys ``row << 32 | other`` (uint64; ``row``: index in
    ``targets``; ``other`` a different document), one per feature both hold with ``2 <= df
    <= max_df``, and that feature's weight (int64); :func:`block_top` sums them. ``allowed``
    (a boolean mask by doc ID; None: every document): only the partners it marks (a doc ID
    beyond its length is not marked); the feature's weight still counts every holder."""
    none = (np.zeros(0, np.uint64), np.zeros(0, np.int64))
    if len(targets) == 0 or data.n_postings == 0:
        return none
    offsets = np.asarray(data.offsets, np.int64)
    docs = np.asarray(data.doc_ids)
    t0, t1 = int(targets[0]), int(targets[-1])
    sel = np.flatnonzero((docs >= t0) & (docs <= t1))
    row = np.searchsorted(targets, docs[sel])
    if len(targets) < t1 - t0 + 1:  # not every doc ID of the span is a target
        hit = targets[np.minimum(row, len(targets) - 1)] == docs[sel]
        sel, row = sel[hit], row[hit]
    fidx = np.searchsorted(offsets, sel, side="right") - 1
    df = offsets[fidx + 1] - offsets[fidx]
    weights = weight_table(max_df)
    w = weights[np.minimum(df, len(weights) - 1)]
    use = w > 0
    row, fidx, df, w = row[use], fidx[use], df[use], w[use]
    if len(row) == 0:
        return none
    other = docs[expand_ranges(offsets[fidx], df)].astype(np.uint64)
    key = (np.repeat(row.astype(np.uint64), df) << np.uint64(ROW_SHIFT)) | other
    w = np.repeat(w, df)
    mine = other != targets[np.repeat(row, df)].astype(np.uint64)
    if allowed is not None:
        inside = other < np.uint64(len(allowed))
        mine &= inside
        mine[inside] &= np.asarray(allowed, bool)[other[inside].astype(np.int64)]
    return key[mine], w[mine]


def range_mass(data: ShardData, max_df: int) -> tuple[np.ndarray, np.ndarray]:
    """Each document's weight mass in ``data``: the sum of the weights of its features there
    (:func:`~simdask.kernels.candidate_scores.weight_table`; 0 outside ``2 <= df <= max_df``), as
    ``(docs, mass)``: the sorted distinct uint32 doc IDs with a positive mass and it (int64)."""
    none = (np.zeros(0, np.uint32), np.zeros(0, np.int64))
    if data.n_postings == 0:
        return none
    df: np.ndarray = np.diff(np.asarray(data.offsets, np.int64))
    weights = weight_table(max_df)
    w = np.repeat(weights[np.minimum(df, len(weights) - 1)], df)
    docs = np.asarray(data.doc_ids, np.uint32)
    use = w > 0
    if not use.any():
        return none
    who, mass = sums_by_key(docs[use].astype(np.uint64), w[use])
    return who.astype(np.uint32), mass


def mass_vector(parts: list[tuple[np.ndarray, np.ndarray]], size: int = 0) -> np.ndarray:
    """The weight mass (int64) by doc ID, summed over the ranges' :func:`range_mass`
    ``parts``; at least ``size`` long."""
    n = max([size, *[int(d[-1]) + 1 for d, _ in parts if len(d)]])
    out = np.zeros(n, np.int64)
    for d, m in parts:
        np.add.at(out, np.asarray(d, np.int64), np.asarray(m, np.int64))
    return out


def normalised_scores(
    shared: np.ndarray, mass_doc: np.ndarray, mass_other: np.ndarray
) -> np.ndarray:
    """``round(NORM_SCALE * shared / (sqrt(mass_doc) * sqrt(mass_other)))`` (int64, half to
    even; 0 where a mass is 0): the cosine-like score of pairs with ``shared`` summed weight."""
    root_doc = np.sqrt(np.asarray(mass_doc, np.float64))
    return _scaled(shared, root_doc, np.sqrt(np.asarray(mass_other, np.float64)))


def _scaled(shared: np.ndarray, root_doc: np.ndarray, root_other: np.ndarray) -> np.ndarray:
    """:func:`normalised_scores` from the square roots of the masses (float64)."""
    s = NORM_SCALE * np.asarray(shared, np.int64)
    den = root_doc * root_other
    ok = den > 0
    if ok.all():  # every pair's masses positive (always, for pairs sharing a weighted feature)
        return np.rint(s / den).astype(np.int64)
    out = np.zeros(len(s), np.int64)
    out[ok] = np.rint(s[ok] / den[ok]).astype(np.int64)
    return out


def block_neighbours(parts: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The sorted distinct doc IDs (int64) that share a weighted feature with any target of
    the block (the partners in its :func:`block_entries` ``parts``, before any cut)."""
    keys = np.concatenate([np.zeros(0, np.uint64), *[k for k, _ in parts]])
    return np.unique((keys & np.uint64(_LOW)).astype(np.int64))


def block_top(
    parts: list[tuple[np.ndarray, np.ndarray]],
    targets: np.ndarray,
    depth: int,
    mass: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``depth`` best partners of each of ``targets`` from the ranges' ``parts``
    (:func:`block_entries`): rows ``(doc, other, score)`` (int64) by doc ascending, best
    first, ties to the smaller ``other``; only positive scores. ``mass`` (by doc ID, from
    :func:`mass_vector`): the scores normalised (:func:`normalised_scores`); None: the sums."""
    keys = np.concatenate([np.zeros(0, np.uint64), *[k for k, _ in parts]])
    sums = np.concatenate([np.zeros(0, np.int64), *[s for _, s in parts]])
    key, score = sums_by_key(keys, sums)
    who = (key >> np.uint64(ROW_SHIFT)).astype(np.int64)
    other = (key & np.uint64(_LOW)).astype(np.int64)
    if mass is not None and len(score):
        root = np.sqrt(np.asarray(mass, np.float64))  # once a document, not once a pair
        score = _scaled(score, root[np.asarray(targets, np.int64)[who]], root[other])
    pos = score > 0  # rows grouped (the keys are sorted): a floor per row before the sort
    pos[pos] = group_floor(who[pos], score[pos], depth)
    who, other, score = top_per_row(who[pos], other[pos], score[pos], depth)
    return np.asarray(targets, np.int64)[who], other, score
