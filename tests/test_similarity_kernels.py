"""Similarity kernels against brute-force Counters over random postings split into shards."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.postings import build_postings, pack_pairs, sorted_unique
from simdask.shards import ShardData, shard_ranges
from simdask.similarity import (
    block_pair_keys,
    count_keys,
    member_pair_keys,
    member_work,
    pair_work,
    plan_blocks,
    query_counts,
    skipped_chunks,
    top_k_rows,
)
from simdask.tasks import block_rows_task, member_rows_task


def make_shards(docs: dict[int, set[int]], n_shards: int, bits: int = 10) -> list[ShardData]:
    pairs = [(c, d) for d, cs in docs.items() for c in cs]
    keys = sorted_unique(
        pack_pairs(
            np.array([c for c, _ in pairs], np.uint32), np.array([d for _, d in pairs], np.uint32)
        )
    )
    out = []
    for lo, hi in shard_ranges(bits, n_shards):
        part = keys[(keys >> np.uint64(32) >= lo) & (keys >> np.uint64(32) < hi)]
        out.append(ShardData(lo, hi, *build_postings(part)))
    return out


def brute_shared(docs, max_df=None):
    df = Counter(c for cs in docs.values() for c in cs)
    ok = {c for c, n in df.items() if max_df is None or n <= max_df}
    return {
        (a, b): len(docs[a] & docs[b] & ok)
        for a in docs
        for b in docs
        if a != b and docs[a] & docs[b] & ok
    }


corpora = st.dictionaries(
    st.integers(0, 29),
    st.sets(st.integers(0, 60), min_size=1, max_size=25),
    min_size=2,
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(docs=corpora, n_shards=st.sampled_from([1, 3, 7]), max_df=st.sampled_from([None, 2, 4]))
def test_block_pairs_sum_to_brute_force(docs, n_shards, max_df):
    shards = make_shards(docs, n_shards)
    n = 30
    work = sum(pair_work(s, n, max_df) for s in shards)
    blocks = plan_blocks(work, budget=7, max_docs=4)
    assert blocks[0][0] == 0 and blocks[-1][1] == n
    assert all(a[1] == b[0] for a, b in itertools.pairwise(blocks))
    got = Counter()
    emitted = np.zeros(n, np.int64)
    for lo, hi in blocks:
        assert hi - lo <= 4 and (work[lo:hi].sum() <= 7 or hi - lo == 1)
        keys, counts = count_keys([block_pair_keys(s, lo, hi, n, max_df) for s in shards])
        for k, c in zip(keys.tolist(), counts.tolist(), strict=True):
            got[(lo + k // n, k % n)] += c
            emitted[lo + k // n] += c
    ref = brute_shared(docs, max_df)
    assert dict(got) == {p: v for p, v in ref.items() if p[0] < p[1]}
    np.testing.assert_array_equal(emitted, work)
    df = Counter(c for cs in docs.values() for c in cs)
    assert sum(skipped_chunks(s, max_df) for s in shards) == sum(
        1 for v in df.values() if max_df is not None and v > max_df
    )


@settings(max_examples=150, deadline=None)
@given(docs=corpora, members=st.sets(st.integers(0, 29), min_size=1, max_size=5))
def test_member_pairs_equal_brute_force(docs, members):
    shards = make_shards(docs, 3)
    n = 30
    block = np.array(sorted(members), np.uint32)
    keys, counts = count_keys([member_pair_keys(s, block, n) for s in shards])
    got = {
        (int(block[k // n]), k % n): c for k, c in zip(keys.tolist(), counts.tolist(), strict=True)
    }
    ref = brute_shared(docs)
    assert got == {p: v for p, v in ref.items() if p[0] in members}
    work = sum(member_work(s, block) for s in shards)
    assert work.tolist() == [sum(v for p, v in got.items() if p[0] == r) for r in block.tolist()]


def test_rows_tasks_threshold_both_directions_and_short_documents():
    docs = {0: set(range(100)), 1: set(range(50, 150)), 2: {0}, 3: set(range(200, 400)) | {99}}
    shards = make_shards(docs, 2)
    n = 4
    n_chunks = np.array([len(docs[i]) for i in range(n)], np.int64)
    d, o, s, sim = block_rows_task(
        [block_pair_keys(sh, 0, n, n) for sh in shards], 0, n_chunks, 1.0, 10
    )
    rows = {
        (a, b): (c, x)
        for a, b, c, x in zip(d.tolist(), o.tolist(), s.tolist(), sim.tolist(), strict=True)
    }
    assert rows[(0, 1)] == (50, 50.0) and rows[(1, 0)] == (50, 50.0)
    assert rows[(2, 0)] == (1, 100.0) and rows[(0, 2)] == (1, 1.0)  # one shared chunk, short doc
    assert (3, 0) not in rows and rows[(0, 3)] == (1, 1.0)  # 1/201 < 1 %, 1/100 = 1 %
    block = np.array([1], np.uint32)
    fwd, rev = member_rows_task(
        [member_pair_keys(sh, block, n) for sh in shards],
        block,
        n_chunks,
        changed=block,
        members=block,
        threshold=1.0,
        top_k=10,
    )
    assert list(zip(*[x.tolist() for x in fwd], strict=False)) == [(1, 0, 50, 50.0), (1, 3, 1, 1.0)]
    # reverse rows: 0 -> 1 is 50 %; 3 -> 1 is 1/201 < 1 %
    assert list(zip(*[x.tolist() for x in rev], strict=False)) == [(0, 1, 50, 50.0)]


def test_top_k_rows_ties_broken_by_other():
    doc = np.array([5, 5, 5, 5, 6])
    other = np.array([9, 3, 7, 1, 2])
    sim = np.array([10.0, 20.0, 10.0, 5.0, 1.0])
    d, o, _, _s = top_k_rows(doc, other, np.ones(5, np.int64), sim, 2)
    assert list(zip(d.tolist(), o.tolist(), strict=False)) == [(5, 3), (5, 7), (6, 2)]


@pytest.mark.parametrize("max_df", [None, 2])
def test_query_counts_equal_brute_force(max_df):
    rng = np.random.default_rng(4)
    docs = {d: set(rng.choice(200, 30, replace=False).tolist()) for d in range(20)}
    shards = make_shards(docs, 4, bits=10)
    q = set(rng.choice(200, 40, replace=False).tolist())
    df = Counter(c for cs in docs.values() for c in cs)
    got = Counter()
    for sh in shards:
        ids = np.array(sorted(c for c in q if sh.lo <= c < sh.hi), np.uint32)
        for d, c in zip(*[x.tolist() for x in query_counts(sh, ids, max_df)], strict=True):
            got[d] += c
    ref = {
        d: len(cs & {c for c in q if max_df is None or df[c] <= max_df}) for d, cs in docs.items()
    }
    assert dict(got) == {d: v for d, v in ref.items() if v}
