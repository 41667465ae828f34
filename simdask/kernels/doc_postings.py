"""A compact per-shard view for the all-pairs blocks: the postings of the lists that emit
pairs, with those that emit grouped by document (issue 13 items 2 and 5).

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

The view does not keep the shard: the blocks need neither the chunk keys nor the offsets,
nor the postings of lists held by one document (most of them in prose) or counted apart
(``df > max_df``: heavy or skipped). It copies the document IDs of the lists with
``2 <= df <= max_df`` only, so that a worker can drop its shards before the blocks run
(docs/scale.md, "Worker memory in the similarity stage"): 4 bytes per posting of those lists
plus 4 + 1 to 4 bytes per emitting posting, instead of the shard's 4 bytes per posting and
12 to 16 per distinct chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simdask.kernels.arrays import add_grown, expand_ranges, run_starts
from simdask.kernels.postings import ShardData
from simdask.kernels.range_pieces import VIEW_PIECE_POSTINGS, chunk_pieces, piece_offsets

__all__ = ["DocPostings", "block_keys"]


def _narrow_dtype(top: int) -> type:
    """The narrowest of uint8, uint16, uint32 that holds ``top`` (>= 0); int64 beyond."""
    for t in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(t).max:
            return t
    return np.int64


def _kept(
    shard: ShardData, c0: int, c1: int, max_df: int | None, window: tuple[int, int | None]
) -> tuple[np.ndarray, np.ndarray]:
    """Chunks ``[c0, c1)`` of the shard with ``2 <= df <= max_df``: their lists' starts in
    the shard and their lengths (int64); with a document ``window`` ``[lo, hi)`` other than
    ``(0, None)``, each list's tail from its first document ``>= lo``, kept when it has two
    postings or more and starts below ``hi`` (the postings a document of the window emits
    pairs through: its own and the later ones)."""
    off, df = piece_offsets(shard.offsets, c0, c1)
    keep = df > 1 if max_df is None else (df > 1) & (df <= max_df)
    chunks = np.flatnonzero(keep)
    first, lens = off[chunks], df[chunks]
    lo, hi = window
    if (lo == 0 and hi is None) or len(lens) == 0:
        return first, lens
    ends = np.cumsum(lens)
    inside = (shard.doc_ids[expand_ranges(first, lens)] >= lo).astype(np.int64)
    tail = np.add.reduceat(inside, ends - lens)  # lists ascend: the inside ones end a list
    first = first + lens - tail
    keep = tail > 1
    if hi is not None:
        keep &= shard.doc_ids[np.minimum(first, len(shard.doc_ids) - 1)] < hi
    return first[keep], tail[keep]


@dataclass(frozen=True)
class DocPostings:
    """The emitting postings of one shard by document, and the lists they emit into.

    ``doc_ids`` (uint32): the documents of every list of the shard with ``2 <= df <=
    max_df``, list after list (ascending within a list), a copy: the view keeps no reference
    to the shard. For doc ``d``, positions ``pos[starts[d]:starts[d+1]]`` (ascending; uint32,
    int64 for 2**32 postings or more) into ``doc_ids``, each followed by ``later[i]`` (uint8,
    uint16 or uint32: the narrowest that holds the largest) postings of the same list (holding
    documents ``> d``)."""

    doc_ids: np.ndarray
    starts: np.ndarray
    pos: np.ndarray
    later: np.ndarray

    @classmethod
    def build(
        cls,
        shard: ShardData,
        n_docs: int,
        max_df: int | None = None,
        piece: int = VIEW_PIECE_POSTINGS,
        window: tuple[int, int | None] = (0, None),
    ) -> DocPostings:
        """The view of ``shard`` for documents ``0 .. n_docs - 1`` (the emitting postings of
        any higher doc ID come after ``starts[n_docs]``); chunks with ``df > max_df`` are left
        out (None: none). With a document ``window`` ``(lo, hi)`` (``hi`` None: no end), the
        view of the documents ``lo <= d < hi`` only: their emitting postings, and of each
        list only the tail they emit into (:func:`block_keys` gives the same keys for blocks
        inside the window), so that views built one window at a time hold a part of the
        positions and of the lists (docs/scale.md, "Views in document windows").

        A counting sort over pieces of at most ``piece`` postings
        (:func:`~simdask.kernels.range_pieces.chunk_pieces`): a first pass counts the emitting
        postings of each document (``starts``), a second copies each piece's kept postings and
        puts its emitting ones, sorted by document within the piece, at per-document cursors;
        pieces come in posting order, so each document's positions ascend. Temporaries follow
        the piece (int64, ~40 bytes a posting of it) and ``n_docs`` (16 bytes a document);
        only the view follows the shard."""
        pieces = chunk_pieces(shard.offsets, piece)
        counts = np.zeros(n_docs, np.int64)  # emitting postings per document
        n_kept = top = 0
        hi = window[1]
        for c0, c1 in pieces:
            first, lens = _kept(shard, c0, c1, max_df, window)
            if len(lens) == 0:
                continue
            n_kept += int(lens.sum())
            top = max(top, int(lens.max()) - 1)  # the largest number of later postings
            emit = shard.doc_ids[expand_ranges(first, lens - 1)]
            if hi is not None:
                emit = emit[emit < hi]
            counts = add_grown(counts, np.bincount(emit, minlength=n_docs))
        width = np.uint32 if n_kept < 2**32 else np.int64  # 4 bytes a posting, not 8
        ends = np.cumsum(counts)  # documents >= n_docs (if any) go last, as a sort puts them
        starts = np.zeros(n_docs + 1, width)
        starts[1:] = ends[:n_docs]
        cursor = ends - counts  # where each document's next posting goes
        del counts
        doc_ids = np.empty(n_kept, np.uint32)
        pos = np.empty(int(ends[-1]) if len(ends) else 0, width)
        later: np.ndarray = np.empty(len(pos), _narrow_dtype(top))
        del ends
        k = 0  # kept postings copied so far
        for c0, c1 in pieces:
            src, lens = _kept(shard, c0, c1, max_df, window)
            if len(lens) == 0:
                continue
            m = int(lens.sum())
            doc_ids[k : k + m] = shard.doc_ids[expand_ranges(src, lens)]
            first = np.full(len(lens), k, np.int64)  # each kept list's start in doc_ids
            np.cumsum(lens[:-1], out=first[1:])
            first[1:] += k
            k += m
            p = expand_ranges(first, lens - 1)  # every posting but the last of its list
            lat = np.repeat(first + lens, lens - 1) - p - 1
            del first, lens
            docs = doc_ids[p]
            if hi is not None:  # the window's documents emit; later ones are partners only
                below = docs < hi
                p, lat, docs = p[below], lat[below], docs[below]
            order = np.argsort(docs, kind="stable")
            docs = docs[order]
            runs = np.flatnonzero(run_starts(docs))  # each document's first in the piece
            rank = np.arange(len(docs), dtype=np.int64)
            rank -= np.repeat(runs, np.diff(np.append(runs, len(docs))))
            dest = cursor[docs] + rank
            pos[dest] = p[order]
            later[dest] = lat[order]
            cursor[docs[runs]] += np.diff(np.append(runs, len(docs)))
        return cls(doc_ids, starts, pos, later)

    @property
    def nbytes(self) -> int:
        """Bytes of the view's arrays (it holds nothing of the shard)."""
        return self.doc_ids.nbytes + self.starts.nbytes + self.pos.nbytes + self.later.nbytes

    def __sizeof__(self) -> int:
        """Bytes of the view (its arrays and the object): what ``sys.getsizeof``, and so
        Dask's ``sizeof`` on a worker that registered nothing for this class, reports. Without
        it a worker sized a view at ~50 bytes, so the scheduler moved its pair emission to
        the other worker at no cost and each view was copied to both workers (issue 33:
        worker memory at 1M)."""
        return self.nbytes + 200


def block_keys(dp: DocPostings, doc_lo: int, doc_hi: int, n_docs: int) -> np.ndarray:
    """Pairs ``(d, o)``, ``doc_lo <= d < doc_hi``, ``o > d``, one per chunk they share in the
    shard: unsorted uint32 keys ``(d - doc_lo) * n_docs + o``, the same multiset as
    :func:`~simdask.kernels.similarity.block_pair_keys` gives with the ``max_df`` ``dp`` was
    built with."""
    a, b = int(dp.starts[doc_lo]), int(dp.starts[min(doc_hi, len(dp.starts) - 1)])
    p, cnt = dp.pos[a:b].astype(np.int64), dp.later[a:b].astype(np.int64)
    if len(p) == 0:
        return np.zeros(0, np.uint32)
    doc_ids = dp.doc_ids
    q = expand_ranges(p + 1, cnt)
    base = (doc_ids[p].astype(np.int64) - doc_lo) * n_docs
    return (np.repeat(base, cnt) + doc_ids[q]).astype(np.uint32)
