"""The similarity stage's per-range passes in pieces of lists (simdask.kernels.range_pieces):
the same arrays as the one-piece code they replaced (kept here as the reference, verbatim from
main at 9d0ea45) for any piece size, brute force for the pieces themselves, and a peak of
allocations that follows the view, not the range."""

from __future__ import annotations

import dataclasses
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.kernels.arrays import expand_ranges
from simdask.kernels.doc_postings import DocPostings
from simdask.kernels.heavy import df_histogram, heavy_postings
from simdask.kernels.postings import ShardData
from simdask.kernels.range_pieces import chunk_pieces
from simdask.kernels.similarity import pair_work, skipped_chunks

pytestmark = pytest.mark.unit


# ---- the one-piece references (main at 9d0ea45) ----------------------------------------


def ref_narrow(a):
    top = int(a.max()) if len(a) else 0
    for t in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(t).max:
            return a.astype(t)
    return a.astype(np.int64)


def ref_build(shard, n_docs, max_df=None):
    df = np.diff(shard.offsets)
    keep = df > 1 if max_df is None else (df > 1) & (df <= max_df)
    chunks = np.flatnonzero(keep)
    lens = df[chunks].astype(np.int64)
    doc_ids = shard.doc_ids[expand_ranges(shard.offsets[chunks], lens)].astype(np.uint32)
    first = np.zeros(len(lens), np.int64)
    np.cumsum(lens[:-1], out=first[1:])
    pos = expand_ranges(first, lens - 1)
    later = np.repeat(first + lens, lens - 1) - pos - 1
    docs = doc_ids[pos]
    order = np.argsort(docs, kind="stable")
    counts = np.bincount(docs, minlength=n_docs)[:n_docs]
    width = np.uint32 if len(doc_ids) < 2**32 else np.int64
    starts = np.zeros(n_docs + 1, width)
    starts[1:] = np.cumsum(counts)
    return doc_ids, starts, pos[order].astype(width), ref_narrow(later[order])


def ref_pair_work(shard, n_docs, max_df=None):
    df = np.diff(shard.offsets).astype(np.int64)
    ends = np.repeat(shard.offsets[1:].astype(np.int64), df)
    counted = np.ones(len(ends), dtype=bool) if max_df is None else np.repeat(df <= max_df, df)
    later = ends - np.arange(len(ends), dtype=np.int64) - 1
    later[~counted] = 0
    work = np.bincount(shard.doc_ids, weights=later, minlength=n_docs)
    return np.rint(work).astype(np.int64)


def ref_df_histogram(shard, max_df=None):
    df = np.diff(shard.offsets).astype(np.int64)
    if max_df is not None:
        df = df[df <= max_df]
    df.sort()
    if len(df) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    new = np.flatnonzero(np.diff(df)) + 1
    starts = np.concatenate([[0], new])
    return df[starts], np.diff(np.concatenate([starts, [len(df)]])).astype(np.int64)


def ref_heavy_postings(shard, cutoff, max_df=None):
    df = np.diff(shard.offsets).astype(np.int64)
    heavy = df > cutoff
    if max_df is not None:
        heavy &= df <= max_df
    idx = np.flatnonzero(heavy)
    starts = shard.offsets[idx].astype(np.int64)
    pos = expand_ranges(starts, df[idx]) if len(idx) else np.zeros(0, np.int64)
    return df[idx], shard.doc_ids[pos]


# ---- shards -------------------------------------------------------------------------------


def shard_of(lists: list[list[int]]) -> ShardData:
    """A shard whose chunk ``i`` is held by the sorted distinct documents ``lists[i]``."""
    lists = [sorted(set(x)) for x in lists]
    offsets = np.zeros(len(lists) + 1, np.uint64)
    offsets[1:] = np.cumsum([len(x) for x in lists])
    doc_ids = np.array([d for x in lists for d in x], np.uint32)
    keys = np.arange(len(lists), dtype=np.uint32)
    return ShardData(0, 2**32, keys, offsets, doc_ids)


