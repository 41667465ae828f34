"""Texts that are not in the index checked against it: the read path of a query.

A text becomes chunk IDs as the index makes them (:data:`~simdask.kernels.features.SORTED_CHUNK`
with the index's exclusions); the posting lists of those IDs are read per range from the
committed segments (:class:`~simdask.read.segment_reads.SegmentReads`: a query's ranges,
their files verified, tombstones applied); the shared-chunk counts per document become
:class:`~simdask.summary.QueryMatch`\\ es (:func:`~simdask.read.query_matches.query_matches`;
with ``exclude_quotes``, each direction counted on its own,
:mod:`simdask.read.quoted_query`). :meth:`simdask.index.Index.query_top`,
:meth:`~simdask.index.Index.holders` and the hashed similarity of
:meth:`~simdask.index.Index.report_text` are thin over it. ``index``: an open
:class:`~simdask.index.Index` (its public parts: ``config``, ``catalog``, ``reads``,
``exclusions()``, ``doc_chunks()``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from simdask import failpoints
from simdask.kernels.features import SORTED_CHUNK
from simdask.kernels.measures import containment
from simdask.kernels.postings import shard_of
from simdask.read.doc_freq import common_chunk_ids
from simdask.read.query_matches import query_matches
from simdask.read.quoted_query import quoted_counts
from simdask.summary import QueryMatch

if TYPE_CHECKING:
    from simdask.index import Index

__all__ = ["hashed_similarity", "live_holders", "query_texts"]


def query_texts(
    index: Index, texts: Sequence[str], min_similarity: float, top: int | None
) -> list[tuple[list[QueryMatch], int]]:
    """Per text: its matches (similarity either way at least ``min_similarity`` percent;
    with ``top``, the ``top`` documents of the largest similarity either way) and how many
    documents passed ``min_similarity``. Call inside one committed snapshot
    (:meth:`~simdask.index.Index.snapshot`)."""
    cfg, reads = index.config, index.reads
    cb = SORTED_CHUNK.chunk(list(texts), cfg.k, cfg.hash_bits, cfg.seed, index.exclusions())
    manifest, tomb, n_chunks = reads.manifest(), reads.tombstones(), index.doc_chunks()
    if not manifest:
        return [([], 0) for _ in texts]
    sid = shard_of(cb.chunk_ids, cfg.shard_width)
    ids = {s: np.unique(cb.chunk_ids[sid == s]) for s in np.unique(sid).tolist()}
    shards = reads.query_shards(manifest, tomb, ids, merge=cfg.max_df is not None)
    out = []
    quoted = quoted_counts(index, texts, manifest, tomb) if cfg.exclude_quotes else None
    for qi in range(len(texts)):
        mine = cb.doc == qi
        look = (shards, cb.chunk_ids[mine], sid[mine], tomb, cfg.max_df, len(n_chunks))
        counts = reads.query_counts(*look) if quoted is None else quoted[qi]  # quoted: both ways
        failpoints.hit("query.keys")
        args = (int(cb.n_chunks[qi]), n_chunks, min_similarity, top, index.catalog.keys_of)
        out.append(query_matches(counts[0], counts[1], *args, *counts[2:]))
    return out


def live_holders(index: Index, chunk_ids: np.ndarray) -> np.ndarray:
    """Sorted doc IDs of the live documents holding any of ``chunk_ids`` (every posting,
    ``max_df`` not applied), as uint64."""
    reads = index.reads
    with index.catalog.read_snapshot():
        manifest, tomb = reads.manifest(), reads.tombstones()
    ids = np.unique(np.asarray(chunk_ids))
    if not manifest or not len(ids):
        return np.zeros(0, np.uint64)
    sid = shard_of(ids, index.config.shard_width)
    by_range = {s: ids[sid == s] for s in np.unique(sid).tolist()}
    shards = reads.query_shards(manifest, tomb, by_range, merge=False)
    parts = reads.query_live_postings(shards, ids, sid, tomb, None)
    return np.unique(np.concatenate([np.zeros(0, np.uint32), *parts])).astype(np.uint64)


def hashed_similarity(index: Index, text: str, other: str) -> float:
    """The similarity (percent) of ``text`` to ``other`` the index would compute: their
    hashed chunk IDs under the index's exclusions, the chunks over ``max_df`` left out of
    the shared ones (:func:`~simdask.read.doc_freq.common_chunk_ids`)."""
    cfg = index.config
    ids = SORTED_CHUNK.chunk([text, other], cfg.k, cfg.hash_bits, cfg.seed, index.exclusions())
    ia = ids.chunk_ids[ids.doc == 0]  # distinct per document already: numpy, bounded
    ib = ids.chunk_ids[ids.doc == 1]
    both = np.intersect1d(ia, ib, assume_unique=True)
    shared = len(both) - len(common_chunk_ids(index, both))
    return containment(shared, len(ia))
