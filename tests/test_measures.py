"""The measure seam (simdask/kernels/measures.py): each form of a measure (numpy value, threshold
inversion, SQL, wording) against a brute-force reference, and the registry."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.errors import ConfigError
from simdask.kernels.measures import (
    CONTAINMENT,
    MEASURES,
    NEVER,
    Containment,
    Measure,
    containment,
    measure,
)
from simdask.read.undirected_pairs import holds, pct
from simdask.storage.reads import REVERSE

pytestmark = pytest.mark.unit

sizes = st.lists(st.integers(0, 5000), min_size=1, max_size=40)
thresholds = st.one_of(st.floats(0, 100, allow_nan=False), st.sampled_from([0.0, 33.3, 50, 100]))


@settings(max_examples=200, deadline=None)
@given(sizes, st.data())
def test_value_is_100_shared_over_size(ns, data):
    n = np.array(ns, np.int64)
    s = np.array([data.draw(st.integers(0, int(x))) for x in ns], np.int64)
    got = CONTAINMENT.value(s, n)
    want = [100.0 * a / b if b else 0.0 for a, b in zip(s.tolist(), ns, strict=True)]
    assert got.tolist() == want
    assert [containment(int(a), int(b)) for a, b in zip(s, n, strict=True)] == want


def _brute_need(m: Measure, n: int, threshold: float) -> int:
    """The fewest shared chunks that pass, by trying every count."""
    return next((s for s in range(n + 1) if m.value(s, n) >= threshold), NEVER)


@settings(max_examples=200, deadline=None)
@given(sizes, thresholds)
def test_need_closed_form_and_general_bisection_equal_brute_force(ns, threshold):
    n = np.array(ns, np.int64)
    want = [_brute_need(CONTAINMENT, x, threshold) for x in ns]
    assert CONTAINMENT.need(n, threshold).tolist() == want
    # the general form a new measure inherits (bisection over 0..size) gives the same
    assert Measure.need(CONTAINMENT, n, threshold).tolist() == want


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 10**6)), min_size=1, max_size=30))
def test_sql_form_equals_the_numpy_form(rows):
    db = sqlite3.connect(":memory:")
    got = [db.execute(f"SELECT {CONTAINMENT.sql('?', '?')}", (s, n)).fetchone()[0] for s, n in rows]
    assert got == [CONTAINMENT.value(s, n) for s, n in rows]
    # the reverse direction counts the stored reverse count where quotations make it differ
    assert REVERSE == "100.0 * COALESCE(q.reverse, s.shared) / b.n_chunks"


def test_wording():
    assert [CONTAINMENT.say(v) for v in (62.4, 4.44, 0.3, 99.7, 0.004, 0.006)] == [
        "62 %",
        "4.4 %",
        "0.3 %",
        "99.7 %",
        "<0.01 %",
        "0.01 %",
    ]
    assert CONTAINMENT.holds("A", "B", 62.0, 18.0) == "B holds 62 % of A; A holds 18 % of B"
    assert holds("A", "B", 62.0, 18.0) == CONTAINMENT.holds("A", "B", 62.0, 18.0)
    assert pct(4.44) == "4.4 %"


def test_registry():
    assert MEASURES == {"containment": CONTAINMENT} and isinstance(CONTAINMENT, Containment)
    assert measure("containment") is CONTAINMENT
    with pytest.raises(ConfigError, match="unknown similarity measure 'jaccard'") as e:
        measure("jaccard")
    assert isinstance(e.value, ValueError)
