"""The rule choosing how many of a document's ranked candidates to align
(:mod:`simdask.kernels.partner_rule`), against a brute-force reading of its definition."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.errors import ConfigError
from simdask.kernels.partner_rule import PartnerRule, chosen_count
from simdask.storage.aligned_tables import DEFAULT_RULE, plan_rule, totals_meta
from simdask.write.compute_totals import totals_rule

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


def test_the_totals_rule_of_the_cli_and_the_stored_setting():
    """``totals --compute --floor/--cap`` give the default rule with those values (never
    fewer than its ``least``, at most the cap); the totals meta stores the rule, and a meta
    from before the rule (``{"top": k}``) reads as the fixed top k it was."""
    assert totals_rule(None, None) is None
    assert totals_rule(0.3, None) == PartnerRule(0.3, DEFAULT_RULE.cap, DEFAULT_RULE.least)
    assert totals_rule(None, 3) == PartnerRule(DEFAULT_RULE.floor, 3, 3)
    with pytest.raises(ConfigError, match="floor"):
        totals_rule(1.5, 10)
    with pytest.raises(ConfigError, match="cap"):
        totals_rule(0.2, 0)
    c = sqlite3.connect(":memory:")
    c.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    assert totals_meta(c)["rule"] == DEFAULT_RULE
    c.execute("""INSERT INTO meta VALUES ('totals', '{"top": 3, "scope": "all"}')""")
    # settings stored before the per-direction quotation rule: not yet re-aligned ("quotes")
    assert totals_meta(c) == {
        "rule": PartnerRule(0.0, 3, 3),
        "top": 3,
        "scope": "all",
        "quotes": None,
    }
    rule = PartnerRule(0.2, 7, 2)
    c.execute(
        "UPDATE meta SET value = ? WHERE name = 'totals'", (json.dumps({"rule": rule.to_dict()}),)
    )
    assert totals_meta(c)["rule"] == rule and totals_meta(c)["top"] == 7
    assert plan_rule(totals_meta(c), 4, None) == PartnerRule(0.0, 4, 4)
    assert plan_rule(totals_meta(c), None, DEFAULT_RULE) == DEFAULT_RULE
    assert plan_rule(totals_meta(c), None, None) == rule
