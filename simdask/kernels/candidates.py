"""Candidate partners: each document's best partners by shared informative content n-grams.

The score of a pair ``(d, e)`` is the sum, over the content n-grams
(:mod:`simdask.kernels.content_ngrams`) both hold, of an integer weight of the feature's
document frequency ``df``: ``round(1000 * ln((max_df + 1) / df))`` for ``2 <= df <=
max_df``, 0 above ``max_df`` (a phrase everybody uses says nothing about who copied whom).
The weight depends on ``df`` and the setting only, never on the number of documents, and
the sums are integers: a document's ranking changes only when a feature it holds changes
``df`` or holder, so an incremental run recomputes exactly the holders of the features of
the documents it changes (:func:`affected_documents`) and gets what a full build gets,
ties broken by the smaller doc ID.

:class:`FeaturePostings` is the inverted list of the feature over the documents;
:func:`top_candidates` scores a set of target documents against it by blocks and keeps
each one's ``depth`` best partners. Pure numpy, no I/O.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from simdask.errors import ConfigError, check_keys
from simdask.kernels.arrays import expand_ranges

__all__ = [
    "CandidateConfig",
    "FeaturePostings",
    "affected_documents",
    "build_postings",
    "top_candidates",
    "weight_table",
]

#: partner entries (feature holders) expanded per block of targets
BLOCK_ENTRIES = 1 << 23
#: the weight scale (weights are integers: sums do not depend on their order)
SCALE = 1000


@dataclass(frozen=True)
class CandidateConfig:
    """The candidate partners' settings: content ``ngram`` words a feature, features held by
    more than ``max_df`` documents weigh 0, ``depth`` partners stored per document,
    ``hash_bits`` of a feature ID, hash ``seed``."""

    ngram: int = 2
    max_df: int = 200
    depth: int = 50
    hash_bits: int = 32
    seed: int = 0

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

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CandidateConfig:
        """The settings of :meth:`to_dict`; unknown keys raise :class:`ConfigError`."""
        check_keys("CandidateConfig", data, [f.name for f in dataclasses.fields(cls)])
        return cls(**data)


def weight_table(max_df: int) -> np.ndarray:
    """The integer weight (int64) of a feature by its document frequency, indexes
    ``0..max_df + 1``: 0 for ``df < 2`` and at ``max_df + 1`` (read for every larger df)."""
    df = np.arange(max_df + 2, dtype=np.float64)
    w = np.zeros(max_df + 2, dtype=np.int64)
    inside = slice(2, max_df + 1)
    w[inside] = np.rint(SCALE * np.log((max_df + 1) / df[inside])).astype(np.int64)
    return w


@dataclass(frozen=True)
class FeaturePostings:
    """The holders of each feature: ``keys`` (sorted distinct feature IDs, uint64), list ``i``
    is ``docs[offsets[i]:offsets[i + 1]]`` (doc IDs, int64, ascending)."""

    keys: np.ndarray
    offsets: np.ndarray
    docs: np.ndarray

    def df(self, features: np.ndarray) -> np.ndarray:
        """The document frequency (int64) of each of ``features`` (0 if not held)."""
        pos, found = self.find(features)
        out = np.zeros(len(features), dtype=np.int64)
        out[found] = self.offsets[pos[found] + 1] - self.offsets[pos[found]]
        return out

    def find(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The list position of each of ``features`` and whether it is held at all."""
        f = np.asarray(features, dtype=np.uint64)
        pos = np.searchsorted(self.keys, f)
        pos = np.minimum(pos, max(len(self.keys) - 1, 0))
        found = (self.keys[pos] == f) if len(self.keys) else np.zeros(len(f), dtype=bool)
        return pos, found

    def holders(self, features: np.ndarray) -> np.ndarray:
        """The distinct documents (int64) holding any of ``features``."""
        pos, found = self.find(features)
        pos = pos[found]
        starts = self.offsets[pos]
        at = expand_ranges(starts, self.offsets[pos + 1] - starts)
        return np.unique(self.docs[at])


def build_postings(features: np.ndarray, docs: np.ndarray) -> FeaturePostings:
    """The postings of the pairs ``(features[i], docs[i])`` (duplicates counted once)."""
    f = np.asarray(features, dtype=np.uint64)
    d = np.asarray(docs, dtype=np.int64)
    if len(d) < 2 or bool(np.all(d[1:] >= d[:-1])):  # by document already (a run's sets)
        order = np.argsort(f, kind="stable")
    else:
        order = np.lexsort((d, f))
    f, d = f[order], d[order]
    keep = np.ones(len(f), dtype=bool)
    keep[1:] = (f[1:] != f[:-1]) | (d[1:] != d[:-1])
    f, d = f[keep], d[keep]
    new = np.ones(len(f), dtype=bool)
    new[1:] = f[1:] != f[:-1]
    starts = np.flatnonzero(new)
    offsets = np.append(starts, len(f)).astype(np.int64)
    return FeaturePostings(f[starts], offsets, d)


