"""The heavy overlap of candidate pairs only (incremental runs in the ``informative`` mode;
issue 14, DESIGN §3.4 "Heavy chunks"). Pure numpy, no I/O.

In the ``informative`` mode a recomputed document ``r`` gets rows only with documents ``o``
it shares at least one light chunk with; the heavy chunks (``cutoff < df <= max_df``) only add
their exact overlap ``|heavy(r) ∩ heavy(o)|`` to those candidates. Emitting one pair key per
(heavy chunk of ``r``, other holder) costs ``Σ df`` over ``r``'s heavy chunks, ~1.4 M keys a
document at a million prose documents, growing with the index. Here instead:

* each range keeps, for the block's members, the posting lists of the heavy chunks they hold
  (:class:`HeavyHold`, built by :func:`heavy_hold`, as sorted ``j << 32 | doc`` keys with ``j``
  the chunk's local number);
* the candidates come from the light keys alone (:func:`light_candidates`: every distinct light
  pair with its light count);
* each range tests, for every candidate ``(r, o)`` and every heavy chunk ``j`` of ``r`` there,
  whether ``o`` holds ``j``: one binary search of ``j << 32 | o`` into the hold's sorted keys
  (:func:`heavy_overlap`), ``Σ_r h_r |candidates(r)|`` lookups in all;
* the light counts plus the overlaps summed over ranges are the counts over all chunks; the
  pairs :func:`~simdask.kernels.member_counts.count_member_candidates` keeps
  (:func:`keep_candidates`) give the rows (:func:`member_rows_of`), the same rows as counting
  the heavy keys.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simdask.kernels.arrays import expand_ranges
from simdask.kernels.measures import containment
from simdask.kernels.member_counts import count_member_candidates
from simdask.kernels.postings import ShardData, doc_mask
from simdask.kernels.top_rows import Rows, top_k_rows

__all__ = [
    "HeavyHold",
    "heavy_hold",
    "heavy_overlap",
    "keep_candidates",
    "light_candidates",
    "member_rows_of",
    "sum_overlaps",
]

#: (candidate, heavy chunk) lookups :func:`heavy_overlap` expands at once (int64/uint64
#: temporaries of ~40 bytes each: ~170 MB at most, whatever the number of candidates)
LOOKUP_STEP = 1 << 22
#: bytes of per-document bitsets over a range's held chunks :func:`heavy_overlap` builds at
#: most (else it searches the sorted lists)
BITS_BYTES = 1 << 26


@dataclass(frozen=True)
class HeavyHold:
    """The heavy chunks a block's members hold in one range, and their posting lists.

    Member ``i`` (position in the block) holds the heavy chunks ``chunks[offsets[i] :
    offsets[i + 1]]`` (local numbers ``j``, int64, ascending); ``lists`` holds, sorted, the
    uint64 key ``j << 32 | doc`` of every posting of those chunks (each list ascending by doc,
    so the keys of all lists are one sorted array)."""

    offsets: np.ndarray
    chunks: np.ndarray
    lists: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        """Heavy chunks held here per member (int64)."""
        return np.diff(self.offsets)

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays."""
        return self.offsets.nbytes + self.chunks.nbytes + self.lists.nbytes

    @classmethod
    def empty(cls, n_rows: int) -> HeavyHold:
        """No heavy chunk for any of ``n_rows`` members."""
        return cls(np.zeros(n_rows + 1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint64))


def heavy_hold(
    shard: ShardData, block: np.ndarray, cutoff: int, max_df: int | None = None
) -> HeavyHold:
    """The :class:`HeavyHold` of ``block`` (sorted uint32 doc IDs) in ``shard``: the chunks
    with ``cutoff < df <= max_df`` a member holds, as
    :func:`~simdask.kernels.heavy.member_heavy_keys` selects them. Linear in the block's
    postings plus the held lists' postings (copies: no view of the shard's arrays). The lists
    need not be sorted by doc ID in ``shard``."""
    block = np.asarray(block, np.uint32)
    if len(block) == 0 or shard.n_postings == 0:
        return HeavyHold.empty(len(block))
    p = np.flatnonzero(doc_mask(block, shard.doc_ids))
    ci = np.searchsorted(shard.offsets, p.astype(shard.offsets.dtype), side="right") - 1
    df = (shard.offsets[ci + 1] - shard.offsets[ci]).astype(np.int64)
    ok = df > cutoff
    if max_df is not None:
        ok &= df <= max_df
    p, ci = p[ok], ci[ok]
    if len(p) == 0:
        return HeavyHold.empty(len(block))
    row = np.searchsorted(block, shard.doc_ids[p]).astype(np.int64)
    held, j = np.unique(ci, return_inverse=True)  # the held chunks, numbered 0..
    order = np.lexsort((j, row))
    row, j = row[order], j[order].astype(np.int64)
    offsets = np.zeros(len(block) + 1, np.int64)
    np.cumsum(np.bincount(row, minlength=len(block)), out=offsets[1:])
    starts = shard.offsets[held].astype(np.int64)
    cnt = shard.offsets[held + 1].astype(np.int64) - starts
    docs = shard.doc_ids[expand_ranges(starts, cnt)].astype(np.uint64)
    local = np.repeat(np.arange(len(held), dtype=np.uint64), cnt)
    lists = (local << np.uint64(32)) | docs
    # a run's delta lists are appended unsorted (storage.segments.add_delta): a few ascending
    # runs a list, which the stable sort (timsort) merges in about linear time
    if np.any(lists[1:] <= lists[:-1]):
        lists.sort(kind="stable")
    return HeavyHold(offsets, j, lists)


