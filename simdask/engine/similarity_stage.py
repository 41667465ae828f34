"""The similarity stage (DESIGN §3.4): the merged shards stay on the workers that hold them;
per block of documents, each shard's pair keys are emitted where the shard is (map), then
counted, thresholded and cut to the top k by one task (aggregate).

Every path runs its blocks on the one block driver (:mod:`.block_driver`: a
:class:`~.block_driver.BlockPass` run by :func:`~.block_driver.run_blocks`): all pairs of a
full build (:func:`all_pairs`), the rows of the recomputed documents of an incremental run
(:func:`member_rows`), with the candidates' heavy overlap too, and the delta path of a small
run (:mod:`simdask.engine.delta_stage`), whose range tasks already emitted the keys.
:func:`block_rows_task` and :func:`member_rows_task` are the aggregates, plain functions the
tests call directly.

Chunks above the heavy cutoff are handled apart (:mod:`simdask.kernels.heavy`, wired by
:mod:`simdask.engine.heavy_stage`): a full build
chooses the cutoff, broadcasts the per-document heavy bitsets, counts candidate pairs through
the light chunks and adds each candidate's heavy overlap exactly; in the ``exact`` mode the
documents whose heavy chunks alone could give rows are searched densely (in the ``auto`` mode
when that search fits ``auto_budget`` pairs). Incremental runs keep the cutoff and the mode the
index was built with (:func:`stored_heavy`) and emit member keys through light and heavy chunks
apart; in the ``informative`` mode only the light ones, the candidates' heavy overlap taken
per range (:mod:`simdask.engine.heavy_candidates`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from distributed import Future

from simdask import failpoints
from simdask.cluster.workers import scheduler_workers
from simdask.config import IndexConfig
from simdask.engine.block_driver import BlockPass, run_blocks
from simdask.engine.context import RunContext
from simdask.engine.heavy_candidates import HeavySteps, held_pass, uses_hold
from simdask.engine.heavy_stage import (
    RangeSets,
    bounded_rows_submitter,
    decide_mode,
    heavy_bits,
    heavy_only,
)
from simdask.engine.sizing import block_budget, memory_block_pairs
from simdask.engine.view_windows import window_views
from simdask.kernels.doc_postings import block_keys
from simdask.kernels.heavy import (
    HeavyBits,
    add_heavy_overlap,
    member_keys,
)
from simdask.kernels.heavy_overlap import member_rows_of
from simdask.kernels.member_counts import count_member_candidates
from simdask.kernels.similarity import (
    containment,
    count_block_keys,
    directed_rows,
    max_block_docs,
    member_work,
    need_counts,
    pair_work,
    plan_blocks,
    top_k_rows,
)
from simdask.kernels.top_rows import PART_DOCS, RowFold
from simdask.summary import HeavyStats

__all__ = [
    "EMPTY_ROWS",
    "ROWS_SLICE",
    "BlockPass",
    "RowFold",
    "SimilarityResult",
    "all_pairs",
    "block_rows_task",
    "fold_min_rows",
    "member_pass",
    "member_results",
    "member_rows",
    "member_rows_task",
    "run_blocks",
    "stored_cutoff",
    "stored_heavy",
]

#: No similarity rows: ``(doc, other, shared, similarity)`` columns of length 0.
EMPTY_ROWS = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))


#: Counted pairs a block's rows task decodes at once (:func:`block_rows_task`): its int64 and
#: float64 temporaries (heavy overlap, candidate test, both directions) take ~150 bytes per
#: counted pair, 2.5-3.3 GB for a block of 18 M pair counts at 100k documents; by slices of
#: 2**21 they stay near 0.3 GB whatever ``block_pairs`` is (docs/scale.md, "Worker memory").
ROWS_SLICE = 1 << 21


def block_rows_task(
    parts: list[np.ndarray],
    doc_lo: int,
    n_chunks: np.ndarray,
    threshold: float,
    top_k: int,
    heavy: HeavyBits | None = None,
):
    """All-pairs block: count the shards' pair keys
    (:func:`~simdask.kernels.doc_postings.block_keys`); rows over ``threshold`` percent both
    ways, best ``top_k`` per document. With ``heavy`` the keys come from the light chunks only
    and each candidate's heavy overlap is added exactly first
    (:func:`~simdask.kernels.heavy.add_heavy_overlap`); a bounded build's blocks take
    :func:`~simdask.engine.heavy_stage.bounded_rows_submitter` instead. The counted pairs
    are decoded :data:`ROWS_SLICE` at a time (each pair on its own: the same rows as all at
    once).

    A document's rows come from several blocks, so the caller keeps the best ``top_k`` again
    over all blocks.
    """
    failpoints.hit("rows_task")
    n_docs = len(n_chunks)
    keys, shared = count_block_keys(parts, n_docs)
    # per-document arrays as int32: the per-pair gathers and comparisons move half the bytes
    need = np.minimum(need_counts(n_chunks, threshold), np.iinfo(np.int32).max).astype(np.int32)
    sizes = None if heavy is None else heavy.sizes.astype(np.int32)
    out = [
        _slice_rows(
            keys[lo : lo + ROWS_SLICE],
            shared[lo : lo + ROWS_SLICE],
            doc_lo,
            n_chunks,
            need,
            threshold,
            heavy,
            sizes,
        )
        for lo in range(0, len(keys), ROWS_SLICE)
    ]
    del keys, shared
    if not out:
        return top_k_rows(*EMPTY_ROWS, top_k)
    doc, other, shared, sim = (np.concatenate([o[i] for o in out]) for i in range(4))
    return top_k_rows(doc, other, shared, sim, top_k)


def _slice_rows(keys, shared, doc_lo, n_chunks, need, threshold, heavy, sizes):
    """Rows of counted pairs ``keys`` (a sorted slice of a block's, ``i * n_docs + o`` pairing
    ``doc_lo + i`` with ``o``), both directions, over ``threshold``; their heavy overlap added
    first with ``heavy``. ``need``: :func:`~simdask.kernels.similarity.need_counts` (int32,
    like ``sizes``, the heavy set sizes), so that only the pairs passing in some direction
    are decoded into rows; the pairs are handled as int32 until then (half the bytes)."""
    d, o = np.divmod(keys, np.uint32(len(n_chunks)))
    if len(n_chunks) < 2**31:  # doc IDs and counts fit in int32: reinterpret, no copy
        d, o, s = d.view(np.int32), o.view(np.int32), shared.view(np.int32)
    else:
        d, o, s = d.astype(np.int64), o.astype(np.int64), shared.astype(np.int64)
    d += d.dtype.type(doc_lo)
    if heavy is not None:
        d, o, s = add_heavy_overlap(d, o, s, need, heavy, sizes)
    keep = s >= np.minimum(need[d], need[o])
    d, o = d[keep].astype(np.int64), o[keep].astype(np.int64)
    return directed_rows(d, o, s[keep], n_chunks, threshold)


def member_rows_task(
    parts: list[np.ndarray],
    block: np.ndarray,
    n_chunks: np.ndarray,
    changed: np.ndarray,
    members: np.ndarray,
    threshold: float,
    top_k: int,
    mode: str = "informative",
):
    """Rows of the recomputed documents ``r`` of ``block`` (keys of
    :func:`~simdask.kernels.similarity.member_pair_keys`, or ``(light, heavy)`` keys of
    :func:`~simdask.kernels.heavy.member_keys`: in the ``informative`` mode only pairs sharing
    a light chunk count), counted where they can give a row
    (:func:`~simdask.kernels.member_counts.count_member_candidates`).

    Returns ``(forward, reverse)``: forward rows ``r -> o`` (complete for each ``r`` of the
    block, cut to ``top_k``) and reverse rows ``o -> r`` for ``r`` whose content changed
    (``changed``) and ``o`` not itself recomputed (not in ``members``); every row has
    similarity >= ``threshold`` percent. Each is ``(doc, other, shared, similarity)``.
    """
    failpoints.hit("rows_task")
    n_docs = len(n_chunks)
    # the documents a single shared chunk can give a row (candidate_mask's test)
    single = (n_chunks > 0) & (containment(1, n_chunks) >= threshold)
    keys, shared = count_member_candidates(parts, n_docs, len(block), mode, single[block], single)
    return member_rows_of(keys, shared, block, n_chunks, changed, members, threshold, top_k)


def fold_min_rows(n_docs: int, top_k: int) -> int:
    """Rows a :class:`~simdask.kernels.top_rows.RowFold` part of ``n_docs`` documents lets
    wait before its first cut: ``n_docs * top_k / 4`` (a quarter of a full list a document);
    runs with fewer rows are cut once, at the end. A full build passes the documents of one
    part (:data:`~simdask.kernels.top_rows.PART_DOCS` at most)."""
    return max(1, n_docs * top_k // 4)


@dataclass
class SimilarityResult:
    """Rows ``(doc, other, shared, similarity)``, the documents whose lists gained reverse
    rows (to be cut to top k again), blocks run, pair keys emitted (candidate pair counts) and
    what a full build measured of the heavy chunks (None otherwise)."""

    rows: tuple
    trim: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    blocks: int = 0
    work: int = 0
    heavy: HeavyStats | None = None


def _work(
    ctx: RunContext, shards: Sequence, fn: Callable, *args, stored: bool = False
) -> np.ndarray:
    """Per document: pair keys the shards emit for it (summed over shards); ``stored``: see
    :meth:`~simdask.engine.context.RunContext.map_shards`."""
    return np.sum(ctx.gather_shards("work", fn, shards, *args, stored=stored), axis=0)


def _budget(ctx: RunContext, work: np.ndarray) -> int:
    """Pairs per block: ``block_pairs`` at most, and small enough for
    :data:`~.sizing.TASKS_PER_THREAD` blocks per worker thread, but not below
    :data:`~.sizing.MIN_BLOCK_PAIRS` (:func:`~.sizing.block_budget`), and within the
    workers' memory (:func:`~.sizing.memory_block_pairs` of the smallest worker memory
    limit); recorded in ``ctx.sizing``."""
    memory = memory_block_pairs(_worker_memory(ctx), ctx.options.blocks_in_flight)
    budget = block_budget(int(work.sum()), ctx.threads_now(), ctx.options.block_pairs, memory)
    if ctx.sizing is not None:
        ctx.sizing.block_pairs = budget
    return budget


def _worker_memory(ctx: RunContext) -> int | None:
    """The smallest memory limit (bytes) of the cluster's workers now; None when none has
    one (or the scheduler cannot say)."""
    try:
        workers = scheduler_workers(ctx.client)
    except Exception:  # an optimisation only: the blocks are then sized by work alone
        return None
    limits = [int(w.get("memory_limit") or 0) for w in workers.values()]
    return min((x for x in limits if x > 0), default=None)


def all_pairs(
    ctx: RunContext, shards: Sequence, n_chunks_f: Future, n_docs: int, config: IndexConfig
) -> SimilarityResult:
    """Every document against every other (a first build, or all documents changed); heavy
    chunks apart (module docstring), measured in the result's ``heavy``. Releases the
    ``shards`` futures once the blocks' last views are submitted
    (:func:`~simdask.engine.view_windows.drop_shards`)."""
    heavy = HeavyStats(mode=config.similarity_mode)
    t = time.perf_counter()
    bits_f = heavy_bits(ctx, shards, n_docs, config, heavy)
    if heavy.bounded:  # incremental runs keep the cutoff until the index doubles or halves
        heavy.bound_docs = n_docs
    seconds = {"heavy_sets": time.perf_counter() - t}
    t = time.perf_counter()
    light = heavy.cutoff
    if config.max_df is not None:
        light = config.max_df if light is None else min(light, config.max_df)
    # the per-range passes read a merged segment's offsets as stored, a piece at a time
    # (kernels/range_pieces): their memory follows the piece, not the range
    work = _work(ctx, shards, pair_work, n_docs, light, stored=True)
    blocks = plan_blocks(work, _budget(ctx, work), max_block_docs(n_docs))
    # each block reads its own postings, not a scan of the whole shard (kernels/doc_postings),
    # from views built one document window at a time when the whole would be too large
    windows = window_views(ctx, shards, blocks, n_docs, light, heavy)
    p = _all_pairs_pass(ctx, n_chunks_f, n_docs, config, bits_f)
    part = min(n_docs, PART_DOCS)  # the driver folds one part of the documents at a time
    fold = RowFold(config.top_k, fold_min_rows(part, config.top_k), PART_DOCS)
    out = run_blocks(ctx, [], blocks, p, fold, windows)
    windows.release()
    if isinstance(bits_f, RangeSets):  # the per-range sets are needed no more
        for f in bits_f.sets:
            f.release()
    res = SimilarityResult(EMPTY_ROWS, blocks=len(blocks), work=int(work.sum()), heavy=heavy)
    if out:  # the fold's rows are ranked and cut already
        (res.rows,) = out
    seconds["light_pairs"] = time.perf_counter() - t
    t = time.perf_counter()
    if bits_f is not None:
        res.rows = heavy_only(ctx, bits_f, n_chunks_f, res.rows, config, heavy)
    elif config.similarity_mode == "auto":  # no heavy chunk: both modes are the same
        heavy.mode = decide_mode(heavy, 0, config)
    seconds["heavy_only"] = time.perf_counter() - t
    heavy.seconds = {k: round(v, 3) for k, v in seconds.items()}
    return res


def _all_pairs_pass(
    ctx: RunContext, n_chunks_f: Future, n_docs: int, config: IndexConfig, bits_f
) -> BlockPass:
    """The pass of a full build's blocks ``(lo, hi)``: each range's pair keys of the block
    (:func:`~simdask.kernels.doc_postings.block_keys`), then :func:`block_rows_task`, or a
    bounded build's steps (:func:`~simdask.engine.heavy_stage.bounded_rows_submitter`)."""

    def emit_args(block) -> tuple:
        return (*block, n_docs)

    if isinstance(bits_f, RangeSets):
        submit = bounded_rows_submitter(ctx, bits_f, n_chunks_f, config)
        return BlockPass(emit=block_keys, emit_args=emit_args, submit_rows=submit)

    def rows_args(block) -> tuple:
        return (block[0], n_chunks_f, config.threshold, config.top_k, bits_f)

    return BlockPass(block_keys, emit_args, block_rows_task, rows_args)


