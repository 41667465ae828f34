"""merge_shard on CSR arrays against a brute-force rebuild from (chunk, doc) sets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.kernels.postings import build_postings, merge_shard, pack_pairs, sorted_unique

pytestmark = pytest.mark.unit


def _csr(pairs: set[tuple[int, int]]):
    keys = sorted_unique(
        pack_pairs(
            np.array([c for c, _ in pairs], dtype=np.uint32),
            np.array([d for _, d in pairs], dtype=np.uint32),
        )
    )
    return build_postings(keys)


pair_sets = st.sets(st.tuples(st.integers(0, 40), st.integers(0, 30)), max_size=200)


@settings(max_examples=300, deadline=None)
@given(old=pair_sets, new=pair_sets, dropped=st.sets(st.integers(0, 35), max_size=10))
def test_merge_shard_equals_rebuild(old, new, dropped):
    """Old postings minus dropped docs plus new postings.

    As in a run, a document with new postings is either new or recomputed, and a recomputed
    document's old postings are dropped.
    """
    old_docs = {d for _, d in old}
    dropped = set(dropped) | {d for _, d in new if d in old_docs}
    expected = {(c, d) for c, d in old if d not in dropped} | new
    got = merge_shard(
        _csr(old) if old else None,
        sorted_unique(
            pack_pairs(
                np.array([c for c, _ in new], dtype=np.uint32),
                np.array([d for _, d in new], dtype=np.uint32),
            )
        ),
        np.array(sorted(dropped), dtype=np.uint32),
    )
    want = _csr(expected)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    assert got[0].dtype == np.uint32 and got[1].dtype == np.uint64 and got[2].dtype == np.uint32


def test_merge_shard_large_lists():
    rng = np.random.default_rng(3)
    old = {(int(c), int(d)) for c, d in rng.integers(0, [50, 5000], size=(20000, 2))}
    new = {(int(c), int(d)) for c, d in rng.integers([0, 4000], [60, 5100], size=(500, 2))}
    dropped = set(range(4000, 4100))
    test_merge_shard_equals_rebuild.hypothesis.inner_test(old, new, dropped)
