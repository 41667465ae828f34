"""Shared-chunk counts and similarity selection as pure numpy kernels (DESIGN §1, §3.4).

All-pairs counting walks a shard's posting lists directly: for a posting of document ``d`` at
position ``p`` of a list ``[s, e)``, the later postings ``p+1 .. e-1`` hold documents ``o > d``
(doc IDs ascend within a list), so every unordered pair is emitted once per shared chunk and
both directions come from that one count. Documents are processed in blocks of doc IDs whose
emitted pairs (:func:`pair_work`) stay under a budget, which bounds the memory in flight.
"""

from __future__ import annotations

import numpy as np

from simdask.kernels.arrays import expand_ranges, run_lengths, run_starts
from simdask.kernels.postings import ShardData, doc_mask, find_keys

__all__ = [
    "block_pair_keys",
    "candidate_mask",
    "containment",
    "count_block_keys",
    "count_keys",
    "directed_rows",
    "max_block_docs",
    "member_pair_keys",
    "member_work",
    "pair_work",
    "plan_blocks",
    "query_counts",
    "skipped_chunks",
    "split_lists",
    "sum_pair_counts",
    "top_k_rows",
]


def containment(shared, size):
    """How much of a chunk set is found in another one, in percent (0..100, float64):
    ``100 * shared / size``, ``size`` being the set's number of distinct chunks and ``shared``
    the number it has in common with the other set. Not symmetric: the similarity of ``A`` to
    ``B`` is ``containment(|A & B|, |A|)`` (DESIGN §1). An empty set (``size`` 0) is 0 %
    contained. Scalars give a float, arrays (broadcast together) an array.
    """
    if np.ndim(shared) == 0 and np.ndim(size) == 0:
        return 100.0 * shared / size if size else 0.0
    size = np.asarray(size)
    top = 100.0 * np.asarray(shared)
    out = np.zeros(np.broadcast(top, size).shape)
    np.divide(top, size, out=out, where=size != 0)
    return out


