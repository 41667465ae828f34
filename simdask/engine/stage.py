"""The one contract every stage of a run follows, and the one loop that drives them.

A stage is a number of units (batches of items, shards, blocks of documents). The driver
:func:`drive` submits unit ``i`` with ``stage.submit(i)``, keeps at most ``stage.limit`` of them
running, and hands each finished future to ``stage.collect(i, future)``, which takes its
result (writes files, keeps futures, counts) or returns a new future for the unit (a retry,
e.g. a merge sent again with its old shard); progress is reported per unit. Stages
differ only in what they submit and collect: chunking (:mod:`.chunk_stage`), merging
(:mod:`.merge_stage`), similarity blocks (:mod:`.similarity_stage`), a compaction's ranges
(:mod:`.compact_run`) and the passes of ``simdask repeats`` (:mod:`.repeats_run`). The driver
needs of the run only its client and its progress (:class:`StageHost`): a
:class:`~.context.RunContext`, or what a ``repeats`` run, which belongs to no index, gives.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol

from distributed import Client, Future, as_completed

from simdask.progress import Callback

__all__ = ["Stage", "StageHost", "drive"]


class StageHost(Protocol):
    """What :func:`drive` needs of the run it drives a stage for (a
    :class:`~.context.RunContext` is one): its ``client`` and its progress ``cb``."""

    @property
    def client(self) -> Client: ...
    @property
    def cb(self) -> Callback: ...


class Stage(Protocol):
    """What :func:`drive` needs of a stage. ``name``: its progress label; ``size``: its
    number of units; ``limit``: most units running at once."""

    name: str
    size: int
    limit: int

    def submit(self, i: int) -> Future:
        """Submit unit ``i``; its (final) task's future."""
        ...

    def collect(self, i: int, future: Future) -> Future | None:
        """Unit ``i`` finished: take its result, or return a future to wait for instead."""
        ...


def drive(ctx: StageHost, stage: Stage, announce: bool = True) -> None:
    """Run all units of ``stage`` (at most ``stage.limit`` at a time), in unit order.
    ``announce`` False: the caller reports the stage's start and end (one stage driven in
    parts); each unit still advances the progress by one."""
    if announce:
        ctx.cb.stage(stage.name, stage.size)
    todo = iter(range(stage.size))
    unit_of: dict[Hashable, int] = {}  # by task key (a str, or a tuple of Dask's)
    running = as_completed(loop=ctx.client.loop)  # this run's client, default or not

    def start(i: int, future: Future) -> None:
        unit_of[future.key] = i
        running.add(future)

    for _ in range(min(stage.limit, stage.size)):
        i = next(todo)
        start(i, stage.submit(i))
    for future in running:
        i = unit_of.pop(future.key)
        again = stage.collect(i, future)
        if again is not None:
            start(i, again)
            continue
        ctx.cb.advance(1)
        nxt = next(todo, None)
        if nxt is not None:
            start(nxt, stage.submit(nxt))
    if announce:
        ctx.cb.end_stage()
