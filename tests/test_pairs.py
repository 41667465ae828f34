"""Undirected pairs (issue 18): each unordered pair once, both percentages, plain wording."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.kernels.similarity import containment
from simdask.read.undirected_pairs import Pair, holds, orient, pct, undirected
from simdask.storage.catalog import PairRow

pytestmark = pytest.mark.unit


def _rows(sets: dict[str, set[int]], keep) -> list[PairRow]:
    """The directed rows of ``sets`` that ``keep(doc, other, similarity)`` stores."""
    out = []
    for a, sa in sets.items():
        for b, sb in sets.items():
            shared = len(sa & sb)
            if a != b and shared:
                sim = containment(shared, len(sa))
                if keep(a, b, sim):
                    out.append(PairRow(a, b, sim, shared, len(sa), len(sb)))
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.floats(0, 60))
def test_undirected_matches_brute_force(seed, min_sim):
    rng = random.Random(seed)
    sets = {f"d{i}": {rng.randrange(40) for _ in range(rng.randint(1, 25))} for i in range(7)}
    dropped = {(a, b) for a in sets for b in sets if rng.random() < 0.3}  # e.g. top_k pruning
    rows = _rows(sets, lambda a, b, s: (a, b) not in dropped)
    got = undirected(rows, min_sim)
    stored = {frozenset((r.doc, r.other)) for r in rows}
    expected = {}
    for pair in stored:
        x, y = sorted(pair)
        shared = len(sets[x] & sets[y])
        xy, yx = containment(shared, len(sets[x])), containment(shared, len(sets[y]))
        if max(xy, yx) >= min_sim:
            expected[pair] = (xy, yx, shared)
    assert len(got) == len(expected)
    for p in got:
        xy, yx, shared = expected[frozenset((p.a_key, p.b_key))]
        assert p.shared == shared
        assert p.a_in_b == pytest.approx(containment(shared, len(sets[p.a_key])))
        assert p.b_in_a == pytest.approx(containment(shared, len(sets[p.b_key])))
        assert p.a_in_b >= p.b_in_a
    larger = [p.larger for p in got]
    assert larger == sorted(larger, reverse=True)


def test_copy_case_wording_and_orientation():
    # bailey's essay (1068 chunks) holds 284 of brown's 383: brown is the A side
    rows = [
        PairRow("bailey.txt", "brown.txt", 26.59, 284, 1068, 383),
        PairRow("brown.txt", "bailey.txt", 74.15, 284, 383, 1068),
    ]
    (p,) = undirected(rows)
    assert (p.a_key, p.b_key, p.a_in_b, p.b_in_a) == ("brown.txt", "bailey.txt", 74.15, 26.59)
    assert p.wording == "bailey.txt holds 74 % of brown.txt; brown.txt holds 27 % of bailey.txt"
    # only the smaller direction stored: the larger comes from the shared count
    (q,) = undirected(rows[:1])
    assert q.a_key == "brown.txt" and q.a_in_b == pytest.approx(100 * 284 / 383)
    assert orient([p], "bailey.txt") == [p.swapped()]
    assert p.to_dict() == {
        "a_key": "brown.txt",
        "b_key": "bailey.txt",
        "a_in_b": 74.15,
        "b_in_a": 26.59,
        "shared": 284,
        "a_chunks": 383,
        "b_chunks": 1068,
    }


def test_pct_never_rounds_to_0_or_100():
    assert [pct(v) for v in (62.4, 9.96, 4.42, 0.3, 0.004, 99.7, 100.0)] == [
        "62 %",
        "10.0 %",
        "4.4 %",
        "0.3 %",
        "<0.01 %",
        "99.7 %",
        "100 %",
    ]
    assert holds("a", "b", 50.0, 5.0) == "b holds 50 % of a; a holds 5.0 % of b"
    assert Pair("a", "b", 1.0, 2.0, 1, 100, 50).larger == 2.0
