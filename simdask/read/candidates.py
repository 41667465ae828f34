"""Candidate partners ranked among a part of the index (a folder, a source collection).

The stored lists (:mod:`simdask.storage.candidate_store`) rank each document's partners among
every document of the index. A caller who checks documents against one collection only
(PAN's text alignment task: the suspicious documents against the *source* collection; a
teacher: the term's essays against a folder of published sources) wants them ranked among
that collection, not the stored top ``depth`` filtered after the fact (a document whose
stored list is full of its classmates then has few sources left). :func:`ranked_among`
scores the asked documents from the committed content n-gram segments with a partner
filter (the kernels of :mod:`simdask.kernels.candidate_ranges`), exactly as the candidate
stage scores them, weights and masses counting every document of the index. Read only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from simdask.errors import ConfigError
from simdask.kernels.candidate_ranges import (
    block_entries,
    block_top,
    mass_vector,
    range_mass,
)
from simdask.kernels.postings import ShardData, shard_ranges
from simdask.storage.candidate_store import (
    candidate_scores,
    candidate_store,
    stored_candidate_config,
    stored_segments,
)

__all__ = [
    "BLOCK_TARGETS",
    "CANDIDATE_FIELDS",
    "CandidateRow",
    "candidate_rows",
    "committed_segments",
    "ranked_among",
]

#: the columns of ``simdask candidates``
CANDIDATE_FIELDS = ("doc", "rank", "other", "score")

#: documents scored together (their partner entries are expanded at once)
BLOCK_TARGETS = 256


def committed_segments(index: Any, n_ranges: int, hash_bits: int) -> list[ShardData]:
    """The committed content n-gram segment of each of the ``n_ranges`` ranges of the
    ``hash_bits``-bit feature space of the open ``index`` (memory-mapped when raw; empty
    where the range has none)."""
    segments = stored_segments(index.catalog) or {}
    store = candidate_store(index.path)
    out = []
    for r, (lo, hi) in enumerate(shard_ranges(hash_bits, n_ranges)):
        gen = segments.get(r)
        if gen is None:
            out.append(ShardData.empty(lo, hi))
        else:
            out.append(store.map(gen, r) or store.read(gen, r))
    return out


def ranked_among(
    index: Any,
    doc_ids: Iterable[int],
    prefix: str,
    depth: int,
    normalise: bool | None = None,
) -> dict[int, list[tuple[int, int]]]:
    """Up to ``depth`` partners of each of ``doc_ids`` (doc IDs of the open ``index``, a
    :class:`~simdask.Index`) among the documents whose key starts with ``prefix`` (a
    folder such as ``"src/"``; ``""``: every document), best first, as ``(other, score)``;
    ``normalise`` (None: the index's setting) scores by the normalised score, else by the
    summed weights. Raises :class:`~simdask.errors.ConfigError` when the index keeps no
    candidates or ``depth`` is below 1."""
    config = stored_candidate_config(index.catalog)
    if config is None or stored_segments(index.catalog) is None:
        raise ConfigError(
            "expected an index with candidates (IndexConfig(candidates=True), after a run), "
            "found none stored"
        )
    if type(depth) is not int or depth < 1:
        raise ConfigError(f"expected depth a whole number >= 1, found {depth!r}")
    norm = config.normalise if normalise is None else bool(normalise)
    docs = list(index.catalog.documents())
    size = max([d.doc_id for d in docs], default=-1) + 1
    allowed = np.zeros(size, bool)
    allowed[[d.doc_id for d in docs if d.key.startswith(prefix)]] = True
    ranges = committed_segments(index, index.config.shards, config.hash_bits)
    mass = mass_vector([range_mass(r, config.max_df) for r in ranges], size) if norm else None
    targets = np.array(sorted({int(d) for d in doc_ids}), np.uint32)
    out: dict[int, list[tuple[int, int]]] = {int(d): [] for d in targets}
    for i in range(0, len(targets), BLOCK_TARGETS):
        blk = targets[i : i + BLOCK_TARGETS]
        parts = [block_entries(r, blk, config.max_df, allowed) for r in ranges]
        doc, other, score = block_top(parts, blk, depth, mass)
        for d, o, s in zip(doc.tolist(), other.tolist(), score.tolist(), strict=True):
            out[d].append((o, s))
    return out


@dataclass(frozen=True)
class CandidateRow:
    """One candidate of a document: ``doc`` and ``other`` (keys), ``rank`` (1: the best) and
    ``score``, the retrieval score (:mod:`simdask.kernels.candidate_scores`; normalised scores are
    in units of 10**-9, 10**9 for identical feature sets)."""

    doc: str
    rank: int
    other: str
    score: int

    def to_dict(self) -> dict[str, Any]:
        """The row as ``simdask candidates`` prints it (:data:`CANDIDATE_FIELDS`)."""
        return {"doc": self.doc, "rank": self.rank, "other": self.other, "score": self.score}


def candidate_rows(
    index: Any, keys: Iterable[str], among: str | None, top: int
) -> list[CandidateRow]:
    """The top ``top`` candidates of each document of ``keys`` (keys of the open ``index``),
    in the order asked, each best first: ranked among the documents whose key starts with
    ``among`` (:func:`ranked_among`, scored now), or (``among`` None) the stored lists of the
    index, which rank among every document (at most their stored depth). Raises
    :class:`~simdask.errors.ConfigError` when the index keeps no candidates or ``top`` is
    below 1, :class:`~simdask.errors.DocumentNotFoundError` for an unknown key."""
    if type(top) is not int or top < 1:
        raise ConfigError(f"expected top a whole number >= 1, found {top!r}")
    wanted = list(dict.fromkeys(index.resolve_key(k) for k in keys))
    ids = {d.key: d.doc_id for d in index.catalog.documents()}
    names = {v: k for k, v in ids.items()}
    asked = [ids[k] for k in wanted]
    if among is not None:
        got = ranked_among(index, asked, among, top)
    elif stored_candidate_config(index.catalog) is None:
        raise ConfigError(
            "expected an index with candidates (update --candidates --rebuild), found none stored"
        )
    else:
        got = candidate_scores(index.catalog, asked, top)
    return [
        CandidateRow(names[d], r, names[o], int(s))
        for d in asked
        for r, (o, s) in enumerate(got[d], 1)
    ]
