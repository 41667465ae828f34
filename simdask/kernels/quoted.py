"""Quotations excluded in the checked document only (issue 31 item 4, docs/term.md).

With ``U(X)`` the chunks of ``X`` outside its quotations (what an index with
``exclude_quotes`` holds) and ``Q(X) = C(X) \\ U(X)`` the chunks only inside them (``C``: the
chunks with the quotations read as the document's own text, the other exclusions applied),
the directed count of ``X`` in ``Y`` is ``S + E(X, Y)`` with ``S = |U(X) ∩ U(Y)|`` and
``E(X, Y) = |U(X) ∩ Q(Y)|``, both over the chunks held by at most ``max_df`` documents' U
(the chunks ``S`` counts); the similarity of ``X`` in ``Y`` is ``100 (S + E) / |U(X)|``.

Pure numpy, no I/O:

* :func:`split_quoted`: a batch of texts' U (a :class:`~.hashing.ChunkedBatch`) and Q sets;
* :func:`encode_ids` / :func:`decode_ids`: one document's Q set as a blob and back;
* :func:`quote_map`: the inverted map of every quoting document's Q, ``(chunk, doc)`` sorted;
* :func:`directed_counts`: per ``(source doc, holder)`` the number of a source's chunks a map
  holds — ``E`` against the Q map, ``S`` against U postings;
* :func:`counted_ids`: the chunks of a set ``S`` counts (document frequency within ``max_df``);
* :func:`add_quoted`: the engine's lists by ``S`` corrected to ``S + E`` and cut again (exact:
  a pair with ``E = 0`` ranking in the new list also ranks in the engine's, docs/term.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simdask.kernels.arrays import run_starts
from simdask.kernels.exclusions import Exclusions, chunk_excluding
from simdask.kernels.hashing import ChunkedBatch
from simdask.kernels.measures import CONTAINMENT
from simdask.kernels.top_rows import Rows, top_k_rows

__all__ = [
    "QuoteSplit",
    "add_quoted",
    "counted_ids",
    "decode_ids",
    "directed_counts",
    "encode_ids",
    "posting_pairs",
    "quote_map",
    "reverse_counts",
    "split_quoted",
]


@dataclass(frozen=True)
class QuoteSplit:
    """A batch's chunk sets: ``u`` what the index holds (quotations left out), and Q as
    ``q_ids``/``q_doc`` (index into the batch, int64), sorted by ``(doc, chunk)``, distinct."""

    u: ChunkedBatch
    q_ids: np.ndarray
    q_doc: np.ndarray

    def q_of(self, i: int) -> np.ndarray:
        """The sorted Q chunk IDs of the batch's text ``i``."""
        lo, hi = np.searchsorted(self.q_doc, [i, i + 1])
        return self.q_ids[lo:hi]


def split_quoted(
    texts: list[str], k: int, hash_bits: int, seed: int, exclusions: Exclusions
) -> QuoteSplit:
    """U and Q of ``texts`` under ``exclusions`` (which must leave out quotations): U chunked
    as the index chunks, C with the quotations kept (the reference lists and templates still
    left out), ``Q = C \\ U`` per text. Chunk IDs of ``hash_bits`` bits; ``k`` words a chunk."""
    if not exclusions.quotes:
        raise ValueError(
            f"split_quoted needs exclusions that leave out quotations, found {exclusions!r}"
        )
    u = chunk_excluding(texts, k, hash_bits, seed, exclusions)
    kept = Exclusions(False, exclusions.bibliography, exclusions.chunk_ids)
    c = chunk_excluding(texts, k, hash_bits, seed, kept)
    n = max(len(texts), 1)
    key_u = u.chunk_ids.astype(np.uint64) * np.uint64(n) + u.doc.astype(np.uint64)
    key_c = c.chunk_ids.astype(np.uint64) * np.uint64(n) + c.doc.astype(np.uint64)
    q = ~np.isin(key_c, key_u, assume_unique=True)
    q_ids, q_doc = c.chunk_ids[q], c.doc[q].astype(np.int64)
    order = np.lexsort((q_ids, q_doc))
    return QuoteSplit(u, q_ids[order], q_doc[order])


