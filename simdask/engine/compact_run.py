"""Compaction: merge segments of ranges as the merge policy says (DESIGN §3, "Incremental
cost"), as its own Dask tasks and its own generation.

A compaction is a run that changes no document: each range the policy picks
(:func:`~simdask.kernels.merge_policy.plan_merges`) gets one
:func:`~simdask.engine.segment_tasks.compact_task` that merges some of its segments into a
segment of the compaction's generation, dropping the postings tombstones hide. The new
manifests are committed by the writer (:class:`~simdask.writer.Writer`, the one owner of every
commit) in one catalog transaction, like any run: a crash before it leaves
the previous generation current, and the next run or compaction redoes the work. The old
segments are deleted by garbage collection once no committed generation lists them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import xxhash
from distributed import Client, as_completed

from simdask import failpoints
from simdask.cluster.transfer import Traffic
from simdask.config import IndexConfig
from simdask.engine.merge_stage import cache_retain, cached_shards
from simdask.engine.segment_tasks import CompactSpec, compact_task, segment_head
from simdask.kernels.merge_policy import MergePolicy, plan_merges
from simdask.progress import Callback
from simdask.storage.catalog import Catalog, RunChanges
from simdask.storage.catalog_values import meta_int
from simdask.storage.segments import Manifest, current_tombstones
from simdask.storage.shards import ShardStore, encode_shard, shard_ranges

__all__ = ["CompactionPlan", "plan_compaction", "run_compaction"]


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


def run_compaction(
    client: Client,
    catalog: Catalog,
    store: ShardStore,
    config: IndexConfig,
    plan: CompactionPlan,
    *,
    run_id: int,
    shared: bool,
    use_cache: bool,
    cb: Callback,
) -> tuple[RunChanges, dict]:
    """Merge the planned segments as generation ``run_id``; returns the changes to commit
    and statistics (ranges, segments merged, postings read and written, seconds).
    ``shared``: the workers read and write the store themselves (else the client sends the
    segments and writes the results)."""
    t = time.perf_counter()
    ranges = shard_ranges(config.hash_bits, config.ranges)
    tag = f"{xxhash.xxh3_64_hexdigest(store.location.encode())[:8]}-c{run_id}"
    index_id = catalog.index_id
    specs = {
        s: CompactSpec(
            s,
            *ranges[s],
            tuple(gens),
            run_id,
            store.location if shared else None,
            index_id,
            config.shard_layout,
            use_cache,
        )
        for s, gens in plan.merges.items()
    }
    located: dict[int, str] = {}
    if use_cache:
        keep = {s: [g for g, _, _ in segs] for s, segs in plan.manifest.items()}
        client.run(cache_retain, index_id, config.shard_layout, keep)
        located = cached_shards(client, index_id, config.shard_layout, plan.merges)
    tomb = current_tombstones(catalog)
    [tomb_f] = client.scatter([tomb], broadcast=True, hash=False)
    traffic = Traffic(client)
    cb.stage("compact", len(specs))
    futs = {}
    for s, spec in specs.items():
        parts = None
        if not shared and s not in located:
            parts = traffic.scatter([store.read(g, s) for g in spec.generations])
        where = {"workers": [located[s]], "allow_other_workers": True} if s in located else {}
        futs[s] = client.submit(
            compact_task, spec, tomb_f, parts, key=f"simdask-compact-{tag}-s{s:04d}", **where
        )
    heads = {}
    for fut in as_completed(list(futs.values()), loop=client.loop):
        s = next(k for k, f in futs.items() if f.key == fut.key)
        heads[s] = client.submit(segment_head, fut, key=f"simdask-chead-{tag}-s{s:04d}").result()
        if not shared:
            blob = client.submit(
                encode_shard, fut, store.compressed, key=f"simdask-cencode-{tag}-s{s:04d}"
            )
            store.write_encoded(run_id, s, traffic.gather(blob))
        cb.advance(1)
    cb.end_stage()
    failpoints.hit("after_compaction")
    changes, stats = _changes(catalog, config, plan, heads, run_id)
    stats["ranges_from_cache"] = len(located)
    stats["bytes_to_cluster"] = traffic.to_cluster
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