N_DOCS = 30
lists_st = st.lists(st.lists(st.integers(0, N_DOCS - 1), min_size=1, max_size=12), max_size=40)
piece_st = st.integers(1, 200)
max_df_st = st.sampled_from([None, 1, 2, 3, 5])
#: documents the view is built for: some shards hold documents >= n_docs
n_docs_st = st.sampled_from([N_DOCS, N_DOCS // 2, 1])


#: the offsets' dtype the pieces read: uint64 (in memory) or uint32 (a segment mapped as stored)
offsets_st = st.sampled_from([np.uint64, np.uint32])


def stored(shard: ShardData, dtype) -> ShardData:
    """``shard`` with its offsets as ``dtype`` (as :func:`on_stored_shard` maps them)."""
    return dataclasses.replace(shard, offsets=shard.offsets.astype(dtype))


def same(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_array_equal(a, b)


@settings(max_examples=200, deadline=None)
@given(lists=lists_st, piece=st.one_of(piece_st, st.just(2**40)), dtype=offsets_st)
def test_chunk_pieces_cover_in_order(lists, piece, dtype):
    shard = shard_of(lists)
    pieces = chunk_pieces(shard.offsets.astype(dtype), piece)
    flat = [c for c0, c1 in pieces for c in range(c0, c1)]
    assert flat == list(range(len(lists)))
    for c0, c1 in pieces:
        held = int(shard.offsets[c1]) - int(shard.offsets[c0])
        assert held <= piece or c1 == c0 + 1
        if c1 < len(lists):  # greedy: the next chunk would not have fit
            assert int(shard.offsets[c1 + 1]) - int(shard.offsets[c0]) > piece


def test_chunk_pieces_rejects_empty_piece():
    with pytest.raises(ValueError, match="at least 1"):
        chunk_pieces(np.zeros(3, np.uint64), 0)


@settings(max_examples=300, deadline=None)
@given(lists=lists_st, piece=piece_st, max_df=max_df_st, n_docs=n_docs_st, dtype=offsets_st)
def test_doc_postings_in_pieces_as_one_piece(lists, piece, max_df, n_docs, dtype):
    shard = shard_of(lists)
    dp = DocPostings.build(stored(shard, dtype), n_docs, max_df, piece=piece)
    for got, want in zip(
        (dp.doc_ids, dp.starts, dp.pos, dp.later), ref_build(shard, n_docs, max_df), strict=True
    ):
        same(got, want)


@settings(max_examples=300, deadline=None)
@given(lists=lists_st, piece=piece_st, max_df=max_df_st, n_docs=n_docs_st, dtype=offsets_st)
def test_pair_work_in_pieces_as_one_piece(lists, piece, max_df, n_docs, dtype):
    shard = shard_of(lists)
    got = pair_work(stored(shard, dtype), n_docs, max_df, piece=piece)
    want = ref_pair_work(shard, n_docs, max_df)  # as long as the largest doc ID + 1
    # n_docs long, or up to the last document that emits: the rest is zero work
    assert n_docs <= len(got) <= len(want)
    assert not want[len(got) :].any()
    same(got, want[: len(got)])


@settings(max_examples=300, deadline=None)
@given(lists=lists_st, piece=piece_st, max_df=max_df_st, cutoff=st.integers(0, 6), dtype=offsets_st)
def test_histogram_and_heavy_postings_in_pieces_as_one_piece(lists, piece, max_df, cutoff, dtype):
    ref = shard_of(lists)
    shard = stored(ref, dtype)
    for got, want in zip(
        df_histogram(shard, max_df, piece=piece), ref_df_histogram(ref, max_df), strict=True
    ):
        same(got, want)
    got = heavy_postings(shard, cutoff, max_df, piece=piece)
    for g, w in zip(got, ref_heavy_postings(ref, cutoff, max_df), strict=True):
        same(g, w)
    want = 0 if max_df is None else sum(len(set(x)) > max_df for x in lists)
    assert skipped_chunks(shard, max_df) == want


def test_doc_postings_brute_force():
    """The view against a Python build: per document, (position, later) of each posting
    that is not last in a kept list, ascending by position."""
    rng = np.random.default_rng(5)
    lists = [rng.choice(N_DOCS, rng.integers(1, 8), replace=False).tolist() for _ in range(300)]
    shard = shard_of(lists)
    for max_df in (None, 4):
        dp = DocPostings.build(shard, N_DOCS, max_df, piece=7)
        flat, want = [], {d: [] for d in range(N_DOCS)}
        for x in map(sorted, lists):
            if len(x) < 2 or (max_df is not None and len(x) > max_df):
                continue
            for i, d in enumerate(x[:-1]):
                want[d].append((len(flat) + i, len(x) - i - 1))
            flat += x
        assert dp.doc_ids.tolist() == flat
        for d in range(N_DOCS):
            a, b = int(dp.starts[d]), int(dp.starts[d + 1])
            assert list(zip(dp.pos[a:b].tolist(), dp.later[a:b].tolist(), strict=True)) == want[d]


def big_range(n_chunks: int, seed: int = 0) -> ShardData:
    """A prose-like range: most chunks held by one document, some by a few."""
    rng = np.random.default_rng(seed)
    df = np.where(rng.random(n_chunks) < 0.9, 1, rng.integers(2, 6, n_chunks)).astype(np.uint64)
    offsets = np.zeros(n_chunks + 1, np.uint64)
    np.cumsum(df, out=offsets[1:])
    n = int(offsets[-1])
    # ascending documents within each list: a sorted random draw per list
    doc_ids = (rng.integers(0, 1 << 20, n) // 8 * 8).astype(np.uint32)
    doc_ids += (
        np.arange(n) - np.repeat(offsets[:-1].astype(np.int64), df.astype(np.int64))
    ).astype(np.uint32)
    return ShardData(0, 2**32, np.arange(n_chunks, dtype=np.uint32), offsets, doc_ids)


def peak_of(fn):
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_peak_follows_the_view_not_the_range():
    """4 M postings, pieces of 2**16: the view's build and the pair work allocate the view
    plus a piece-sized constant and the per-document arrays, not the ~40 bytes a posting of
    the one-piece code (which this test also measures, to show it would fail)."""
    shard = big_range(3_600_000)
    n, n_docs, piece = len(shard.doc_ids), 1 << 20, 1 << 16
    dp, peak = peak_of(lambda: DocPostings.build(shard, n_docs, 10, piece=piece))
    per_doc = 3 * 8 * n_docs  # counts, cursor, a piece's bincount
    bound = dp.nbytes + per_doc + 80 * piece + (1 << 20)
    assert peak <= bound, (peak, bound, n)
    _, ref_peak = peak_of(lambda: ref_build(shard, n_docs, 10))
    assert ref_peak > bound  # the one-piece code would not pass
    _, peak = peak_of(lambda: pair_work(shard, n_docs, 10, piece=piece))
    bound = 4 * 8 * n_docs + 80 * piece + (1 << 20)  # work, a piece's, rint, result
    assert peak <= bound, (peak, bound)
    _, ref_peak = peak_of(lambda: ref_pair_work(shard, n_docs, 10))
    assert ref_peak > bound
    for got in (df_histogram(shard, 10, piece=piece), heavy_postings(shard, 3, 10, piece=piece)):
        assert got is not None
    _, peak = peak_of(lambda: df_histogram(shard, 10, piece=piece))
    assert peak <= 80 * piece + (1 << 20)


def test_stored_offsets_are_mapped_not_copied(tmp_path):
    """A segment opened for the per-range passes (on_stored_shard) keeps its offsets mapped
    as stored (uint32 for a small range), without the uint64 copy on_shard makes; the passes
    give the same results on either."""
    from simdask.engine.segment_ref import SegmentRef, on_shard, on_stored_shard
    from simdask.storage.backends import open_shard_store

    rng = np.random.default_rng(3)
    shard = shard_of([rng.choice(N_DOCS, rng.integers(1, 6), replace=False) for _ in range(500)])
    open_shard_store(tmp_path).write(4, 0, shard)
    ref = SegmentRef(str(tmp_path), 0, 4, 0, 2**32, 500, len(shard.doc_ids))
    narrow = on_stored_shard(lambda s: s, ref)
    wide = on_shard(lambda s: s, ref)
    assert isinstance(narrow.offsets, np.memmap) and narrow.offsets.dtype == np.uint32
    assert wide.offsets.dtype == np.uint64  # a copy, 8 bytes a chunk
    for a, b in zip(
        on_stored_shard(DocPostings.build, ref, N_DOCS, 4).__dict__.values(),
        DocPostings.build(shard, N_DOCS, 4).__dict__.values(),
        strict=True,
    ):
        same(a, b)
    same(on_stored_shard(pair_work, ref, N_DOCS, 4), ref_pair_work(shard, N_DOCS, 4))
