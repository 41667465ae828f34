"""Block pair keys from postings grouped by document (simdask.kernels.doc_postings) against
brute force and against the whole-shard scan of block_pair_keys."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.kernels.doc_postings import DocPostings, block_keys
from simdask.kernels.postings import build_postings, pack_pairs, sorted_unique
from simdask.kernels.similarity import block_pair_keys, count_keys, plan_blocks
from simdask.storage.shards import ShardData, shard_ranges

pytestmark = pytest.mark.unit

BITS = 8


def make_shards(docs: dict[int, set[int]], n_shards: int) -> list[ShardData]:
    pairs = [(c, d) for d, cs in docs.items() for c in cs]
    keys = sorted_unique(
        pack_pairs(
            np.array([c for c, _ in pairs], np.uint32), np.array([d for _, d in pairs], np.uint32)
        )
    )
    out = []
    for lo, hi in shard_ranges(BITS, n_shards):
        part = keys[(keys >> np.uint64(32) >= lo) & (keys >> np.uint64(32) < hi)]
        out.append(ShardData(lo, hi, *build_postings(part)))
    return out


def brute_pairs(docs, max_df) -> Counter:
    """Shared counted chunks of every unordered pair (d < o) sharing any."""
    df = Counter(c for cs in docs.values() for c in cs)
    ok = {c for c, n in df.items() if max_df is None or n <= max_df}
    return Counter(
        {
            (a, b): len(docs[a] & docs[b] & ok)
            for a in docs
            for b in docs
            if a < b and docs[a] & docs[b] & ok
        }
    )


def add_equal_counts(got: Counter, mine: list, ref: list, lo: int, n: int) -> None:
    """Assert that the key lists ``mine`` and ``ref`` (one per range) count the same keys,
    and add their pairs ``(lo + key // n, key % n)`` to ``got``."""
    k1, c1 = count_keys(mine)
    k2, c2 = count_keys(ref)
    np.testing.assert_array_equal(k1, k2)
    np.testing.assert_array_equal(c1, c2)
    for k, c in zip(k1.tolist(), c1.tolist(), strict=True):
        got[(lo + k // n, k % n)] += c


corpora = st.dictionaries(
    st.integers(0, 39), st.sets(st.integers(0, 2**BITS - 1), max_size=30), max_size=40
)


@settings(max_examples=150, deadline=None)
@given(
    docs=corpora,
    n_shards=st.sampled_from([1, 2, 5]),
    max_df=st.sampled_from([None, 1, 2, 5]),
    budget=st.integers(1, 200),
)
def test_block_keys_equal_brute_force_and_the_shard_scan(docs, n_shards, max_df, budget):
    n = 41  # doc 40 holds nothing: a document ID past every posting
    shards = make_shards(docs, n_shards)
    grouped = [DocPostings.build(s, n, max_df) for s in shards]
    got: Counter = Counter()
    for lo, hi in plan_blocks(np.full(n, 7), budget, max_docs=6):
        mine = [block_keys(g, lo, hi, n) for g in grouped]
        assert all(k.dtype == np.uint32 for k in mine)
        scan = [block_pair_keys(s, lo, hi, n, max_df) for s in shards]
        add_equal_counts(got, mine, scan, lo, n)
    assert got == brute_pairs(docs, max_df)


def test_only_emitting_postings_are_kept():
    # chunk 1 held by docs 0, 2, 3; chunk 2 by doc 1 only; chunk 3 by docs 1, 2
    docs = {0: {1}, 1: {2, 3}, 2: {1, 3}, 3: {1}}
    [shard] = make_shards(docs, 1)
    g = DocPostings.build(shard, 5)
    # the lists of chunks 1 and 3 (chunk 2's list, held by one document, is left out)
    assert g.doc_ids.tolist() == [0, 2, 3, 1, 2]
    # emitting: (chunk 1, doc 0: 2 later), (chunk 1, doc 2: 1 later), (chunk 3, doc 1: 1 later)
    assert g.starts.tolist() == [0, 1, 2, 3, 3, 3]
    assert g.doc_ids[g.pos].tolist() == [0, 1, 2]
    assert g.pos.tolist() == [0, 3, 1]
    assert g.later.tolist() == [2, 1, 1]
    assert g.nbytes == g.doc_ids.nbytes + g.starts.nbytes + g.pos.nbytes + g.later.nbytes
    none = DocPostings.build(shard, 5, max_df=1)  # no chunk counted twice
    assert len(none.pos) == 0 and len(none.doc_ids) == 0
    assert block_keys(none, 0, 5, 5).tolist() == []
    keys = np.sort(block_keys(g, 0, 4, 5)).tolist()
    assert keys == sorted([0 * 5 + 2, 0 * 5 + 3, 1 * 5 + 2, 2 * 5 + 3])
    two = DocPostings.build(shard, 5, max_df=2)  # chunk 1 (df 3) is counted apart
    assert two.doc_ids.tolist() == [1, 2]
    assert np.sort(block_keys(two, 0, 5, 5)).tolist() == [1 * 5 + 2]


def brute_view(docs, max_df) -> tuple[list[int], int]:
    """The document IDs the view must hold (lists with 2 <= df <= max_df, by chunk, ascending
    within a list) and its emitting postings (every posting of those lists but the last)."""
    holders: dict[int, list[int]] = {}
    for d, cs in docs.items():
        for c in cs:
            holders.setdefault(c, []).append(d)
    kept = [sorted(h) for c, h in sorted(holders.items()) if 2 <= len(h) <= (max_df or 10**9)]
    return [d for h in kept for d in h], sum(len(h) - 1 for h in kept)


@settings(max_examples=150, deadline=None)
@given(docs=corpora, n_shards=st.sampled_from([1, 3]), max_df=st.sampled_from([None, 2, 4]))
def test_view_holds_only_the_emitting_lists_not_the_shard(docs, n_shards, max_df):
    n = 41
    shards = make_shards(docs, n_shards)
    views = [DocPostings.build(s, n, max_df) for s in shards]
    ids = [d for v in views for d in v.doc_ids.tolist()]
    want_ids, want_emitting = brute_view(docs, max_df)
    assert ids == want_ids  # shards are chunk ranges in order, so the lists come in chunk order
    assert sum(len(v.pos) for v in views) == want_emitting
    for v, s in zip(views, shards, strict=True):
        arrays = (v.doc_ids, v.starts, v.pos, v.later)
        assert not any(np.shares_memory(a, b) for a in arrays for b in (s.doc_ids, s.offsets))
        assert v.doc_ids.dtype == np.uint32 and v.starts.dtype == v.pos.dtype == np.uint32
        assert v.later.dtype == np.uint8  # lists of at most 40 documents
        # every emitting posting: its document, and ``later`` postings of its list after it
        for d in range(n):
            for i in range(int(v.starts[d]), int(v.starts[d + 1])):
                p, k = int(v.pos[i]), int(v.later[i])
                assert v.doc_ids[p] == d and k >= 1
                assert np.all(v.doc_ids[p + 1 : p + 1 + k] > d)
    # pair counts through the views equal brute force over the same chunks
    got: Counter = Counter()
    for v in views:
        for k in block_keys(v, 0, n, n).tolist():
            got[(k // n, k % n)] += 1
    assert got == brute_pairs(docs, max_df)


def test_later_takes_the_narrowest_width():
    docs = {d: {7} for d in range(300)}  # one list of 300 documents: later up to 299
    [shard] = make_shards(docs, 1)
    v = DocPostings.build(shard, 300)
    assert v.later.dtype == np.uint16 and int(v.later.max()) == 299
    keys = block_keys(v, 0, 300, 300)
    assert len(keys) == 300 * 299 // 2
    assert DocPostings.build(shard, 300, max_df=299).doc_ids.tolist() == []


@settings(max_examples=150, deadline=None)
@given(
    docs=corpora,
    n_shards=st.sampled_from([1, 3]),
    max_df=st.sampled_from([None, 2, 5]),
    cuts=st.lists(st.integers(1, 40), max_size=3, unique=True),
    budget=st.integers(1, 60),
    piece=st.sampled_from([1, 7, 1 << 20]),
)
def test_views_in_document_windows_give_the_whole_views_keys(
    docs, n_shards, max_df, cuts, budget, piece
):
    """Views built one document window at a time (``window=(lo, hi)``) give, for every block
    inside their window, the keys the whole view gives; together the brute-force pairs. Each
    holds no position of a document outside its window, and no list it does not emit into."""
    n = 41
    shards = make_shards(docs, n_shards)
    whole = [DocPostings.build(s, n, max_df, piece) for s in shards]
    bounds = [0, *sorted(cuts), n]
    got: Counter = Counter()
    for w_lo, w_hi in pairwise(bounds):
        hi = None if w_hi == n else w_hi
        views = [DocPostings.build(s, n, max_df, piece, window=(w_lo, hi)) for s in shards]
        for v, full in zip(views, whole, strict=True):
            outside = np.diff(v.starts.astype(np.int64))
            assert not outside[:w_lo].any() and not outside[w_hi:].any()
            assert len(v.doc_ids) <= len(full.doc_ids) and len(v.pos) <= len(full.pos)
            assert (v.doc_ids[v.pos.astype(np.int64)] >= w_lo).all()
        blocks = plan_blocks(np.full(w_hi - w_lo, 7), budget, max_docs=6)
        for lo, hi_b in ((w_lo + a, w_lo + b) for a, b in blocks):
            mine = [block_keys(v, lo, hi_b, n) for v in views]
            ref = [block_keys(g, lo, hi_b, n) for g in whole]
            add_equal_counts(got, mine, ref, lo, n)
    assert got == brute_pairs(docs, max_df)


def test_a_window_drops_the_lists_it_does_not_emit_into():
    """A list whose documents all lie before the window, or whose tail starts after it, or
    whose tail is one posting, is not in the window's view."""
    docs = {0: {1, 2}, 1: {1, 2}, 5: {2, 3}, 9: {3, 4}, 12: {4}}
    (shard,) = make_shards(docs, 1)
    v = DocPostings.build(shard, 13, None, window=(5, 9))
    # chunk 1 (docs 0, 1): before the window; chunk 2 (0, 1, 5): tail (5,) of one posting;
    # chunk 3 (5, 9): kept whole; chunk 4 (9, 12): starts after the window
    assert v.doc_ids.tolist() == [5, 9]
    assert v.pos.tolist() == [0] and v.later.tolist() == [1]
    assert block_keys(v, 5, 9, 13).tolist() == [9]
