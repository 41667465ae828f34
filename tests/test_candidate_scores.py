"""The stored candidates with their scores (``candidate_scores``, read side of
simdask/storage/candidates.py): best first, cut at k, only the stored candidates (not the
similarity partners ``candidate_partners`` appends), every asked document a key."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from simdask.kernels.candidates import CandidateConfig
from simdask.kernels.partner_rule import PartnerRule, chosen_count
from simdask.storage.candidates import (
    CandidateChanges,
    candidate_partners,
    candidate_scores,
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
