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
#: cells of a block's dense score table (float64: 256 MiB)
DENSE_CELLS = 1 << 25
#: the weight scale (weights are integers: sums do not depend on their order)
SCALE = 1000


@dataclass(frozen=True)
class CandidateConfig:
    """The candidate partners' settings: content ``ngram`` words a feature, features held by
    more than ``max_df`` documents weigh 0, ``depth`` partners stored per document,
    ``hash_bits`` of a feature ID, hash ``seed``."""

    ngram: int = 2
    max_df: int = 50
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
    the smaller ``other``); only partners with a positive score. Targets are scored by
    blocks of about :data:`BLOCK_ENTRIES` partner entries; a block's sums are a dense
    ``rows x documents`` table when that has at most :data:`DENSE_CELLS` cells, else sorted
    pair keys."""
    targets = np.asarray(targets, np.int64)
    sizes = np.array([len(f) for f in features], dtype=np.int64)
    f = np.concatenate([np.zeros(0, np.uint64), *[np.asarray(x, np.uint64) for x in features]])
    pos, found = postings.find(f)
    df = np.zeros(len(f), dtype=np.int64)
    df[found] = postings.offsets[pos[found] + 1] - postings.offsets[pos[found]]
    weights = weight_table(max_df)
    w = weights[np.minimum(df, len(weights) - 1)]
    per_target = np.bincount(
        np.repeat(np.arange(len(targets)), sizes),
        weights=np.where(w > 0, df, 0),
        minlength=len(targets),
    )
    first = np.zeros(len(targets) + 1, dtype=np.int64)
    np.cumsum(sizes, out=first[1:])
    span = int(postings.docs.max()) + 1 if len(postings.docs) else 1
    rows_cap = max(1, DENSE_CELLS // span) if span <= DENSE_CELLS // 64 else len(targets) + 1
    parts = []
    i = 0
    while i < len(targets):
        j, entries = i, 0.0
        while j < len(targets) and (
            j == i or (entries + per_target[j] <= BLOCK_ENTRIES and j - i < rows_cap)
        ):
            entries += per_target[j]
            j += 1
        lo, hi = first[i], first[j]
        who = np.repeat(np.arange(j - i), sizes[i:j])
        use = w[lo:hi] > 0
        dense = span <= DENSE_CELLS // 64
        parts.append(
            _score_block(
                postings,
                targets[i:j],
                who[use],
                pos[lo:hi][use],
                w[lo:hi][use],
                df[lo:hi][use],
                depth,
                span if dense else 0,
            )
        )
        i = j
    if not parts:
        return (np.zeros(0, np.int64),) * 3
    doc, other, score = (np.concatenate(c) for c in zip(*parts, strict=True))
    return doc, other, score


def _score_block(
    postings: FeaturePostings,
    targets: np.ndarray,
    who: np.ndarray,
    pos: np.ndarray,
    w: np.ndarray,
    df: np.ndarray,
    depth: int,
    span: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`top_candidates` of a block: ``who`` (row in ``targets``), ``pos`` (list),
    ``w`` and ``df`` of each weighing feature held; ``span`` > 0: sum densely over doc IDs
    below it."""
    at = expand_ranges(postings.offsets[pos], df)
    other = postings.docs[at]
    who = np.repeat(who, df)
    w = np.repeat(w, df)
    mine = other != targets[who]
    who, other, w = who[mine], other[mine], w[mine]
    if len(other) == 0:
        return (np.zeros(0, np.int64),) * 3
    if span:
        acc = np.bincount(who * span + other, weights=w, minlength=len(targets) * span)
        cells = np.flatnonzero(acc > 0)
        k_who, k_other = cells // span, cells % span
        score = acc[cells].astype(np.int64)
    else:
        span = int(other.max()) + 1
        key, inv = np.unique(who * span + other, return_inverse=True)
        score = np.bincount(inv.ravel(), weights=w).astype(np.int64)
        k_who, k_other = key // span, key % span
    order = np.lexsort((k_other, -score, k_who))
    k_who, k_other, score = k_who[order], k_other[order], score[order]
    new = np.ones(len(k_who), dtype=bool)
    new[1:] = k_who[1:] != k_who[:-1]
    starts = np.flatnonzero(new)
    rank = np.arange(len(k_who)) - np.repeat(starts, np.diff(np.append(starts, len(k_who))))
    keep = rank < depth
    return targets[k_who[keep]], k_other[keep].astype(np.int64), score[keep]


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
