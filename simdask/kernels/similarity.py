"""Shared-chunk counts and similarity selection as pure numpy kernels (DESIGN §1, §3.4).

All-pairs counting walks a shard's posting lists directly: for a posting of document ``d`` at
position ``p`` of a list ``[s, e)``, the later postings ``p+1 .. e-1`` hold documents ``o > d``
(doc IDs ascend within a list), so every unordered pair is emitted once per shared chunk and
both directions come from that one count. Documents are processed in blocks of doc IDs whose
emitted pairs (:func:`pair_work`) stay under a budget, which bounds the memory in flight.
"""

from __future__ import annotations

import numpy as np

from simdask.kernels.arrays import add_grown, expand_ranges, run_lengths, run_starts
from simdask.kernels.measures import CONTAINMENT, NEVER, containment
from simdask.kernels.postings import ShardData, doc_mask, find_keys
from simdask.kernels.range_pieces import VIEW_PIECE_POSTINGS, chunk_pieces, piece_offsets
from simdask.kernels.top_rows import Rows, top_k_rows

__all__ = [
    "NEVER",
    "block_pair_keys",
    "candidate_mask",
    "containment",
    "count_block_keys",
    "count_keys",
    "directed_rows",
    "group_order",
    "list_pair_keys",
    "max_block_docs",
    "member_pair_keys",
    "member_work",
    "need_counts",
    "pair_work",
    "plan_blocks",
    "query_postings",
    "row_slices",
    "skipped_chunks",
    "split_lists",
    "sum_pair_counts",
    "top_either_way",
    "top_k_rows",
]


def need_counts(n_chunks: np.ndarray, threshold: float) -> np.ndarray:
    """Per document ``d``: the fewest shared chunks ``s`` with ``containment(s, |d|) >=
    threshold`` (int64; ``|d| = n_chunks[d]``): :meth:`CONTAINMENT.need
    <simdask.kernels.measures.Containment.need>`, so ``shared >= need[d]`` exactly when the
    row ``d -> o`` passes. An empty document passes only at ``threshold <= 0`` (need 0), else
    never (:data:`NEVER`)."""
    return CONTAINMENT.need(n_chunks, threshold)


