"""The heavy-chunk part of a full build's similarity stage (:mod:`simdask.kernels.heavy`,
:mod:`simdask.kernels.heavy_search`), wired on Dask: the cutoff from the shards' df
histograms and the broadcast heavy bitsets (:func:`heavy_bits`), then, after the light pass,
the documents whose heavy chunks alone could give rows: searched in the ``exact`` mode (or
``auto`` under its budget) or counted as not searched (:func:`heavy_only`).

A bounded build (:mod:`simdask.kernels.heavy_bounded`) gathers no heavy posting: each merged
range builds the sorted local ranks of its own heavy chunks where it is
(:class:`RangeSets`, task ``simdask-hsets-...-s``), and each block of documents runs, after
its pair keys, one task for its candidates (``bcand``), one per range for their overlap there
(``bover``, where the range's sets are) and one for its rows (``rows``):
:func:`bounded_rows_submitter`. No process holds more than one range's heavy sets at a time
(docs/scale.md, "Heavy sets per range").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from distributed import Future

from simdask import failpoints
from simdask.config import IndexConfig
from simdask.engine.context import RunContext
from simdask.kernels.heavy import (
    HeavyBits,
    HeavySets,
    auto_mode,
    choose_cutoff,
    df_histogram,
    heavy_postings,
    light_work,
    merge_histograms,
    merge_rows,
    search_docs,
    still_open,
)
from simdask.kernels.heavy_bounded import (
    Candidates,
    block_candidates,
    bounded_block_rows,
    bounded_cutoff,
    range_overlap,
    range_sets,
)
from simdask.kernels.heavy_search import HeavyGroups, heavy_only_rows
from simdask.summary import HeavyStats

__all__ = [
    "RangeSets",
    "bounded",
    "bounded_rows_submitter",
    "bounded_rows_task",
    "decide_mode",
    "heavy_bits",
    "heavy_only",
]


@dataclass(frozen=True)
class RangeSets:
    """A bounded build's heavy sets, kept on the workers: per merged range the future of its
    :func:`~simdask.kernels.heavy_bounded.range_sets` (ranks local to the range), and the
    future of ``|heavy(d)|`` per document over all ranges (int64)."""

    sets: list[Future]
    sizes: Future


def heavy_bits(
    ctx: RunContext, shards: Sequence, n_docs: int, config: IndexConfig, heavy: HeavyStats
) -> Future | RangeSets | None:
    """Choose the cutoff (into ``heavy``); broadcast the heavy bitsets (None when no chunk is
    heavy), or for a bounded build (:func:`bounded`) build the heavy sets per range on the
    workers (:class:`RangeSets`, nothing gathered)."""
    parts = ctx.gather_shards("dfhist", df_histogram, shards, config.max_df, stored=True)
    values, counts = merge_histograms(parts)
    postings = int((values * counts).sum())
    heavy.cutoff = choose_cutoff(
        values, counts, postings, fixed=config.heavy_df, max_heavy=config.max_heavy
    )
    lowered = bounded(values, counts, postings, heavy.cutoff, config)
    if lowered is not None:
        heavy.cutoff, heavy.bounded, heavy.mode = lowered, True, "informative"
    is_heavy = np.zeros(len(values), bool) if heavy.cutoff is None else values > heavy.cutoff
    is_light = (values > 1) & ~is_heavy
    if config.max_df is not None:
        is_light &= values <= config.max_df
    heavy.light_postings = int((values * counts)[is_light].sum())
    heavy.light_lists = int(counts[is_light].sum())
    heavy.heavy_chunks = int(counts[is_heavy].sum())
    heavy.heavy_postings = int((values * counts)[is_heavy].sum())
    heavy.pair_work_all = light_work(values, counts, None)
    heavy.pair_work_light = light_work(values, counts, heavy.cutoff)
    heavy.heavy_work_share = round(1 - heavy.pair_work_light / max(1, heavy.pair_work_all), 6)
    if heavy.heavy_chunks == 0:
        return None
    if heavy.bounded:
        return _range_sets(ctx, shards, n_docs, config, heavy)
    posts = ctx.gather_shards(
        "heavy", heavy_postings, shards, heavy.cutoff, config.max_df, stored=True
    )
    sets = HeavySets.build(posts, n_docs)
    del posts
    heavy.heavy_docs = int(np.count_nonzero(sets.sizes))
    [bits_f] = ctx.broadcast(sets.bits())
    return bits_f


def _range_sizes(sets) -> np.ndarray:
    """``|heavy(d)|`` per document in one range (int32: one range's chunks)."""
    return sets.sizes.astype(np.int32)


def _sum_sizes(parts: list[np.ndarray]) -> np.ndarray:
    """Per document, the sum of its heavy set sizes over the ranges (int64)."""
    out = np.zeros(len(parts[0]), np.int64)
    for p in parts:
        out += p
    return out


def _range_sets(
    ctx: RunContext, shards: Sequence, n_docs: int, config: IndexConfig, heavy: HeavyStats
) -> RangeSets:
    """A bounded build's heavy sets, one task per merged range where it is (``hsets``), their
    sizes summed on a worker (``hsizes``); sets ``heavy.heavy_docs``."""
    submit, key = ctx.client.submit, ctx.key
    sets = ctx.map_shards(
        "hsets", range_sets, shards, heavy.cutoff, config.max_df, n_docs, stored=True
    )
    sizes = [submit(_range_sizes, f, key=key("hsize", s=s)) for s, f in enumerate(sets)]
    total = submit(_sum_sizes, sizes, key=key("hsizes"))
    heavy.heavy_docs = int(submit(np.count_nonzero, total, key=key("hdocs")).result())
    return RangeSets(sets, total)


def bounded_rows_task(
    cand: Candidates, overlaps: list[np.ndarray], n_chunks: np.ndarray, threshold: float, top_k: int
):
    """A bounded block's rows (:func:`~simdask.kernels.heavy_bounded.bounded_block_rows`)."""
    failpoints.hit("rows_task")
    return bounded_block_rows(cand, overlaps, n_chunks, threshold, top_k)


def bounded_rows_submitter(
    ctx: RunContext, ranges: RangeSets, n_chunks_f: Future, config: IndexConfig
) -> Callable[[list[Future], tuple[int, int], int], Future]:
    """For a bounded build's blocks: given a block's pair key parts, its bounds ``(lo, hi)``
    and number ``b``, submit its candidates (``bcand``), their overlap in every range
    (``bover``, where that range's sets are) and its rows (``rows``); the rows' future."""

    def submit_rows(parts: list[Future], block: tuple[int, int], b: int) -> Future:
        submit, key = ctx.client.submit, ctx.key
        cand = submit(
            block_candidates, parts, block[0], n_chunks_f, config.threshold, key=key("bcand", b=b)
        )
        ov = [
            submit(range_overlap, f, cand, key=key("bover", b=b, s=s))
            for s, f in enumerate(ranges.sets)
        ]
        return submit(
            bounded_rows_task,
            cand,
            ov,
            n_chunks_f,
            config.threshold,
            config.top_k,
            key=key("rows", b=b),
        )

    return submit_rows


def bounded(
    values: np.ndarray, counts: np.ndarray, postings: int, cutoff: int | None, config: IndexConfig
) -> int | None:
    """The lowered cutoff when this full build is bounded
    (:func:`~simdask.kernels.heavy_bounded.bounded_cutoff`), else None: never with a fixed
    ``heavy_df`` or in the ``exact`` mode (which counts every pair)."""
    if config.heavy_df is not None or config.similarity_mode == "exact":
        return None
    return bounded_cutoff(values, counts, postings, cutoff, config.light_budget, config.light_floor)


def _sizes(bits: HeavyBits | HeavySets) -> np.ndarray:
    return bits.sizes


def heavy_only(
    ctx: RunContext,
    bits_f: Future | RangeSets,
    n_chunks_f: Future,
    rows,
    config: IndexConfig,
    heavy,
) -> tuple:
    """Documents whose heavy chunks alone could give rows: searched (``exact``, or ``auto``
    under its budget, :func:`~simdask.kernels.heavy.auto_mode`) or counted as not searched;
    ``rows`` with what the search found. Sets ``heavy.mode`` to the mode used."""
    if isinstance(bits_f, RangeSets):
        sizes_f = bits_f.sizes
    else:
        sizes_f = ctx.client.submit(_sizes, bits_f, key=ctx.key("hsizes"))
    queries = ctx.client.submit(
        search_docs, sizes_f, n_chunks_f, config.threshold, key=ctx.key("hq")
    ).result()
    heavy.heavy_only_docs = len(queries)
    mode = "informative" if heavy.bounded else config.similarity_mode
    if mode != "informative" and len(queries):
        sizes, n_chunks = ctx.client.gather([sizes_f, n_chunks_f])
        queries = still_open(queries, rows, sizes, n_chunks, config.top_k)
    if mode == "auto":
        mode = decide_mode(heavy, len(queries), config)
    heavy.mode = mode
    heavy.heavy_only_searched = mode == "exact"
    if mode != "exact":
        return rows
    heavy.heavy_only_docs_searched = len(queries)
    if len(queries) == 0:
        return rows
    # the collapsed heavy sets once (kernels/heavy_search), then the queries in even tasks,
    # at least two per worker
    groups_f = ctx.client.submit(HeavyGroups.build, bits_f, key=ctx.key("hgroups"))
    per = max(1, (1 << 27) // max(1, heavy.heavy_docs))
    n_tasks = max(2 * ctx.workers_now(), -(-len(queries) // per))
    cuts = np.linspace(0, len(queries), min(n_tasks, len(queries)) + 1).astype(np.int64)
    futs = [
        ctx.client.submit(
            heavy_only_rows,
            bits_f,
            queries[lo:hi],
            n_chunks_f,
            config.threshold,
            config.top_k,
            groups=groups_f,
            key=ctx.key("heavyonly", b=i),
        )
        for i, (lo, hi) in enumerate(zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True))
    ]
    found = ctx.client.gather(futs)
    doc, other, shared, sim = (np.concatenate([f[i] for f in found]) for i in range(4))
    return merge_rows(rows, (doc, other, shared, sim), config.top_k)


def decide_mode(heavy: HeavyStats, open_docs: int, config: IndexConfig) -> str:
    """The ``auto`` mode's choice for this build, recorded in ``heavy.auto``."""
    mode, pairs = auto_mode(open_docs, heavy.heavy_docs or 0, config.auto_budget)
    heavy.auto = {
        "pairs": pairs,
        "budget": config.auto_budget,
        "open_docs": open_docs,
        "heavy_docs": heavy.heavy_docs or 0,
        "kept": False,
    }
    return mode
