"""Compaction: merge segments of ranges as the merge policy says (DESIGN §3, "Incremental
cost"), as its own Dask tasks and its own generation.

A compaction is a run that changes no document: each range the policy picks
(:func:`~simdask.kernels.merge_policy.plan_merges`) gets one
:func:`~simdask.engine.segment_tasks.compact_task` that merges some of its segments into a
segment of the compaction's generation, dropping the postings tombstones hide. The tasks are
a stage (:class:`CompactStage`, driven by :func:`~.stage.drive`) of the compaction's own
:class:`~.context.RunContext`, named by :func:`~.context.task_key` with the run's tag as an
update's are. The new manifests are committed by the writer
(:class:`~simdask.write.run_commit.RunCommit`, the one owner of every commit) in one catalog
transaction, like any run: a crash before it leaves
the previous generation current, and the next run or compaction redoes the work. The old
segments are deleted by garbage collection once no committed generation lists them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from distributed import Client, Future

from simdask import failpoints
from simdask.cluster.placement import choose_transfer
from simdask.config import IndexConfig
from simdask.engine.context import RunContext, RunOptions, run_tag
from simdask.engine.merge_stage import cache_retain, cached_shards
from simdask.engine.segment_tasks import CompactSpec, compact_task, segment_head
from simdask.engine.stage import drive
from simdask.errors import ShardNotCachedError
from simdask.kernels.merge_policy import MergePolicy, plan_merges
from simdask.progress import Callback
from simdask.storage.catalog import Catalog, RunChanges
from simdask.storage.catalog_values import meta_int
from simdask.storage.segments import Manifest, current_tombstones
from simdask.storage.shards import ShardStore, encode_shard, shard_ranges

__all__ = ["CompactStage", "CompactionPlan", "plan_compaction", "run_compaction"]


@dataclass
class CompactionPlan:
    """Per range, the generations of the segments to merge into one (a range at most once
    per compaction: a generation writes one segment per range)."""

    merges: dict[int, list[int]] = field(default_factory=dict)
    manifest: Manifest = field(default_factory=dict)
    dead: dict[int, float] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.merges)


def plan_compaction(catalog: Catalog, policy: MergePolicy, force: bool = False) -> CompactionPlan:
    """What the policy merges now, from the committed manifest and dead-posting estimates.
    ``force``: every range with more than one segment or any tombstoned postings is merged
    whole."""
    manifest = catalog.segments()
    dead = catalog.dead_postings()
    plan = CompactionPlan(manifest=manifest, dead=dead)
    for s, segs in sorted(manifest.items()):
        sizes = [p for _, _, p in segs]
        total = sum(sizes)
        frac = min(1.0, dead.get(s, 0.0) / total) if total else 0.0
        merges = plan_merges(sizes, frac, policy, force=force)
        if merges:
            plan.merges[s] = [segs[i][0] for i in merges[0]]
    return plan


class CompactStage:
    """One :func:`~simdask.engine.segment_tasks.compact_task` per range the plan merges (the
    :class:`~.stage.Stage` contract), task names ``simdask-compact-<tag>-sNNNN``; collected:
    the new segment's counts (``chead``) and, when the workers do not share the store, its
    files encoded on the worker (``cencode``) and written by the client.

    A range cached on a worker (:attr:`located`) is merged there. Without a shared store a
    range not cached is read by the client and sent, at most ``ctx.in_flight`` at a time, and
    a task whose worker lost the cached copy (:class:`ShardNotCachedError`) is sent again
    with the segments (suffix ``sent``), as the merge stage does."""

    name = "compact"

    def __init__(self, ctx: RunContext, store: ShardStore, specs: list[CompactSpec], tomb_f):
        self.ctx, self.store, self.specs, self.tomb_f = ctx, store, specs, tomb_f
        self.size = len(specs)
        self.limit = self.size if ctx.shared else ctx.in_flight
        self.heads: dict[int, tuple[int, int]] = {}
        self.located: dict[int, str] = {}

    def locate(self, index_id: str, layout: str, manifest: Manifest) -> None:
        """Keep the committed segments of ``manifest`` in the workers' caches and find the
        workers holding those of the ranges to merge."""
        keep = {s: [g for g, _, _ in segs] for s, segs in manifest.items()}
        self.ctx.client.run(cache_retain, index_id, layout, keep)
        merges = {spec.shard: list(spec.generations) for spec in self.specs}
        self.located = cached_shards(self.ctx.client, index_id, layout, merges)

    def _submit(self, i: int, send: bool, suffix: str = "") -> Future:
        spec, ctx = self.specs[i], self.ctx
        s = spec.shard
        parts = None
        if send:
            parts = ctx.traffic.scatter([self.store.read(g, s) for g in spec.generations])
        where = {}
        if s in self.located and not send:
            where = {"workers": [self.located[s]], "allow_other_workers": True}
        key = ctx.key("compact", s=s, suffix=suffix)
        return ctx.client.submit(compact_task, spec, self.tomb_f, parts, key=key, **where)

    def submit(self, i: int) -> Future:
        send = not self.ctx.shared and self.specs[i].shard not in self.located
        return self._submit(i, send)

    def collect(self, i: int, future: Future) -> Future | None:
        ctx, s = self.ctx, self.specs[i].shard
        if future.status == "error":
            if ctx.shared or not isinstance(future.exception(), ShardNotCachedError):
                future.result()  # raises the task's error
            self.located.pop(s, None)
            return self._submit(i, True, "sent")
        head = ctx.client.submit(segment_head, future, key=ctx.key("chead", s=s))
        self.heads[s] = head.result()
        if not ctx.shared:
            key = ctx.key("cencode", s=s)
            blob = ctx.client.submit(encode_shard, future, self.store.compressed, key=key)
            self.store.write_encoded(ctx.run_id, s, ctx.traffic.gather(blob))
        return None


def run_compaction(
    client: Client,
    catalog: Catalog,
    store: ShardStore,
    config: IndexConfig,
    plan: CompactionPlan,
    *,
    run_id: int,
    work_dir: Path,
    options: RunOptions,
    cb: Callback,
) -> tuple[RunChanges, dict]:
    """Merge the planned segments as generation ``run_id`` (a run of its own: its
    :class:`~.context.RunContext`, its data placement chosen as an update's,
    ``options.transfer``, in ``work_dir``; the workers' caches used when
    ``options.worker_cache``). Returns the changes for the writer to commit and statistics
    (ranges, segments merged, postings read and written, seconds)."""
    t = time.perf_counter()
    transfer, _ = choose_transfer(options.transfer, client, work_dir, [], store.url)
    ctx = RunContext.start(client, run_id, run_tag(store, run_id), cb, transfer, options)
    ranges = shard_ranges(config.hash_bits, config.ranges)
    use_cache = bool(options.worker_cache)
    specs = [
        CompactSpec(
            shard=s,
            lo=ranges[s][0],
            hi=ranges[s][1],
            generations=tuple(gens),
            generation=run_id,
            store_root=store.location if ctx.shared else None,
            index_id=catalog.index_id,
            layout=config.shard_layout,
            use_cache=use_cache,
        )
        for s, gens in plan.merges.items()
    ]
    [tomb_f] = ctx.broadcast(current_tombstones(catalog))
    stage = CompactStage(ctx, store, specs, tomb_f)
    if use_cache:
        stage.locate(catalog.index_id, config.shard_layout, plan.manifest)
    drive(ctx, stage)
    failpoints.hit("after_compaction")
    changes, stats = _changes(catalog, config, plan, stage.heads, run_id)
    stats["ranges_from_cache"] = len(stage.located)
    stats["bytes_to_cluster"] = ctx.traffic.to_cluster
    stats["seconds"] = time.perf_counter() - t
    return changes, stats


def _changes(catalog, config, plan: CompactionPlan, heads: dict, run_id: int):
    """The new manifests and dead estimates of the merged ranges, and statistics."""
    manifests, dead = {}, {}
    read = written = merged = 0
    for s, gens in plan.merges.items():
        keys, postings = heads[s]
        segs = plan.manifest[s]
        inputs = [x for x in segs if x[0] in gens]
        kept = [x for x in segs if x[0] not in gens]
        manifests[s] = [*kept, (run_id, keys, postings)] if postings or kept else []
        if not postings and not kept:
            manifests[s] = []
        in_postings = sum(p for _, _, p in inputs)
        dead[s] = 0.0 if not kept else max(0.0, plan.dead.get(s, 0.0) - (in_postings - postings))
        read += in_postings
        written += postings
        merged += len(inputs)
    changes = RunChanges(
        upserted=[],
        deleted=[],
        rows=(np.zeros(0, np.int64),) * 3 + (np.zeros(0),),
        rows_replaced=np.zeros(0, np.int64),
        reverse_replaced=np.zeros(0, np.int64),
        trim=np.zeros(0, np.int64),
        top_k=config.top_k,
        manifests=manifests,
        errors=[],
        skipped_chunks=meta_int(catalog, "skipped_chunks"),
        dead=dead,
    )
    stats = {
        "ranges": len(plan.merges),
        "segments_merged": merged,
        "postings_read": read,
        "postings_written": written,
    }
    return changes, stats
