"""``engine/deep_lists.split_rows`` returns the rows a run commits and changes nothing it is
given (issue 27: functions return their results, the run combines them): the lists computed
whole cut as a brute force cuts them, the reverse rows added to other lists passed through
as they are."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.config import IndexConfig
from simdask.engine.deep_lists import SplitRows, split_rows

pytestmark = pytest.mark.unit


def _brute(rows, replaced, replace_all, top_k, depth):
    """Shown rows (whole lists' top ``top_k`` plus the other rows), reserve rows, floors."""
    whole = [r for r in rows if replace_all or r[0] in replaced]
    rest = [r for r in rows if not (replace_all or r[0] in replaced)]
    shown, reserve, floors = set(rest), set(), set()
    for d in {r[0] for r in whole}:
        lst = sorted((r for r in whole if r[0] == d), key=lambda r: (-r[3], r[1]))
        shown |= set(lst[:top_k])
        reserve |= set(lst[top_k:depth])
        if len(lst) > depth:
            floors.add((d, lst[depth][3], lst[depth][1]))
    return shown, reserve, floors


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 9), st.integers(1, 7)),
        max_size=40,
        unique_by=lambda r: (r[0], r[1]),
    ),
    st.sets(st.integers(0, 5)),
    st.booleans(),
    st.integers(1, 3),
    st.integers(0, 2),
)
def test_split_rows_returns_the_cut_and_leaves_its_inputs(rows, replaced, full, top_k, slack):
    rows = [(d, o, s) for d, o, s in rows if d != o]
    cols = (
        np.array([r[0] for r in rows], np.int64),
        np.array([r[1] for r in rows], np.int64),
        np.array([r[2] for r in rows], np.int64),
        np.array([100.0 * r[2] / 8 for r in rows]),
    )
    before = tuple(c.copy() for c in cols)
    replaced_arr = np.array(sorted(replaced), np.int64)
    config = IndexConfig(hash_bits=24, shards=4, top_k=top_k, slack=slack)
    got = split_rows(cols, config, full, replaced_arr)
    assert isinstance(got, SplitRows)
    for a, b in zip(cols, before, strict=True):  # nothing it was given changed
        assert np.array_equal(a, b)
    assert np.array_equal(replaced_arr, np.array(sorted(replaced), np.int64))
    as_rows = [(d, o, s, 100.0 * s / 8) for d, o, s in rows]
    want_shown, want_reserve, want_floors = _brute(
        as_rows, replaced, full, top_k, config.stored_depth
    )
    assert set(zip(*(c.tolist() for c in got.rows), strict=True)) == want_shown
    assert len(got.rows[0]) == len(want_shown)
    assert set(zip(*(c.tolist() for c in got.reserve), strict=True)) == want_reserve
    assert set(zip(*(c.tolist() for c in got.floors), strict=True)) == want_floors
