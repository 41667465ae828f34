"""The light-pairs kernels of the all-pairs blocks (issue 13 item 5, docs/scale.md "Light pairs
cost"): the per-document need counts, the buffered heavy overlap and its bound, against
brute force over Python sets and floats."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.kernels.heavy import HeavySets, _row_popcounts, add_heavy_overlap, pair_overlap
from simdask.kernels.similarity import NEVER, need_counts

pytestmark = pytest.mark.unit

THRESHOLDS = st.one_of(
    st.sampled_from([0.01, 0.5, 1.0, 100 / 3, 100 / 7, 100 / 11, 12.5, 33.3, 50.0, 99.9, 100.0]),
    st.floats(0.001, 100.0),
)


def brute_need(n: int, threshold: float) -> int:
    """The fewest shared chunks passing ``threshold`` for a document of ``n`` chunks, by the
    rows' float expression (``100.0 * s / n``)."""
    if n == 0:
        return 0 if threshold <= 0 else NEVER
    return next(s for s in range(n + 2) if 100.0 * s / n >= threshold)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 5000), min_size=1, max_size=40), THRESHOLDS)
def test_need_counts_equal_brute_force(sizes, threshold):
    got = need_counts(np.array(sizes, np.int64), threshold)
    assert got.dtype == np.int64
    assert got.tolist() == [brute_need(n, threshold) for n in sizes]


def test_need_counts_at_rounding_edges():
    """Sizes where ``threshold * n / 100`` rounds across an integer: the float expression of
    the rows decides, not the ceil."""
    sizes = np.arange(1, 20001, dtype=np.int64)
    for threshold in (1.0, 100 / 3, 100 / 7, 100 / 11, 0.3, 0.7, 14.285714285714286):
        got = need_counts(sizes, threshold)
        s = got
        assert np.all(100.0 * s / sizes >= threshold)
        assert np.all((s == 0) | (100.0 * (s - 1) / sizes < threshold))
    assert need_counts(np.array([0, 0]), 1.0).tolist() == [NEVER, NEVER]


def random_sets(rng, n_docs: int, n_heavy: int, p_empty: float) -> list[set[int]]:
    out = []
    for _ in range(n_docs):
        if rng.random() < p_empty:
            out.append(set())
        else:
            k = int(rng.integers(1, min(n_heavy, 40) + 1))
            out.append(set(rng.choice(n_heavy, k, replace=False).tolist()))
    return out


def bits_of(sets: list[set[int]], n_heavy: int):
    sizes = np.array([len(s) for s in sets], np.int64)
    offsets = np.zeros(len(sets) + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    ranks = np.array([r for s in sets for r in sorted(s)], np.uint32)
    return HeavySets(offsets, ranks, n_heavy).bits()


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n_heavy=st.sampled_from([1, 5, 63, 64, 65, 130, 512, 1024, 1100, 70_000]),
    step=st.sampled_from([1, 3, 64, 4096]),
    p_empty=st.sampled_from([0.0, 0.3, 1.0]),
)
def test_pair_overlap_equals_set_intersections(seed, n_heavy, step, p_empty):
    """Every width (words not a multiple of 8, past the 16-bit lane sum: the row-sum
    fallback), tiles of every size, documents without heavy chunks."""
    rng = np.random.default_rng(seed)
    sets = random_sets(rng, 25, n_heavy, p_empty)
    bits = bits_of(sets, n_heavy)
    d = rng.integers(0, 25, 300)
    o = rng.integers(0, 25, 300)
    for dt in (np.int64, np.int32):
        got = pair_overlap(bits, d.astype(dt), o.astype(dt), step)
        assert got.dtype == np.int64
        assert got.tolist() == [len(sets[a] & sets[b]) for a, b in zip(d, o, strict=True)]
    assert pair_overlap(bits, d[:0], o[:0]).tolist() == []


@given(st.integers(1, 1100), st.integers(0, 40), st.integers(0, 10**6))
@settings(max_examples=100, deadline=None)
def test_row_popcounts_equal_row_sums(words, rows, seed):
    """The uint64-lane sum of per-word popcounts, at the largest counts (all 64), for every
    width (rounded up to whole lanes as pair_overlap allocates them)."""
    rng = np.random.default_rng(seed)
    width = -(-words // 8) * 8
    counts = rng.integers(0, 65, (rows, width)).astype(np.uint8)
    counts[: rows // 2] = 64
    assert _row_popcounts(counts).tolist() == counts.sum(axis=1, dtype=np.int64).tolist()


@pytest.mark.parametrize("words", [1, 8, 1016, 1017, 1024, 1100])
def test_row_popcounts_at_full_words(words):
    """Every bit set: the largest sums, past 2**16 beyond 1,016 words."""
    width = -(-words // 8) * 8
    counts = np.full((3, width), 64, np.uint8)
    assert _row_popcounts(counts).tolist() == [64 * width] * 3


@pytest.mark.slow  # 20-75 s: left out of the quick unit run (docs/testing.md)
@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 10**6), threshold=THRESHOLDS, narrow=st.booleans())
def test_add_heavy_overlap_keeps_every_pair_that_can_pass(seed, threshold, narrow):
    """The kept pairs are exactly those whose bound light + min(|heavy|) reaches the need of
    one side; their counts are light + |heavy(d) & heavy(o)|; every pair that passes with its
    exact count is kept (int64 and int32 inputs: the similarity stage's narrow path)."""
    rng = np.random.default_rng(seed)
    n = 30
    sets = random_sets(rng, n, 200, 0.2)
    bits = bits_of(sets, 200)
    n_chunks = rng.integers(1, 400, n)
    for i, s in enumerate(sets):
        n_chunks[i] = max(n_chunks[i], len(s) + 3)
    d = rng.integers(0, n, 400)
    o = rng.integers(0, n, 400)
    light = rng.integers(1, 6, 400)
    need = need_counts(n_chunks, threshold)
    dt = np.int32 if narrow else np.int64
    sizes = bits.sizes.astype(dt) if narrow else None
    gd, go, gs = add_heavy_overlap(
        d.astype(dt), o.astype(dt), light.astype(dt), need.astype(dt), bits, sizes
    )
    want = []
    for a, b, c in zip(d.tolist(), o.tolist(), light.tolist(), strict=True):
        bound = c + min(len(sets[a]), len(sets[b]))
        total = c + len(sets[a] & sets[b])
        passes = any(100.0 * total / n_chunks[x] >= threshold for x in (a, b))
        if bound >= min(brute_need(n_chunks[a], threshold), brute_need(n_chunks[b], threshold)):
            want.append((a, b, total))
        else:
            assert not passes
    got = list(zip(gd.tolist(), go.tolist(), gs.tolist(), strict=True))
    assert got == want
