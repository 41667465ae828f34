"""Heavy chunks as pure numpy kernels (DESIGN §3.4, "Heavy chunks"; issue 13).

In real text a few chunks are held by very many documents (licence, template and set-phrase
text). Counting every pair through a chunk of document frequency ``df`` costs ``df (df - 1) / 2``
pair emissions, so these few chunks are nearly all of the all-pairs work (Σ df²). Here the
chunks with ``df > cutoff`` are *heavy* and handled apart:

* every document gets the set of its heavy chunks, as sorted global heavy ranks in a CSR
  (:class:`HeavySets`) and as a bitset over those ranks (:class:`HeavyBits`, 64 ranks a word);
* candidate pairs come from the light chunks only (the blocked counting with ``max_df =
  cutoff``); before thresholding, each candidate's heavy overlap ``|heavy(A) ∩ heavy(B)|`` is
  added exactly (AND + popcount of the two bitsets, :func:`add_heavy_overlap`), so every pair
  sharing at least one light chunk gets its exact count over *all* chunks;
* pairs sharing *only* heavy chunks: such a pair shares at most ``|heavy(A)|`` chunks, so only
  documents with ``100 |heavy(A)| / |A| >= threshold`` (:func:`search_docs`) can have a row
  through them; in the ``exact`` mode these are searched densely against every document holding
  a heavy chunk (:func:`~simdask.kernels.heavy_search.heavy_only_rows`, on heavy sets collapsed
  to distinct sets and chunk groups); in the ``informative`` mode
  they are not searched and their number is reported; the ``auto`` mode (the default) is
  ``exact`` when that dense search is at most a budget of (query, document) pairs and
  ``informative`` otherwise (:func:`auto_mode`).

The cutoff is chosen per full build by :func:`choose_cutoff`: none when all-pairs counting is
cheap anyway, else the highest ``df`` at which the light work fits ``work_per_posting`` pair
emissions per posting, lowered further if more than ``max_heavy`` chunks would be heavy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simdask.kernels.arrays import expand_ranges
from simdask.kernels.postings import ShardData, doc_mask
from simdask.kernels.range_pieces import VIEW_PIECE_POSTINGS, chunk_pieces, piece_offsets
from simdask.kernels.similarity import (
    containment,
    group_order,
    list_pair_keys,
    member_pair_keys,
    top_k_rows,
)
from simdask.kernels.top_rows import Rows

__all__ = [
    "MODES",
    "WORK_PER_POSTING",
    "HeavyBits",
    "HeavySets",
    "add_heavy_overlap",
    "auto_mode",
    "choose_cutoff",
    "df_histogram",
    "heavy_postings",
    "light_work",
    "member_heavy_keys",
    "member_keys",
    "merge_histograms",
    "merge_rows",
    "pair_overlap",
    "search_docs",
    "still_open",
]

#: ``informative``: exact for every pair sharing at least one light chunk, pairs sharing only
#: heavy chunks not searched. ``exact``: every pair, as counting over all chunks gives.
#: (``auto`` chooses one of these per full build, :func:`auto_mode`.)
MODES = ("informative", "exact")
#: Light pair emissions allowed per posting before the adaptive cutoff makes chunks heavy.
WORK_PER_POSTING = 32


def df_histogram(
    shard: ShardData, max_df: int | None = None, piece: int = VIEW_PIECE_POSTINGS
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct document frequencies of the shard's counted chunks (``df <= max_df``) and how
    many chunks have each (both int64, ascending by df). Read in pieces of at most ``piece``
    postings (:func:`~simdask.kernels.range_pieces.chunk_pieces`): the temporaries follow the
    piece, the result is the same."""
    parts = []
    for c0, c1 in chunk_pieces(shard.offsets, piece):
        df = piece_offsets(shard.offsets, c0, c1)[1]
        if max_df is not None:
            df = df[df <= max_df]
        parts.append(np.unique(df, return_counts=True))
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if len(parts) == 1:
        return parts[0][0].astype(np.int64), parts[0][1].astype(np.int64)
    return merge_histograms(parts)


