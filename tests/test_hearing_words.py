"""The word positions of the evidence block's passage rows ("words 451–748 of 1,200",
issue 31 item 7's speed): counted from one scan of each text, equal to counting the words
of each part anew (what it did per passage, O(text) each)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.evidence import hearing_html
from simdask.kernels.words import WORD_PATTERN

pytestmark = pytest.mark.unit

_TEXT = st.text(alphabet=st.sampled_from("ab_1 .,-\nÉß\u00a0’"), max_size=60)


@settings(max_examples=400, deadline=None)
@given(_TEXT, st.integers(-2, 64), st.integers(-2, 64))
def test_word_count_of_a_part_equals_counting_it(text, start, end):
    words = hearing_html._Words(text)
    want = sum(1 for _ in WORD_PATTERN.finditer(text, start, end))
    assert words.count(start, end) == want


def test_where_says_the_words_of_a_passage():
    text = "one two three, four five six seven"
    words = hearing_html._Words(text)
    s = text.index("three")
    e = text.index(" six")
    assert hearing_html._where(words, len(text), s, e) == "words 3–5 of 7"
    # a part starting inside a word: as counted before (the word's rest is a word)
    assert hearing_html._where(words, len(text), s + 2, e) == "words 4–6 of 7"