def member_pass(
    emit: Callable,
    emit_args: Callable,
    emit_stage: str,
    n_chunks_f,
    changed_f,
    members_f,
    config: IndexConfig,
) -> BlockPass:
    """The pass giving the rows of blocks of recomputed documents (:func:`member_rows_task`),
    their pair keys emitted by ``emit(shard, *emit_args(block))``."""
    return BlockPass(
        emit=emit,
        emit_args=emit_args,
        rows=member_rows_task,
        rows_args=lambda block: (
            block,
            n_chunks_f,
            changed_f,
            members_f,
            config.threshold,
            config.top_k,
            config.similarity_mode,
        ),
        emit_stage=emit_stage,
    )


def member_results(out: list, blocks: int, work: int) -> SimilarityResult:
    """Forward and reverse rows of :func:`member_rows_task` blocks as one result."""
    if not out:
        return SimilarityResult(EMPTY_ROWS, blocks=blocks, work=work)
    cols = [np.concatenate([o[0][i] for o in out] + [o[1][i] for o in out]) for i in range(4)]
    trim = np.unique(np.concatenate([o[1][0] for o in out]))
    return SimilarityResult(tuple(cols), trim, blocks, work)


def member_rows(
    ctx: RunContext,
    shards: Sequence,
    n_chunks_f: Future,
    n_docs: int,
    config: IndexConfig,
    members: np.ndarray,
    changed: np.ndarray,
    cutoff: int | None = None,
    bounded: bool = False,
) -> SimilarityResult:
    """Rows of ``members`` against everything, plus reverse rows to ``changed``; chunks held
    by more than ``cutoff`` documents are heavy (:func:`~simdask.kernels.heavy.member_keys`;
    None: none); in the ``informative`` mode only the candidates' heavy overlap is taken
    (:mod:`simdask.engine.heavy_candidates`), with ``bounded`` only for the candidates with
    light evidence (:func:`~simdask.kernels.heavy_bounded.light_evidence`)."""
    max_df = config.max_df
    # only the candidates' heavy overlap: the cutoff of the held chunks
    held = cutoff if cutoff is not None and uses_hold(config.similarity_mode, cutoff) else None
    light = max_df if held is None else (held if max_df is None else min(held, max_df))
    work = _work(ctx, shards, member_work, members, light) if len(members) else np.zeros(0)
    cuts = plan_blocks(work, _budget(ctx, work), max_block_docs(n_docs))
    blocks = [members[lo:hi] for lo, hi in cuts]
    changed_f, members_f = ctx.broadcast(changed, members)
    if held is not None:
        steps = HeavySteps.of(config, n_docs, n_chunks_f, changed_f, members_f, bounded)
        p = held_pass(ctx, n_docs, max_df, held, steps)
    else:
        p = member_pass(
            member_keys,
            lambda block: (block, n_docs, max_df, cutoff),
            "pairs",
            n_chunks_f,
            changed_f,
            members_f,
            config,
        )
    return member_results(run_blocks(ctx, shards, blocks, p), len(blocks), int(work.sum()))


