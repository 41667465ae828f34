"""``--min-match`` with ``--exclude-quotes`` (issue 31, items 4 and 11): the counts of a view
that ignores short matches stay per direction, as the stored ones: a passage one text copies
from inside the other's quotation counts for the copier when it is long enough, never for the
quoting text, and is listed (``doc_quoted_copies`` / ``other_quoted_copies``) only then.
Against a brute force over planted passages of distinct words."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.evidence.excluded import PairExclusions
from simdask.evidence.passages import compare_texts

pytestmark = pytest.mark.unit

K = 5
QUOTES = PairExclusions(quotes=True)


def own(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def texts(ls: int, lp: int, lr: int) -> tuple[str, str]:
    """A shares S with B unquoted, quotes P (which B copies unquoted) and copies R unquoted
    from inside B's quotation."""
    s, p, r = own("s", ls), own("p", lp), own("r", lr)
    a = f"{own('a', 10)} {s} {own('b', 7)} “{p}” {own('c', 9)} {r} {own('d', 5)}"
    b = f"{own('e', 3)} {p} {own('f', 11)} “{r}” {own('g', 4)} {s} {own('h', 6)}"
    return a, b


def chunks(n: int, least: int) -> int:
    """The chunks a planted passage of ``n`` words adds when matches of fewer than ``least``
    words are ignored (and passages of fewer than 2 chunks are never shown)."""
    return n - K + 1 if n >= max(least, K + 1) else 0


length = st.one_of(st.just(0), st.integers(K + 1, 40))


@settings(max_examples=60, deadline=None)
@given(length, length, length, st.integers(1, 45))
def test_each_direction_counts_the_long_matches_it_counts(ls, lp, lr, least):
    a, b = texts(ls, lp, lr)
    ev = compare_texts(a, b, K, min_words=least, exclusions=QUOTES)
    every = compare_texts(a, b, K, exclusions=QUOTES)
    # A: S and R (inside B's quotation, counted for A); B: S and P (inside A's quotation)
    assert ev.shared == chunks(ls, least) + chunks(lr, least)
    assert ev.similarity == pytest.approx(100.0 * ev.shared / ev.doc_chunks)
    b_count = chunks(ls, least) + chunks(lp, least)
    assert ev.reverse_similarity == pytest.approx(100.0 * b_count / ev.other_chunks)
    assert [p.words for p in ev.doc_quoted_copies] == ([lr] if chunks(lr, least) else [])
    assert [p.words for p in ev.other_quoted_copies] == ([lp] if chunks(lp, least) else [])
    # the chunks the listed copies cover are the difference the rule makes
    assert ev.doc_chunks == every.doc_chunks and ev.other_chunks == every.other_chunks
    assert ev.shared <= every.shared


def test_a_minimum_below_every_match_changes_nothing():
    a, b = texts(20, 30, 25)
    every = compare_texts(a, b, K, exclusions=QUOTES)
    some = compare_texts(a, b, K, min_words=6, exclusions=QUOTES)
    assert (some.shared, some.similarity, some.reverse_similarity) == (
        every.shared,
        every.similarity,
        every.reverse_similarity,
    )
    assert some.doc_quoted_copies == every.doc_quoted_copies
    assert some.other_quoted_copies == every.other_quoted_copies
    assert every.shared == (20 - K + 1) + (25 - K + 1)
