"""A shard's pair-emitting postings grouped by document, so that a block of documents finds its
postings without scanning the whole shard (issue 13 item 5).

:func:`~simdask.kernels.similarity.block_pair_keys` selects a block's postings with a mask over
*every* posting of the shard (and builds an int64 list end per posting first), so each block
costs ``O(shard postings)`` however few pairs it emits; the number of blocks grows with the
corpus (their work budget and the uint32 key width both bound them), which makes the sum grow
with the square of the corpus: measured on generated prose, 17 ns per posting per block, i.e.
~37,000 CPU seconds at a million documents (docs/scale.md). :class:`DocPostings` is built
once per shard and run: the positions of the postings that emit at least one pair (counted,
not last in their list; in prose most chunks are held by one document and emit none),
grouped by document, with the number of later postings of each; a block then reads its
slice, ``O(its postings)``. :func:`block_keys` emits the same keys (as a multiset) as
``block_pair_keys``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simdask.kernels.arrays import expand_ranges
from simdask.kernels.postings import ShardData

__all__ = ["DocPostings", "block_keys"]


@dataclass(frozen=True)
class DocPostings:
    """The emitting postings of ``shard`` by document: for doc ``d``, positions
    ``pos[starts[d]:starts[d+1]]`` (ascending; uint32, int64 for a shard of 2**32 postings or
    more) into ``shard.doc_ids``, each followed by ``later[i]`` (uint32) postings of the same
    list (holding documents ``> d``). Chunks with ``df > max_df`` are left out (None: none)."""

    shard: ShardData
    starts: np.ndarray
    pos: np.ndarray
    later: np.ndarray

    @classmethod
    def build(cls, shard: ShardData, n_docs: int, max_df: int | None = None) -> DocPostings:
        """Group the shard's emitting postings by document ``0 .. n_docs - 1``."""
        df = np.diff(shard.offsets).astype(np.int64)
        keep = df > 1 if max_df is None else (df > 1) & (df <= max_df)
        chunks = np.flatnonzero(keep)
        first = shard.offsets[chunks].astype(np.int64)
        pos = expand_ranges(first, df[chunks] - 1)  # every posting but the last of its list
        later = np.repeat(first + df[chunks], df[chunks] - 1) - pos - 1
        docs = shard.doc_ids[pos]
        order = np.argsort(docs, kind="stable")
        counts = np.bincount(docs, minlength=n_docs)[:n_docs]
        starts = np.zeros(n_docs + 1, np.int64)
        np.cumsum(counts, out=starts[1:])
        width = np.uint32 if shard.n_postings < 2**32 else np.int64  # 8 bytes a posting, not 12
        return cls(shard, starts, pos[order].astype(width), later[order].astype(np.uint32))

    @property
    def nbytes(self) -> int:
        """Bytes of the shard's arrays and of this grouping."""
        return self.shard.nbytes + self.starts.nbytes + self.pos.nbytes + self.later.nbytes


def block_keys(dp: DocPostings, doc_lo: int, doc_hi: int, n_docs: int) -> np.ndarray:
    """Pairs ``(d, o)``, ``doc_lo <= d < doc_hi``, ``o > d``, one per chunk they share in the
    shard: unsorted uint32 keys ``(d - doc_lo) * n_docs + o``, the same multiset as
    :func:`~simdask.kernels.similarity.block_pair_keys` gives with the ``max_df`` ``dp`` was
    built with."""
    a, b = int(dp.starts[doc_lo]), int(dp.starts[min(doc_hi, len(dp.starts) - 1)])
    p, cnt = dp.pos[a:b].astype(np.int64), dp.later[a:b].astype(np.int64)
    if len(p) == 0:
        return np.zeros(0, np.uint32)
    doc_ids = dp.shard.doc_ids
    q = expand_ranges(p + 1, cnt)
    base = (doc_ids[p].astype(np.int64) - doc_lo) * n_docs
    return (np.repeat(base, cnt) + doc_ids[q]).astype(np.uint32)