def merge_histograms(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Sum per-shard ``(df values, chunk counts)`` into one histogram (ascending df)."""
    vals = np.concatenate([p[0] for p in parts] + [np.zeros(0, np.int64)])
    cnts = np.concatenate([p[1] for p in parts] + [np.zeros(0, np.int64)])
    u, inv = np.unique(vals, return_inverse=True)
    return u, np.bincount(inv, weights=cnts, minlength=len(u)).astype(np.int64)


def light_work(values: np.ndarray, counts: np.ndarray, cutoff: int | None) -> int:
    """Pair emissions of all-pairs counting over chunks with ``df <= cutoff`` (None: all):
    ``Σ df (df - 1) / 2`` over the histogram ``(values, counts)``."""
    v = np.asarray(values, np.int64)
    keep = np.ones(len(v), bool) if cutoff is None else v <= cutoff
    return int((counts[keep] * (v[keep] * (v[keep] - 1) // 2)).sum())


def choose_cutoff(
    values: np.ndarray,
    counts: np.ndarray,
    n_postings: int,
    *,
    fixed: int | None = None,
    max_heavy: int = 1024,
    work_per_posting: float = WORK_PER_POSTING,
) -> int | None:
    """The heavy cutoff: chunks with ``df > cutoff`` are heavy; None: no chunk is.

    ``fixed`` (the index's ``heavy_df``) is returned as it is. Otherwise, with the budget
    ``work_per_posting * n_postings`` pair emissions: None when all chunks fit it; else the
    largest histogram df whose light work (:func:`light_work`) fits, lowered to the largest
    df leaving at most ``max_heavy`` chunks above it when that is lower (never below 1).
    """
    if fixed is not None:
        return int(fixed)
    v = np.asarray(values, np.int64)
    c = np.asarray(counts, np.int64)
    budget = work_per_posting * n_postings
    cum = np.cumsum(c * (v * (v - 1) // 2))  # light work with cutoff v[i]
    if len(v) == 0 or cum[-1] <= budget:
        return None
    fits = np.flatnonzero(cum <= budget)
    by_work = int(v[fits[-1]]) if len(fits) else 1
    above = c.sum() - np.cumsum(c)  # chunks with df > v[i]
    few = np.flatnonzero(above <= max_heavy)
    by_count = int(v[few[0]])
    return max(1, min(by_work, by_count))


def heavy_postings(
    shard: ShardData, cutoff: int, max_df: int | None = None, piece: int = VIEW_PIECE_POSTINGS
) -> tuple[np.ndarray, np.ndarray]:
    """The shard's heavy chunks (``cutoff < df <= max_df``) in key order: their df (int64) and
    their posting lists concatenated (uint32 doc IDs, ascending within each list). Read in
    pieces of at most ``piece`` postings: the temporaries follow the piece (and the result)."""
    dfs, docs = [np.zeros(0, np.int64)], [shard.doc_ids[:0]]
    for c0, c1 in chunk_pieces(shard.offsets, piece):
        off, df = piece_offsets(shard.offsets, c0, c1)
        heavy = df > cutoff
        if max_df is not None:
            heavy &= df <= max_df
        idx = np.flatnonzero(heavy)
        if len(idx):
            dfs.append(df[idx])
            docs.append(shard.doc_ids[expand_ranges(off[idx], df[idx])])
    return np.concatenate(dfs), np.concatenate(docs)


@dataclass(frozen=True)
class HeavySets:
    """Per document, its heavy chunks as sorted global ranks: ``ranks[offsets[d]:offsets[d+1]]``
    (uint32). ``n_heavy``: number of heavy chunks (ranks are ``0..n_heavy-1``)."""

    offsets: np.ndarray
    ranks: np.ndarray
    n_heavy: int

    @classmethod
    def build(cls, parts: list[tuple[np.ndarray, np.ndarray]], n_docs: int) -> HeavySets:
        """From per-shard :func:`heavy_postings`, ranked in shard then key order."""
        dfs = np.concatenate([p[0] for p in parts] + [np.zeros(0, np.int64)])
        docs = np.concatenate([p[1] for p in parts] + [np.zeros(0, np.uint32)])
        ranks = np.repeat(np.arange(len(dfs), dtype=np.uint64), dfs)
        keys = np.sort((docs.astype(np.uint64) << np.uint64(32)) | ranks)
        counts = np.bincount((keys >> np.uint64(32)).astype(np.int64), minlength=n_docs)
        offsets = np.zeros(n_docs + 1, np.int64)
        np.cumsum(counts[:n_docs], out=offsets[1:])
        return cls(offsets, (keys & np.uint64(0xFFFFFFFF)).astype(np.uint32), len(dfs))

    @property
    def sizes(self) -> np.ndarray:
        """``|heavy(d)|`` per document (int64)."""
        return np.diff(self.offsets)

    def __sizeof__(self) -> int:
        """Bytes of the sets (their arrays and the object), as ``sys.getsizeof`` and Dask's
        ``sizeof`` report them: a bounded build's per-range sets stay where they were built
        only if the scheduler knows they are large (without it, ~50 bytes, each was copied to
        the worker of every task that read it; issue 33)."""
        return self.offsets.nbytes + self.ranks.nbytes + 200

    def bits(self) -> HeavyBits:
        """The same sets as bitsets over heavy ranks (see :class:`HeavyBits`)."""
        sizes = self.sizes
        docs = np.flatnonzero(sizes > 0)
        row_of = np.full(len(sizes), -1, np.int64)
        row_of[docs] = np.arange(len(docs))
        n_words = max(1, -(-self.n_heavy // 64))
        words = np.zeros((len(docs), n_words), np.uint64)
        rows = np.repeat(np.arange(len(docs), dtype=np.int64), sizes[docs])
        r = self.ranks.astype(np.int64)
        if len(r):  # ranks ascend within a document: OR each (row, word) run of bits
            cell = rows * n_words + (r >> 6)
            starts = np.flatnonzero(np.concatenate([[True], cell[1:] != cell[:-1]]))
            bit = np.left_shift(np.uint64(1), (r & 63).astype(np.uint64))
            or_ = np.bitwise_or.reduceat(bit, starts)
            words[cell[starts] // n_words, cell[starts] % n_words] = or_
        return HeavyBits(row_of, docs, words, sizes)


@dataclass(frozen=True)
class HeavyBits:
    """Heavy sets as bitsets: ``words[row_of[d], j]`` holds heavy ranks ``64 j .. 64 j + 63`` of
    document ``d`` (``row_of[d] == -1``: no heavy chunk); ``docs[row]`` inverts ``row_of``;
    ``sizes[d] = |heavy(d)|``. Row-major, so that a document's words are one contiguous gather
    (128 bytes at 1,024 heavy chunks)."""

    row_of: np.ndarray
    docs: np.ndarray
    words: np.ndarray
    sizes: np.ndarray

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays."""
        return self.row_of.nbytes + self.docs.nbytes + self.words.nbytes + self.sizes.nbytes


def pair_overlap(bits: HeavyBits, d: np.ndarray, o: np.ndarray, step: int = 1 << 12) -> np.ndarray:
    """``|heavy(d[i]) ∩ heavy(o[i])|`` per pair (int64), by AND + popcount of the bitsets.

    ``step`` pairs at a time, each document's row gathered whole into buffers allocated once
    (``np.take`` with ``out``; 2 x 512 KB at 1,024 heavy chunks): a fresh temporary per tile
    costs its page faults again, ~3x the gather itself on this VM (docs/scale.md, "Light pairs
    cost"); the per-word counts are summed by :func:`_row_popcounts`."""
    rd, ro = bits.row_of[d], bits.row_of[o]
    idx = np.flatnonzero((rd >= 0) & (ro >= 0))
    out = np.zeros(len(d), np.int64)
    if len(idx) == 0:
        return out
    a, b = rd[idx], ro[idx]
    words = bits.words
    n_words = words.shape[1]
    step = max(1, min(step, len(idx)))
    x = np.empty((step, n_words), np.uint64)
    y = np.empty((step, n_words), np.uint64)
    counts = np.zeros((step, -(-n_words // 8) * 8), np.uint8)  # whole uint64 lanes of counts
    for lo in range(0, len(idx), step):
        m = min(step, len(idx) - lo)
        xm, ym, cm = x[:m], y[:m], counts[:m]
        np.take(words, a[lo : lo + m], axis=0, out=xm, mode="clip")  # rows are valid
        np.take(words, b[lo : lo + m], axis=0, out=ym, mode="clip")
        np.bitwise_and(xm, ym, out=xm)
        np.bitwise_count(xm, out=cm[:, :n_words])
        out[idx[lo : lo + m]] = _row_popcounts(cm)
    return out


_BYTES = np.uint64(0x00FF00FF00FF00FF)
_LANES = np.uint64(0x0001000100010001)


def _row_popcounts(counts: np.ndarray) -> np.ndarray:
    """Row sums (int64) of per-word popcounts ``counts`` (uint8, each <= 64; rows a multiple
    of 8 bytes), without numpy's slow reduction along a short axis: each row's bytes are read
    as uint64 lanes, added pairwise into 16-bit lanes, and the four lanes summed by one
    multiply (exact while a row's sum is < 2**16, i.e. up to 1,023 words)."""
    if counts.shape[1] > 8 * 127:
        return counts.sum(axis=1, dtype=np.int64)
    v = counts.view(np.uint64)
    acc = np.zeros(len(v), np.uint64)
    for j in range(v.shape[1]):
        w = v[:, j]
        acc += (w & _BYTES) + ((w >> np.uint64(8)) & _BYTES)
    return ((acc * _LANES) >> np.uint64(48)).astype(np.int64)


def add_heavy_overlap(
    d: np.ndarray,
    o: np.ndarray,
    shared: np.ndarray,
    need: np.ndarray,
    bits: HeavyBits,
    sizes: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Light counted pairs ``(d[i], o[i])`` (int64 doc IDs; ``shared``: their light counts,
    int64) with their exact heavy overlap added, for the pairs that can pass with it.

    ``need`` is :func:`~simdask.kernels.similarity.need_counts`: a pair can pass in some
    direction only if ``light + min(|heavy(d)|, |heavy(o)|) >= min(need[d], need[o])``; the
    others are dropped before the AND + popcount (:func:`pair_overlap`), its cost. ``sizes``:
    ``bits.sizes`` in a narrower dtype if given (int32 with int32 ``d``, ``o``, ``shared``
    and ``need``: half the bytes gathered per pair). Returns the kept ``(d, o, count over all
    chunks)``, in input order (the count int64).
    """
    sizes = bits.sizes if sizes is None else sizes
    bound = shared + np.minimum(sizes[d], sizes[o])
    keep = bound >= np.minimum(need[d], need[o])
    d, o = d[keep], o[keep]
    return d, o, shared[keep] + pair_overlap(bits, d, o)


def search_docs(sizes: np.ndarray, n_chunks: np.ndarray, threshold: float) -> np.ndarray:
    """Documents whose heavy chunks alone could give a row: ``100 |heavy(d)| / |d| >= threshold``
    percent (the same float expression as the rows). Sorted int64 doc IDs."""
    ok = (sizes > 0) & (n_chunks > 0)
    return np.flatnonzero(ok & (containment(sizes, n_chunks) >= threshold))


def still_open(
    queries: np.ndarray, rows: Rows, sizes: np.ndarray, n_chunks: np.ndarray, top_k: int
) -> np.ndarray:
    """The documents of ``queries`` whose stored list could still take a heavy-only partner.

    ``rows``: the light rows ``(doc, other, shared, similarity)`` after the top-k cut. A
    heavy-only partner of ``A`` has similarity at most ``100 |heavy(A)| / |A|`` (the same float
    expression), so ``A`` needs no search when it already holds ``top_k`` rows all above that.
    Exact: searching only these gives the same rows as searching all ``queries``.
    """
    queries = np.asarray(queries, np.int64)
    doc, sim = rows[0].astype(np.int64), rows[3]
    n = len(n_chunks)
    held = np.bincount(doc, minlength=n)
    worst = np.full(n, np.inf)
    np.minimum.at(worst, doc, sim)
    bound = containment(sizes[queries], n_chunks[queries])
    full = (held[queries] >= top_k) & (worst[queries] > bound)
    return queries[~full]


def auto_mode(open_docs: int, heavy_docs: int, budget: int) -> tuple[str, int]:
    """The mode ``auto`` runs in, and the size of the heavy-only search it weighed.

    ``open_docs``: documents whose heavy chunks alone could still give a row after the light
    pass (:func:`still_open` of :func:`search_docs`); ``heavy_docs``: documents holding a
    heavy chunk. The dense search (:func:`~simdask.kernels.heavy_search.heavy_only_rows`)
    compares each of the first with each of the second: ``open_docs * heavy_docs`` (query,
    document) pairs. ``exact`` when that is at most ``budget`` pairs, else ``informative``.
    Returns ``(mode, pairs)``.
    """
    pairs = int(open_docs) * int(heavy_docs)
    return ("exact" if pairs <= budget else "informative"), pairs


def merge_rows(a: Rows, b: Rows, top_k: int) -> Rows:
    """Rows of ``a`` and ``b`` (each ``(doc, other, shared, similarity)``); where both hold a
    ``(doc, other)``, the larger shared count (the exact one) is kept; best ``top_k`` per doc."""
    doc, other, shared, sim = (np.concatenate([x, y]) for x, y in zip(a, b, strict=True))
    order = np.lexsort((-shared, other, doc))
    doc, other, shared, sim = doc[order], other[order], shared[order], sim[order]
    first = np.ones(len(doc), bool)
    first[1:] = (doc[1:] != doc[:-1]) | (other[1:] != other[:-1])
    return top_k_rows(doc[first], other[first], shared[first], sim[first], top_k)


def member_heavy_keys(
    shard: ShardData, block: np.ndarray, n_docs: int, cutoff: int, max_df: int | None = None
) -> np.ndarray:
    """Like :func:`~simdask.kernels.similarity.member_pair_keys`, through the heavy chunks
    only (``cutoff < df <= max_df``): uint32 keys ``index of r in block * n_docs + o``, one per
    heavy chunk ``r`` and ``o != r`` share, grouped by ``r`` as ``member_pair_keys`` gives them.
    Linear in the block's heavy postings times df."""
    if len(block) == 0 or shard.n_postings == 0:
        return np.zeros(0, np.uint32)
    p = np.flatnonzero(doc_mask(block, shard.doc_ids))
    ci = np.searchsorted(shard.offsets, p.astype(shard.offsets.dtype), side="right") - 1
    starts = shard.offsets[ci].astype(np.int64)
    cnt = shard.offsets[ci + 1].astype(np.int64) - starts
    ok = cnt > cutoff
    if max_df is not None:
        ok &= cnt <= max_df
    p, starts, cnt = p[ok], starts[ok], cnt[ok]
    if len(p) == 0:
        return np.zeros(0, np.uint32)
    row = np.searchsorted(block, shard.doc_ids[p])
    order = group_order(row, len(block))  # grouped by member
    p, starts, cnt, row = p[order], starts[order], cnt[order], row[order]
    return list_pair_keys(shard.doc_ids, p, starts, cnt, row, n_docs)


def member_keys(
    shard: ShardData, block: np.ndarray, n_docs: int, max_df: int | None, cutoff: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """Member pair keys through the light chunks (``df <= cutoff``, ``<= max_df``) and through
    the heavy ones (``cutoff < df <= max_df``; none when ``cutoff`` is None), as
    ``(light, heavy)`` uint32 arrays (:func:`~simdask.kernels.similarity.member_pair_keys`)."""
    if cutoff is None:
        return member_pair_keys(shard, block, n_docs, max_df), np.zeros(0, np.uint32)
    light = cutoff if max_df is None else min(cutoff, max_df)
    return (
        member_pair_keys(shard, block, n_docs, light),
        member_heavy_keys(shard, block, n_docs, cutoff, max_df),
    )
