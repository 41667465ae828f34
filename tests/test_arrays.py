"""The small shared kernels against brute-force Python: runs of equal values, CSR range
expansion, containment (percent), shard widths; the task names and the run statistics' form."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.kernels.arrays import expand_ranges, run_lengths, run_starts
from simdask.kernels.postings import shard_ranges, shard_width
from simdask.kernels.similarity import containment
from simdask.summary import CacheCounts, RunStats, RunSummary

pytestmark = pytest.mark.unit


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=60))
def test_run_starts_and_lengths(values):
    a = np.array(sorted(values), dtype=np.uint64)
    s = sorted(values)
    want_starts = [i == 0 or s[i] != s[i - 1] for i in range(len(s))]
    assert run_starts(a).tolist() == want_starts
    keys, counts = run_lengths(a)
    distinct = sorted(set(values))
    assert keys.tolist() == distinct
    assert counts.tolist() == [values.count(v) for v in distinct]
    assert counts.dtype == np.uint32


def test_run_starts_unsorted_input_marks_every_change():
    assert run_starts(np.array([3, 3, 1, 1, 3])).tolist() == [True, False, True, False, True]
    assert run_starts(np.zeros(0)).tolist() == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 6)), max_size=30))
def test_expand_ranges_is_concatenated_aranges(spans):
    starts = np.array([s for s, _ in spans], dtype=np.int64)
    counts = np.array([c for _, c in spans], dtype=np.int64)
    want = [x for s, c in spans for x in range(s, s + c)]
    got = expand_ranges(starts, counts)
    assert got.tolist() == want and got.dtype == np.int64


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 10**6))
def test_containment_is_percent_of_the_set(shared, size):
    got = containment(shared, size)
    want = 0.0 if size == 0 else float(Fraction(100 * shared, size))
    assert got == pytest.approx(want, rel=1e-15, abs=0)
    # the arrays form gives the same float64 values, element by element
    arr = containment(np.array([shared, 0], np.int64), np.array([size, size], np.int64))
    assert arr.tolist() == [got, 0.0]


def test_containment_is_directional():
    # |A| = 4, |B| = 10, |A & B| = 2: half of A is in B, a fifth of B is in A
    assert (containment(2, 4), containment(2, 10)) == (50.0, 20.0)
    assert containment(np.array([1, 2]), 0).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("bits", [16, 20, 28, 32])
@pytest.mark.parametrize("n", [1, 3, 7, 64, 4096])
def test_shard_ranges_cover_the_id_space(bits, n):
    width = shard_width(bits, n)
    assert width == -(-(2**bits) // n) and (width - 1) * n < 2**bits <= width * n
    ranges = shard_ranges(bits, n)
    assert len(ranges) == n and ranges[0][0] == 0 and ranges[-1][1] == 2**bits
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    assert all(hi - lo == width for lo, hi in ranges[:-1]) and ranges[-1][1] - ranges[-1][0] > 0


def test_task_key_names():
    from simdask.engine.context import task_key  # imports distributed

    assert task_key("chunk", "ab12cd34-r7", b=3) == "simdask-chunk-ab12cd34-r7-b000003"
    assert task_key("merge", "t", s=12, suffix="sent") == "simdask-merge-t-s0012-sent"
    assert task_key("pairs", "t", b=1, s=2) == "simdask-pairs-t-b000001-s0002"
    assert task_key("rows", "t") == "simdask-rows-t"


def test_run_stats_extra_and_summary_dict():
    st_ = RunStats(transfer="dask", seconds={"chunk": 1.5}, words=10, bytes_to_cluster=5)
    assert st_.extra() == {"transfer": "dask", "bytes_to_cluster": 5, "bytes_from_cluster": 0}
    st_.worker_cache = CacheCounts(hits=2, misses=1, bytes=300)
    st_.postings, st_.refilled = 40, 0
    assert st_.extra()["worker_cache"] == {"hits": 2, "misses": 1, "bytes": 300}
    assert st_.extra()["refilled"] == 0 and st_.extra()["postings"] == 40
    s = RunSummary(1, 1, 1, 0, 0, 0, 0, 0, 3, 0, 10, seconds={"chunk": 1.5}, stats=st_)
    d = s.to_dict()
    assert "stats" not in d and d["extra"] == st_.extra() and d["seconds"] == {"chunk": 1.5}
    assert s.extra["worker_cache"]["hits"] == 2
