"""The packed one-key sorts of simdask.kernels.packed_sort against plain Python references:
values that fit side by side in 64 bits (the packed path) and values that do not (the
general path) give the same results."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.kernels.packed_sort import (
    bit_width,
    distinct_pairs,
    group_floor,
    sums_by_key,
    top_per_row,
)

pytestmark = pytest.mark.unit

small = st.integers(0, 40)
wide = st.integers(0, (1 << 63) - 1)
columns = st.sampled_from([small, st.integers(0, 1 << 20), wide])


@settings(max_examples=200, deadline=None)
@given(st.data(), columns, columns, st.booleans())
def test_distinct_pairs_equal_sorted_set(data, ca, cb, presorted):
    pairs = data.draw(st.lists(st.tuples(ca, cb), max_size=60))
    if presorted:
        pairs = sorted(pairs)
    a = np.array([p[0] for p in pairs], np.uint64)
    b = np.array([p[1] for p in pairs], np.uint64)
    ga, gb = distinct_pairs(a, b)
    assert list(zip(ga.tolist(), gb.tolist(), strict=True)) == sorted(set(pairs))
    assert ga.dtype == a.dtype and gb.dtype == b.dtype


@settings(max_examples=200, deadline=None)
@given(st.data(), columns, st.sampled_from([st.integers(0, 5000), wide]))
def test_sums_by_key_equal_a_dict(data, ck, cw):
    rows = data.draw(st.lists(st.tuples(ck, cw), max_size=60))
    if any(w > (1 << 62) for _, w in rows):  # keep sums within int64
        rows = [(k, w >> 8) for k, w in rows]
    key = np.array([r[0] for r in rows], np.uint64)
    w = np.array([r[1] for r in rows], np.int64)
    want: dict[int, int] = {}
    for k, x in rows:
        want[k] = want.get(k, 0) + x
    gk, gw = sums_by_key(key, w)
    assert dict(zip(gk.tolist(), gw.tolist(), strict=True)) == want
    assert gk.tolist() == sorted(want)


@settings(max_examples=200, deadline=None)
@given(st.data(), columns, st.sampled_from([st.integers(1, 1000), wide]), st.integers(1, 6))
def test_top_per_row_equals_the_reference(data, co, cs, depth):
    cells = data.draw(
        st.dictionaries(st.tuples(st.integers(0, 9), co), cs, max_size=60)
    )  # distinct (row, other)
    rows = [(r, o, s) for (r, o), s in cells.items()]
    got = top_per_row(
        np.array([r[0] for r in rows], np.int64),
        np.array([r[1] for r in rows], np.uint64),
        np.array([r[2] for r in rows], np.int64),
        depth,
    )
    want = []
    for r in sorted({x[0] for x in rows}):
        mine = sorted((x for x in rows if x[0] == r), key=lambda x: (-x[2], x[1]))
        want += mine[:depth]
    assert list(zip(*(a.tolist() for a in got), strict=True)) == want


def test_both_paths_are_taken():
    """The reference tests above reach both paths: values of 40 bits pack, of 63 do not."""
    assert bit_width(np.array([40], np.uint64)) + bit_width(np.array([1 << 20])) <= 64
    assert bit_width(np.array([(1 << 63) - 1], np.uint64)) * 2 > 64
    assert bit_width(np.zeros(0, np.int64)) == 0


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 5)), max_size=80),
    st.integers(1, 6),
)
def test_group_floor_keeps_every_entry_the_top_keeps(cells, depth):
    """Rows grouped; many ties: the floor drops only entries the top would drop, and the top
    of what it keeps is the top of all."""
    cells = sorted(cells, key=lambda c: c[0])
    row = np.array([c[0] for c in cells], np.int64)
    score = np.array([c[1] for c in cells], np.int64)
    other = np.arange(len(cells), dtype=np.int64)  # distinct (row, other)
    keep = group_floor(row, score, depth)
    for r in set(row.tolist()):
        mine = np.sort(score[row == r])[::-1]
        floor = mine[min(depth, len(mine)) - 1]
        assert keep[row == r].tolist() == (score[row == r] >= floor).tolist()
    whole = top_per_row(row, other, score, depth)
    kept = top_per_row(row[keep], other[keep], score[keep], depth)
    assert all(np.array_equal(a, b) for a, b in zip(whole, kept, strict=True))
