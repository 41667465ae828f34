"""Segments with tombstones and the merge policy (pure kernels) against brute-force Python."""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.errors import ConfigError
from simdask.kernels.merge_policy import MergePolicy, plan_merges
from simdask.kernels.postings import build_postings, pack_pairs, sorted_unique
from simdask.kernels.segment_merge import (
    live_doc_counts,
    live_mask,
    merge_segments,
    restrict,
    tombstone_table,
)
from simdask.storage.local_store import LocalShardStore
from simdask.storage.segments import (
    RangeReader,
    add_delta,
    merge_shards,
    read_range,
    remove_segment,
    restrict_shard,
)
from simdask.storage.shards import ShardData

pytestmark = pytest.mark.unit


def csr(pairs):
    pairs = sorted(set(pairs))
    c = np.array([p[0] for p in pairs], np.uint32)
    d = np.array([p[1] for p in pairs], np.uint32)
    return build_postings(sorted_unique(pack_pairs(c, d)))


def pairs_of(chunk_keys, offsets, doc_ids):
    df = np.diff(offsets.astype(np.int64))
    return set(zip(np.repeat(chunk_keys, df).tolist(), doc_ids.tolist(), strict=True))


segment_lists = st.lists(
    st.tuples(
        st.sets(st.tuples(st.integers(0, 40), st.integers(0, 12)), max_size=40),
        st.integers(1, 9),
    ),
    max_size=6,
)
tombs = st.lists(st.tuples(st.integers(0, 14), st.integers(1, 10)), max_size=12)


@settings(max_examples=300, deadline=None)
@given(segment_lists, tombs)
def test_merge_segments_equals_live_union(segments, tomb_rows):
    tomb = tombstone_table([d for d, _ in tomb_rows], [g for _, g in tomb_rows])
    newest = {}
    for d, g in tomb_rows:
        newest[d] = max(newest.get(d, 0), g)
    expect = {
        (c, d) for pairs, g in segments for c, d in pairs if newest.get(d, 0) <= g
    }  # a tombstone hides only postings of segments older than it
    got = merge_segments([csr(p) for p, _ in segments], [g for _, g in segments], tomb)
    assert pairs_of(*got) == expect
    keys, offsets, docs = got
    assert np.all(np.diff(keys.astype(np.int64)) > 0)
    assert len(offsets) == len(keys) + 1 and int(offsets[-1]) == len(docs)
    for i in range(len(keys)):
        assert np.all(np.diff(docs[offsets[i] : offsets[i + 1]].astype(np.int64)) > 0)


@settings(max_examples=300, deadline=None)
@given(
    st.sets(st.tuples(st.integers(0, 40), st.integers(0, 12)), max_size=60),
    st.sets(st.tuples(st.integers(0, 40), st.integers(0, 16)), max_size=30),
    st.lists(st.tuples(st.integers(0, 14), st.integers(1, 10)), max_size=8),
    st.sampled_from([np.uint32, np.uint64]),
)
def test_add_delta_equals_merge_shards(before_pairs, delta_pairs, tomb_rows, dtype):
    """A run's delta added to the committed live postings of some chunks: the same postings
    as the k-way merge, whether the delta's documents are new or tombstoned by the run (the
    fast path: lists appended) or not (then it merges); every chunk listed has postings."""
    tomb = tombstone_table([d for d, _ in tomb_rows], [g for _, g in tomb_rows], 17)
    run = 11  # the run's generation: newer than every tombstone above
    dropped = sorted({d for d, _ in delta_pairs} & {d for _, d in before_pairs})
    if dropped and len(tomb_rows) % 2 == 0:  # the usual case: the run tombstones them
        tomb[dropped] = run

    def shard(pairs, gen):
        k, o, d = csr(pairs)
        return ShardData(0, 2**32, k.astype(dtype), o, d, generation=gen)

    before, delta = shard(before_pairs, 7), shard(delta_pairs, run)
    got = add_delta(before, delta, tomb)
    want = merge_shards([before, delta], tomb, 0, 2**32)
    assert pairs_of(got.chunk_keys, got.offsets, got.doc_ids) == pairs_of(
        want.chunk_keys, want.offsets, want.doc_ids
    )
    assert np.array_equal(got.chunk_keys, want.chunk_keys)  # no chunk left without postings
    assert got.doc_ids.dtype == np.uint32 and got.offsets.dtype == np.uint64