def top_candidates(
    postings: FeaturePostings,
    targets: np.ndarray,
    features: list[np.ndarray],
    max_df: int,
    depth: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``depth`` best partners of each of ``targets`` (doc IDs; ``features[i]``: the
    distinct feature IDs of ``targets[i]``) among the documents of ``postings``: rows
    ``(doc, other, score)`` (int64), by doc in the order of ``targets``, best first (ties:
    the smaller ``other``); only partners with a positive score."""
    weights = weight_table(max_df)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    block: list[int] = []
    entries = 0
    for i, f in enumerate(features):
        block.append(i)
        entries += int(np.minimum(postings.df(f), max_df).sum())
        if entries >= BLOCK_ENTRIES or i == len(features) - 1:
            parts.append(_score_block(postings, targets, features, block, weights, depth))
            block, entries = [], 0
    if not parts:
        return (np.zeros(0, np.int64),) * 3  # type: ignore[return-value]
    return tuple(np.concatenate(c) for c in zip(*parts, strict=True))  # type: ignore[return-value]


def _score_block(
    postings: FeaturePostings,
    targets: np.ndarray,
    features: list[np.ndarray],
    block: list[int],
    weights: np.ndarray,
    depth: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`top_candidates` of the targets at positions ``block``."""
    feats = [np.asarray(features[i], np.uint64) for i in block]
    f = np.concatenate(feats) if feats else np.zeros(0, np.uint64)
    who = np.repeat(np.asarray(block, np.int64), [len(x) for x in feats])
    pos, found = postings.find(f)
    df = np.zeros(len(f), dtype=np.int64)
    df[found] = postings.offsets[pos[found] + 1] - postings.offsets[pos[found]]
    w = weights[np.minimum(df, len(weights) - 1)]
    use = w > 0
    pos, who, w, df = pos[use], who[use], w[use], df[use]
    at = expand_ranges(postings.offsets[pos], df)
    other = postings.docs[at]
    who = np.repeat(who, df)
    w = np.repeat(w, df)
    doc = np.asarray(targets, np.int64)[who]
    mine = other != doc
    who, other, w = who[mine], other[mine], w[mine]
    if len(other) == 0:
        return (np.zeros(0, np.int64),) * 3  # type: ignore[return-value]
    span = int(other.max()) + 1
    key, inv = np.unique(who * span + other, return_inverse=True)
    score = np.bincount(inv.ravel(), weights=w).astype(np.int64)
    k_who, k_other = key // span, key % span
    order = np.lexsort((k_other, -score, k_who))
    k_who, k_other, score = k_who[order], k_other[order], score[order]
    first = np.ones(len(k_who), dtype=bool)
    first[1:] = k_who[1:] != k_who[:-1]
    starts = np.flatnonzero(first)
    rank = np.arange(len(k_who)) - np.repeat(starts, np.diff(np.append(starts, len(k_who))))
    keep = rank < depth
    return np.asarray(targets, np.int64)[k_who[keep]], k_other[keep], score[keep]


def affected_documents(
    postings: FeaturePostings,
    added: list[np.ndarray],
    removed: list[np.ndarray],
    max_df: int,
) -> np.ndarray:
    """The documents (int64, of ``postings``: the index after a run) whose candidate list a
    run may change: the holders of every feature that a run's documents gain (``added``:
    their new feature sets) or lose (``removed``: the old sets of the documents modified or
    deleted) whose document frequency before or after the run is at most ``max_df`` (a
    feature above it on both sides weighs 0 on both)."""
    gain = np.concatenate([np.zeros(0, np.uint64), *[np.asarray(a, np.uint64) for a in added]])
    lose = np.concatenate([np.zeros(0, np.uint64), *[np.asarray(r, np.uint64) for r in removed]])
    changed, inv = np.unique(np.concatenate([gain, lose]), return_inverse=True)
    delta = np.bincount(inv.ravel(), weights=np.r_[np.ones(len(gain)), -np.ones(len(lose))])
    after = postings.df(changed)
    before = after - delta.astype(np.int64)
    informative = np.minimum(before, after) <= max_df
    return postings.holders(changed[informative])
