"""A null model for the summary variant's passages: what two texts of the same vocabulary give
by chance, and whether a passage shows more.

The summary variant's seeds pass at low thresholds (cosine and Dice 0.2) and are chained over
long gaps in the source (40 sentences). Two unrelated texts written with one vocabulary (essays
on one assignment, or any text whose content words follow a Zipf law) share their frequent
content words, so some of their sentence pairs pass those thresholds by chance; when that
happens about once per sentence of A, the long gaps chain the chance seeds into one "summary"
covering most of both texts, and the validation cosine of two long fragments of one
vocabulary is high too (0.59 in the test suite's generated essays).

How often chance gives what, is measured on the texts themselves: B's content words are
shuffled across B's sentences (each sentence keeps its number of words; the words, and so the
word frequencies, are B's own, but no sentence of B is related to a sentence of A any more),
``shuffles`` times with a fixed seed. A passage (A's sentences ``a_first..a_last`` against
B's ``b_first..b_last``) must then beat the shuffled B by one of two tests, each at ``alpha /
2`` (Bonferroni):

- **seed count**: its ``k`` seeds against the ``c`` sentence pairs of its A sentences and the
  shuffled B's sentences that pass the same thresholds. Under the null both are Poisson with
  rates proportional to their exposures (the passage's B sentences, against ``shuffles``
  times all of B's), so, given ``k + c``, ``k`` is binomial with ``q = n_b / (n_b +
  shuffles * |B|)`` (the exact conditional test of two Poisson rates): p = ``P(X >= k)``.
  Strong for short passages between texts of different vocabularies (chance gives ~0).
- **rank test**: per sentence of A in the passage, its best cosine with the passage's B
  sentences is ranked among its best cosines with the same sentences of each shuffled B
  (rank ``0..shuffles``: how many shuffles it beats; a tie counts against it; sentences
  equal to every shuffle, e.g. sharing no word with any, are left out); under the null each
  rank is uniform, and p is the exact tail of the sum of the ranks. Strong for long
  passages, and for short ones whose every sentence beats every shuffle: a summary's
  sentences each condense particular sentences of the source; a text of the same
  vocabulary beats the shuffles as often as it loses to them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simdask.alignment.pairs import SentenceCosine, rare_terms, similar_pairs
from simdask.alignment.vectors import sentence_vectors

__all__ = ["NullModel", "binomial_tail", "rank_sum_tail"]

#: seed of the shuffles (fixed: the same passages in every run and process)
_SHUFFLE_SEED = 20261128


def binomial_tail(k: int, n: int, q: float) -> float:
    """``P(X >= k)`` for ``X`` binomial with ``n`` trials of probability ``q``."""
    if k <= 0:
        return 1.0
    if k > n or q <= 0.0:
        return 0.0
    if q >= 1.0:
        return 1.0
    lq, lr = math.log(q), math.log1p(-q)
    lg = math.lgamma(n + 1)
    terms = [lg - math.lgamma(x + 1) - math.lgamma(n - x + 1) + x * lq + (n - x) * lr
             for x in range(k, n + 1)]  # fmt: skip
    top = max(terms)
    return min(1.0, math.exp(top) * math.fsum(math.exp(t - top) for t in terms))


def rank_sum_tail(total: int, m: int, shuffles: int) -> float:
    """``P(S >= total)`` for ``S`` the sum of ``m`` independent ranks, each uniform on
    ``0..shuffles`` (the rank of a sentence's best match among itself and ``shuffles``
    shuffled ones, under the null)."""
    if total <= 0:
        return 1.0
    if total > m * shuffles:
        return 0.0
    one = np.full(shuffles + 1, 1.0 / (shuffles + 1))
    pmf = np.ones(1)
    for _ in range(m):
        pmf = np.convolve(pmf, one)
    return float(min(1.0, pmf[total:].sum()))


@dataclass(frozen=True)
class NullModel:
    """A and ``shuffles`` shuffles of B (see the module doc): per sentence of A, the number
    of sentence pairs with the shuffled B's sentences passing the seed thresholds (summed over
    the shuffles; ``chance``), and the shuffled texts' sentence cosine (``shuffled``)."""

    chance: np.ndarray
    shuffled: tuple[SentenceCosine, ...]
    n_b: int

    @classmethod
    def of(
        cls,
        terms: tuple[np.ndarray, np.ndarray],
        sents: tuple[np.ndarray, np.ndarray],
        n_sents: tuple[int, int],
        n_terms: int,
        thresholds: tuple[float, float],
        rare_share: float,
        shuffles: int,
        block: int,
    ) -> NullModel:
        """The model of texts A and B given as :func:`.vectors.sentence_vectors` takes them
        (term IDs ``0 <= id < n_terms`` of the content words in text order, their sentences,
        the sentence counts): B's words shuffled ``shuffles`` times across its sentences,
        sentence pairs passing ``thresholds`` (cosine, Dice; and sharing a rare term
        unless ``rare_share`` is 1) counted; ``block``: tile size of :mod:`.pairs`."""
        rng = np.random.default_rng(_SHUFFLE_SEED)
        chance = np.zeros(n_sents[0], dtype=np.int64)
        shuffled = []
        for _ in range(shuffles):
            mixed = terms[1][rng.permutation(len(terms[1]))]
            va, vb = sentence_vectors((terms[0], mixed), sents, n_sents, n_terms)
            rare = rare_terms(va, vb, rare_share) if rare_share < 1 else None
            pairs = similar_pairs(va, vb, thresholds, thresholds, rare, None, block)
            chance += np.bincount(pairs.i, minlength=n_sents[0])
            shuffled.append(SentenceCosine.of(va, vb, block))
        return cls(chance, tuple(shuffled), n_sents[1])

    def count_p(self, k: int, a_range: tuple[int, int], b_range: tuple[int, int]) -> float:
        """The seed-count test's p-value of ``k`` seeds among A's sentences ``a_range``
        (first, last; inclusive) and B's ``b_range``."""
        c = int(self.chance[a_range[0] : a_range[1] + 1].sum())
        n_b = b_range[1] - b_range[0] + 1
        q = n_b / (n_b + len(self.shuffled) * self.n_b)
        return binomial_tail(k, k + c, q)

    def rank_p(self, cos: SentenceCosine, a_range: tuple[int, int], b_range) -> float:
        """The rank test's p-value: A's sentences ``a_range`` matched within B's ``b_range``
        (``cos``: the sentence cosine of A and B) against the shuffled B."""
        rows = np.arange(a_range[0], a_range[1] + 1)
        real, _ = cos.best_in_b(rows, *b_range)
        sham = np.stack([s.best_in_b(rows, *b_range)[0] for s in self.shuffled])
        tied = (sham == real).all(axis=0)  # e.g. no shared word with any: no information
        ranks = (sham < real).sum(axis=0)[~tied]  # ties count against the passage
        return rank_sum_tail(int(ranks.sum()), len(ranks), len(self.shuffled))

    def p_value(self, k: int, cos: SentenceCosine, a_range, b_range) -> float:
        """The smaller of the two tests' p-values (seed count, rank), doubled (Bonferroni;
        at most 1)."""
        if not self.shuffled:
            return 0.0
        p = self.count_p(k, a_range, b_range)
        if p > 0:
            p = min(p, self.rank_p(cos, a_range, b_range))
        return min(1.0, 2.0 * p)
