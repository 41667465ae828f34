"""A merged range's per-range passes in pieces of its lists (pure numpy; issue 13 items 2 and 5).

The similarity stage runs a few passes over every posting of a merged range: the df histogram
and the heavy postings (:mod:`simdask.kernels.heavy`), the per-document pair work
(:func:`~simdask.kernels.similarity.pair_work`) and the blocks' view
(:class:`~simdask.kernels.doc_postings.DocPostings`). Done over the whole range at once, their
int64 / float64 temporaries take 20 to 40 bytes a posting (3 GB at 75 M postings a range,
docs/scale.md, "Similarity-stage memory in pieces"). Each now walks the range in *pieces*:
contiguous chunk ranges ``[c0, c1)`` holding at most :data:`VIEW_PIECE_POSTINGS` postings
(:func:`chunk_pieces`; a single list longer than that is a piece of its own), so that the
temporaries follow the piece and only the compact results follow the range.
"""

from __future__ import annotations

import numpy as np

from simdask.kernels.merge_pieces import MERGE_PIECE_POSTINGS

__all__ = ["VIEW_PIECE_POSTINGS", "chunk_pieces", "piece_offsets"]

#: postings a piece of a per-range pass of the similarity stage holds (at most, but for a
#: single longer list): the merge's piece size, whose temporaries are of the same order
VIEW_PIECE_POSTINGS = MERGE_PIECE_POSTINGS


def chunk_pieces(offsets: np.ndarray, piece: int = VIEW_PIECE_POSTINGS) -> list[tuple[int, int]]:
    """Consecutive chunk ranges ``[c0, c1)`` covering ``0 .. len(offsets) - 1`` (the CSR
    ``offsets`` of a range, ascending; uint32 or uint64), each holding at most ``piece``
    postings (>= 1) or a single chunk. Empty: no chunk. Reads ``offsets`` by binary search
    only (a memory map stays unread)."""
    if piece < 1:
        raise ValueError(f"piece: expected at least 1 posting, found {piece}")
    n = len(offsets) - 1
    kind = offsets.dtype.type  # needles of the offsets' dtype: a search without a cast copy
    most = int(np.iinfo(offsets.dtype).max)
    out: list[tuple[int, int]] = []
    c0 = 0
    while c0 < n:
        top = kind(min(int(offsets[c0]) + piece, most))
        c1 = int(np.searchsorted(offsets, top, side="right")) - 1  # offsets[c1] <= top
        c1 = min(n, max(c1, c0 + 1))
        out.append((c0, c1))
        c0 = c1
    return out


def piece_offsets(offsets: np.ndarray, c0: int, c1: int) -> tuple[np.ndarray, np.ndarray]:
    """Chunks ``[c0, c1)``: their offsets (int64, ``c1 - c0 + 1``: postings
    ``off[0] .. off[-1]`` of the range) and their df (int64, ``c1 - c0``)."""
    off = np.asarray(offsets[c0 : c1 + 1], dtype=np.int64)
    return off, np.diff(off)
