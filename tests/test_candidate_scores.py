"""The stored candidates with their scores (``candidate_scores``, read side of
simdask/storage/candidate_store.py): best first, cut at k, only the stored candidates (not the
similarity partners ``candidate_partners`` appends), every asked document a key."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from simdask.kernels.candidate_scores import CandidateConfig
from simdask.kernels.partner_rule import PartnerRule, chosen_count
from simdask.storage.candidate_store import (
    CandidateChanges,
    candidate_partners,
    candidate_scores,
    rule_partners,
    write_candidates,
)
from tests.helpers.candidates import small_catalog

pytestmark = pytest.mark.unit


def _conn() -> sqlite3.Connection:
    return small_catalog()


def test_scores_best_first_cut_at_k_and_only_the_stored_candidates():
    c = _conn()
    assert candidate_scores(c, [1], 5) == {1: []}  # no tables yet
    doc, other, score = [1, 1, 1, 2], [4, 2, 3, 1], [900, 500, 40, 70]
    rows = tuple(np.array(x, np.int64) for x in (doc, other, score))
    write_candidates(c, CandidateChanges(CandidateConfig(), rows=rows, full=True))
    c.execute("INSERT INTO similarity VALUES (1, 6, 3, 80.0)")
    assert candidate_scores(c, [1, 2, 7], 5) == {
        1: [(4, 900), (2, 500), (3, 40)],
        2: [(1, 70)],
        7: [],
    }
    assert candidate_scores(c, [1], 2) == {1: [(4, 900), (2, 500)]}
    assert candidate_scores(c, [1], 0) == {1: []}
    # the same order as candidate_partners, which then adds the similarity partner 6
    assert [o for o, _ in candidate_scores(c, [1], 5)[1]] == candidate_partners(c, [1], 5)[1][:3]
    assert candidate_partners(c, [1], 5)[1][3:] == [6]
    # a rule on the stored scores: 500 >= 0.5 * 900, 40 is not
    lst = candidate_scores(c, [1], 50)[1]
    assert chosen_count(np.array([s for _, s in lst]), PartnerRule(0.5, 30, 1)) == 2


def test_rule_partners_take_the_rules_prefix_then_similarity_partners_up_to_least():
    """rule_partners: the stored candidates the rule chooses (the floor relative to the
    document's best, the cap), then similarity partners not among them while fewer than
    ``least``; a document without stored candidates gets its ``least`` best similarity
    partners (a fixed top k of before)."""
    c = _conn()
    doc, other, score = [1, 1, 1, 1, 2], [4, 2, 3, 5, 1], [900, 500, 440, 40, 70]
    rows = tuple(np.array(x, np.int64) for x in (doc, other, score))
    write_candidates(c, CandidateChanges(CandidateConfig(), rows=rows, full=True))
    c.executemany(
        "INSERT INTO similarity VALUES (?, ?, ?, 1.0)", [(1, 6, 3), (7, 1, 9), (3, 6, 5), (3, 7, 2)]
    )
    assert rule_partners(c, [1, 2, 3], PartnerRule(0.5, 30, 1)) == {1: [4, 2], 2: [1], 3: [6]}
    assert rule_partners(c, [1], PartnerRule(0.5, 2, 1)) == {1: [4, 2]}  # the cap
    assert rule_partners(c, [1], PartnerRule(0.9, 30, 1)) == {1: [4]}
    # least 4: the floor passes 4 and 2, the rule keeps the best 4 stored ones
    assert rule_partners(c, [1], PartnerRule(0.9, 30, 4)) == {1: [4, 2, 3, 5]}
    # least 6: every stored candidate, then the similarity partners (most shared first)
    assert rule_partners(c, [1], PartnerRule(0.9, 30, 6)) == {1: [4, 2, 3, 5, 7, 6]}
    assert rule_partners(c, [3], PartnerRule(0.1, 10, 2)) == {3: [6, 7]}
    assert rule_partners(c, [3], PartnerRule(0.0, 1, 1)) == {3: [6]}
    fixed = PartnerRule(0.0, 3, 3)  # a fixed top 3 is candidate_partners(..., 3)
    assert rule_partners(c, [1, 3], fixed) == candidate_partners(c, [1, 3], 3)
