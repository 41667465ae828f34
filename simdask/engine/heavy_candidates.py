"""Recomputed documents' rows in the ``informative`` mode with heavy chunks: the heavy overlap
of the candidate pairs only (issue 14; :mod:`simdask.kernels.heavy_overlap`).

Per block of members, four steps, each task where its data is:

1. per range, the block's light pair keys (``hlight``), cut from what the range's task holds:
   the light keys and the :class:`~simdask.kernels.heavy_overlap.HeavyHold` of the members'
   heavy chunks (the hold stays on that worker, it is never gathered);
2. one task counts the light keys into the candidates, every distinct light pair with its light
   count (``hcand``, :func:`candidates_task`);
3. per range, the candidates' heavy overlap there, sparsely (``hover``, by binary searches in the
   hold: :func:`~simdask.kernels.heavy_overlap.heavy_overlap`);
4. one task adds the overlaps to the light counts and makes the rows as
   :func:`~simdask.engine.similarity_stage.member_rows_task` makes them (``rows``,
   :func:`candidate_rows_task`).

The steps are a :class:`~simdask.engine.block_driver.BlockPass` on the one block driver
(:func:`held_pass` over merged ranges, step 1 its emission; a delta run's range tasks hold
every block's part already): :class:`HeavySteps` and :func:`heavy_rows_submitter` submit
steps 2-4 of a block.

Today's path emits one key per (heavy chunk of a member, other holder): ``Σ df``, ~1.4 M keys a
document at a million prose documents; here the heavy work is ``Σ_r h_r |candidates(r)|``
lookups. The ``exact`` mode keeps the heavy keys: it needs the pairs sharing only heavy chunks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from dask.sizeof import sizeof
from distributed import Future

from simdask import failpoints
from simdask.config import IndexConfig
from simdask.engine.block_driver import BlockPass, RowsSubmitter, no_args
from simdask.engine.context import RunContext
from simdask.kernels.heavy_bounded import light_evidence
from simdask.kernels.heavy_overlap import (
    HeavyHold,
    heavy_hold,
    heavy_overlap,
    keep_candidates,
    light_candidates,
    member_rows_of,
    sum_overlaps,
)
from simdask.kernels.measures import containment
from simdask.kernels.similarity import member_pair_keys, need_counts

__all__ = [
    "HeavySteps",
    "candidate_rows_task",
    "candidates_task",
    "delta_light",
    "delta_overlap",
    "heavy_rows_submitter",
    "held_emit",
    "held_light",
    "held_overlap",
    "held_pass",
    "uses_hold",
]


def uses_hold(mode: str, cutoff: int | None) -> bool:
    """Whether member rows take this path: a heavy ``cutoff`` and not the ``exact`` mode
    (which needs the pairs sharing only heavy chunks, so the heavy keys)."""
    return cutoff is not None and mode != "exact"


@sizeof.register(HeavyHold)
def _sizeof_hold(hold: HeavyHold) -> int:
    """Dask's size estimate of a hold: its arrays."""
    return hold.nbytes + 200


def held_emit(shard, block: np.ndarray, n_docs: int, max_df: int | None, cutoff: int):
    """One range's part of a block (a merged range): the members' light pair keys (chunks of
    ``df <= min(cutoff, max_df)``, :func:`~simdask.kernels.similarity.member_pair_keys`) and
    the :class:`~simdask.kernels.heavy_overlap.HeavyHold` of their heavy chunks."""
    light = cutoff if max_df is None else min(cutoff, max_df)
    return member_pair_keys(shard, block, n_docs, light), heavy_hold(shard, block, cutoff, max_df)


def held_light(held: tuple, lo: int = 0, hi: int | None = None, n_docs: int = 0) -> np.ndarray:
    """The light keys of ``held`` (``(light keys, hold)``); with ``hi``, those of the members
    at positions ``lo..hi-1`` only, as keys of that block (``(position - lo) * n_docs + o``)."""
    light = held[0]
    if hi is None:
        return light
    lo_key, last = np.uint32(lo * n_docs), np.uint32(hi * n_docs - 1)
    return (light[(light >= lo_key) & (light <= last)] - lo_key).astype(np.uint32)


def held_overlap(held: tuple, cand: tuple, n_docs: int, lo: int = 0):
    """The heavy overlap in this range of the block's candidates ``cand`` (``(keys, light
    counts)`` of :func:`candidates_task`; the block's first member is row ``lo`` of the hold):
    positions in ``cand`` and counts (:func:`~simdask.kernels.heavy_overlap.heavy_overlap`)."""
    return heavy_overlap(held[1], cand[0], n_docs, lo)


def delta_light(result: tuple, lo: int = 0, hi: int | None = None, n_docs: int = 0):
    """:func:`held_light` of a :func:`~simdask.engine.segment_tasks.delta_pairs_task` result
    (``(head, (light keys, hold))``)."""
    return held_light(result[1], lo, hi, n_docs)


def delta_overlap(result: tuple, cand: tuple, n_docs: int, lo: int = 0):
    """:func:`held_overlap` of a :func:`~simdask.engine.segment_tasks.delta_pairs_task`
    result."""
    return held_overlap(result[1], cand, n_docs, lo)


