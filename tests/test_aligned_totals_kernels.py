"""The aligned-totals kernels (issue 29 item 2) against Python sets: word intervals, their
union, a document's total and its ranked sources."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simdask.kernels.aligned_totals import (
    covered_words,
    doc_total,
    intervals_from_bytes,
    intervals_to_bytes,
    word_intervals,
)

pytestmark = pytest.mark.unit

intervals = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 15)), max_size=12).map(
    lambda xs: np.array([(a, a + n) for a, n in xs], np.int64).reshape(-1, 2)
)


@given(parts=st.lists(intervals, max_size=4))
def test_covered_words_is_the_size_of_the_union(parts):
    union = {i for iv in parts for a, b in iv.tolist() for i in range(a, b)}
    assert covered_words(parts) == len(union)


@given(
    words=st.lists(st.tuples(st.integers(0, 5), st.integers(1, 6)), max_size=30),
    spans=st.lists(st.tuples(st.integers(0, 200), st.integers(0, 40)), max_size=6),
)
def test_word_intervals_are_the_words_wholly_inside(words, spans):
    starts, ends, at = [], [], 0
    for gap, length in words:
        at += gap + 1
        starts.append(at)
        ends.append(at + length)
        at += length
    sp = [(a, a + n) for a, n in spans]
    got = word_intervals(np.array(starts, np.int64), np.array(ends, np.int64), sp)
    merged = []
    for a, b in sorted(x for x in sp if x[1] > x[0]):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    pairs = enumerate(zip(starts, ends, strict=True))
    want = [i for i, (s, e) in pairs if any(a <= s and e <= b for a, b in merged)]
    assert [i for a, b in got.tolist() for i in range(a, b)] == want


def test_doc_total_is_the_union_and_sources_are_ranked():
    total, sources = doc_total(
        10, {7: np.array([[0, 4]]), 3: np.array([[2, 6]]), 9: np.zeros((0, 2), np.int64)}
    )
    assert total == pytest.approx(0.6)  # words 0..5 of 10
    assert sources == [(3, 0.4), (7, 0.4)]  # ties by source; an empty source is left out
    assert doc_total(0, {1: np.array([[0, 3]])}) == (0.0, [])


@given(iv=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), max_size=20))
def test_intervals_round_trip_their_stored_form(iv):
    arr = np.array(iv, np.int64).reshape(-1, 2)
    assert intervals_from_bytes(intervals_to_bytes(arr)).tolist() == arr.tolist()