def encode_ids(ids: np.ndarray, hash_bits: int) -> bytes:
    """Sorted distinct chunk IDs as a blob: little-endian uint32 (uint64 above 32 bits)."""
    return np.ascontiguousarray(ids, dtype="<u4" if hash_bits <= 32 else "<u8").tobytes()


def decode_ids(blob: bytes, hash_bits: int) -> np.ndarray:
    """The chunk IDs of :func:`encode_ids`' blob (uint64)."""
    return np.frombuffer(blob, dtype="<u4" if hash_bits <= 32 else "<u8").astype(np.uint64)


def posting_pairs(
    chunk_keys: np.ndarray, offsets: np.ndarray, doc_ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """CSR postings as one ``(chunk, doc)`` pair each (uint64, int64), in their order; the
    offsets may start past 0 (a segment's lists looked up in place)."""
    off = np.asarray(offsets, np.int64)
    if len(off) == 0:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64)
    chunk = np.repeat(np.asarray(chunk_keys, np.uint64), np.diff(off))
    return chunk, np.asarray(doc_ids[int(off[0]) : int(off[-1])], np.int64)


def quote_map(docs: np.ndarray, sets: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The inverted map of the Q sets ``sets[i]`` of documents ``docs[i]``: ``(chunk, doc)``
    (uint64, int64) sorted by chunk then doc."""
    if not sets:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64)
    chunk = np.concatenate([np.asarray(s, np.uint64) for s in sets])
    doc = np.repeat(np.asarray(docs, np.int64), [len(s) for s in sets])
    order = np.lexsort((doc, chunk))
    return chunk[order], doc[order]


def directed_counts(
    src_ids: np.ndarray, src_doc: np.ndarray, chunks: np.ndarray, docs: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every source document (``src_doc[i]`` holds chunk ``src_ids[i]``, each pair once)
    and every document of the map ``(chunks, docs)`` (sorted by chunk) holding some of its
    chunks: ``(source, holder, count)`` of the chunks both hold, sorted by source then holder
    (a source is never its own holder). Work: the map's holders of each source chunk."""
    src_ids = np.asarray(src_ids, np.uint64)
    lo = np.searchsorted(chunks, src_ids, "left")
    hi = np.searchsorted(chunks, src_ids, "right")
    holders = hi - lo
    total = int(holders.sum())
    rep = np.repeat(np.arange(len(src_ids)), holders)
    idx = np.arange(total) - np.repeat(np.cumsum(holders) - holders, holders) + lo[rep]
    x = np.asarray(src_doc, np.int64)[rep]
    y = docs[idx].astype(np.int64)
    keep = x != y
    x, y = x[keep], y[keep]
    order = np.lexsort((y, x))
    x, y = x[order], y[order]
    if len(x) == 0:
        return x, y, np.zeros(0, np.int64)
    new = run_starts(x) | run_starts(y)
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, len(x)))
    return x[starts], y[starts], counts.astype(np.int64)


def counted_ids(ids: np.ndarray, df: np.ndarray, max_df: int | None) -> np.ndarray:
    """The chunks of ``ids`` that shared counts count: document frequency ``df`` (in U, one
    per chunk of ``ids``) at most ``max_df`` (None: all)."""
    return ids if max_df is None else ids[np.asarray(df) <= max_df]


