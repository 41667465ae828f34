"""The extension's fragment runs (alignment/extend.fragments), in plain Python for speed, equal
the former vectorised form (numpy unique, diff and the barrier comparison) on every input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.alignment.extend import fragments

pytestmark = pytest.mark.unit


def vectorised(index: np.ndarray, gap: int, barriers: np.ndarray) -> list[tuple[int, int]]:
    """The former implementation, the reference."""
    u = np.unique(index)
    if len(u) == 0:
        return []
    cut = (np.diff(u) > gap + 1) | (barriers[u[1:]] != barriers[u[:-1]])
    edges = np.flatnonzero(cut)
    firsts = np.r_[u[0], u[edges + 1]]
    lasts = np.r_[u[edges], u[-1]]
    return list(zip(firsts.tolist(), lasts.tolist(), strict=True))


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 60).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, n - 1), max_size=80),
            st.lists(st.booleans(), min_size=n, max_size=n),
            st.integers(0, 6),
        )
    )
)
def test_fragments_equal_the_vectorised_form(drawn):
    values, is_barrier, gap = drawn
    index = np.array(values, dtype=np.int64)
    barriers = np.cumsum(np.array(is_barrier, dtype=np.int64))
    got = fragments(index, gap, barriers)
    assert got == vectorised(index, gap, barriers)
    assert all(type(a) is int and type(b) is int for a, b in got)


def test_fragments_split_at_gaps_and_barriers():
    barriers = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    index = np.array([0, 1, 1, 3, 4, 5, 9])
    assert fragments(index, 1, barriers) == [(0, 3), (4, 5), (9, 9)]  # barrier before 4
    assert fragments(index, 3, barriers) == [(0, 3), (4, 9)]
    assert fragments(np.array([], dtype=np.int64), 2, barriers) == []
