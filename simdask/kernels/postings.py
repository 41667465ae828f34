"""Postings as pure numpy kernels: pack (chunk ID, doc ID) pairs, split by shard, build CSR.

A *pair key* is ``chunk_id << 32 | doc_id`` as uint64 when chunk IDs have at most 32 bits
(``hash_bits <= 32``: chunk IDs are uint32): sorting pair keys sorts postings by chunk ID and,
within a chunk, by doc ID, which is exactly the order of a shard's arrays. Wider chunk IDs
(uint64, ``hash_bits`` 33..64) do not fit beside a 32-bit doc ID, so their *wide pair keys*
are an ``(n, 2)`` uint64 array of rows ``(chunk_id, doc_id)`` in the same order; every
function here takes either form (the chunk IDs' dtype decides) and :func:`sort_pairs` sorts
wide pairs by packing them again whenever the bits present fit in 64, else through the ranks
of the distinct chunk IDs (docs/accuracy.md, "Cost").

A shard owns the chunk IDs of one range ``[lo, hi)`` (:func:`shard_ranges`) and holds their
postings as three CSR arrays (:class:`ShardData`; on disk: :mod:`simdask.storage.shards`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simdask.kernels.arrays import run_starts

__all__ = [
    "ShardData",
    "build_postings",
    "chunk_dtype",
    "crossed_docs",
    "doc_mask",
    "merge_shard",
    "pack_pairs",
    "pair_chunks",
    "pair_docs",
    "remap_docs",
    "shard_of",
    "shard_ranges",
    "shard_width",
    "sort_columns",
    "sort_pairs",
    "sorted_unique",
    "split_sorted_by_shard",
]

_LOW32 = np.uint64(0xFFFFFFFF)
_U64 = np.dtype(np.uint64)


def chunk_dtype(hash_bits: int) -> np.dtype:
    """The dtype of chunk IDs of ``hash_bits`` bits: uint32 up to 32 bits, else uint64."""
    return np.dtype(np.uint32) if hash_bits <= 32 else _U64


@dataclass(frozen=True)
class ShardData:
    """The postings of one shard range ``[lo, hi)`` of chunk IDs.

    ``chunk_keys`` (uint32, or uint64 when ``hash_bits > 32``): the distinct chunk IDs of the
    range that some document holds;
    ``offsets`` (uint64, ``len(chunk_keys) + 1``): chunk ``chunk_keys[i]`` is held by
    ``doc_ids[offsets[i]:offsets[i+1]]``; ``doc_ids`` (uint32): ascending within a chunk.
    ``generation``: the run that wrote it.
    """

    lo: int
    hi: int
    chunk_keys: np.ndarray
    offsets: np.ndarray
    doc_ids: np.ndarray
    generation: int = 0

    @classmethod
    def empty(cls, lo: int, hi: int) -> ShardData:
        """A shard holding no postings."""
        return cls(lo, hi, np.zeros(0, np.uint32), np.zeros(1, np.uint64), np.zeros(0, np.uint32))

    @property
    def n_postings(self) -> int:
        """Number of (chunk, document) postings."""
        return len(self.doc_ids)

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays in memory."""
        return self.chunk_keys.nbytes + self.offsets.nbytes + self.doc_ids.nbytes


