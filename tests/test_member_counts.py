"""count_member_keys / count_runs (kernels/member_counts.py) against Counter brute force."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.kernels.member_counts import count_member_keys, count_runs

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
