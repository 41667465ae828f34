"""Chunks held by more than ``max_df`` documents of an index, for the exact views.

The stored similarities leave out the chunks held by more than ``max_df`` documents
(:class:`~simdask.config.IndexConfig`); ``report``, the site's passages and the query pages
must leave out the same ones, or a report of two template essays highlights the template the
list no longer counts. The exact views work on true chunks (word tuples); each shared chunk is
mapped to its chunk ID (:func:`~simdask.kernels.hashing.chunk_id`) and looked up in the index's
live postings (tombstones applied). Reading only; no dask.

This is where exclusions of the other kinds (templates, quotations, bibliographies) can join:
:func:`common_filter` returns the one function the exact comparison calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from simdask.kernels.features import SORTED_CHUNK
from simdask.kernels.postings import shard_of

if TYPE_CHECKING:
    from simdask.index import Index

__all__ = ["CommonChunks", "common_chunk_ids", "common_filter"]

Chunk = tuple[str, ...]


def common_chunk_ids(index: Index, ids: np.ndarray) -> np.ndarray:
    """The chunk IDs of ``ids`` held by more than ``max_df`` documents of ``index`` (sorted,
    distinct; empty when the index has no ``max_df``)."""
    cfg = index.config
    dtype = cfg.chunk_dtype
    ids = np.unique(np.asarray(ids, dtype=dtype))
    if cfg.max_df is None or not len(ids):
        return np.zeros(0, dtype)
    with index.catalog.read_snapshot():
        manifest = index.catalog.segments()
        tomb = index.reads.tombstones()
    if not manifest:
        return np.zeros(0, dtype)
    shard = shard_of(ids, cfg.shard_width)
    by = {s: ids[shard == s] for s in np.unique(shard).tolist()}
    shards = index.reads.query_shards(manifest, tomb, by, merge=True)
    out = [np.zeros(0, dtype)]
    for parts in shards.values():
        for seg in parts:
            df = np.diff(seg.offsets.astype(np.int64))
            out.append(np.asarray(seg.chunk_keys)[df > cfg.max_df].astype(dtype))
    return np.intersect1d(np.concatenate(out), ids)


class CommonChunks:
    """The chunks an index's ``max_df`` leaves out, as the exact views need them.

    Called with the true chunks (word tuples) two texts share, it returns those to leave out
    (:func:`~simdask.evidence.passages.compare_texts`' ``drop_shared``); :meth:`common_ids`
    does the same on chunk IDs (``hash_bits`` bits, ``seed``) for the numpy path of large
    texts, which has no word tuples.
    """

    def __init__(self, index: Index):
        self._index = index
        self.hash_bits = index.config.hash_bits
        self.seed = index.config.seed

    def common_ids(self, ids: np.ndarray) -> np.ndarray:
        """The chunk IDs of ``ids`` held by more than ``max_df`` documents (sorted)."""
        return common_chunk_ids(self._index, ids)

    def __call__(self, shared: set[Chunk]) -> set[Chunk]:
        chunks = list(shared)
        dtype = self._index.config.chunk_dtype
        feature = SORTED_CHUNK
        ids = np.array([feature.feature_id(c, self.hash_bits, self.seed) for c in chunks], dtype)
        common = set(self.common_ids(ids).tolist())
        return {c for c, i in zip(chunks, ids.tolist(), strict=True) if i in common}


def common_filter(index: Index) -> CommonChunks | None:
    """For :func:`~simdask.evidence.passages.compare_texts`: given the true chunks two texts
    share, those to leave out as the stored similarities do; None when nothing is left out."""
    if index.config.max_df is None:
        return None
    return CommonChunks(index)
