"""The matches of one query text (:meth:`simdask.index.Index.query_top`): from the shared
chunk counts per indexed document to :class:`~simdask.summary.QueryMatch` objects, checked
against the catalog, filtered by the least similarity and cut to the ``top`` documents."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from simdask.errors import damaged
from simdask.kernels.measures import containment
from simdask.kernels.similarity import top_either_way
from simdask.summary import QueryMatch

__all__ = ["query_matches"]


def query_matches(
    docs: np.ndarray,
    shared: np.ndarray,
    n_q: int,
    n_chunks: np.ndarray,
    min_sim: float,
    top: int | None,
    keys_of: Callable[[list[int]], dict[int, str]],
    reverse_shared: np.ndarray | None = None,
) -> tuple[list[QueryMatch], int]:
    """The matches of a query of ``n_q`` chunks sharing ``shared[i]`` chunks with the document
    ``docs[i]`` (``n_chunks``: chunks of every document by doc ID), and how many documents
    passed ``min_sim`` percent either way. With ``top``, the ``top`` documents of the largest
    similarity either way (ties: query -> document, reverse, key); keys are read with
    ``keys_of`` for the kept documents only. Best query -> document similarity first.
    ``reverse_shared``: the document -> query count when it differs from ``shared`` (an
    index keeping quotations out of the checked document only, :mod:`.quoted_query`)."""
    docs = docs.astype(np.int64)
    shared = shared.astype(np.int64)
    rshared = shared if reverse_shared is None else np.asarray(reverse_shared, np.int64)
    _check_domain(docs, shared, n_q, n_chunks, rshared)
    nd = n_chunks[docs]
    fwd = containment(shared, n_q)
    rev = containment(rshared, nd)
    keep = np.maximum(fwd, rev) >= min_sim
    passed = int(keep.sum())
    if top is not None and passed > top:
        keep = np.flatnonzero(keep)
        keep = keep[top_either_way(fwd[keep], rev[keep], top)]
    docs, shared, nd, fwd, rev = docs[keep], shared[keep], nd[keep], fwd[keep], rev[keep]
    rshared = rshared[keep]
    keys = keys_of(docs.tolist())
    cols = (docs, fwd, rev, shared, nd, rshared)
    matches = [
        QueryMatch(keys[d], f, r, s, n_q, n, rs)
        for d, f, r, s, n, rs in zip(*(c.tolist() for c in cols), strict=True)
    ]
    if top is not None and len(matches) > top:  # ties at the cut: the key decides
        matches.sort(key=_cut_order)
        matches = matches[:top]
    matches.sort(key=lambda m: (-m.similarity, -m.reverse_similarity, m.key))
    return matches, passed


def _check_domain(
    docs: np.ndarray, shared: np.ndarray, n_q: int, n_chunks: np.ndarray, rshared: np.ndarray
) -> None:
    """Raise :class:`~simdask.errors.IndexDamagedError` when shard postings name doc IDs the
    catalog does not hold, or count more shared chunks than the query or the document has
    (both mean damaged shards; the similarity would be impossible, e.g. above 100 %)."""
    if not len(docs):
        return
    beyond = (docs < 0) | (docs >= len(n_chunks))
    if beyond.any():
        raise damaged(
            f"shard postings name doc IDs the catalog does not hold, e.g. {int(docs[beyond][0])}"
        )
    nd = n_chunks[docs]
    bad = (nd <= 0) | (rshared > nd) | (shared > n_q)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise damaged(
            f"shard postings give doc ID {int(docs[i])} {int(shared[i])} shared chunks; it "
            f"has {int(nd[i])} and the query {n_q} (a similarity outside 0..100 %)"
        )


def _cut_order(m: QueryMatch) -> tuple:
    """The order of :meth:`Index.query_top`'s cut: larger similarity either way first."""
    return (-max(m.similarity, m.reverse_similarity), -m.similarity, -m.reverse_similarity, m.key)