def test_recycled_doc_id_is_not_hidden_by_an_older_tombstone():
    base = csr([(1, 5), (2, 5), (2, 6)])  # generation 1: doc 5 and doc 6
    # generation 2 deletes doc 5; generation 3 gives its ID to a new document
    recycled = csr([(3, 5)])
    tomb = tombstone_table([5], [2])
    got = pairs_of(*merge_segments([base, recycled], [1, 3], tomb))
    assert got == {(2, 6), (3, 5)}
    # modified at generation 3: the tombstone and the new postings share a generation
    tomb = tombstone_table([5], [3])
    assert pairs_of(*merge_segments([base, recycled], [1, 3], tomb)) == {(2, 6), (3, 5)}
    assert live_mask(np.array([5, 6, 99], np.uint32), 1, tomb).tolist() == [False, True, True]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.lists(st.integers(0, 50), max_size=40), st.integers(1, 6)), max_size=7),
    st.dictionaries(st.integers(0, 40), st.integers(1, 7), max_size=15),
    st.integers(0, 45),
)
def test_live_doc_counts_count_the_postings_no_tombstone_hides(parts, tombs, n_docs):
    """A query's counts without a test per posting equal counting, posting by posting, the
    doc IDs that tombstones leave live (``tomb[d] <= generation``); doc IDs past the tombstone
    table and past ``n_docs`` included, several parts of one generation, empty parts."""
    tomb = tombstone_table(list(tombs), list(tombs.values()))
    arrays = [(np.array(docs, np.uint32), gen) for docs, gen in parts]
    docs, counts = live_doc_counts(arrays, tomb, n_docs)
    want = Counter(d for ds, g in parts for d in ds if tombs.get(d, 0) <= g)
    assert docs.dtype == np.int64 and counts.dtype == np.int64
    assert docs.tolist() == sorted(want)
    assert counts.tolist() == [want[d] for d in sorted(want)]
    # the same as the per-posting path a query took before
    live = [a[live_mask(a, g, tomb)] for a, g in arrays]
    flat = np.concatenate([np.zeros(0, np.uint32), *live])
    assert Counter(flat.tolist()) == want


@settings(max_examples=200, deadline=None)
@given(
    st.sets(st.tuples(st.integers(0, 60), st.integers(0, 9)), max_size=60),
    st.sets(st.integers(0, 70), max_size=30),
)
def test_restrict_keeps_the_lists_of_the_given_chunks(pairs, wanted):
    ids = np.array(sorted(wanted), np.uint32)
    got = pairs_of(*restrict(csr(pairs), ids))
    assert got == {(c, d) for c, d in pairs if c in wanted}


def test_range_reader_and_read_range_merge_stored_segments(tmp_path):
    store = LocalShardStore(tmp_path / "shards")
    a = {(10, 1), (10, 2), (11, 3), (40, 2)}
    b = {(10, 4), (12, 2), (40, 5)}
    store.write(1, 0, ShardData(0, 100, *csr(a), generation=1))
    store.write(4, 0, ShardData(0, 100, *csr(b), generation=4))
    tomb = tombstone_table([2], [3])  # doc 2 removed at generation 3
    whole = read_range(store, 0, [1, 4], tomb, 0, 100)
    expect = {(10, 1), (11, 3), (10, 4), (12, 2), (40, 5)}
    assert pairs_of(whole.chunk_keys, whole.offsets, whole.doc_ids) == expect
    sub = RangeReader(store).subset(0, [1, 4], np.array([10, 40, 77], np.uint32), tomb, 0, 100)
    assert pairs_of(sub.chunk_keys, sub.offsets, sub.doc_ids) == {
        p for p in expect if p[0] in (10, 40)
    }
    one = store.read(1, 0)
    assert merge_shards([one], np.zeros(0, np.int64), 0, 100) is one
    remove_segment(store, 1, 0)
    assert not store.exists(1, 0) and not (tmp_path / "shards" / "gen-000001").exists()
    assert store.exists(4, 0)


# --------------------------------------------------------------------------------------------
# merge policy


def test_policy_merges_a_full_level_and_nothing_else():
    p = MergePolicy(min_segments=4, max_merge=4, floor_postings=10)
    assert plan_merges([1000, 20, 21, 19], policy=p) == []  # three small: not yet
    assert plan_merges([1000, 20, 21, 19, 22], policy=p) == [[1, 2, 3, 4]]
    assert plan_merges([1000, 900, 800, 950, 20], policy=p) == [[0, 1, 2, 3]]
    assert plan_merges([1000, 20], dead_fraction=0.5, policy=p) == [[0, 1]]
    assert plan_merges([1000], dead_fraction=0.01, force=True, policy=p) == [[0]]
    assert plan_merges([1000], force=True, policy=p) == []
    assert plan_merges([5] * 9, policy=MergePolicy(enabled=False)) == []
    many = plan_merges(list(range(100, 140)), policy=MergePolicy(floor_postings=1, max_segments=32))
    assert many and all(len(m) >= 2 for m in many)
    with pytest.raises(ConfigError, match="max_merge"):
        MergePolicy(min_segments=8, max_merge=4)
    assert MergePolicy.from_dict(p.to_dict()) == p