def add_quoted(
    rows: Rows,
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    n_chunks: np.ndarray,
    threshold: float,
    lists: np.ndarray,
    depth: int,
) -> Rows:
    """The directed rows under the rule: ``rows`` (``doc, other, shared, sim``: the engine's,
    shared = S, every list of ``lists`` down to ``depth`` rows by S or whole) with every pair
    ``(x, y, s, e)`` of ``pairs`` (E > 0, S exact) given ``shared = s + e`` (added when
    missing and at ``threshold`` percent of ``|U(x)|``, ``n_chunks`` by doc ID), the lists of
    ``lists`` cut again to ``depth`` rows (highest similarity, then lowest other); rows of
    other documents are kept (their lists are ranked again where they are stored)."""
    doc, other, shared, sim = (np.asarray(a) for a in rows)
    px, py, ps, pe = (np.asarray(a, np.int64) for a in pairs)
    n = np.uint64(max(int(n_chunks.shape[0]), 1))
    key_r = doc.astype(np.uint64) * n + other.astype(np.uint64)
    key_p = px.astype(np.uint64) * n + py.astype(np.uint64)
    keep = ~np.isin(key_r, key_p)
    new_shared = ps + pe
    new_sim = np.asarray(CONTAINMENT.value(new_shared, n_chunks[px]), np.float64)
    ok = (new_shared > 0) & (new_sim >= threshold)
    d = np.concatenate([doc[keep].astype(np.int64), px[ok]])
    o = np.concatenate([other[keep].astype(np.int64), py[ok]])
    s = np.concatenate([shared[keep].astype(np.int64), new_shared[ok]])
    v = np.concatenate([sim[keep].astype(np.float64), new_sim[ok]])
    cut = np.isin(d, np.asarray(lists, np.int64))
    top = top_k_rows(d[cut], o[cut], s[cut], v[cut], depth)
    out = tuple(np.concatenate([t, a[~cut]]) for t, a in zip(top, (d, o, s, v), strict=True))
    return out[0], out[1], out[2], out[3]


@dataclass(frozen=True)
class Lookups:
    """What the correction of one run reads, for the documents ``lists`` whose lists it
    recomputes: their U (``u_ids``, ``u_doc``) and Q (``q_ids``, ``q_doc``) as distinct
    ``(chunk, doc)`` pairs; the live U postings after the run of every chunk of ``u_ids``
    (``u_hold``) and of ``q_ids`` (``q_hold``), each ``(chunk, holder)`` sorted by chunk; and
    the inverted map of every live quoting document's Q (``q_map``, :func:`quote_map`)."""

    lists: np.ndarray
    u_ids: np.ndarray
    u_doc: np.ndarray
    q_ids: np.ndarray
    q_doc: np.ndarray
    u_hold: tuple[np.ndarray, np.ndarray]
    q_hold: tuple[np.ndarray, np.ndarray]
    q_map: tuple[np.ndarray, np.ndarray]


def _counted(ids: np.ndarray, hold: np.ndarray, max_df: int | None) -> np.ndarray:
    """Which of ``ids`` a shared count counts: held by at most ``max_df`` documents' U
    (``hold``: the holders' chunk column, sorted)."""
    if max_df is None:
        return np.ones(len(ids), bool)
    df = np.searchsorted(hold, ids, "right") - np.searchsorted(hold, ids, "left")
    return df <= max_df


