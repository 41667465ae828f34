"""The all-pairs views built one document window at a time (docs/scale.md, "Views in
document windows").

A full build's blocks read compact per-range views
(:class:`~simdask.kernels.doc_postings.DocPostings`, one task ``bydoc`` per range where the
range is). At a million phrase-rich documents the whole views are ~2.8 GiB, and a worker
may hold all of them (work stealing copies a view to the worker a pair emission moved to):
most of its peak. When they would pass ``RunOptions.view_bytes`` a worker
(:func:`~simdask.engine.sizing.view_windows`), the blocks, which come in document order, are
cut into a few consecutive windows and each window's views (its documents' positions and the
lists they emit into) are built when its first block is submitted, after the blocks of the
window before have finished and its views were released: at most one window's views are held
at a time, at the cost of one more read of every range a window.
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from distributed import Future, as_completed

from simdask.cluster.heap import trim_when_freed
from simdask.engine.context import RunContext
from simdask.engine.sizing import view_windows
from simdask.kernels.doc_postings import DocPostings
from simdask.kernels.range_pieces import VIEW_PIECE_POSTINGS
from simdask.summary import HeavyStats

#: most seconds the next window waits for the scheduler to forget the window before's views
#: (an optimisation of memory only: past it the next window's views are built anyway)
RELEASE_WAIT = 10.0

__all__ = ["TRIM_MIN_BYTES", "WindowViews", "drop_shards", "window_starts", "window_views"]


def window_starts(blocks: Sequence[tuple[int, int]], windows: int) -> list[int]:
    """Indices of the blocks that start each of about ``windows`` windows of equal document
    counts (the first is 0; fewer when there are fewer blocks); blocks are consecutive
    ``[lo, hi)`` document ranges in order."""
    if not blocks:
        return [0]
    n, los = blocks[-1][1], [lo for lo, _ in blocks]
    starts = [0]
    for w in range(1, max(1, windows)):
        b = bisect_left(los, n * w // windows)  # the first block starting at or after it
        if starts[-1] < b < len(blocks):
            starts.append(b)
    return starts


class WindowViews:
    """The views of ``shards`` one window of blocks at a time. :meth:`views` gives the views
    of the window block ``b`` is in, building them (and releasing the window before's) when
    ``b`` starts a new window; the caller waits for the window before's blocks first.
    ``release_shards(views)`` is called once, with the last window's views: from then on the
    ranges are no longer read."""

    def __init__(
        self,
        ctx: RunContext,
        shards: Sequence,
        blocks: Sequence[tuple[int, int]],
        starts: list[int],
        n_docs: int,
        light: int | None,
        release_shards,
    ):
        self.ctx, self.shards, self.n_docs, self.light = ctx, shards, n_docs, light
        self.starts = starts
        self.n_blocks = len(blocks)
        los = [blocks[s][0] for s in starts] if blocks else [0]
        his: list[int | None] = [*los[1:], None]
        self.windows = list(zip(los, his, strict=True))
        self.release_shards = release_shards
        self.current = -1
        self.held: list[Future] = []

    @property
    def count(self) -> int:
        """How many windows."""
        return len(self.starts)

    def block_ranges(self) -> list[tuple[int, int]]:
        """Each window's blocks, ``[first, end)`` block indices."""
        return list(zip(self.starts, [*self.starts[1:], self.n_blocks], strict=True))

    def window_of(self, b: int) -> int:
        """The window block ``b`` belongs to."""
        return bisect_right(self.starts, b) - 1

    def views(self, b: int) -> list[Future]:
        """The views (one future per range) of block ``b``'s window."""
        w = self.window_of(b)
        if w == self.current:
            return self.held
        self.release(wait=True)
        self.held = self.ctx.map_shards(
            "bydoc",
            DocPostings.build,
            self.shards,
            self.n_docs,
            self.light,
            VIEW_PIECE_POSTINGS,
            self.windows[w],  # (0, None) for a single window: the whole views
            b=w if self.count > 1 else None,
            stored=True,
        )
        self.current = w
        if w == self.count - 1:
            self.release_shards(self.held)
        return self.held

    def release(self, wait: bool = False) -> None:
        """Release the views held (the blocks that read them are done); with ``wait``, until
        the scheduler has forgotten them (at most :data:`RELEASE_WAIT` seconds): a future's
        release reaches the scheduler from the client's event loop, after tasks submitted
        from this thread right after it, so the next window's views would otherwise be built
        beside this window's."""
        keys = [f.key for f in self.held]
        for f in self.held:
            f.release()
        self.held = []
        deadline = time.monotonic() + RELEASE_WAIT
        while wait and keys and time.monotonic() < deadline:
            keys = self.ctx.client.run_on_scheduler(_known, keys=keys)
            if keys:
                time.sleep(0.01)


def _known(keys: list, dask_scheduler=None) -> list:
    """The ``keys`` the scheduler still has tasks for (run on the scheduler)."""
    return [k for k in keys if k in dask_scheduler.tasks]


#: merged shards (bytes, all workers) from which the similarity stage returns the heap they
#: leave to the OS (:func:`drop_shards`); below it, the wait for their release (up to
#: seconds when another reference keeps a shard a little longer) costs more than it gives
TRIM_MIN_BYTES = 256 << 20


def drop_shards(ctx: RunContext, shards: Sequence, views: Sequence) -> int:
    """Release the merged shards' futures: the blocks read only the compact ``views``
    (:class:`~simdask.kernels.doc_postings.DocPostings`), so the workers free each shard
    as soon as its view is built instead of holding both through the blocks (docs/scale.md,
    "Worker memory in the similarity stage"). Once the views exist, each worker gives the
    freed heap back to the OS (:func:`~simdask.cluster.heap.trim_when_freed`). Merged ranges
    held as :class:`~simdask.engine.segment_ref.SegmentRef` (a shared raw store) weigh
    nothing: the merge tasks freed their arrays already. The caller must not use ``shards``
    again. Returns the resident bytes the workers released."""
    keys = [f.key for f in shards]
    held = sum(ctx.client.nbytes(keys, summary=False).values())
    for f in shards:
        f.release()
    for _ in as_completed(views, loop=ctx.client.loop):  # all done (distributed.wait needs
        pass  # the default client; this run's need not be it)
    # building the views leaves their temporaries' heap (pieces of the range) behind too,
    # also when the ranges are references to stored segments that weigh nothing
    built = sum(ctx.client.nbytes([v.key for v in views], summary=False).values())
    if max(held, built) < TRIM_MIN_BYTES:  # small shards and views: nothing worth waiting for
        return 0
    # an optimisation only: a worker that does not answer is left as it is
    freed = ctx.client.run(trim_when_freed, keys, on_error="ignore")
    return sum(v for v in freed.values() if isinstance(v, int))


def window_views(
    ctx: RunContext,
    shards: Sequence,
    blocks: Sequence,
    n_docs: int,
    light: int | None,
    heavy: HeavyStats,
) -> WindowViews:
    """The views of a full build's blocks (:mod:`~simdask.engine.view_windows`): in as many
    document windows as :func:`~simdask.engine.sizing.view_windows` says for the light
    postings measured (one when the merged ranges are held in memory: they would be kept
    beside the views); the shards are dropped once the last window's views exist."""
    n = 1
    if heavy.light_postings is not None and heavy.light_lists is not None:
        held = sum(ctx.client.nbytes([f.key for f in shards], summary=False).values())
        if held < TRIM_MIN_BYTES:  # references to stored segments: cheap to read again
            n = view_windows(
                heavy.light_postings,
                heavy.light_lists,
                n_docs,
                len(shards),
                ctx.options.view_bytes,
            )
    starts = window_starts(blocks, n)  # fewer windows than blocks never
    heavy.view_windows = len(starts)
    return WindowViews(
        ctx,
        shards,
        blocks,
        starts,
        n_docs,
        light,
        lambda views: drop_shards(ctx, shards, views),
    )