def heavy_overlap(
    hold: HeavyHold,
    keys: np.ndarray,
    n_docs: int,
    row_lo: int = 0,
    step: int = LOOKUP_STEP,
    bits_bytes: int = BITS_BYTES,
) -> tuple[np.ndarray, np.ndarray]:
    """The heavy chunks of one range each candidate shares, sparsely.

    ``keys``: candidate pair keys ``i * n_docs + o`` (uint32 or int64; ``i``: position in a
    block whose first member is row ``row_lo`` of ``hold``; doc IDs below ``n_docs``), best
    sorted. Returns the positions in ``keys`` of the candidates sharing at least one heavy
    chunk here (int64, ascending) and how many they share (int64).

    When the per-document bitsets over the held chunks fit ``bits_bytes`` (``n_docs`` x
    ⌈held chunks / 64⌉ words; 8 MB at a million documents and 64 held chunks), each candidate
    costs one AND + popcount of its member's and its document's words
    (:func:`_overlap_bits`); else one binary search a (candidate, held chunk of its member)
    (:func:`_overlap_search`, ``step`` lookups at a time).
    """
    keys = np.asarray(keys)
    empty = np.zeros(0, np.int64), np.zeros(0, np.int64)
    if len(keys) == 0 or len(hold.lists) == 0:
        return empty
    n = keys.dtype.type(int(n_docs))
    rows = (keys // n).astype(np.int64) + int(row_lo)
    n_words = -(-(int(hold.lists[-1] >> np.uint64(32)) + 1) // 64)
    width = max(int(n_docs), int((hold.lists & np.uint64(0xFFFFFFFF)).max()) + 1)  # doc IDs
    if width * n_words * 8 <= bits_bytes:
        counts = _overlap_bits(hold, rows, keys % n, width, n_words)
    else:
        counts = _overlap_search(hold, rows, (keys % n).astype(np.uint64), step)
    nz = np.flatnonzero(counts)
    return nz, counts[nz]


def _overlap_bits(
    hold: HeavyHold, rows: np.ndarray, o: np.ndarray, n_docs: int, n_words: int
) -> np.ndarray:
    """Per candidate ``(rows[k], o[k])``: popcount of the AND of the member's bitset over the
    held chunks and document ``o``'s (built here from ``hold.lists``, one scatter a held
    chunk). int64 counts."""
    docs = (hold.lists & np.uint64(0xFFFFFFFF)).astype(np.int64)
    local = (hold.lists >> np.uint64(32)).astype(np.int64)
    per_doc = np.zeros((n_docs, n_words), np.uint64)
    bounds = np.flatnonzero(np.diff(local)) + 1
    for a, b in zip([0, *bounds.tolist()], [*bounds.tolist(), len(local)], strict=True):
        j = int(local[a])  # each document once in a list: no lost updates
        per_doc[docs[a:b], j >> 6] |= np.uint64(1) << np.uint64(j & 63)
    h = hold.sizes
    per_row = np.zeros((len(h), n_words), np.uint64)
    held_row = np.repeat(np.arange(len(h)), h)
    np.bitwise_or.at(
        per_row, (held_row, hold.chunks >> 6), np.uint64(1) << (hold.chunks & 63).astype(np.uint64)
    )
    counts = np.zeros(len(rows), np.int64)
    sel = np.flatnonzero(h[rows] > 0)
    r, d = rows[sel], o[sel].astype(np.int64)
    for w in range(n_words):
        counts[sel] += np.bitwise_count(per_row[r, w] & per_doc[d, w])
    return counts


def _overlap_search(hold: HeavyHold, rows: np.ndarray, o: np.ndarray, step: int) -> np.ndarray:
    """Per candidate ``(rows[k], o[k])``: for every heavy chunk ``j`` its member holds, one
    binary search of ``j << 32 | o`` into ``hold.lists``, issued per (member, chunk) with the
    member's candidates in key order: ascending runs, which numpy's search takes ~5x faster
    than scattered ones (it starts from the last hit). int64 counts."""
    starts = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))  # runs of a row
    sizes = np.diff(np.append(starts, len(rows)))
    h = hold.offsets[rows[starts] + 1] - hold.offsets[rows[starts]]
    g = np.flatnonzero(h > 0)
    starts, sizes, h, first = starts[g], sizes[g], h[g], hold.offsets[rows[starts[g]]]
    ends = np.cumsum(h * sizes)
    counts = np.zeros(len(rows), np.int64)
    lists = hold.lists
    a = 0
    while a < len(g):  # runs a..b-1: about ``step`` lookups (at least one run)
        base = ends[a - 1] if a else 0
        b = min(len(g), max(a + 1, int(np.searchsorted(ends, base + step, "right"))))
        run = np.repeat(np.arange(a, b), h[a:b])  # one per (run, held chunk)
        chunk = hold.chunks[expand_ranges(first[a:b], h[a:b])]
        cand = expand_ranges(starts[run], sizes[run])  # positions in keys
        q = (np.repeat(chunk.astype(np.uint64), sizes[run]) << np.uint64(32)) | o[cand]
        at = np.minimum(np.searchsorted(lists, q), len(lists) - 1)
        counts += np.bincount(cand[lists[at] == q], minlength=len(rows))
        a = b
    return counts