def quoted_pairs(
    look: Lookups, max_df: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every directed pair ``(x, y, s, e)`` with ``E(x, y) > 0`` and ``x`` or ``y`` in
    ``look.lists``, with its exact ``S`` (symmetric: read from the list document's U
    postings, :func:`directed_counts`), sorted by ``(x, y)``. ``E(x, ·)`` of a list
    document from the Q map, ``E(·, y)`` of a list document ``y`` from the U holders of
    ``Q(y)``; a chunk counts when held by at most ``max_df`` documents' U."""
    uc, ud = np.asarray(look.u_ids, np.uint64), np.asarray(look.u_doc, np.int64)
    hc, hd = look.u_hold
    ok = _counted(uc, hc, max_df)
    ex, ey, e = directed_counts(uc[ok], ud[ok], *look.q_map)
    qc, qd = np.asarray(look.q_ids, np.uint64), np.asarray(look.q_doc, np.int64)
    okq = _counted(qc, look.q_hold[0], max_df)
    ry, rx, re_ = directed_counts(qc[okq], qd[okq], *look.q_hold)
    x = np.concatenate([ex, rx])
    y = np.concatenate([ey, ry])
    ev = np.concatenate([e, re_])
    keep = _counted(hc, hc, max_df)
    sl, so, sv = directed_counts(uc[ok], ud[ok], hc[keep], hd[keep])
    top = max(int(a.max(initial=0)) for a in (x, y, sl, so)) + 1
    key, first = np.unique(_pair_key(x, y, top), return_index=True)  # two list docs: once
    x, y, ev = x[first], y[first], ev[first]
    key_s = np.concatenate([_pair_key(sl, so, top), _pair_key(so, sl, top)])
    key_s, first_s = np.unique(key_s, return_index=True)  # S is symmetric
    val_s = np.concatenate([sv, sv])[first_s]
    at = np.searchsorted(key_s, key)
    found = at < len(key_s)
    found[found] = key_s[at[found]] == key[found]
    s = np.zeros(len(key), np.int64)
    s[found] = val_s[at[found]]
    return x, y, s, ev


def _pair_key(x: np.ndarray, y: np.ndarray, top: int) -> np.ndarray:
    """One uint64 per pair of doc IDs below ``top``."""
    return x.astype(np.uint64) * np.uint64(top) + y.astype(np.uint64)


def quoted_rows(
    rows: Rows,
    look: Lookups,
    n_chunks: np.ndarray,
    threshold: float,
    depth: int,
    max_df: int | None,
) -> Rows:
    """One run's rows under the rule: the engine's ``rows`` (by S; the lists of
    ``look.lists`` computed ``depth`` deep, reverse rows to them) corrected by every pair
    with ``E > 0`` involving a list document (:func:`quoted_pairs`, :func:`add_quoted`).
    ``n_chunks``: ``|U|`` by doc ID; ``threshold`` in percent."""
    pairs = quoted_pairs(look, max_df)
    return add_quoted(rows, pairs, n_chunks, threshold, look.lists, depth)


def reverse_counts(
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    n_chunks: np.ndarray,
    threshold: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reverse count of each directed row of a pair with ``E > 0`` either way
    (``pairs``: :func:`quoted_pairs`' ``(x, y, S, E)``, both directions of a pair listed when
    both have ``E > 0``): ``(doc, other, reverse)`` with ``reverse = S + E(other, doc)``, for
    both rows of every such pair reaching ``threshold`` percent either way (``n_chunks``:
    ``|U|`` by doc ID). Sorted by ``(doc, other)``."""
    x, y, s, e = (np.asarray(a, np.int64) for a in pairs)
    n = np.uint64(max(int(n_chunks.shape[0]), 1))
    key = x.astype(np.uint64) * n + y.astype(np.uint64)
    back = y.astype(np.uint64) * n + x.astype(np.uint64)
    order = np.argsort(key)
    at = np.minimum(np.searchsorted(key[order], back), max(len(key) - 1, 0))
    found = len(key) > 0
    e_back = np.zeros(len(x), np.int64)
    if found:
        hit = key[order][at] == back
        e_back[hit] = e[order][at[hit]]
    fwd, rev = s + e, s + e_back  # x -> y holds fwd; y -> x holds rev
    ok = (np.asarray(CONTAINMENT.value(fwd, n_chunks[x]), np.float64) >= threshold) | (
        np.asarray(CONTAINMENT.value(rev, n_chunks[y]), np.float64) >= threshold
    )
    d = np.concatenate([x[ok], y[ok]])
    o = np.concatenate([y[ok], x[ok]])
    r = np.concatenate([rev[ok], fwd[ok]])
    k2 = d.astype(np.uint64) * n + o.astype(np.uint64)
    _, first = np.unique(k2, return_index=True)  # a pair listed both ways: once
    return d[first], o[first], r[first]
