"""Exact passages cut out of excluded words (simdask/evidence/trim.py), against a brute-force
reference; and compare_texts never reporting a passage over excluded text."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.evidence.excluded import PairExclusions
from simdask.evidence.passages import compare_texts
from simdask.evidence.trim import kept_runs
from tests.helpers.paraphrase import OWN, PARAGRAPHS

pytestmark = pytest.mark.unit


def _brute(i0, j0, last, ex_a, ex_b, k):
    out, lo = [], None
    for i in range(i0, last + 2):
        ok = i <= last and not ex_a[i] and not ex_b[j0 + i - i0]
        if ok and lo is None:
            lo = i
        if not ok and lo is not None:
            if i - lo >= k:
                out.append((lo, i - 1))
            lo = None
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.booleans(), min_size=1, max_size=60),
    st.lists(st.booleans(), min_size=60, max_size=80),
    st.integers(0, 20),
    st.integers(1, 6),
)
def test_kept_runs_match_brute_force(ex_a, ex_b, shift, k):
    ex_a = np.array(ex_a + [False] * 5, dtype=bool)
    ex_b = np.array(ex_b, dtype=bool)
    last = len(ex_a) - 6
    j0 = min(shift, len(ex_b) - (last + 1))
    assert kept_runs(0, j0, last, ex_a, ex_b, k) == _brute(0, j0, last, ex_a, ex_b, k)


@pytest.mark.parametrize("large", [False, True])
def test_no_exact_passage_covers_a_quotation_next_to_copied_text(large):
    quote = PARAGRAPHS[5]  # ASCII marks: the numpy path's offsets are exact for ASCII text
    a = f'{OWN[0]} As one historian put it, "{quote}" {PARAGRAPHS[2]} {OWN[1]}'
    b = f"{PARAGRAPHS[0]} {quote} {PARAGRAPHS[2]} {PARAGRAPHS[3]}"
    ev = compare_texts(a, b, large=large, exclusions=PairExclusions(quotes=True))
    q0, q1 = a.index(quote), a.index(quote) + len(quote)
    copy = a.index(PARAGRAPHS[2])
    assert ev.passages and all(p.doc_start >= q1 or p.doc_end <= q0 for p in ev.passages)
    assert any(p.doc_start <= copy + 10 < p.doc_end for p in ev.passages)
    plain = compare_texts(a, b, large=large)  # without the exclusion: the quote is a passage
    assert any(p.doc_start <= q0 + 10 < p.doc_end for p in plain.passages)