def sum_overlaps(n_keys: int, parts: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The per-range sparse overlaps of :func:`heavy_overlap` summed per candidate (int64,
    ``n_keys`` long)."""
    out = np.zeros(n_keys, np.int64)
    for idx, ov in parts:  # a range names each candidate once
        out[idx] += ov
    return out


def light_candidates(
    parts: list[np.ndarray], n_docs: int, n_rows: int
) -> tuple[np.ndarray, np.ndarray]:
    """Every distinct light pair key of ``parts`` (member keys ``i * n_docs + o`` grouped by
    row, :func:`~simdask.kernels.similarity.member_pair_keys`) with its light count: sorted
    uint32 keys and uint32 counts (:func:`~simdask.kernels.member_counts.count_member_candidates`
    with every row kept at count 1)."""
    every = np.ones(n_rows, bool)
    return count_member_candidates(list(parts), n_docs, n_rows, "informative", every)


def keep_candidates(
    keys: np.ndarray,
    counts: np.ndarray,
    n_docs: int,
    single_rows: np.ndarray,
    single_docs: np.ndarray,
) -> np.ndarray:
    """Which counted pairs (counts over all chunks) can give a row, as
    :func:`~simdask.kernels.member_counts.count_member_candidates` keeps them: counted at least
    twice, or with ``single_rows[i]`` or ``single_docs[o]`` (bool masks)."""
    n = keys.dtype.type(n_docs)
    return (counts >= 2) | single_rows[keys // n] | single_docs[keys % n]


def member_rows_of(
    keys: np.ndarray,
    shared: np.ndarray,
    block: np.ndarray,
    n_chunks: np.ndarray,
    changed: np.ndarray,
    members: np.ndarray,
    threshold: float,
    top_k: int,
) -> tuple[Rows, Rows]:
    """Rows of counted member pairs ``keys`` (``i * n_docs + o`` pairing ``block[i]`` with
    ``o``; ``shared``: their counts over all chunks): ``(forward, reverse)`` as
    :func:`~simdask.engine.similarity_stage.member_rows_task` returns them. Forward rows
    ``r -> o`` over ``threshold`` percent, best ``top_k`` per ``r``; reverse rows ``o -> r`` for
    ``r`` in ``changed`` and ``o`` not in ``members``. Each ``(doc, other, shared,
    similarity)``."""
    n_docs = len(n_chunks)
    keys = np.asarray(keys).astype(np.int64)
    r = np.asarray(block)[keys // n_docs].astype(np.int64)
    o = keys % n_docs
    s = np.asarray(shared).astype(np.int64)
    sim_r = containment(s, n_chunks[r])
    fwd = sim_r >= threshold
    forward = top_k_rows(r[fwd], o[fwd], s[fwd], sim_r[fwd], top_k)
    rev = np.isin(r, changed) & ~np.isin(o, members)
    r, o, s = r[rev], o[rev], s[rev]
    sim_o = containment(s, n_chunks[o])
    keep = sim_o >= threshold
    return forward, (o[keep], r[keep], s[keep], sim_o[keep])