def stored_cutoff(last_summary: dict | None, config: IndexConfig) -> int | None:
    """The heavy cutoff an incremental run keeps: the index's ``heavy_df``, else the one the
    last run recorded (``extra.heavy.cutoff`` of its summary; None: no chunk is heavy)."""
    if config.heavy_df is not None:
        return config.heavy_df
    extra = (last_summary or {}).get("extra") or {}
    return (extra.get("heavy") or {}).get("cutoff")


def stored_heavy(last_summary: dict | None, config: IndexConfig) -> HeavyStats:
    """The heavy cutoff and similarity mode an incremental run keeps (only a full build
    chooses them): the cutoff of :func:`stored_cutoff`; the index's mode, or for ``auto`` the
    mode the last run recorded (``extra.heavy.mode``, with its ``auto`` reasons marked
    ``kept``). An ``auto`` index with no recorded mode (no full build yet) counts as
    ``informative`` when it has a cutoff and ``exact`` otherwise (the same then). A bounded
    build (``extra.heavy.bounded``) is kept bounded, ``informative``."""
    cutoff = stored_cutoff(last_summary, config)
    last = ((last_summary or {}).get("extra") or {}).get("heavy") or {}
    # a bounded build (kernels/heavy_bounded) is kept as it is: its cutoff, informative
    if config.heavy_df is None and last.get("bounded") and config.similarity_mode != "exact":
        return HeavyStats("informative", cutoff, bounded=True, bound_docs=last.get("bound_docs"))
    if config.similarity_mode != "auto":
        return HeavyStats(config.similarity_mode, cutoff)
    mode = last.get("mode")
    if mode not in ("informative", "exact"):
        mode = "exact" if cutoff is None else "informative"
    why = last.get("auto")
    return HeavyStats(mode, cutoff, auto=None if why is None else {**why, "kept": True})
