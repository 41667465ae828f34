"""The passages kept by compare_texts (those inside no other, issue 31 item 7's speed): the
vectorised filter equals the pairwise definition on random passages."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.evidence import nesting as passages_module
from simdask.evidence.passages import Passage, outermost

pytestmark = pytest.mark.unit


def _inside(p: Passage, q: Passage) -> bool:
    """The definition: ``p`` within ``q`` in both texts, and ``q`` the larger."""
    return (
        q.doc_start <= p.doc_start
        and p.doc_end <= q.doc_end
        and q.other_start <= p.other_start
        and p.other_end <= q.other_end
        and (q.chunks, q.words) > (p.chunks, p.words)
    )


@st.composite
def passages(draw):
    a0 = draw(st.integers(0, 40))
    b0 = draw(st.integers(0, 40))
    return Passage(
        a0,
        a0 + draw(st.integers(0, 30)),
        b0,
        b0 + draw(st.integers(0, 30)),
        draw(st.integers(1, 6)),
        draw(st.integers(1, 6)),
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(passages(), max_size=40))
def test_outermost_equals_pairwise_definition(found):
    expected = [p for p in found if not any(_inside(p, q) for q in found if q is not p)]
    assert outermost(found) == expected


def test_outermost_across_blocks():
    # more passages than one block of rows: a nested passage in the second block is dropped
    found = [Passage(10 * i, 10 * i + 5, 10 * i, 10 * i + 5, 2, 5) for i in range(600)]
    found.append(Passage(5001, 5003, 5001, 5003, 1, 2))  # inside passage 500
    found.insert(0, Passage(101, 104, 101, 104, 1, 3))  # inside passage 10
    kept = outermost(found)
    assert len(kept) == 600 and Passage(5001, 5003, 5001, 5003, 1, 2) not in kept
    assert kept[0] == Passage(0, 5, 0, 5, 2, 5)


@settings(max_examples=300, deadline=None)
@given(st.lists(passages(), max_size=40), st.integers(1, 8))
def test_outermost_small_blocks_equal_pairwise_definition(found, block):
    # blocks smaller than the list: the first pass (against the `block` largest passages)
    # keeps some nested passages for the second, and blocks of rows are cut
    old = passages_module._BLOCK
    passages_module._BLOCK = block
    try:
        got = outermost(found)
    finally:
        passages_module._BLOCK = old
    assert got == [p for p in found if not any(_inside(p, q) for q in found if q is not p)]


def test_outermost_many_nested_in_one_long_passage():
    # two copies of a long text: one passage over all of it, thousands of chance matches on
    # other diagonals inside it, and one outside it (a part of B repeated after the copy)
    n = 20_000
    found = [Passage(0, 10 * n, 0, 10 * n, n, n)]
    found += [Passage(10 * i, 10 * i + 50, 10 * i + 70, 10 * i + 120, 3, 5) for i in range(n - 20)]
    found.append(Passage(100, 150, 10 * n + 10, 10 * n + 60, 3, 5))
    assert outermost(found) == [found[0], found[-1]]