def shard_width(hash_bits: int, n_shards: int) -> int:
    """Chunk IDs per shard range: ``ceil(2**hash_bits / n_shards)`` (the last range may be
    shorter)."""
    return -(-(2**hash_bits) // n_shards)


def shard_ranges(hash_bits: int, n_shards: int) -> list[tuple[int, int]]:
    """The ``[lo, hi)`` chunk-ID range of every shard: equal, contiguous, covering 2**hash_bits."""
    space = 2**hash_bits
    width = shard_width(hash_bits, n_shards)
    return [(i * width, min((i + 1) * width, space)) for i in range(n_shards)]


def shard_of(chunk_ids: np.ndarray, shard_width: int) -> np.ndarray:
    """The shard (int64) of each chunk ID: ``chunk_id // shard_width``, in uint64 arithmetic
    (a width of ``2**64``, one shard over 64-bit IDs, has no uint64 value: all are in 0)."""
    ids = np.asarray(chunk_ids)
    if shard_width >= 2**64:
        return np.zeros(len(ids), dtype=np.int64)
    return (ids.astype(np.uint64) // np.uint64(shard_width)).astype(np.int64)


def _is_wide(keys: np.ndarray) -> bool:
    return keys.ndim == 2


def pack_pairs(chunk_ids: np.ndarray, doc_ids: np.ndarray) -> np.ndarray:
    """Pair keys of equally long arrays of chunk IDs and doc IDs (uint32): ``chunk_id << 32 |
    doc_id`` (uint64) for uint32 chunk IDs, rows ``(chunk_id, doc_id)`` (``(n, 2)`` uint64)
    for uint64 ones (see the module docstring). The order of the input is kept."""
    if np.asarray(chunk_ids).dtype == _U64:
        out = np.empty((len(chunk_ids), 2), dtype=np.uint64)
        out[:, 0] = chunk_ids
        out[:, 1] = doc_ids
        return out
    return (chunk_ids.astype(np.uint64) << np.uint64(32)) | doc_ids.astype(np.uint64)


def pair_chunks(keys: np.ndarray) -> np.ndarray:
    """The chunk IDs of pair keys (uint32 for packed keys, uint64 for wide ones)."""
    if _is_wide(keys):
        return np.ascontiguousarray(keys[:, 0])
    return (keys >> np.uint64(32)).astype(np.uint32)


def pair_docs(keys: np.ndarray) -> np.ndarray:
    """The doc IDs (uint32) of pair keys."""
    if _is_wide(keys):
        return keys[:, 1].astype(np.uint32)
    return (keys & _LOW32).astype(np.uint32)


def _distinct_sorted(keys: np.ndarray) -> np.ndarray:
    if len(keys) < 2:
        return keys
    return keys[run_starts(keys)]


def sort_pairs(keys: np.ndarray, distinct: bool = False) -> np.ndarray:
    """Pair keys sorted by ``(chunk, doc)`` (``distinct``: duplicates removed); packed keys
    with one sort, wide keys with :func:`sort_columns`."""
    if not _is_wide(keys):
        out = np.sort(keys)
        return _distinct_sorted(out) if distinct else out
    chunks, docs = sort_columns(keys[:, 0], keys[:, 1], distinct)
    out = np.empty((len(chunks), 2), dtype=np.uint64)
    out[:, 0] = chunks
    out[:, 1] = docs
    return out


def sort_columns(
    chunks: np.ndarray, docs: np.ndarray, distinct: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """``(chunk IDs, doc IDs)`` pairs given as two columns (chunk IDs up to 64 bits, doc IDs
    up to 32 bits), sorted by ``(chunk, doc)``; returns the columns (uint64 chunk IDs, doc IDs
    in ``docs``' dtype; ``distinct``: duplicates removed).

    Where chunk bits and doc bits together fit in 64 (e.g. 40-bit IDs beside doc IDs below
    2**24) the pairs are packed ``chunk << b | doc`` and sorted once; otherwise the chunk IDs
    are replaced by their ranks among the distinct IDs (one argsort) and ``rank << 32 | doc``
    is sorted (docs/accuracy.md, "Cost", times both)."""
    chunks = np.asarray(chunks, dtype=np.uint64)
    dtype = np.asarray(docs).dtype
    docs = np.asarray(docs).astype(np.uint64)
    if len(chunks) == 0:
        return chunks, docs.astype(dtype)
    doc_bits = max(1, int(docs.max()).bit_length())
    chunk_bits = int(chunks.max()).bit_length()
    if chunk_bits + doc_bits <= 64:
        packed = (chunks << np.uint64(doc_bits)) | docs
        packed.sort()
        if distinct:
            packed = _distinct_sorted(packed)
        low = (packed & np.uint64((1 << doc_bits) - 1)).astype(dtype)
        return packed >> np.uint64(doc_bits), low
    if chunk_bits + doc_bits - 64 <= _MAX_PARTITION_BITS:
        chunks, docs = _partitioned_sort(chunks, docs, chunk_bits, doc_bits, distinct)
        return chunks, docs.astype(dtype)
    order = np.argsort(chunks)
    ranked = chunks[order]
    first = run_starts(ranked)
    rank = np.empty(len(chunks), dtype=np.uint64)
    rank[order] = np.cumsum(first) - 1
    packed = (rank << np.uint64(32)) | docs
    packed.sort()
    if distinct:
        packed = _distinct_sorted(packed)
    return ranked[first][packed >> np.uint64(32)], (packed & _LOW32).astype(dtype)


#: most leading chunk-ID bits :func:`_partitioned_sort` partitions by (a radix pass on uint16)
_MAX_PARTITION_BITS = 16


def _partitioned_sort(
    chunks: np.ndarray, docs: np.ndarray, chunk_bits: int, doc_bits: int, distinct: bool
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sort_columns` where ``chunk << doc_bits | doc`` needs ``chunk_bits + doc_bits``
    > 64 bits but the excess ``p`` is at most 16 (64-bit IDs beside a batch's doc IDs).

    The pairs are partitioned by the top ``p`` bits of the chunk ID (a stable radix pass over
    uint16 digits), which leaves the lower ``chunk_bits - p`` bits and the doc ID in one uint64
    key per pair; each partition's keys are sorted in place (small, in cache: far cheaper than
    an argsort of the whole array) and the top bits put back. Returns uint64 chunk IDs and
    doc IDs (uint64)."""
    p = max(1, chunk_bits + doc_bits - 64)
    low_bits = chunk_bits - p
    digit = (chunks >> np.uint64(low_bits)).astype(np.uint16)
    order = np.argsort(digit, kind="stable")  # radix sort: O(n)
    low_mask = np.uint64((1 << low_bits) - 1)
    packed = ((chunks & low_mask) << np.uint64(doc_bits)) | docs
    packed = packed[order]
    sizes = np.bincount(digit, minlength=1 << p)
    bounds = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=bounds[1:])
    edges = bounds.tolist()
    for i in np.flatnonzero(sizes > 1).tolist():
        packed[edges[i] : edges[i + 1]].sort()
    part = np.repeat(np.arange(len(sizes), dtype=np.uint64), sizes)
    if distinct and len(packed) > 1:
        keep = run_starts(packed)
        keep[bounds[1:-1][sizes[1:] > 0]] = True  # equal keys in two partitions differ
        packed, part = packed[keep], part[keep]
    out_chunks = (packed >> np.uint64(doc_bits)) | (part << np.uint64(low_bits))
    return out_chunks, packed & np.uint64((1 << doc_bits) - 1)


def sorted_unique(a: np.ndarray) -> np.ndarray:
    """``a`` sorted with duplicates removed (sort + mask; faster than ``np.unique`` on uint64)."""
    a = np.sort(a)
    if len(a) < 2:
        return a
    return a[run_starts(a)]


def find_keys(keys: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which of ``ids`` are in the sorted ``keys`` (a numpy array or memory map), and where:
    ``(ids present, their positions in keys as int64)``."""
    pos = np.searchsorted(keys, ids)
    inside = pos < len(keys)
    pos, ids = pos[inside], ids[inside]
    hit = keys[pos] == ids
    return ids[hit], pos[hit].astype(np.int64)


def split_sorted_by_shard(keys: np.ndarray, shard_width: int, n_shards: int) -> list[np.ndarray]:
    """Split sorted pair keys into ``n_shards`` consecutive slices by the chunk ID's range."""
    # only inner boundaries: the end of the last range (2**32, 2**64) has no uint64 value;
    # (n_shards - 1) * shard_width < 2**hash_bits (IndexConfig checks it), in Python ints
    inner = np.array([i * shard_width for i in range(1, n_shards)], dtype=np.uint64)
    if _is_wide(keys):
        at = np.searchsorted(keys[:, 0], inner)
    else:
        at = np.searchsorted(keys, inner << np.uint64(32))
    cut = np.concatenate([[0], at, [len(keys)]])
    return [keys[cut[i] : cut[i + 1]] for i in range(n_shards)]


def build_postings(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR postings from sorted, distinct pair keys.

    Returns ``(chunk_keys, offsets, doc_ids)``: the distinct chunk IDs (uint32, ascending;
    uint64 from wide keys), ``offsets`` (uint64, ``len(chunk_keys) + 1``; chunk
    ``chunk_keys[i]`` is held by ``doc_ids[offsets[i]:offsets[i+1]]``) and the doc IDs
    (uint32, ascending in each list).
    """
    chunk = pair_chunks(keys)
    doc_ids = pair_docs(keys)
    n = len(chunk)
    if n == 0:
        return np.zeros(0, chunk.dtype), np.zeros(1, np.uint64), doc_ids
    starts = np.flatnonzero(run_starts(chunk))
    offsets = np.empty(len(starts) + 1, dtype=np.uint64)
    offsets[:-1] = starts
    offsets[-1] = n
    return chunk[starts], offsets, doc_ids


def doc_mask(members: np.ndarray, doc_ids: np.ndarray) -> np.ndarray:
    """Boolean mask: which ``doc_ids`` are in ``members`` (uint32; a lookup table, one gather)."""
    if len(members) == 0 or len(doc_ids) == 0:
        return np.zeros(len(doc_ids), dtype=bool)
    size = int(max(members.max(), doc_ids.max())) + 1
    table = np.zeros(size, dtype=bool)
    table[members] = True
    return table[doc_ids]


def remap_docs(keys: np.ndarray, old_ids: np.ndarray, new_ids: np.ndarray) -> np.ndarray:
    """Replace doc IDs ``old_ids[i]`` by ``new_ids[i]`` in pair keys; unmapped pairs are dropped.

    ``old_ids`` must be sorted (uint32). The result is sorted again.
    """
    if len(keys) == 0:
        return keys
    docs = pair_docs(keys)
    pos = np.searchsorted(old_ids, docs)
    pos_c = np.minimum(pos, max(len(old_ids) - 1, 0))
    ok = (
        (pos < len(old_ids)) & (old_ids[pos_c] == docs)
        if len(old_ids)
        else np.zeros(len(docs), bool)
    )
    if _is_wide(keys):
        out = keys[ok]
        out[:, 1] = new_ids[pos_c[ok]]
        return sort_pairs(out)
    out = (keys[ok] & ~_LOW32) | new_ids[pos_c[ok]].astype(np.uint64)
    # the input is a concatenation of sorted runs (one per chunking task) and the mapping
    # mostly keeps their order: timsort merges such runs (scripts/bench_kernels.py compares
    # it with quicksort on such input; docs/benchmarks.md, "Kernels")
    out.sort(kind="stable")
    return out


def _insert_sorted(a: np.ndarray, b: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``a`` with ``b[i]`` inserted before ``a[at[i]]`` (``at`` non-decreasing)."""
    out = np.empty(len(a) + len(b), dtype=np.result_type(a, b))
    pos = at + np.arange(len(b))
    mask = np.ones(len(out), dtype=bool)
    mask[pos] = False
    out[pos] = b
    out[mask] = a
    return out


def _segment_search(
    values: np.ndarray, lo: np.ndarray, hi: np.ndarray, x: np.ndarray
) -> np.ndarray:
    """For each ``i``: first position in sorted ``values[lo[i]:hi[i]]`` with value >= ``x[i]``."""
    lo, hi = lo.copy(), hi.copy()
    while True:
        open_ = lo < hi
        if not open_.any():
            return lo
        mid = (lo + hi) // 2
        right = open_ & (values[np.minimum(mid, len(values) - 1)] < x)
        lo = np.where(right, mid + 1, lo)
        hi = np.where(open_ & ~right, mid, hi)


def merge_shard(
    old: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
    delta: np.ndarray,
    dropped: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """New CSR postings of a shard: ``old`` minus documents ``dropped``, plus ``delta``.

    ``old``: ``(chunk_keys, offsets, doc_ids)`` or None; ``delta``: sorted pair keys of the
    recomputed documents: each is new or among ``dropped`` (only the old postings of a dropped
    document are removed). Works on the CSR arrays directly: one linear pass over the
    old postings, a binary search inside its list for each delta posting.
    """
    if old is None:
        return build_postings(delta)
    keys, offsets, docs = old
    df = np.diff(offsets).astype(np.int64)
    if len(dropped) and len(docs):
        gone = doc_mask(dropped, docs)
        if gone.any():
            where = np.flatnonzero(gone)
            df -= np.bincount(
                np.searchsorted(offsets, where, side="right") - 1, minlength=len(keys)
            )
            docs = docs[~gone]
    if len(delta) == 0 and len(docs) == int(offsets[-1]):
        return keys, offsets, docs
    kept_off = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(df, out=kept_off[1:])
    dc = pair_chunks(delta)
    if len(dc) == 0:
        dc = dc.astype(keys.dtype)
    dd = pair_docs(delta)
    ci = np.searchsorted(keys, dc)
    exists = ci < len(keys)
    exists[exists] = keys[ci[exists]] == dc[exists]
    lo = kept_off[ci]
    hi = np.where(exists, kept_off[np.minimum(ci + 1, len(keys))], lo)
    out_docs = _insert_sorted(docs, dd, _segment_search(docs, lo, hi, dd))
    new_keys = sorted_unique(dc[~exists])
    at = np.searchsorted(keys, new_keys)
    out_keys = _insert_sorted(keys, new_keys, at)
    out_df = _insert_sorted(df, np.zeros(len(new_keys), np.int64), at)
    out_df += np.bincount(np.searchsorted(out_keys, dc), minlength=len(out_keys))
    live = out_df > 0
    out_offsets = np.zeros(int(live.sum()) + 1, dtype=np.uint64)
    np.cumsum(out_df[live], out=out_offsets[1:])
    return out_keys[live], out_offsets, out_docs


def crossed_docs(
    old: tuple[np.ndarray, np.ndarray] | None,
    new: tuple[np.ndarray, np.ndarray, np.ndarray],
    max_df: int | tuple[int, ...] | None,
) -> np.ndarray:
    """Documents holding a chunk whose document count crossed ``max_df`` in a merge (a tuple:
    any of those counts, e.g. ``max_df`` and the cutoff of a bounded index).

    ``old``: ``(chunk_keys, offsets)`` before the merge (None: empty); ``new``:
    ``(chunk_keys, offsets, doc_ids)`` after it. A chunk is counted for similarity while its
    document count is at most ``max_df``; where that changed (either way, a chunk absent from
    one side having count 0), every pair of documents holding it now shares one chunk more or
    less, so those documents' similarities must be recomputed. Returns their sorted distinct
    doc IDs (uint32); nothing when ``max_df`` is None.
    """
    new_keys, new_off, new_docs = new
    if max_df is None or len(new_keys) == 0:
        return np.zeros(0, np.uint32)
    new_df = np.diff(new_off).astype(np.int64)
    old_df = np.zeros(len(new_keys), np.int64)
    if old is not None and len(old[0]):
        found, pos = find_keys(old[0], new_keys)
        old_counts = np.diff(old[1]).astype(np.int64)
        old_df[np.searchsorted(new_keys, found)] = old_counts[pos]
    marks = max_df if isinstance(max_df, tuple) else (max_df,)
    changed = np.zeros(len(new_keys), bool)
    for m in marks:
        changed |= (old_df <= m) != (new_df <= m)
    crossed = np.flatnonzero(changed)
    if len(crossed) == 0:
        return np.zeros(0, np.uint32)
    starts = new_off[crossed].astype(np.int64)
    counts = new_df[crossed]
    first = np.zeros(len(counts), dtype=np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    idx = np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(starts - first, counts)
    return sorted_unique(new_docs[idx]).astype(np.uint32)
