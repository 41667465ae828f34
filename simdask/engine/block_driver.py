"""The one block driver: every pass over blocks of documents (all pairs of a full build, a
bounded build's blocks, the rows of recomputed documents, with or without the candidates'
heavy overlap) is a :class:`BlockPass` run by :func:`run_blocks` under the
:class:`~.stage.Stage` contract. Per block the pass submits its tasks (named by
:meth:`~.context.RunContext.key`: the run's tag, the step, the block and the range); after
each block the driver takes its result and has every worker return the heap the block freed
(:func:`~simdask.cluster.heap.trim_grown`); progress is one unit a block (stage
``similarity``). What the blocks compute lives with their passes
(:mod:`.similarity_stage`, :mod:`.heavy_stage`, :mod:`.heavy_candidates`,
:mod:`.delta_stage`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from distributed import Future

from simdask.cluster.heap import trim_grown, trim_heap
from simdask.engine.context import RunContext
from simdask.engine.stage import drive
from simdask.engine.view_windows import WindowViews
from simdask.errors import ConfigError
from simdask.kernels.top_rows import RowFold

__all__ = ["BlockPass", "RowsSubmitter", "no_args", "run_blocks"]

#: Submits a block's steps after its parts (the per-range futures of the block's emission):
#: ``submit_rows(parts, block, b)`` gives the future of the block's result.
RowsSubmitter = Callable[[list, Any, int], Future]


def no_args(block: Any) -> tuple:
    """No arguments from a block: ``()``."""
    return ()


@dataclass(frozen=True)
class BlockPass:
    """One pass over blocks of documents, dask-style. Per block ``b``:

    1. ``emit(shard, *emit_args(block))`` runs where each shard is (task
       ``simdask-<emit_stage>-...-b-s``); without ``emit`` the shards are the block's parts as
       they are (an incremental run's range tasks emitted every block's keys at once);
    2. ``rows(parts, *rows_args(block))`` once (task ``simdask-rows-...-b``), or, with
       ``submit_rows``, the future that ``submit_rows(parts, block, b)`` submits: several steps
       after the pair keys (a bounded build's,
       :func:`~simdask.engine.heavy_stage.bounded_rows_submitter`; the candidates' heavy
       overlap, :func:`~simdask.engine.heavy_candidates.heavy_rows_submitter`).

    Exactly one of ``rows`` and ``submit_rows`` is given."""

    emit: Callable | None = None
    emit_args: Callable[[Any], tuple] = no_args
    rows: Callable | None = None
    rows_args: Callable[[Any], tuple] = no_args
    emit_stage: str = "pairs"
    submit_rows: RowsSubmitter | None = None

    def __post_init__(self) -> None:
        if (self.rows is None) == (self.submit_rows is None):
            given = "both" if self.rows is not None else "neither"
            raise ConfigError(
                f"expected a block pass with either a rows task or a rows submitter, found {given}"
            )


class _BlockStage:
    """:class:`BlockPass` over ``blocks`` under the :class:`~.stage.Stage` contract; the
    results in block order, or folded into ``fold``."""

    name = "similarity"

    def __init__(
        self,
        ctx: RunContext,
        shards: Sequence,
        blocks: Sequence,
        p: BlockPass,
        fold: RowFold | None = None,
        first: int = 0,
    ):
        self.ctx, self.shards, self.blocks, self.p = ctx, shards, blocks, p
        self.size = len(blocks)
        self.limit = ctx.options.blocks_in_flight
        self.out: list = [None] * self.size
        self.fold = fold
        self.first = first  # the number of this stage's first block among all (task names)

    def submit(self, i: int) -> Future:
        ctx, p, block, b = self.ctx, self.p, self.blocks[i], self.first + i
        parts = list(self.shards)
        if p.emit is not None:
            parts = ctx.map_shards(p.emit_stage, p.emit, self.shards, *p.emit_args(block), b=b)
        if p.submit_rows is not None:
            return p.submit_rows(parts, block, b)
        rows = cast(Callable, p.rows)  # given when submit_rows is not (BlockPass.__post_init__)
        return ctx.client.submit(rows, parts, *p.rows_args(block), key=ctx.key("rows", b=b))

    def collect(self, i: int, future: Future) -> None:
        if self.fold is None:
            self.out[i] = future.result()
        else:
            self.fold.add(future.result())
        future.release()
        self.ctx.client.run(trim_grown, on_error="ignore")  # the block's freed heap: to the OS
        return None


def run_blocks(
    ctx: RunContext,
    shards: Sequence,
    blocks: Sequence,
    p: BlockPass,
    fold: RowFold | None = None,
    windows: WindowViews | None = None,
) -> list:
    """The one block driver: ``p`` over every block, at most ``blocks_in_flight`` at a time;
    each block's result, in block order, or with ``fold`` the folded rows as one result. With
    ``windows`` (:mod:`~.view_windows`) the blocks read their window's views instead of
    ``shards``, one window after the other."""
    if windows is None or windows.count == 1:
        stage = _BlockStage(ctx, shards if windows is None else windows.views(0), blocks, p, fold)
        drive(ctx, stage)
        out = stage.out
    else:  # one window's blocks all done before the next window's views are built
        ctx.cb.stage(_BlockStage.name, len(blocks))
        out = []
        for lo, hi in windows.block_ranges():
            stage = _BlockStage(ctx, windows.views(lo), blocks[lo:hi], p, fold, first=lo)
            drive(ctx, stage, announce=False)
            out.extend(stage.out)
        ctx.cb.end_stage()
    if fold is None:
        return out
    rows = fold.result(release=trim_heap)  # the folded parts' heap goes back to the OS
    return [] if rows is None else [rows]
