"""The rule choosing how many of a document's ranked candidates to align
(:mod:`simdask.kernels.partner_rule`), against a brute-force reading of its definition."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.errors import ConfigError
from simdask.kernels.partner_rule import PartnerRule, chosen_count

pytestmark = pytest.mark.unit

rules = st.integers(1, 40).flatmap(
    lambda cap: st.builds(
        PartnerRule,
        floor=st.floats(0.0, 1.0),
        cap=st.just(cap),
        least=st.integers(0, cap),
        min_score=st.integers(0, 5000),
    )
)


def _brute(scores: list[int], rule: PartnerRule) -> int:
    """Walk the ranking: take a candidate while fewer than ``least`` are taken, or while it
    passes both floors; never more than ``cap``."""
    n = 0
    for s in scores:
        if n >= rule.cap:
            break
        passes = s >= rule.floor * scores[0] and s >= rule.min_score
        if n < rule.least or passes:
            n += 1
        else:
            break
    return n


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 10_000), max_size=60), rules)
def test_chosen_count_is_the_brute_force_walk(scores, rule):
    ranked = sorted(scores, reverse=True)
    assert chosen_count(np.array(ranked, dtype=np.int64), rule) == _brute(ranked, rule)


def test_a_document_with_many_strong_candidates_gets_more_of_them():
    rule = PartnerRule(floor=0.2, cap=30, least=1)
    one_source = np.array([90_000, 9_000, 8_000, 7_000, 6_000])
    many = np.array([90_000, 80_000, 60_000, 40_000, 30_000, 20_000, 5_000])
    assert chosen_count(one_source, rule) == 1
    assert chosen_count(many, rule) == 6
    assert chosen_count(many, PartnerRule(0.0, 3, 3)) == 3  # a fixed top 3


def test_scores_not_best_first_and_bad_settings_are_refused():
    with pytest.raises(ConfigError, match="best first"):
        chosen_count(np.array([5, 7]), PartnerRule())
    with pytest.raises(ConfigError, match=r"expected floor a number in 0\.\.1, found 1\.5"):
        PartnerRule(floor=1.5)
    with pytest.raises(ConfigError, match="expected least <= cap"):
        PartnerRule(cap=3, least=4)
    with pytest.raises(ConfigError, match="expected cap an integer"):
        PartnerRule(cap=True)
    rule = PartnerRule(0.3, 12, 2, 100)
    assert PartnerRule.from_dict(rule.to_dict()) == rule
    with pytest.raises(ConfigError):
        PartnerRule.from_dict({**rule.to_dict(), "depth": 3})
