"""A checked text's counts in both directions when the index keeps quotations out of the
checked document only (issue 31 item 4, docs/term.md "Quotations").

A query ``q`` is the checked document in its own direction: its quotations do not count as
its copied text, while an indexed document's quoted words still count as found in it. So
``q -> Y`` counts ``S + E(q, Y)`` of ``|U(q)|`` and ``Y -> q`` counts ``S + E(Y, q)`` of
``|U(Y)|``, with ``S = |U(q) ∩ U(Y)|`` (what a plain query counts), ``E(q, Y) = |U(q) ∩
Q(Y)|`` (the index's stored quoted chunks) and ``E(Y, q) = |U(Y) ∩ Q(q)|`` (``Q(q)`` looked
up in the postings); a chunk counts when held by at most ``max_df`` documents' U. Pure numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from simdask.kernels.postings import ShardData, shard_of
from simdask.kernels.quoted import directed_counts, posting_pairs, quote_map, split_quoted
from simdask.kernels.segment_merge import live_mask
from simdask.storage.quoted_chunks import read_quoted
from simdask.storage.segments import Manifest

__all__ = ["directed_query_counts", "live_pairs", "quoted_counts"]


def quoted_counts(
    index: Any, texts: Sequence[str], manifest: Manifest, tomb: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per text of a query of ``index`` (an :class:`~simdask.index.Index` keeping
    quotations out of the checked document only): ``(docs, shared text -> doc, shared doc
    -> text)`` (:func:`directed_query_counts`), from the postings of the committed
    ``manifest`` and tombstones ``tomb`` and the stored quoted chunks."""
    cfg = index.config
    sp = split_quoted(list(texts), cfg.k, cfg.hash_bits, cfg.seed, index.exclusions())
    ids = np.unique(np.concatenate([sp.u.chunk_ids, sp.q_ids]).astype(np.uint64))
    sid = shard_of(ids, cfg.shard_width)
    by_range = {s: ids[sid == s] for s in np.unique(sid).tolist()}
    shards = index.reads.query_shards(manifest, tomb, by_range, merge=False)
    hold = live_pairs([seg for parts in shards.values() for seg in parts], tomb)
    q_map = quote_map(*read_quoted(index.catalog, cfg.hash_bits))
    out = []
    for i in range(len(texts)):
        u_i = sp.u.chunk_ids[sp.u.doc == i]
        out.append(directed_query_counts(u_i, sp.q_of(i), hold, q_map, cfg.max_df))
    return out


def live_pairs(parts: list[ShardData], tomb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The live postings of segment parts as ``(chunk, doc)`` (uint64, int64) sorted by
    chunk then doc (a posting that ``tomb`` hides is left out)."""
    chunks, docs = [np.zeros(0, np.uint64)], [np.zeros(0, np.int64)]
    for seg in parts:
        c, d = posting_pairs(seg.chunk_keys, seg.offsets, seg.doc_ids)
        live = live_mask(d, seg.generation, tomb)
        chunks.append(c[live])
        docs.append(d[live])
    c, d = np.concatenate(chunks), np.concatenate(docs)
    order = np.lexsort((d, c))
    return c[order], d[order]


def directed_query_counts(
    u_ids: np.ndarray,
    q_ids: np.ndarray,
    hold: tuple[np.ndarray, np.ndarray],
    q_map: tuple[np.ndarray, np.ndarray],
    max_df: int | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(docs, shared q -> doc, shared doc -> q)`` (int64, sorted by doc) of every indexed
    document sharing a counted chunk either way with a query of chunk sets ``u_ids`` (its U)
    and ``q_ids`` (its Q). ``hold``: the live U postings ``(chunk, doc)`` sorted by chunk,
    of at least every chunk of both sets; ``q_map``: the indexed documents' Q map
    (:func:`~simdask.kernels.quoted.quote_map`)."""
    hc, hd = hold
    u_ids = np.unique(np.asarray(u_ids, np.uint64))
    q_ids = np.unique(np.asarray(q_ids, np.uint64))
    u_ok = _counted(u_ids, hc, max_df)
    q_ok = _counted(q_ids, hc, max_df)
    zero = np.zeros(len(u_ids), np.int64)
    _, s_doc, s = directed_counts(u_ids[u_ok], zero[u_ok], hc, hd.astype(np.int64) + 1)
    _, ef_doc, ef = directed_counts(u_ids[u_ok], zero[u_ok], q_map[0], q_map[1] + 1)
    zq = np.zeros(len(q_ids), np.int64)
    _, er_doc, er = directed_counts(q_ids[q_ok], zq[q_ok], hc, hd.astype(np.int64) + 1)
    docs = np.unique(np.concatenate([s_doc, ef_doc, er_doc]))
    out = []
    for d, v in ((s_doc, s), (ef_doc, ef), (er_doc, er)):
        full = np.zeros(len(docs), np.int64)
        full[np.searchsorted(docs, d)] = v
        out.append(full)
    return docs - 1, out[0] + out[1], out[0] + out[2]


def _counted(ids: np.ndarray, hold_chunks: np.ndarray, max_df: int | None) -> np.ndarray:
    """Which of ``ids`` a shared count counts: held by at most ``max_df`` documents."""
    if max_df is None:
        return np.ones(len(ids), bool)
    lo = np.searchsorted(hold_chunks, ids, "left")
    return np.searchsorted(hold_chunks, ids, "right") - lo <= max_df