def _posting_ends(shard: ShardData, max_df: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Per posting: end of its list (int64) and whether its chunk is counted (df <= max_df)."""
    df = np.diff(shard.offsets).astype(np.int64)
    ends = np.repeat(shard.offsets[1:].astype(np.int64), df)
    counted = np.ones(len(ends), dtype=bool) if max_df is None else np.repeat(df <= max_df, df)
    return ends, counted


def skipped_chunks(shard: ShardData, max_df: int | None) -> int:
    """Number of distinct chunks of the shard held by more than ``max_df`` documents."""
    if max_df is None:
        return 0
    return int(np.count_nonzero(np.diff(shard.offsets) > np.uint64(max_df)))


def pair_work(shard: ShardData, n_docs: int, max_df: int | None = None) -> np.ndarray:
    """Per document ID (int64, length ``n_docs``): pairs :func:`block_pair_keys` emits for it."""
    ends, counted = _posting_ends(shard, max_df)
    later = ends - np.arange(len(ends), dtype=np.int64) - 1
    later[~counted] = 0
    work = np.bincount(shard.doc_ids, weights=later, minlength=n_docs)
    return np.rint(work).astype(np.int64)


def plan_blocks(
    work: np.ndarray, budget: int, max_docs: int | None = None
) -> list[tuple[int, int]]:
    """Cut ``0..len(work)`` into consecutive ``[lo, hi)`` blocks of total work <= ``budget``
    and at most ``max_docs`` documents.

    A single document whose work exceeds the budget gets a block of its own.
    """
    n = len(work)
    blocks: list[tuple[int, int]] = []
    cum = np.cumsum(work)
    lo = 0
    while lo < n:
        base = cum[lo - 1] if lo else 0
        hi = int(np.searchsorted(cum, base + budget, side="right"))
        hi = max(hi, lo + 1)
        if max_docs is not None:
            hi = min(hi, lo + max_docs)
        blocks.append((lo, min(hi, n)))
        lo = hi
    return blocks


def max_block_docs(n_docs: int) -> int:
    """Most documents a block may hold so that its pair keys fit in uint32."""
    return max(1, (2**32 - 1) // max(1, n_docs))


def block_pair_keys(
    shard: ShardData, doc_lo: int, doc_hi: int, n_docs: int, max_df: int | None = None
) -> np.ndarray:
    """Pairs ``(d, o)``, ``doc_lo <= d < doc_hi``, ``o > d``, one per chunk they share here.

    Returns unsorted uint32 keys ``(d - doc_lo) * n_docs + o`` (the block may hold at most
    :func:`max_block_docs` documents); :func:`count_keys` adds them up across shards.
    """
    ends, counted = _posting_ends(shard, max_df)
    doc_ids = shard.doc_ids
    p = np.flatnonzero(counted & (doc_ids >= doc_lo) & (doc_ids < doc_hi))
    cnt = ends[p] - p - 1
    nz = cnt > 0
    p, cnt = p[nz], cnt[nz]
    if len(p) == 0:
        return np.zeros(0, np.uint32)
    q = expand_ranges(p + 1, cnt)
    base = (doc_ids[p].astype(np.int64) - doc_lo) * n_docs
    return (np.repeat(base, cnt) + doc_ids[q]).astype(np.uint32)


def candidate_mask(
    keys: np.ndarray, counts: np.ndarray, first: np.ndarray, n_chunks: np.ndarray, threshold: float
) -> np.ndarray:
    """Which counted pairs can reach ``threshold`` percent in either direction.

    ``keys`` (sorted uint32 ``i * n_docs + o``) pair document ``first[i]`` with ``o``; a pair
    passes only if ``shared >= ceil(threshold * min(|d|, |o|) / 100)``, so pairs counted once
    matter only where a document needs a single shared chunk. Deciding that before decoding the
    keys keeps the big temporaries small (fresh memory is slow on shared VMs).
    """
    n_docs = len(n_chunks)
    # a single shared chunk passes exactly when directed_rows says so (same float expression)
    short = (n_chunks > 0) & (containment(1, n_chunks) >= threshold)
    cand = counts >= 2
    rows = np.flatnonzero(short[first]).astype(np.uint64)
    if len(rows):  # contiguous key ranges of the short first documents (needles as uint32)
        edges = np.concatenate([rows * n_docs, (rows + 1) * n_docs])
        edges = np.minimum(edges, np.iinfo(np.uint32).max).astype(np.uint32)
        cuts = np.searchsorted(keys, edges).reshape(2, -1)
        for lo, hi in cuts.T.tolist():
            cand[lo:hi] = True
    if short.any():
        cand |= short[keys % np.uint32(n_docs)]
    return cand


def count_keys(parts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys of all parts (sorted) and how often each occurs (uint32)."""
    keys = np.concatenate(parts) if parts else np.zeros(0, np.uint32)
    keys.sort()
    return run_lengths(keys)


def count_block_keys(
    parts: list[np.ndarray], n_docs: int, slots: int = 1 << 20, density: float = 1 / 16
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`count_keys` of a block's pair keys ``i * n_docs + o`` (uint32), by counting
    where the keys are dense.

    When every part lists its keys by ascending ``i`` (as the all-pairs emission gives them;
    checked, else :func:`count_keys`), the rows ``i`` are taken in runs of about ``slots``
    possible keys; a run holding at least ``density * slots`` keys is counted with one
    ``bincount`` over its key range (8 bytes per possible key: 8 MB at ``slots`` 2**20), a
    sparser one is sorted. On boilerplate-heavy text the light pairs are dense: on the man
    pages a block of 20 M keys fills ~20 % of its possible keys, and this counts it in 0.29
    CPU s against 0.95 s for the sort of :func:`count_keys`.
    Returns sorted distinct keys and their counts (uint32), exactly as :func:`count_keys`.
    """
    n_docs = max(1, int(n_docs))
    parts = [p for p in parts if len(p)]
    if not parts:
        return np.zeros(0, np.uint32), np.zeros(0, np.uint32)
    for p in parts:
        row = p // np.uint32(n_docs)
        if np.any(row[1:] < row[:-1]):
            return count_keys(parts)
    last = max(int(p[-1]) // n_docs for p in parts) + 1
    step = max(1, slots // n_docs)
    keys, counts = [], []
    a = min(int(p[0]) // n_docs for p in parts)  # runs start at rows present: none empty
    while a < last:
        lo, hi = a * n_docs, min(last, a + step) * n_docs
        x = np.concatenate([_key_range(p, lo, hi) for p in parts])
        if len(x) < density * (hi - lo):
            x.sort()
            k, c = run_lengths(x)
        else:
            c = np.bincount(x - np.uint32(lo), minlength=hi - lo)
            k = np.flatnonzero(c)
            c = c[k].astype(np.uint32)
            k = (k + lo).astype(np.uint32)
        keys.append(k)
        counts.append(c)
        if hi > np.iinfo(np.uint32).max:
            break
        nxt = [_key_range(p, hi, 2**32)[:1] for p in parts]
        a = min((int(v[0]) // n_docs for v in nxt if len(v)), default=last)
    return np.concatenate(keys), np.concatenate(counts)


def _key_range(p: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """The keys of ``p`` in ``[lo, hi)``, ``p`` listing its rows ``key // n_docs`` ascending
    (``key < bound`` is then true then false along ``p`` for a bound at a row start, so a
    binary search finds where it changes; ``hi`` past uint32: to the end)."""
    start = int(np.searchsorted(p, np.uint32(lo)))
    end = len(p) if hi > np.iinfo(np.uint32).max else int(np.searchsorted(p, np.uint32(hi)))
    return p[start:end]


def _member_postings(shard: ShardData, members: np.ndarray, max_df: int | None):
    """Positions of the members' postings, their list starts and ends (int64 arrays)."""
    p = np.flatnonzero(doc_mask(members, shard.doc_ids))
    ci = np.searchsorted(shard.offsets, p, side="right") - 1
    starts = shard.offsets[ci].astype(np.int64)
    ends = shard.offsets[ci + 1].astype(np.int64)
    if max_df is not None:
        ok = ends - starts <= max_df
        p, starts, ends = p[ok], starts[ok], ends[ok]
    return p, starts, ends


def member_work(shard: ShardData, members: np.ndarray, max_df: int | None = None) -> np.ndarray:
    """Per member doc (int64, aligned with sorted ``members``): pairs it emits in this shard."""
    p, starts, ends = _member_postings(shard, members, max_df)
    idx = np.searchsorted(members, shard.doc_ids[p])
    return np.bincount(idx, weights=ends - starts - 1, minlength=len(members)).astype(np.int64)


def member_pair_keys(
    shard: ShardData, block: np.ndarray, n_docs: int, max_df: int | None = None
) -> np.ndarray:
    """Pairs ``(r, o)`` for ``r`` in ``block``, every ``o != r``, one per chunk shared here.

    ``block``: sorted doc IDs (uint32) being recomputed, at most :func:`max_block_docs`.
    Unlike :func:`block_pair_keys` both ``(r, o)`` and ``(o, r)`` appear when both are in
    the block. Work is proportional to the block's postings and their lists, not to the
    shard. Returns unsorted uint32 keys ``index of r in block * n_docs + o``.
    """
    if len(block) == 0 or shard.n_postings == 0:
        return np.zeros(0, np.uint32)
    p, starts, ends = _member_postings(shard, block, max_df)
    cnt = ends - starts
    if len(p) == 0:
        return np.zeros(0, np.uint32)
    q = expand_ranges(starts, cnt)
    doc_ids = shard.doc_ids
    base = np.searchsorted(block, doc_ids[p]).astype(np.int64) * n_docs
    keys = np.repeat(base, cnt) + doc_ids[q]
    return keys[np.repeat(p, cnt) != q].astype(np.uint32)  # not the posting itself


def sum_pair_counts(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Add up per-shard ``(pair keys, counts)`` into one sorted ``(keys, counts)``.

    Keys are repeated by their counts and sorted with ``np.sort``, faster than a stable
    argsort of the keys with the counts carried along (measured by scripts/bench_kernels.py;
    docs/benchmarks.md, "Kernels").
    """
    parts = [p for p in parts if len(p[0])]
    if not parts:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint32)
    keys = np.concatenate([np.repeat(k, c.astype(np.int64)) for k, c in parts])
    keys.sort()
    return run_lengths(keys)


def directed_rows(
    d: np.ndarray, o: np.ndarray, shared: np.ndarray, n_chunks: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Both directions of unordered pairs ``(d, o)``, kept where similarity >= ``threshold``.

    ``n_chunks[x]`` is ``|x|``. Returns ``(doc, other, shared, similarity)``: similarity of doc
    to other is :func:`containment` ``(shared, |doc|)`` percent (float64).
    """
    s = shared.astype(np.int64)
    sim_d = containment(s, n_chunks[d])
    sim_o = containment(s, n_chunks[o])
    kd = sim_d >= threshold
    ko = sim_o >= threshold
    return (
        np.concatenate([d[kd], o[ko]]),
        np.concatenate([o[kd], d[ko]]),
        np.concatenate([s[kd], s[ko]]),
        np.concatenate([sim_d[kd], sim_o[ko]]),
    )


def top_k_rows(doc, other, shared, sim, k: int):
    """Keep each doc's best ``k`` rows: highest similarity, then lowest ``other`` (deterministic).

    Returns the four arrays filtered and sorted by ``(doc, -similarity, other)``. Rows whose
    similarity ranks as their ``shared`` count does within a document (the similarity stage's
    rows: ``containment(shared, |doc|)``) are sorted by one packed integer key
    (:func:`_counted_order`, ~5x faster than the three-key lexsort); any other input falls
    back to the lexsort, with the same result.
    """
    order = _counted_order(doc, other, shared, sim)
    if order is None:
        order = np.lexsort((other, -sim, doc))
    sdoc = doc[order]
    if len(sdoc) == 0:
        return doc[order], other[order], shared[order], sim[order]
    new = run_starts(sdoc)
    group_start = np.maximum.accumulate(np.where(new, np.arange(len(sdoc)), 0))
    keep = order[(np.arange(len(sdoc)) - group_start) < k]
    return doc[keep], other[keep], shared[keep], sim[keep]


def _counted_order(doc, other, shared, sim) -> np.ndarray | None:
    """The stable order by ``(doc, -similarity, other)`` from a stable argsort of one uint64
    key ``doc | max - shared | other``, or None when that key does not give it: widths over 64
    bits, negative values, or a document whose similarity does not rank as ``shared`` (checked
    on the sorted rows: within a document, similarity non-increasing and equal exactly where
    ``shared`` is equal; then the two orders are the same)."""
    if len(doc) == 0:
        return np.zeros(0, np.int64)
    lows = (int(doc.min()), int(other.min()), int(shared.min()))
    if min(lows) < 0:
        return None
    db, ob, sb = (int(x.max()).bit_length() for x in (doc, other, shared))
    if db + ob + sb > 64:
        return None
    s = np.uint64((1 << sb) - 1) - shared.astype(np.uint64)
    key = (doc.astype(np.uint64) << np.uint64(ob + sb)) | (s << np.uint64(ob))
    key |= other.astype(np.uint64)
    order = np.argsort(key, kind="stable")
    d, sh, sm = doc[order], shared[order], sim[order]
    same = d[1:] == d[:-1]
    ok = (sm[1:] <= sm[:-1]) & ((sm[1:] == sm[:-1]) == (sh[1:] == sh[:-1]))
    return order if bool(np.all(ok | ~same)) else None


def query_counts(
    shard: ShardData, chunk_ids: np.ndarray, max_df: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Documents holding any of ``chunk_ids`` (distinct, in this shard's range) and how many.

    Returns sorted doc IDs (uint32) and shared counts (uint32).
    """
    keys = shard.chunk_keys
    pos = find_keys(keys, chunk_ids)[1]
    starts = shard.offsets[pos].astype(np.int64)
    ends = shard.offsets[pos + 1].astype(np.int64)
    df = ends - starts
    if max_df is not None:
        ok = df <= max_df
        starts, df = starts[ok], df[ok]
    total = int(df.sum())
    if total == 0:
        return np.zeros(0, np.uint32), np.zeros(0, np.uint32)
    idx = expand_ranges(starts, df)
    docs = np.sort(shard.doc_ids[idx])
    return run_lengths(docs)


def split_lists(doc, other, shared, sim, top_k: int, depth: int):
    """Cut complete lists into what is shown, the reserve and the floors.

    ``doc, other, shared, sim``: every row of some documents down to rank ``depth + 1`` at
    least (a document with fewer rows has all its partners here). Each document's rows are
    ranked as :func:`top_k_rows` does (highest similarity, then lowest ``other``): ranks
    ``< top_k`` are shown, ranks ``top_k .. depth - 1`` kept in reserve, and the row of rank
    ``depth`` (the best partner not stored) becomes the document's floor; lower ones go.
    Returns ``(shown, reserve, floors)``: two ``(doc, other, shared, sim)`` tuples and
    ``(doc, sim, other)`` of the floors (no entry: every partner is stored).
    """
    doc, other, shared, sim = top_k_rows(doc, other, shared, sim, depth + 1)
    rank = np.zeros(len(doc), np.int64)
    if len(doc):
        new = run_starts(doc)
        idx = np.arange(len(doc))
        rank = idx - np.maximum.accumulate(np.where(new, idx, 0))
    cols = (doc, other, shared, sim)
    shown = tuple(c[rank < top_k] for c in cols)
    mid = (rank >= top_k) & (rank < depth)
    reserve = tuple(c[mid] for c in cols)
    last = rank == depth
    return shown, reserve, (doc[last], sim[last], other[last])
