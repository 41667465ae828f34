"""``compare_texts(..., passages=False)`` (the views that show the aligner's passages, issue
31 item 7): the same counts and excluded text as with the passages, none listed; and a
view's report is the same whether the exact passages are computed or not."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.errors import ConfigError
from simdask.evidence.excluded import PairExclusions
from simdask.evidence.passages import compare_texts

pytestmark = pytest.mark.unit

_WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"])
_TEXT = st.lists(st.one_of(_WORDS, st.just('"'), st.just(".")), min_size=0, max_size=80).map(
    " ".join
)


@settings(max_examples=200, deadline=None)
@given(_TEXT, _TEXT, st.booleans(), st.booleans(), st.booleans())
def test_counts_without_passages_equal_counts_with_them(a, b, quotes, template, large):
    templates = ("beta gamma delta eps zeta",) if template else ()
    excl = PairExclusions(quotes=quotes, templates=templates)
    full = compare_texts(a + " " + b, b, 3, large=large, exclusions=excl)
    bare = compare_texts(a + " " + b, b, 3, large=large, exclusions=excl, passages=False)
    assert bare.passages == []
    assert dataclasses.replace(full, passages=[], passages_truncated=False) == bare


def test_min_words_needs_the_passages():
    with pytest.raises(ConfigError, match="passages=True"):
        compare_texts("a b c d e f", "a b c d e f", 3, min_words=2, passages=False)
