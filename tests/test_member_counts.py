"""count_member_keys / count_runs / count_member_candidates (kernels/member_counts.py) against
Counter brute force."""

from collections import Counter
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.kernels import member_counts
from simdask.kernels.member_counts import count_member_candidates, count_member_keys, count_runs

pytestmark = pytest.mark.unit

keys32 = st.lists(st.integers(0, 2**32 - 1), max_size=40).map(lambda x: np.array(x, np.uint32))
small = st.lists(st.integers(0, 30), max_size=40).map(lambda x: np.array(x, np.uint32))


def brute(parts, mode):
    """Counter over all keys; in informative mode only keys among the light keys."""
    light = Counter()
    every = Counter()
    for p in parts:
        lk, hk = p if isinstance(p, tuple) else (p, np.zeros(0, np.uint32))
        light.update(lk.tolist())
        every.update(lk.tolist())
        every.update(hk.tolist())
    keep = sorted(every) if mode == "exact" else sorted(light)
    return keep, [every[k] for k in keep]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(keys32, small), max_size=6))
def test_count_runs_equals_counter(parts):
    keys, counts = count_runs(parts)
    want = Counter(k for p in parts for k in p.tolist())
    assert keys.tolist() == sorted(want)
    assert counts.tolist() == [want[k] for k in sorted(want)]
    assert counts.dtype == np.uint32


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(small, st.tuples(small, small), st.tuples(keys32, keys32)), max_size=6),
    st.sampled_from(["informative", "exact"]),
)
def test_count_member_keys_equals_brute_force_and_combine(parts, mode):
    keys, counts = count_member_keys(parts, mode)
    want_k, want_c = brute(parts, mode)
    assert keys.tolist() == want_k
    assert counts.tolist() == want_c


def test_count_member_keys_on_ascending_runs():
    """The shape the member kernels emit: per posting, a base plus an ascending list."""
    rng = np.random.default_rng(3)
    parts = []
    for _ in range(8):
        runs = [
            np.uint32(rng.integers(0, 50) * 1000) + np.sort(rng.choice(1000, rng.integers(1, 60)))
            for _ in range(40)
        ]
        parts.append((np.concatenate(runs).astype(np.uint32), np.zeros(0, np.uint32)))
    for mode in ("informative", "exact"):
        keys, counts = count_member_keys(parts, mode)
        want_k, want_c = brute(parts, mode)
        assert keys.tolist() == want_k and counts.tolist() == want_c
    assert counts.max() > 1  # the runs overlap: keys are counted more than once


def test_count_member_keys_modes():
    light = np.array([5, 7, 7], np.uint32)
    heavy = np.array([5, 9, 9], np.uint32)
    k, c = count_member_keys([(light, heavy)], "informative")
    assert (k.tolist(), c.tolist()) == ([5, 7], [2, 2])
    k, c = count_member_keys([(light, heavy)], "exact")
    assert (k.tolist(), c.tolist()) == ([5, 7, 9], [2, 2, 2])
    k, c = count_member_keys([light], "informative")
    assert (k.tolist(), c.tolist()) == ([5, 7], [1, 2])
    k, c = count_member_keys([], "exact")
    assert (k.tolist(), c.tolist()) == ([], [])


def brute_candidates(parts, mode, n_docs, single_rows, single_docs):
    """brute(): the keys counted at least twice, or once with a single row or document."""
    keys, counts = brute(parts, mode)
    out = [
        (k, c)
        for k, c in zip(keys, counts, strict=True)
        if c >= 2 or single_rows[k // n_docs] or single_docs[k % n_docs]
    ]
    return [k for k, _ in out], [c for _, c in out]


@st.composite
def member_parts(draw):
    """Per-range ``(light, heavy)`` keys ``i * n_docs + o`` as the member kernels emit them
    (grouped by ascending ``i``: per row, ascending runs), or shuffled (not grouped)."""
    n_docs = draw(st.integers(1, 12))
    n_rows = draw(st.integers(1, 9))
    grouped = draw(st.booleans())

    def keys():
        runs = []
        for i in range(n_rows):
            for _ in range(draw(st.integers(0, 3))):
                o = draw(st.lists(st.integers(0, n_docs - 1), max_size=6, unique=True))
                runs.append(np.array(sorted(o), np.int64) + i * n_docs)
        x = np.concatenate([*runs, np.zeros(0, np.int64)]).astype(np.uint32)
        if not grouped:
            x = x[draw(st.permutations(list(range(len(x)))))] if len(x) else x
        return x

    parts = [
        (keys(), keys()) if draw(st.booleans()) else keys() for _ in range(draw(st.integers(0, 4)))
    ]
    single_rows = np.array(draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows)))
    single_docs = np.array(draw(st.lists(st.booleans(), min_size=n_docs, max_size=n_docs)))
    return parts, n_docs, n_rows, single_rows, single_docs


@settings(max_examples=400, deadline=None)
@given(
    member_parts(),
    st.sampled_from(["informative", "exact"]),
    st.sampled_from([1, 7, 1 << 17]),
    st.sampled_from([0.0, 0.3, 2.0]),
)
def test_count_member_candidates_equals_brute_force(case, mode, slots, dense_min):
    """Dense and sorted batches (``DENSE_MIN`` 0: all dense; 2: all sorted), one or many rows
    per batch (``DENSE_SLOTS``), grouped and shuffled parts, single rows and documents."""
    parts, n_docs, n_rows, single_rows, single_docs = case
    with (
        mock.patch.object(member_counts, "DENSE_SLOTS", slots),
        mock.patch.object(member_counts, "DENSE_MIN", dense_min),
    ):
        keys, counts = count_member_candidates(
            parts, n_docs, n_rows, mode, single_rows, single_docs
        )
    want_k, want_c = brute_candidates(parts, mode, n_docs, single_rows, single_docs)
    assert keys.tolist() == want_k
    assert counts.tolist() == want_c
    assert keys.dtype == np.uint32 and counts.dtype == np.uint32


def test_count_member_candidates_without_singles():
    light = np.array([1, 1, 2, 5, 6, 5, 11, 9, 9], np.uint32)  # rows of 4: 0, 0, 0, 1, 1, ...
    keys, counts = count_member_candidates([light], 4, 3, "informative")
    assert (keys.tolist(), counts.tolist()) == ([1, 5, 9], [2, 2, 2])
    heavy = np.array([2, 6, 10], np.uint32)
    keys, counts = count_member_candidates([(light, heavy)], 4, 3, "informative")
    assert (keys.tolist(), counts.tolist()) == ([1, 2, 5, 6, 9], [2, 2, 2, 2, 2])
    keys, counts = count_member_candidates([(light, heavy)], 4, 3, "exact")
    assert (keys.tolist(), counts.tolist()) == ([1, 2, 5, 6, 9], [2, 2, 2, 2, 2])
    heavy = np.array([3, 3, 10, 10], np.uint32)  # 3 and 10: through heavy chunks only
    keys, counts = count_member_candidates([(light, heavy)], 4, 3, "exact")
    assert (keys.tolist(), counts.tolist()) == ([1, 3, 5, 9, 10], [2, 2, 2, 2, 2])
    keys, counts = count_member_candidates([(light, heavy)], 4, 3, "informative")
    assert (keys.tolist(), counts.tolist()) == ([1, 5, 9], [2, 2, 2])