def candidates_task(
    parts: list[np.ndarray],
    n_rows: int,
    n_docs: int,
    block: np.ndarray | None = None,
    n_chunks: np.ndarray | None = None,
    threshold: float = 0.0,
):
    """The block's candidates: every distinct light pair key of the ranges' ``parts`` and its
    light count (sorted uint32 both;
    :func:`~simdask.kernels.heavy_overlap.light_candidates`). With ``block`` (a bounded
    index), only those whose light count reaches the threshold in one direction
    (:func:`~simdask.kernels.heavy_bounded.light_evidence`), as a bounded full build keeps
    them."""
    keys, light = light_candidates(parts, n_docs, n_rows)
    if block is None or n_chunks is None:
        return keys, light
    need = need_counts(n_chunks, threshold)
    n = keys.dtype.type(max(1, n_docs))
    r = np.asarray(block)[(keys // n).astype(np.int64)].astype(np.int64)
    keep = light_evidence(r, (keys % n).astype(np.int64), light.astype(np.int64), need)
    return keys[keep], light[keep]


def candidate_rows_task(
    cand: tuple,
    overlaps: list[tuple[np.ndarray, np.ndarray]],
    block: np.ndarray,
    n_chunks: np.ndarray,
    changed: np.ndarray,
    members: np.ndarray,
    threshold: float,
    top_k: int,
):
    """Rows of the block's members: the candidates' light counts plus their heavy overlaps
    (summed over the ranges) are their counts over all chunks; the pairs that can give a row
    (:func:`~simdask.kernels.heavy_overlap.keep_candidates`) make ``(forward, reverse)`` rows as
    :func:`~simdask.engine.similarity_stage.member_rows_task` returns them."""
    failpoints.hit("rows_task")
    keys, light = cand
    n_docs = len(n_chunks)
    shared = light.astype(np.int64) + sum_overlaps(len(keys), overlaps)
    single = (n_chunks > 0) & (containment(1, n_chunks) >= threshold)
    keep = keep_candidates(keys, shared, n_docs, single[block], single)
    return member_rows_of(
        keys[keep], shared[keep], block, n_chunks, changed, members, threshold, top_k
    )


@dataclass(frozen=True)
class HeavySteps:
    """A block's steps after its per-range held parts (futures of ``(light keys, hold)``, or
    of results holding them): ``light(h, *light_args(block))`` cuts the block's light keys of
    a range (``hlight``), :func:`candidates_task` counts them (``hcand``),
    ``overlap(h, cand, n_docs, *overlap_args(block))`` takes the candidates' overlap in a range
    (``hover``) and :func:`candidate_rows_task` makes the rows (``rows``) of ``n_docs``
    documents (``n_chunks_f``) for the recomputed ``members_f``, reverse rows to
    ``changed_f``, at ``threshold`` percent, ``top_k`` a document; ``bounded``: the candidates
    are cut to those with light evidence (:func:`candidates_task`)."""

    n_docs: int
    n_chunks_f: Any
    changed_f: Any
    members_f: Any
    threshold: float
    top_k: int
    bounded: bool = False
    light: Callable = held_light
    light_args: Callable[[Any], tuple] = no_args
    overlap: Callable = held_overlap
    overlap_args: Callable[[Any], tuple] = no_args

    @classmethod
    def of(cls, config: IndexConfig, n_docs: int, n_chunks_f, changed_f, members_f, bounded=False):
        """The steps of ``config``'s threshold and top k, reading held parts as
        :func:`held_emit` makes them."""
        return cls(
            n_docs, n_chunks_f, changed_f, members_f, config.threshold, config.top_k, bounded
        )


def heavy_rows_submitter(ctx: RunContext, steps: HeavySteps) -> RowsSubmitter:
    """For a :class:`~.block_driver.BlockPass`: given a block's held parts, the block and its
    number ``b``, submit the :class:`HeavySteps` (tasks ``hlight``/``hover`` per range,
    ``hcand`` and ``rows`` once); the rows' future (``(forward, reverse)`` rows as
    :func:`~simdask.engine.similarity_stage.member_rows_task` gives them)."""
    p, submit, key = steps, ctx.client.submit, ctx.key

    def submit_rows(held: list, block, b: int) -> Future:
        light = [
            submit(p.light, h, *p.light_args(block), key=key("hlight", b=b, s=s))
            for s, h in enumerate(held)
        ]
        # a bounded index: (block, n_chunks, threshold) for the light-evidence test
        more = (block, p.n_chunks_f, p.threshold) if p.bounded else ()
        cand = submit(candidates_task, light, len(block), p.n_docs, *more, key=key("hcand", b=b))
        ov = [
            submit(p.overlap, h, cand, p.n_docs, *p.overlap_args(block), key=key("hover", b=b, s=s))
            for s, h in enumerate(held)
        ]
        rows_args = (p.n_chunks_f, p.changed_f, p.members_f, p.threshold, p.top_k)
        return submit(candidate_rows_task, cand, ov, block, *rows_args, key=key("rows", b=b))

    return submit_rows


def held_pass(
    ctx: RunContext, n_docs: int, max_df: int | None, cutoff: int, steps: HeavySteps
) -> BlockPass:
    """The pass over merged ranges: per block, :func:`held_emit` where each range is (task
    ``simdask-pairs-...-b-s``), then the :class:`HeavySteps` (:func:`heavy_rows_submitter`)."""

    def emit_args(block) -> tuple:
        return (block, n_docs, max_df, cutoff)

    return BlockPass(held_emit, emit_args, submit_rows=heavy_rows_submitter(ctx, steps))
