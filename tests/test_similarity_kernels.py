"""Similarity kernels against brute-force Counters over random postings split into shards."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.engine.similarity_stage import block_rows_task, member_rows_task
from simdask.kernels.postings import build_postings, pack_pairs, sorted_unique
from simdask.kernels.similarity import (
    block_pair_keys,
    candidate_mask,
    containment,
    count_block_keys,
    count_keys,
    directed_rows,
    max_block_docs,
    member_pair_keys,
    member_work,
    pair_work,
    plan_blocks,
    query_postings,
    skipped_chunks,
    sum_pair_counts,
    top_k_rows,
)
from simdask.kernels.top_rows import _counted_order, is_ranked
from simdask.storage.shards import ShardData, shard_ranges

pytestmark = pytest.mark.unit


BITS = 10  # chunk IDs in [0, 1024)


def make_shards(docs: dict[int, set[int]], n_shards: int, bits: int = BITS) -> list[ShardData]:
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
    assert sum(s.n_postings for s in out) == len(keys)
    return out


def brute_shared(docs, max_df=None) -> dict[tuple[int, int], int]:
    """Shared counted chunks of every ordered pair of distinct documents sharing any."""
    df = Counter(c for cs in docs.values() for c in cs)
    ok = {c for c, n in df.items() if max_df is None or n <= max_df}
    return {
        (a, b): len(docs[a] & docs[b] & ok)
        for a in docs
        for b in docs
        if a != b and docs[a] & docs[b] & ok
    }


def brute_rows(docs, threshold, top_k, max_df=None):
    """Rows (doc, other, shared, similarity) as DESIGN §1 defines them, best top_k per doc."""
    rows = []
    for (a, b), s in brute_shared(docs, max_df).items():
        sim = 100.0 * s / len(docs[a])
        if sim >= threshold:
            rows.append((a, b, s, sim))
    rows.sort(key=lambda r: (r[0], -r[3], r[1]))
    out, seen = [], Counter()
    for r in rows:
        seen[r[0]] += 1
        if seen[r[0]] <= top_k:
            out.append(r)
    return out


def random_corpus(n_docs: int = 50, seed: int = 0) -> dict[int, set[int]]:
    """Random chunk sets with overlap: a skewed pool (common chunks), copies between docs."""
    rng = np.random.default_rng(seed)
    pool = rng.permutation(2**BITS)[:400]  # spread over the whole ID space (all shards)
    p = 1.0 / np.arange(1, len(pool) + 1) ** 0.8
    p /= p.sum()
    docs: dict[int, set[int]] = {}
    for d in range(n_docs):
        size = int(rng.integers(1, 60))
        docs[d] = set(rng.choice(pool, size, replace=False, p=p).tolist())
        if d and rng.random() < 0.4:  # copy part of an earlier document
            src = sorted(docs[int(rng.integers(0, d))])
            docs[d] |= set(src[: len(src) // 2])
    docs[n_docs // 2] = set()  # a document without chunks (too short)
    return docs


def pairs_from_blocks(shards, blocks, n, max_df=None) -> tuple[Counter, np.ndarray]:
    got: Counter = Counter()
    emitted = np.zeros(n, np.int64)
    for lo, hi in blocks:
        keys, counts = count_keys([block_pair_keys(s, lo, hi, n, max_df) for s in shards])
        assert keys.dtype == np.uint32 and bool(np.all(np.diff(keys.astype(np.int64)) > 0))
        for k, c in zip(keys.tolist(), counts.tolist(), strict=True):
            d, o = lo + k // n, k % n
            assert lo <= d < hi and d < o
            got[(d, o)] += c
            emitted[d] += c
    return got, emitted


# --------------------------------------------------------------------------------------------
# all-pairs counting in blocks


@pytest.mark.parametrize("n_shards", [1, 2, 3])
@pytest.mark.parametrize("max_df", [None, 3, 8])
def test_random_corpus_block_counts_equal_brute_force(n_shards, max_df):
    docs = random_corpus(50, seed=n_shards)
    n = len(docs)
    shards = make_shards(docs, n_shards)
    ref = {p: v for p, v in brute_shared(docs, max_df).items() if p[0] < p[1]}
    assert len(ref) > 100  # the corpus does overlap

    per_shard_work = [pair_work(s, n, max_df) for s in shards]
    work = sum(per_shard_work)
    assert work.dtype == np.int64 and len(work) == n
    for budget, max_docs in ((50, None), (400, 7), (10**9, None), (1, None)):
        blocks = plan_blocks(work, budget, max_docs)
        check_plan(work, budget, max_docs, blocks)
        got, emitted = pairs_from_blocks(shards, blocks, n, max_df)
        assert dict(got) == ref
        # pair_work = the pair-chunk incidences each document emits
        np.testing.assert_array_equal(emitted, work)

    # per shard: the partial counts of each shard add up to the total
    partials = [count_keys([block_pair_keys(s, 0, n, n, max_df)]) for s in shards]
    for s, (keys, counts), w in zip(shards, partials, per_shard_work, strict=True):
        per_doc = np.bincount((keys // n).astype(np.int64), weights=counts, minlength=n)
        np.testing.assert_array_equal(per_doc.astype(np.int64), w)
        assert set((keys % n).tolist()) <= set(range(n))
        assert s.lo <= s.hi
    keys, counts = sum_pair_counts(partials)
    assert {(k // n, k % n): c for k, c in zip(keys.tolist(), counts.tolist(), strict=True)} == ref
    total_keys, total_counts = count_keys([block_pair_keys(s, 0, n, n, max_df) for s in shards])
    np.testing.assert_array_equal(keys, total_keys)
    np.testing.assert_array_equal(counts, total_counts)

    # max_df: chunks with df > max_df are left out, and reported
    df = Counter(c for cs in docs.values() for c in cs)
    n_skipped = sum(skipped_chunks(s, max_df) for s in shards)
    assert n_skipped == sum(1 for v in df.values() if max_df is not None and v > max_df)
    if max_df is not None:
        assert n_skipped > 0


def test_max_df_boundary_is_inclusive():
    """A chunk held by exactly max_df documents is counted; by max_df + 1 it is not."""
    docs = {0: {1, 2}, 1: {1, 2}, 2: {2}}  # df(1) = 2, df(2) = 3
    (shard,) = make_shards(docs, 1)
    n = 3
    for max_df, want in ((None, {(0, 1): 2, (0, 2): 1, (1, 2): 1}), (3, None), (2, {(0, 1): 1})):
        want = want or {(0, 1): 2, (0, 2): 1, (1, 2): 1}
        keys, counts = count_keys([block_pair_keys(shard, 0, n, n, max_df)])
        got = {(k // n, k % n): c for k, c in zip(keys.tolist(), counts.tolist(), strict=True)}
        assert got == want
        assert skipped_chunks(shard, max_df) == (1 if max_df == 2 else 0)
    assert pair_work(shard, n, 2).tolist() == [1, 0, 0]
    assert pair_work(shard, n, 1).tolist() == [0, 0, 0]
    assert skipped_chunks(shard, 1) == 2


corpora = st.dictionaries(
    st.integers(0, 29),
    st.sets(st.integers(0, 60), min_size=1, max_size=25),
    min_size=2,
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(docs=corpora, n_shards=st.sampled_from([1, 3, 7]), max_df=st.sampled_from([None, 2, 4]))
def test_block_pairs_sum_to_brute_force(docs, n_shards, max_df):
    shards = make_shards(docs, n_shards, bits=6)
    n = 30
    work = sum(pair_work(s, n, max_df) for s in shards)
    blocks = plan_blocks(work, budget=7, max_docs=4)
    check_plan(work, 7, 4, blocks)
    got, emitted = pairs_from_blocks(shards, blocks, n, max_df)
    ref = brute_shared(docs, max_df)
    assert dict(got) == {p: v for p, v in ref.items() if p[0] < p[1]}
    np.testing.assert_array_equal(emitted, work)
    df = Counter(c for cs in docs.values() for c in cs)
    assert sum(skipped_chunks(s, max_df) for s in shards) == sum(
        1 for v in df.values() if max_df is not None and v > max_df
    )


# --------------------------------------------------------------------------------------------
# plan_blocks


def check_plan(work, budget, max_docs, blocks):
    n = len(work)
    if n == 0:
        assert blocks == []
        return
    assert blocks[0][0] == 0 and blocks[-1][1] == n
    for a, b in itertools.pairwise(blocks):
        assert a[1] == b[0]
    for lo, hi in blocks:
        assert lo < hi
        assert int(work[lo:hi].sum()) <= budget or hi - lo == 1
        if max_docs is not None:
            assert hi - lo <= max_docs
        # greedy: the next document would not have fitted (budget or max_docs)
        if hi < n and (max_docs is None or hi - lo < max_docs):
            assert int(work[lo : hi + 1].sum()) > budget


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 100), max_size=60),
    st.integers(1, 300),
    st.one_of(st.none(), st.integers(1, 10)),
)
def test_plan_blocks_property(work, budget, max_docs):
    w = np.array(work, np.int64)
    check_plan(w, budget, max_docs, plan_blocks(w, budget, max_docs))


def test_plan_blocks_examples():
    w = np.array([3, 3, 3, 10, 0, 0, 1, 2])
    assert plan_blocks(w, 6) == [(0, 2), (2, 3), (3, 4), (4, 8)]
    assert plan_blocks(w, 6, max_docs=2) == [(0, 2), (2, 3), (3, 4), (4, 6), (6, 8)]
    assert plan_blocks(w, 100) == [(0, 8)]
    assert plan_blocks(np.zeros(0, np.int64), 5) == []


def test_max_block_docs_keeps_keys_in_uint32():
    for n in (1, 2, 3, 50, 65_536, 65_537, 10**6, 2**32 - 1):
        m = max_block_docs(n)
        assert m >= 1
        assert m * n - 1 <= 2**32 - 1  # largest key (m - 1) * n + (n - 1)
        assert (m + 2) * n - 1 > 2**32 - 1  # and not needlessly small


# --------------------------------------------------------------------------------------------
# sum_pair_counts, directed_rows, top_k_rows


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.dictionaries(st.integers(0, 2**32 - 1), st.integers(1, 1000), max_size=30), max_size=4
    ),
    st.sampled_from([np.uint32, np.uint64]),
)
def test_sum_pair_counts_adds_partials(parts, dtype):
    arrays = [
        (np.array(sorted(p), dtype), np.array([p[k] for k in sorted(p)], np.uint32)) for p in parts
    ]
    keys, counts = sum_pair_counts(arrays)
    want = Counter()
    for p in parts:
        want.update(p)
    assert keys.tolist() == sorted(want)
    assert counts.tolist() == [want[k] for k in sorted(want)]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(1, 40)), max_size=30),
    st.lists(st.integers(1, 60), min_size=10, max_size=10),
    st.sampled_from([0.0, 1.0, 2.5, 10.0, 33.3, 50.0, 100.0]),
)
def test_directed_rows_both_directions(pairs, sizes, threshold):
    pairs = {(min(a, b), max(a, b)): s for a, b, s in pairs if a != b}
    n_chunks = np.array(sizes, np.int64)
    d = np.array([p[0] for p in pairs], np.int64)
    o = np.array([p[1] for p in pairs], np.int64)
    s = np.array(list(pairs.values()), np.uint32)
    got = directed_rows(d, o, s, n_chunks, threshold)
    rows = sorted(zip(*[x.tolist() for x in got], strict=True))
    want = []
    for (a, b), sh in pairs.items():
        for x, y in ((a, b), (b, a)):
            sim = 100 * sh / sizes[x]
            if sim >= threshold:
                want.append((x, y, sh, sim))
    assert len(rows) == len(want)
    for r, w in zip(rows, sorted(want), strict=True):
        assert r[:3] == w[:3] and r[3] == pytest.approx(w[3], rel=1e-12)
    assert got[3].dtype == np.float64


def test_directed_rows_example():
    d, o, s, sim = directed_rows(
        np.array([0, 1]), np.array([2, 2]), np.array([5, 1]), np.array([10, 200, 50]), 5.0
    )
    assert list(zip(d.tolist(), o.tolist(), s.tolist(), sim.tolist(), strict=True)) == [
        (0, 2, 5, 50.0),
        (2, 0, 5, 10.0),
    ]  # 1 -> 2 is 0.5 %, 2 -> 1 is 2 %: both below 5 %


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.tuples(st.integers(0, 5), st.integers(0, 20)),
        st.sampled_from([1.0, 2.0, 50.0, 100.0]),  # few values: many ties
        max_size=40,
    ),
    st.integers(1, 5),
)
def test_top_k_rows_equals_brute_force(rows, k):
    items = list(rows.items())
    doc = np.array([d for (d, _), _ in items], np.int64)
    other = np.array([o for (_, o), _ in items], np.int64)
    sim = np.array([v for _, v in items], np.float64)
    shared = np.arange(len(items), dtype=np.int64) + 100  # travels with its row
    got = top_k_rows(doc, other, shared, sim, k)
    want = []
    for dd in sorted({d for d, _ in rows}):
        mine = sorted(
            ((o, v) for (d, o), v in rows.items() if d == dd), key=lambda x: (-x[1], x[0])
        )
        want += [(dd, o, v) for o, v in mine[:k]]
    assert list(zip(got[0].tolist(), got[1].tolist(), got[3].tolist(), strict=True)) == want
    pos = {(d, o): i for i, ((d, o), _) in enumerate(items)}
    assert got[2].tolist() == [pos[(d, o)] + 100 for d, o, _ in want]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 40), st.integers(0, 29)), max_size=80),
        max_size=5,
    ),
    st.sampled_from([1, 30, 64, 1000]),
    st.sampled_from([0.0, 0.05, 0.5, 2.0]),
    st.booleans(),
    st.booleans(),
    st.sampled_from([1, 7, 1 << 20]),
)
def test_count_block_keys_equals_counter(parts, slots, density, by_row, high, sort_keys):
    """Parts listing their rows ascending (as the all-pairs emission does: the counting path)
    or not (the sort path), dense and sparse runs, keys near the top of uint32."""
    n_docs = 30
    base = (2**32 // n_docs - 41) if high else 0  # rows up to the last that fits in uint32
    arrays = []
    for p in parts:
        if by_row:
            p = sorted(p, key=lambda x: x[0])  # rows ascending, others in any order
        keys = [(base + i) * n_docs + o for i, o in p]
        arrays.append(np.array(keys, np.uint64).astype(np.uint32))
    want = Counter(k for p in arrays for k in p.tolist())
    keys, counts = count_block_keys(arrays, n_docs, slots, density, sort_keys)
    assert keys.dtype == np.uint32 and counts.dtype == np.uint32
    assert keys.tolist() == sorted(want)
    assert counts.tolist() == [want[k] for k in sorted(want)]


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.tuples(st.integers(0, 6), st.integers(0, 30)), st.integers(0, 6), max_size=60
    ),
    st.lists(st.integers(1, 9), min_size=7, max_size=7),
    st.integers(1, 6),
    st.booleans(),
)
def test_top_k_rows_counted_equals_brute_force(rows, sizes, k, wide):
    """Rows of the similarity stage (similarity = containment(shared, |doc|), many ties): the
    packed-key order gives what sorting by (doc, -similarity, other) gives; with ``wide`` the
    IDs need more than 64 bits together, so the lexsort path answers."""
    items = list(rows.items())
    base = 2**40 if wide else 0
    doc = np.array([d for (d, _), _ in items], np.int64) + base
    other = np.array([o for (_, o), _ in items], np.int64) + base
    shared = np.array([s for _, s in items], np.int64)
    n = np.array(sizes, np.int64)
    sim = containment(shared, n[doc - base])
    got = top_k_rows(doc, other, shared, sim, k)
    order = _counted_order(doc, other, shared, sim)
    assert (order is None) == (wide and len(items) > 0)  # the fast path where it can be
    if order is not None:
        assert order.tolist() == np.lexsort((other, -sim, doc)).tolist()
    want = []
    for dd in sorted({d for d, _ in rows}):
        mine = sorted(
            ((o, s, 100.0 * s / sizes[dd]) for (d, o), s in rows.items() if d == dd),
            key=lambda x: (-x[2], x[0]),
        )
        want += [(dd + base, o + base, s, v) for o, s, v in mine[:k]]
    assert list(zip(*[x.tolist() for x in got], strict=True)) == want


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.tuples(st.integers(0, 5), st.integers(0, 20)),
        st.sampled_from([1.0, 2.0, 50.0]),
        max_size=40,
    ),
    st.integers(1, 5),
    st.integers(1, 5),
    st.integers(0, 39),
)
def test_top_k_rows_of_ranked_rows_skips_the_sort(rows, k, k2, swap):
    """Rows ranked already (another cut's output) are cut again without sorting: the result
    is the Python ranking, and the input arrays themselves when nothing is cut. One swapped
    pair of rows (no longer ranked, unless the two are in order anyway) is sorted."""
    items = list(rows.items())
    doc = np.array([d for (d, _), _ in items], np.int64)
    other = np.array([o for (_, o), _ in items], np.int64)
    sim = np.array([v for _, v in items], np.float64)
    shared = np.arange(len(items), dtype=np.int64)
    ranked = top_k_rows(doc, other, shared, sim, k)
    assert is_ranked(ranked[0], ranked[1], ranked[3])
    got = top_k_rows(*ranked, k2)
    want = top_k_rows(doc, other, shared, sim, min(k, k2))
    assert [g.tolist() for g in got] == [w.tolist() for w in want]
    assert (got[0] is ranked[0]) == (len(got[0]) == len(ranked[0]))  # nothing cut: no copy
    if len(ranked[0]) > 1:
        i = swap % (len(ranked[0]) - 1)
        cols = [c.copy() for c in ranked]
        for c in cols:
            c[[i, i + 1]] = c[[i + 1, i]]
        same = (cols[0][i], -cols[3][i], cols[1][i]) == (
            cols[0][i + 1],
            -cols[3][i + 1],
            cols[1][i + 1],
        )
        assert is_ranked(cols[0], cols[1], cols[3]) == same
        assert [c.tolist() for c in top_k_rows(*cols, k)] == [r.tolist() for r in ranked]


def test_top_k_rows_packed_key_only_when_it_ranks_as_similarity():
    """Shared counts that rank against the similarities (not the stage's rows) must not be
    sorted by the packed key: the lexsort order comes back."""
    doc = np.array([1, 1, 1, 2, 2])
    other = np.array([4, 5, 6, 7, 8])
    shared = np.array([9, 3, 3, 1, 1])
    sim = np.array([1.0, 5.0, 4.0, 2.0, 3.0])
    d, o, s, _v = top_k_rows(doc, other, shared, sim, 2)
    assert list(zip(d.tolist(), o.tolist(), s.tolist(), strict=True)) == [
        (1, 5, 3),
        (1, 6, 3),
        (2, 8, 1),
        (2, 7, 1),
    ]


def test_top_k_rows_ties_broken_by_other():
    doc = np.array([5, 5, 5, 5, 6])
    other = np.array([9, 3, 7, 1, 2])
    sim = np.array([10.0, 20.0, 10.0, 5.0, 1.0])
    d, o, _, _s = top_k_rows(doc, other, np.ones(5, np.int64), sim, 2)
    assert list(zip(d.tolist(), o.tolist(), strict=False)) == [(5, 3), (5, 7), (6, 2)]


# --------------------------------------------------------------------------------------------
# rows tasks (candidate filter + thresholds + top-k) against the definition


@pytest.mark.parametrize("threshold", [0.5, 1.0, 5.0, 12.5, 33.3, 100.0])
def test_block_rows_equal_definition(threshold):
    docs = random_corpus(50, seed=7)
    n = len(docs)
    shards = make_shards(docs, 3)
    n_chunks = np.array([len(docs[i]) for i in range(n)], np.int64)
    work = sum(pair_work(s, n) for s in shards)
    out = []
    for lo, hi in plan_blocks(work, 300):
        out.append(
            block_rows_task(
                [block_pair_keys(s, lo, hi, n) for s in shards], lo, n_chunks, threshold, 10**6
            )
        )
    got = top_k_rows(*[np.concatenate([o[i] for o in out]) for i in range(4)], 4)
    rows = list(zip(*[x.tolist() for x in got], strict=True))
    assert rows == brute_rows(docs, threshold, 4)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(1, 300), min_size=2, max_size=20),
    st.data(),
    st.one_of(st.sampled_from([0.1, 0.5, 1.0, 2.0, 5.0, 33.3, 100.0]), st.floats(0.01, 100)),
)
def test_candidate_mask_keeps_every_passing_pair(sizes, data, threshold):
    n = len(sizes)
    n_chunks = np.array(sizes, np.int64)
    pairs = data.draw(
        st.dictionaries(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda p: p[0] < p[1]),
            st.integers(1, 3),
            max_size=40,
        )
    )
    first = np.arange(n)
    keys = np.array(sorted(d * n + o for d, o in pairs), np.uint32)
    counts = np.array([pairs[(int(k) // n, int(k) % n)] for k in keys], np.uint32)
    cand = candidate_mask(keys, counts, first, n_chunks, threshold)
    for k, c, ok in zip(keys.tolist(), counts.tolist(), cand.tolist(), strict=True):
        d, o = k // n, k % n
        passes = any(100.0 * c / sizes[x] >= threshold for x in (d, o))
        # a passing pair must be a candidate (up to float rounding of the threshold itself)
        if passes and not ok:
            assert abs(threshold * min(sizes[d], sizes[o]) / 100.0 - 1) < 1e-9, (d, o, c)


def test_candidate_mask_agrees_with_directed_rows_at_exact_thresholds():
    docs = {0: set(range(11)), 1: {0} | set(range(100, 200))}
    n_chunks = np.array([11, 101], np.int64)
    (shard,) = make_shards(docs, 1)
    threshold = 100 / 11  # doc 0 shares 1 of its 11 chunks: exactly the threshold
    d, o, _, _ = block_rows_task([block_pair_keys(shard, 0, 2, 2)], 0, n_chunks, threshold, 10)
    assert (0, 1) in set(zip(d.tolist(), o.tolist(), strict=True))


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


# --------------------------------------------------------------------------------------------
# member blocks (incremental runs) and queries


@settings(max_examples=150, deadline=None)
@given(
    docs=corpora,
    members=st.sets(st.integers(0, 29), min_size=1, max_size=5),
    max_df=st.sampled_from([None, 3]),
)
def test_member_pairs_equal_brute_force(docs, members, max_df):
    shards = make_shards(docs, 3, bits=6)
    n = 30
    block = np.array(sorted(members), np.uint32)
    parts = [member_pair_keys(s, block, n, max_df) for s in shards]
    for p in parts:  # grouped by member, as count_member_candidates counts them densely
        assert np.all(np.diff((p // n).astype(np.int64)) >= 0)
    keys, counts = count_keys(parts)
    got = {
        (int(block[k // n]), k % n): c for k, c in zip(keys.tolist(), counts.tolist(), strict=True)
    }
    ref = brute_shared(docs, max_df)
    assert got == {p: v for p, v in ref.items() if p[0] in members}
    work = sum(member_work(s, block, max_df) for s in shards)
    assert work.tolist() == [sum(v for p, v in got.items() if p[0] == r) for r in block.tolist()]


@pytest.mark.parametrize("max_df", [None, 3])
def test_query_postings_of_every_chunk_of_a_subset(max_df):
    """A query's subset of a range holds only the chunks asked for: asking for all of them
    (the path that returns the doc IDs without a copy) or for a part gives brute force."""
    docs = random_corpus(60, seed=9)
    df = Counter(c for cs in docs.values() for c in cs)
    for sh in make_shards(docs, 3):
        keys = np.asarray(sh.chunk_keys)
        for ids in (keys, keys[::2], keys[1:], keys[:0]):
            got = query_postings(sh, ids, max_df)
            want = [
                d
                for d, cs in docs.items()
                for c in ids.tolist()
                if c in cs and (max_df is None or df[c] <= max_df)
            ]
            assert got.dtype == np.uint32 and sorted(got.tolist()) == sorted(want)


# --------------------------------------------------------------------------------------------
# boundaries: similarities exactly at the threshold, ties at the k-th place


@st.composite
def tied_corpora(draw):
    """Small corpora where ties are the rule: some documents are copies of others (equal
    similarity to every third document), others a drawn part of one."""
    base = draw(
        st.lists(st.sets(st.integers(0, 40), min_size=1, max_size=15), min_size=2, max_size=6)
    )
    docs = dict(enumerate(base))
    for src in draw(st.lists(st.integers(0, len(base) - 1), max_size=5)):
        cut = draw(st.integers(1, len(base[src])))
        docs[len(docs)] = set(sorted(base[src])[:cut]) if draw(st.booleans()) else set(base[src])
    return docs


@settings(max_examples=200, deadline=None)
@given(docs=tied_corpora(), data=st.data(), top_k=st.integers(1, 3))
def test_rows_tasks_at_exact_thresholds_and_ties(docs, data, top_k):
    """The threshold is drawn from the corpus's own similarities (so rows sit exactly on it)
    and copies make ties at the k-th place: the rows tasks keep exactly the definition's rows
    (``>=`` the threshold; similarity desc, then other asc)."""
    sims = sorted({100.0 * s / len(docs[a]) for (a, _), s in brute_shared(docs).items()})
    threshold = data.draw(st.sampled_from(sims)) if sims else 100.0
    n = len(docs)
    shards = make_shards(docs, 2, bits=6)
    n_chunks = np.array([len(docs[i]) for i in range(n)], np.int64)
    keys = [block_pair_keys(s, 0, n, n) for s in shards]
    got = top_k_rows(*block_rows_task(keys, 0, n_chunks, threshold, top_k), top_k)
    want = brute_rows(docs, threshold, top_k)
    assert list(zip(*[x.tolist() for x in got], strict=True)) == want
    block = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1))), np.uint32)
    fwd, rev = member_rows_task(
        [member_pair_keys(s, block, n) for s in shards],
        block,
        n_chunks,
        changed=block,
        members=block,
        threshold=threshold,
        top_k=top_k,
    )
    assert list(zip(*[x.tolist() for x in fwd], strict=True)) == [
        r for r in want if r[0] in set(block.tolist())
    ]
    every = brute_rows(docs, threshold, 10**6)
    in_block = set(block.tolist())
    assert sorted(zip(*[x.tolist() for x in rev], strict=True)) == sorted(
        r for r in every if r[1] in in_block and r[0] not in in_block
    )
