"""Candidate partners: each document's best partners by shared informative content n-grams.

The score of a pair ``(d, e)`` is the sum, over the content n-grams
(:mod:`simdask.kernels.content_ngrams`) both hold, of an integer weight of the feature's
document frequency ``df``: ``round(1000 * ln((max_df + 1) / df))`` for ``2 <= df <=
max_df``, 0 above ``max_df`` (a phrase everybody uses says nothing about who copied whom).
The weight depends on ``df`` and the setting only, never on the number of documents, and
the sums are integers: a document's ranking changes only when a feature it holds changes
``df`` or holder, so an incremental run recomputes exactly the holders of the features of
the documents it changes (normalised: and every document sharing a weighted feature with
those, whose partners' masses changed) and gets what a full build gets, ties broken by the
smaller doc ID.
The scoring, per range of the feature-ID space and per block of documents, is
:mod:`simdask.kernels.candidate_ranges`. With ``normalise`` (the default since issue 29's
summary measurements) the stored score is that sum divided by the square roots of both
documents' weight masses (:func:`~simdask.kernels.candidate_ranges.normalised_scores`). Pure
numpy, no I/O.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from simdask.errors import ConfigError, check_keys

__all__ = ["CandidateConfig", "weight_table"]

#: the weight scale (weights are integers: sums do not depend on their order)
SCALE = 1000


@dataclass(frozen=True)
class CandidateConfig:
    """The candidate partners' settings: content ``ngram`` words a feature, features held by
    more than ``max_df`` documents weigh 0, ``depth`` partners stored per document,
    ``hash_bits`` of a feature ID, hash ``seed``; ``normalise``: the stored score is the
    cosine-like normalised one (:mod:`simdask.kernels.candidate_ranges`), else the summed
    weights. Settings stored before ``normalise`` existed read as False (what they were)."""

    ngram: int = 2
    max_df: int = 50
    depth: int = 50
    hash_bits: int = 32
    seed: int = 0
    normalise: bool = True

    def __post_init__(self) -> None:
        for name, lo, hi in (
            ("ngram", 1, 8),
            ("max_df", 2, 1 << 30),
            ("depth", 1, 10_000),
            ("hash_bits", 16, 64),
            ("seed", 0, (1 << 64) - 1),
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
                raise ConfigError(f"expected {name} an integer in {lo}..{hi}, found {value!r}")
        if not isinstance(self.normalise, bool):
            raise ConfigError(f"expected normalise True or False, found {self.normalise!r}")

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CandidateConfig:
        """The settings of :meth:`to_dict`; unknown keys raise :class:`ConfigError`."""
        check_keys("CandidateConfig", data, [f.name for f in dataclasses.fields(cls)])
        return cls(**{"normalise": False, **data})


def weight_table(max_df: int) -> np.ndarray:
    """The integer weight (int64) of a feature by its document frequency, indexes
    ``0..max_df + 1``: 0 for ``df < 2`` and at ``max_df + 1`` (read for every larger df)."""
    df = np.arange(max_df + 2, dtype=np.float64)
    w = np.zeros(max_df + 2, dtype=np.int64)
    inside = slice(2, max_df + 1)
    w[inside] = np.rint(SCALE * np.log((max_df + 1) / df[inside])).astype(np.int64)
    return w