def _simulate(policy: MergePolicy, runs: int, seed: int):
    """Segments appended one per run, merged as planned; returns (rewrites of each original
    segment's postings, total postings, segments after each run)."""
    rng = random.Random(seed)
    segs: list[tuple[int, list[int]]] = []  # (size, ids of the runs whose postings it holds)
    rewrites = [0] * runs
    counts = []
    for r in range(runs):
        segs.append((rng.randint(50, 150), [r]))
        while True:
            merges = plan_merges([s for s, _ in segs], policy=policy)
            if not merges:
                break
            group = merges[0]
            merged = (sum(segs[i][0] for i in group), [x for i in group for x in segs[i][1]])
            for x in merged[1]:
                rewrites[x] += 1
            segs = [s for i, s in enumerate(segs) if i not in group] + [merged]
        counts.append(len(segs))
    return rewrites, sum(s for s, _ in segs), counts


@pytest.mark.parametrize("seed", [1, 2])
def test_each_posting_is_rewritten_about_log_n_times(seed):
    policy = MergePolicy(min_segments=8, max_merge=10, floor_postings=1, max_segments=64)
    rewrites, total, counts = _simulate(policy, 3000, seed)
    growth = policy.min_segments / 2**policy.level_log_size  # size factor per rewrite
    bound = math.log(total / 50, growth) + 1
    assert max(rewrites) <= bound, (max(rewrites), bound)
    assert max(counts) <= policy.max_segments  # readers never face many segments
    # a rewrite per run would be linear; the total work is N log N, not N^2
    assert sum(rewrites) < 0.01 * len(rewrites) ** 2
    # a tighter segment cap merges the smallest segments early: a little more work
    tight = MergePolicy(min_segments=8, max_merge=10, floor_postings=1, max_segments=32)
    rewrites, total, counts = _simulate(tight, 3000, seed)
    assert sum(rewrites) / len(rewrites) <= bound and max(rewrites) <= 2 * bound
    assert max(counts) <= tight.max_segments


def test_floor_adds_a_bounded_number_of_rewrites():
    policy = MergePolicy(min_segments=8, max_merge=10, floor_postings=1000)
    rewrites, total, _ = _simulate(policy, 2000, 3)
    growth = policy.min_segments / 2**policy.level_log_size
    assert max(rewrites) <= math.log(total / 50, growth) + 1 + 1000 / 50


def test_split_small_and_combined_segments(tmp_path):
    from simdask.storage.segments import SMALL_POSTINGS, split_small

    assert split_small([(1, 5, 100), (2, 1, 3)]) == ([1, 2], [])
    assert split_small([(1, 5, 100), (4, 1, 3), (2, 9, 300)]) == ([2], [1, 4])
    assert split_small([(1, 5, SMALL_POSTINGS), (2, 5, SMALL_POSTINGS), (3, 1, 9)]) == (
        [1, 2, 3],
        [],
    )
    store = LocalShardStore(tmp_path / "shards")
    rng = np.random.default_rng(4)
    segs, expect_parts = [], []
    for g in range(1, 8):
        pairs = {(int(c), int(d)) for c, d in rng.integers(0, 60, size=(40 * g, 2))}
        store.write(g, 0, ShardData(0, 100, *csr(pairs), generation=g))
        segs.append((g, 0, len(pairs)))
        expect_parts.append((pairs, g))
    tomb = tombstone_table([3, 7, 11], [2, 5, 7])
    newest = {3: 2, 7: 5, 11: 7}
    expect = {(c, d) for pairs, g in expect_parts for c, d in pairs if newest.get(d, 0) <= g}
    look, small = split_small(segs)
    assert look == [7] and small == [1, 2, 3, 4, 5, 6]
    reader = RangeReader(store)
    combined = reader.combined(0, small, tomb, 0, 100)
    assert reader.combined(0, small, tomb, 0, 100) is combined  # kept
    ids = np.arange(0, 60, 3, dtype=np.uint32)
    parts = [store.read_subset(reader.opened(0, 7), ids, 7), restrict_shard(combined, ids)]
    got = merge_shards(parts, tomb, 0, 100)
    assert pairs_of(got.chunk_keys, got.offsets, got.doc_ids) == {
        p for p in expect if p[0] % 3 == 0
    }
    # a later tombstone (newer than every segment) still hides postings of the combined ones
    later = tombstone_table([3, 7, 11, 20], [2, 5, 7, 9])
    got = merge_shards(parts, later, 0, 100)
    assert pairs_of(got.chunk_keys, got.offsets, got.doc_ids) == {
        p for p in expect if p[0] % 3 == 0 and p[1] != 20
    }
    reader.retain({0: [(7, 0, 1)]})  # a compaction replaced the small segments
    assert reader._small == {}