def _posting_ends(shard: ShardData, max_df: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Per posting: end of its list (int64) and whether its chunk is counted (df <= max_df)."""
    df = np.diff(shard.offsets).astype(np.int64)
    ends = np.repeat(shard.offsets[1:].astype(np.int64), df)
    counted = np.ones(len(ends), dtype=bool) if max_df is None else np.repeat(df <= max_df, df)
    return ends, counted


def skipped_chunks(shard: ShardData, max_df: int | None) -> int:
    """Number of distinct chunks of the shard held by more than ``max_df`` documents (read
    in pieces of lists: no temporary follows the shard)."""
    if max_df is None:
        return 0
    return sum(
        int(np.count_nonzero(piece_offsets(shard.offsets, c0, c1)[1] > max_df))
        for c0, c1 in chunk_pieces(shard.offsets, VIEW_PIECE_POSTINGS)
    )


def pair_work(
    shard: ShardData, n_docs: int, max_df: int | None = None, piece: int = VIEW_PIECE_POSTINGS
) -> np.ndarray:
    """Per document ID (int64): pairs :func:`block_pair_keys` emits for it; ``n_docs`` long,
    or up to the largest document ID that emits when that is higher.

    Walks the shard in pieces of at most ``piece`` postings
    (:func:`~simdask.kernels.range_pieces.chunk_pieces`) and reads only the postings of the
    lists that emit (in prose most lists are held by one document and emit nothing): its
    temporaries (int64 and float64, ~40 bytes a posting) follow the piece, not the shard."""
    work = np.zeros(n_docs, np.float64)  # sums of integers < 2**53: exact
    for c0, c1 in chunk_pieces(shard.offsets, piece):
        off, df = piece_offsets(shard.offsets, c0, c1)
        # the postings of the lists that emit: 2 <= df <= max_df (a posting alone in its
        # list emits nothing, nor does one of a skipped list)
        df[(df < 2) if max_df is None else (df < 2) | (df > max_df)] = 0
        pos = expand_ranges(off[:-1], df)
        docs = shard.doc_ids[pos]
        later = np.repeat(off[1:], df)  # the end of each posting's list
        later -= pos + 1
        del pos
        work = add_grown(work, np.bincount(docs, weights=later))
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
    parts: list[np.ndarray],
    n_docs: int,
    slots: int = 1 << 20,
    density: float = 1 / 16,
    sort_keys: int = 1 << 17,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`count_keys` of a block's pair keys ``i * n_docs + o`` (uint32), by counting
    where the keys are dense.

    When every part lists its keys by ascending ``i`` (as the all-pairs emission gives them;
    checked, else :func:`count_keys`), the rows ``i`` are cut into runs of about ``slots``
    possible keys (one ``searchsorted`` per part for all the cuts); a run holding at least
    ``density * slots`` keys is counted with one ``bincount`` over its key range (8 bytes per
    possible key: 8 MB at ``slots`` 2**20), consecutive sparser runs are sorted together, up
    to ``sort_keys`` keys at a time. On boilerplate-heavy text the light pairs are dense: on
    the man pages a block of 20 M keys fills ~20 % of its possible keys, and this counts it in
    0.29 CPU s against 0.95 s for the sort of :func:`count_keys`; on generated prose they are
    sparse (~1 % at 100k documents): sorting ~2**17 keys at a time (instead of one run of 10
    rows) saves the Python work per run, and the stable sort (timsort: it merges the ascending
    runs each posting list gives) takes ~20 ns a key against ~30 for the default quicksort
    (docs/scale.md, "Light pairs cost").
    Returns sorted distinct keys and their counts (uint32), exactly as :func:`count_keys`.
    """
    n_docs = max(1, int(n_docs))
    parts = [p for p in parts if len(p)]
    if not parts:
        return np.zeros(0, np.uint32), np.zeros(0, np.uint32)
    nd = np.uint32(n_docs)
    for p in parts:
        row = p // nd
        if np.any(row[1:] < row[:-1]):
            return count_keys(parts)
    first = min(int(p[0]) // n_docs for p in parts)
    last = max(int(p[-1]) // n_docs for p in parts) + 1
    step = max(1, slots // n_docs)
    rows = np.arange(first, last, step, dtype=np.int64)
    # inner cuts are rows <= the last key's row, so their keys fit in uint32
    inner = (rows[1:] * n_docs).astype(np.uint32)
    cuts = np.array([[0, *np.searchsorted(p, inner).tolist(), len(p)] for p in parts], np.int64)
    sizes = np.diff(cuts, axis=1).sum(axis=0)
    span = np.minimum(np.append(rows[1:], last) - rows, step) * n_docs
    dense = sizes >= density * span
    keys: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    r, n_runs = 0, len(rows)
    while r < n_runs:
        if sizes[r] == 0:
            r += 1
            continue
        if dense[r]:
            x = np.concatenate([p[c[r] : c[r + 1]] for p, c in zip(parts, cuts, strict=True)])
            lo = int(rows[r]) * n_docs
            c = np.bincount(x - np.uint32(lo), minlength=int(span[r]))
            k = np.flatnonzero(c)
            counts.append(c[k].astype(np.uint32))
            keys.append((k + lo).astype(np.uint32))
            r += 1
            continue
        end, held = r + 1, int(sizes[r])  # consecutive sparse runs: one sort
        while end < n_runs and not dense[end] and held + int(sizes[end]) <= sort_keys:
            held += int(sizes[end])
            end += 1
        x = np.concatenate([p[c[r] : c[end]] for p, c in zip(parts, cuts, strict=True)])
        x.sort(kind="stable")  # timsort: merges the parts' ascending runs
        k, c = run_lengths(x)
        keys.append(k)
        counts.append(c)
        r = end
    return np.concatenate(keys), np.concatenate(counts)


#: rows of a block up to which :func:`row_slices` may cut at every row (a block holds at most
#: 2**32 / n_docs rows: every row of the blocks of 65,536 documents or more)
ROW_CUTS = 1 << 16


def row_slices(parts: list[np.ndarray], n_docs: int, max_keys: int) -> list[list[np.ndarray]]:
    """A block's pair keys ``i * n_docs + o`` (uint32, one array per shard) cut into sub-blocks
    of whole rows ``i`` holding at most ``max_keys`` keys each (a single row holding more gets a
    sub-block of its own): per sub-block, the slice of every part (views, no copy). Every key
    is in exactly one sub-block and all keys of a row in the same one, so counting each
    sub-block (:func:`count_block_keys`) gives exactly the block's counts, cut at row
    boundaries. Parts must list their keys by ascending ``i`` (as the all-pairs emission
    gives them); when one does not, the whole block is one sub-block. Costs one
    ``searchsorted`` per part and candidate cut: a cut at every row for blocks of at most
    :data:`ROW_CUTS` rows (the all-pairs blocks of 65,536 documents or more), else cuts every
    few rows (about 64 per ``max_keys`` keys on average), where a sub-block may exceed
    ``max_keys`` by the keys of one such run of rows. No temporary follows the block but the
    rows check's."""
    n_docs = max(1, int(n_docs))
    parts = [p for p in parts if len(p)]
    total = sum(len(p) for p in parts)
    if total <= max_keys or not all(_rows_ascend(p, n_docs) for p in parts):
        return [parts] if parts else []
    first = min(int(p[0]) // n_docs for p in parts)
    last = max(int(p[-1]) // n_docs for p in parts) + 1
    step = 1  # a cut at every row; beyond ROW_CUTS rows, about 64 cuts per max_keys keys
    if last - first > ROW_CUTS:
        step = max(1, (last - first) * max(1, max_keys // 64) // max(1, total))
    rows = np.arange(first + step, last, step, dtype=np.int64)
    cut_keys = (rows * n_docs).astype(np.uint32)  # rows < last: below the largest key's row
    at = np.array([np.searchsorted(p, cut_keys) for p in parts], np.int64).reshape(len(parts), -1)
    ends = np.concatenate([at, [[len(p)] for p in parts]], axis=1)  # (parts, cuts + 1)
    held = ends.sum(axis=0)  # keys below each cut (the last: all)
    out: list[list[np.ndarray]] = []
    lo = np.zeros(len(parts), np.int64)
    done = 0
    while done < total:
        # the last cut whose keys fit; at least the next cut (a row larger than max_keys)
        j = int(np.searchsorted(held, done + max_keys, side="right")) - 1
        j = max(j, int(np.searchsorted(held, done, side="right")))
        hi = ends[:, j]
        out.append([p[a:b] for p, a, b in zip(parts, lo.tolist(), hi.tolist(), strict=True)])
        lo, done = hi.copy(), int(held[j])
    return out


def _rows_ascend(p: np.ndarray, n_docs: int) -> bool:
    """Whether pair keys ``p`` (``i * n_docs + o``) list their rows ``i`` ascending."""
    row = p // np.uint32(n_docs)
    return not bool(np.any(row[1:] < row[:-1]))


def _member_postings(
    shard: ShardData, members: np.ndarray, max_df: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions of the members' postings, their list starts and ends (int64 arrays)."""
    p = np.flatnonzero(doc_mask(members, shard.doc_ids))
    ci = np.searchsorted(shard.offsets, p.astype(shard.offsets.dtype), side="right") - 1
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
    shard. Returns uint32 keys ``index of r in block * n_docs + o``, grouped by ``r``
    (ascending index; within one ``r`` unsorted: one ascending run per posting list), as
    :func:`~simdask.kernels.member_counts.count_member_candidates` counts them.
    """
    if len(block) == 0 or shard.n_postings == 0:
        return np.zeros(0, np.uint32)
    p, starts, ends = _member_postings(shard, block, max_df)
    cnt = ends - starts
    if len(p) == 0:
        return np.zeros(0, np.uint32)
    doc_ids = shard.doc_ids
    row = np.searchsorted(block, doc_ids[p])
    order = group_order(row, len(block))  # the members' postings grouped by member
    p, starts, cnt, row = p[order], starts[order], cnt[order], row[order]
    return list_pair_keys(doc_ids, p, starts, cnt, row, n_docs)


def group_order(row: np.ndarray, n_rows: int) -> np.ndarray:
    """The stable order grouping ``row`` (values ``0..n_rows-1``) ascending: a radix sort
    on 8 or 16 bits when the rows fit (numpy sorts those stably in linear time), else a
    merge sort of the int64 values."""
    for dtype in (np.uint8, np.uint16):
        if n_rows <= np.iinfo(dtype).max + 1:
            return np.argsort(row.astype(dtype), kind="stable")
    return np.argsort(row, kind="stable")


def list_pair_keys(
    doc_ids: np.ndarray,
    p: np.ndarray,
    starts: np.ndarray,
    cnt: np.ndarray,
    row: np.ndarray,
    n_docs: int,
) -> np.ndarray:
    """uint32 keys ``row[j] * n_docs + o`` for every ``o`` of the list ``starts[j] ..
    starts[j] + cnt[j]`` of ``doc_ids`` but the posting ``p[j]`` itself (in uint32: the keys
    of a block fit, :func:`max_block_docs`)."""
    keys = doc_ids[expand_ranges(starts, cnt)].astype(np.uint32)
    keys += np.repeat((row * n_docs).astype(np.uint32), cnt)
    first = np.zeros(len(cnt), np.int64)
    np.cumsum(cnt[:-1], out=first[1:])
    keep = np.ones(len(keys), bool)
    keep[first + (p - starts)] = False  # not the posting itself
    return keys[keep]


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


def query_postings(
    shard: ShardData, chunk_ids: np.ndarray, max_df: int | None = None
) -> np.ndarray:
    """The doc IDs (uint32, one per posting, unsorted) of the postings of ``chunk_ids``
    (distinct, in this shard's range) held by this shard; lists longer than ``max_df`` left
    out."""
    pos = find_keys(shard.chunk_keys, chunk_ids)[1]
    if max_df is None and np.array_equal(pos, np.arange(len(shard.chunk_keys))):
        # every list of the shard (a query's subset): its doc IDs as they are, no copy
        return np.asarray(shard.doc_ids[int(shard.offsets[0]) : int(shard.offsets[-1])], np.uint32)
    starts = shard.offsets[pos].astype(np.int64)
    df = shard.offsets[pos + 1].astype(np.int64) - starts
    if max_df is not None:
        ok = df <= max_df
        starts, df = starts[ok], df[ok]
    if int(df.sum()) == 0:
        return np.zeros(0, np.uint32)
    return np.asarray(shard.doc_ids[expand_ranges(starts, df)], np.uint32)


def top_either_way(fwd: np.ndarray, rev: np.ndarray, top: int) -> np.ndarray:
    """Ascending positions of the ``top`` largest ``max(fwd, rev)`` (percent both ways; ties:
    larger ``fwd``, then larger ``rev``), with every position tied with the last one kept on
    all three, so that a caller can break those ties by key. All positions when ``top`` is
    at least their number."""
    fwd = np.asarray(fwd, np.float64)
    rev = np.asarray(rev, np.float64)
    if top >= len(fwd):
        return np.arange(len(fwd))
    larger = np.maximum(fwd, rev)
    # the first `top` of the full order are among those at least the top-th largest
    cand = np.flatnonzero(larger >= np.partition(larger, len(larger) - top)[len(larger) - top])
    order = cand[np.lexsort((-rev[cand], -fwd[cand], -larger[cand]))]
    last = order[top - 1]
    tied = (larger == larger[last]) & (fwd == fwd[last]) & (rev == rev[last])
    return np.union1d(order[:top], np.flatnonzero(tied))


def split_lists(
    doc: np.ndarray, other: np.ndarray, shared: np.ndarray, sim: np.ndarray, top_k: int, depth: int
) -> tuple[Rows, Rows, tuple[np.ndarray, np.ndarray, np.ndarray]]:
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
    top = rank < top_k
    shown = doc[top], other[top], shared[top], sim[top]
    mid = (rank >= top_k) & (rank < depth)
    reserve = doc[mid], other[mid], shared[mid], sim[mid]
    last = rank == depth
    return shown, reserve, (doc[last], sim[last], other[last])
