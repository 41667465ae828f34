"""What a run measured about itself once its tasks are done: the bytes moved, the worker
caches' hits and misses, the task sizes chosen (:mod:`.sizing`) and where the time went
(:mod:`.stage_clock`: per stage, serial seconds with no worker busy, tasks and task-seconds).
"""

from __future__ import annotations

import logging

from simdask.cluster.worker_cache import cache_stats
from simdask.engine.context import RunContext
from simdask.engine.stage_clock import busy_profile
from simdask.summary import CacheCounts, RunStats

__all__ = ["finish_stats"]

_log = logging.getLogger(__name__)


def finish_stats(stats: RunStats, ctx: RunContext, cache_before: dict) -> None:
    """Fill in ``stats`` at the end of a run's computation: bytes moved, the worker caches'
    hits and misses during the run, the task sizing and the busy profile (the scheduler's
    task stream; a scheduler that cannot give it leaves ``profile`` None)."""
    stats.bytes_to_cluster = ctx.traffic.to_cluster
    stats.bytes_from_cluster = ctx.traffic.from_cluster
    if cache_before:
        after = ctx.client.run(cache_stats)
        hits = sum(h - cache_before.get(w, (0, 0, 0))[0] for w, (h, _, _) in after.items())
        misses = sum(m - cache_before.get(w, (0, 0, 0))[1] for w, (_, m, _) in after.items())
        stats.worker_cache = CacheCounts(
            int(hits), int(misses), int(sum(b for _, _, b in after.values()))
        )
    stats.sizing = ctx.sizing
    if ctx.sizing is not None and stats.blocks is not None:
        ctx.sizing.blocks = stats.blocks
    ctx.clock.stop()
    try:
        stats.profile = busy_profile(ctx.client, ctx.clock, ctx.tag)
    except (OSError, KeyError, TypeError, ValueError) as e:  # a measurement only
        _log.warning("no task stream from the scheduler (%s: %s)", type(e).__name__, e)
