"""Segments of a chunk-ID range merged on the fly, with tombstones (pure numpy; DESIGN §3).

A range's postings are a list of *segments*, each the CSR arrays of a shard
(``chunk_keys, offsets, doc_ids``) written by one generation ``g`` (its *watermark*). Removing
or modifying a document ``d`` at generation ``t`` writes a *tombstone* ``(d, t)``; it hides the
postings of ``d`` in every segment older than it (``g < t``), never those of later segments,
so a recycled doc ID (new postings at ``g >= t``) stays visible. With ``tomb[d]`` the newest
tombstone generation of ``d`` (0: none), a posting of ``d`` in a segment of generation ``g`` is
live exactly when ``tomb[d] <= g``.
"""

from __future__ import annotations

import numpy as np

from simdask.kernels.postings import build_postings, find_keys, sorted_unique

__all__ = [
    "concat_disjoint",
    "live_doc_counts",
    "live_mask",
    "merge_segments",
    "restrict",
    "tombstone_table",
    "tombstones_after",
]

Postings = tuple[np.ndarray, np.ndarray, np.ndarray]


def tombstone_table(doc_ids: np.ndarray, generations: np.ndarray, size: int = 0) -> np.ndarray:
    """``tomb[d]``: the newest tombstone generation of each doc ID (int64; 0 where none),
    at least ``size`` long, from tombstone rows ``(doc_ids[i], generations[i])``."""
    doc_ids = np.asarray(doc_ids, dtype=np.int64)
    generations = np.asarray(generations, dtype=np.int64)
    n = max(size, int(doc_ids.max()) + 1 if len(doc_ids) else 0)
    tomb = np.zeros(n, dtype=np.int64)
    np.maximum.at(tomb, doc_ids, generations)
    return tomb


def tombstones_after(tomb: np.ndarray, dropped: np.ndarray, generation: int) -> np.ndarray:
    """``tomb`` with the tombstones of ``dropped`` at ``generation`` (a run's), up to the
    highest tombstoned ID only (:func:`live_mask` reads none past it): an add sends no
    index-sized table."""
    dropped = np.asarray(dropped, np.int64)
    out = np.zeros(max(len(tomb), int(dropped.max()) + 1 if len(dropped) else 0), np.int64)
    out[: len(tomb)] = tomb
    out[dropped] = generation
    return out


def live_mask(doc_ids: np.ndarray, generation: int, tomb: np.ndarray) -> np.ndarray:
    """Which postings (``doc_ids``) of a segment of ``generation`` no tombstone hides."""
    docs = np.asarray(doc_ids, dtype=np.int64)
    inside = docs < len(tomb)
    live = np.ones(len(docs), dtype=bool)
    live[inside] = tomb[docs[inside]] <= generation
    return live


def live_doc_counts(
    parts: list[tuple[np.ndarray, int]], tomb: np.ndarray, n_docs: int
) -> tuple[np.ndarray, np.ndarray]:
    """How many live postings name each document, of the segment parts ``[(doc IDs, one per
    posting, tombstones not applied), generation]``: sorted doc IDs (int64) and counts
    (int64); IDs at or above ``n_docs`` are counted too (a caller reports them). Equals
    counting the doc IDs that :func:`live_mask` keeps, without a test per posting: one
    ``bincount`` per generation, then the documents its tombstones hide set to 0."""
    by_gen: dict[int, list[np.ndarray]] = {}
    for docs, gen in parts:
        if len(docs):
            by_gen.setdefault(int(gen), []).append(docs)
    acc = np.zeros(n_docs, np.int64)
    for gen, lists in by_gen.items():
        counts = np.bincount(lists[0] if len(lists) == 1 else np.concatenate(lists))
        counts[np.flatnonzero(tomb[: len(counts)] > gen)] = 0
        if len(counts) > len(acc):
            counts, acc = acc, counts
        acc[: len(counts)] += counts
    ids = np.flatnonzero(acc)
    return ids, acc[ids]


def _pair_keys(seg: Postings, universe: np.ndarray | None = None) -> np.ndarray:
    """Pair keys ``chunk << 32 | doc`` of a segment's postings (sorted, as the CSR is); with
    ``universe`` (sorted distinct uint64 chunk IDs holding the segment's), the chunk's rank
    in it stands for the chunk (64-bit IDs do not fit beside a doc ID; ranks do)."""
    keys, offsets, docs = seg
    df: np.ndarray = np.diff(np.asarray(offsets, dtype=np.int64))
    if universe is not None:
        keys = np.searchsorted(universe, np.asarray(keys))
    chunk = np.repeat(np.asarray(keys, dtype=np.uint64), df)
    return (chunk << np.uint64(32)) | np.asarray(docs, dtype=np.uint64)


def _universe(segments: list[Postings]) -> np.ndarray | None:
    """The sorted distinct chunk IDs of segments with uint64 chunk IDs (None: uint32 IDs,
    which pack beside a doc ID as they are)."""
    if not any(np.asarray(seg[0]).dtype == np.uint64 for seg in segments):
        return None
    return sorted_unique(np.concatenate([np.asarray(seg[0], dtype=np.uint64) for seg in segments]))


def merge_segments(segments: list[Postings], generations: list[int], tomb: np.ndarray) -> Postings:
    """The live postings of a range: the union of ``segments`` (segment ``i`` written by
    generation ``generations[i]``) minus what ``tomb`` hides (see the module docstring).

    A k-way merge: each segment's live pair keys form a sorted run and a stable sort of their
    concatenation merges the runs (timsort finds and merges them in one pass per level).
    A posting present in two segments is kept once. Returns CSR ``(chunk_keys, offsets,
    doc_ids)`` as :func:`~simdask.kernels.postings.build_postings` does.
    """
    universe = _universe(segments)
    runs = []
    for seg, gen in zip(segments, generations, strict=True):
        keys = _pair_keys(seg, universe)
        live = live_mask(seg[2], gen, tomb)
        runs.append(keys if live.all() else keys[live])
    runs = [r for r in runs if len(r)]
    if not runs:
        empty = build_postings(np.zeros(0, np.uint64))
        return (empty[0] if universe is None else universe[:0]), *empty[1:]
    if len(runs) == 1:
        return _ranked(build_postings(runs[0]), universe)
    merged = np.concatenate(runs)
    merged.sort(kind="stable")
    if len(merged) > 1:
        keep = np.empty(len(merged), dtype=bool)
        keep[0] = True
        np.not_equal(merged[1:], merged[:-1], out=keep[1:])
        if not keep.all():
            merged = merged[keep]
    return _ranked(build_postings(merged), universe)


def _ranked(postings: Postings, universe: np.ndarray | None) -> Postings:
    """CSR postings built from rank keys, with the chunk IDs the ranks stand for."""
    if universe is None:
        return postings
    ranks, offsets, docs = postings
    return universe[ranks.astype(np.int64)], offsets, docs


def restrict(seg: Postings, chunk_ids: np.ndarray) -> Postings:
    """The postings of a segment held in memory, for the given sorted, distinct chunk IDs
    only (those present)."""
    keys, offsets, docs = seg
    ids = np.asarray(chunk_ids)
    present, pos = find_keys(keys, ids.astype(np.result_type(np.asarray(keys).dtype, ids.dtype)))
    # gathered first, then converted: the whole offsets array is never copied
    starts = np.asarray(offsets[pos], dtype=np.int64)
    ends = np.asarray(offsets[pos + 1], dtype=np.int64)
    df = ends - starts
    out_off = np.zeros(len(pos) + 1, dtype=np.uint64)
    np.cumsum(df, out=out_off[1:])
    first = out_off[:-1].astype(np.int64)
    where = np.arange(int(out_off[-1]), dtype=np.int64) + np.repeat(starts - first, df)
    return present, out_off, np.asarray(docs[where], dtype=np.uint32)


def concat_disjoint(a: Postings, b: Postings) -> Postings:
    """The union of two CSR postings that share no ``(chunk, doc)`` posting, without sorting
    pair keys: each chunk's list is that of ``a`` followed by that of ``b`` (so a list is
    sorted by doc ID only if ``b``'s docs follow ``a``'s). Linear in the postings plus a sort
    of the distinct chunk IDs; :func:`merge_segments` gives the same postings with every list
    sorted. Returns ``(chunk_keys, offsets (uint64), doc_ids (uint32))``."""
    ka, oa, da = (np.asarray(x) for x in a)
    kb, ob, db = (np.asarray(x) for x in b)
    keys = np.union1d(ka, kb).astype(np.result_type(ka.dtype, kb.dtype), copy=False)
    dfa: np.ndarray = np.diff(oa.astype(np.int64))
    dfb: np.ndarray = np.diff(ob.astype(np.int64))
    ia = np.searchsorted(keys, ka)
    ib = np.searchsorted(keys, kb)
    from_a = np.zeros(len(keys), np.int64)
    from_a[ia] = dfa
    counts = from_a.copy()
    counts[ib] += dfb
    offsets = np.zeros(len(keys) + 1, np.uint64)
    np.cumsum(counts, out=offsets[1:])
    starts = offsets[:-1].astype(np.int64)
    docs = np.empty(int(offsets[-1]), np.uint32)
    docs[np.repeat(starts[ia] - oa[:-1].astype(np.int64), dfa) + np.arange(len(da))] = da
    shift_b = starts[ib] + from_a[ib] - ob[:-1].astype(np.int64)
    docs[np.repeat(shift_b, dfb) + np.arange(len(db))] = db
    return keys, offsets, docs
