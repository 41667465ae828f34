"""One run as Dask tasks (DESIGN §3): chunk -> resolve IDs -> merge per range -> similarity.

A run recomputing few documents writes, per range it touches, a delta segment and tombstones
(:mod:`.delta_stage`; with ``max_df`` also recomputing the documents holding a chunk whose
count crossed it); a build, or a run recomputing many, rewrites each changed range whole.

:func:`run_update` (asked by a :class:`~.run_request.RunRequest`) lists the work, drives the
stages (:mod:`.chunk_stage`, :mod:`.merge_stage`, :mod:`.similarity_stage`, all under the
contract of :mod:`.stage`) with deterministic task names (:func:`~.context.task_key`), and
turns their small results into a :class:`~simdask.storage.catalog.RunChanges` that the index
commits in one transaction, with :class:`~simdask.summary.RunStats` of what it measured.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from distributed import Client

from simdask import failpoints
from simdask.cluster.placement import choose_transfer
from simdask.cluster.worker_cache import cache_stats
from simdask.config import IndexConfig
from simdask.engine.candidate_stage import CandidateJob, run_candidate_stage
from simdask.engine.chunk_stage import PROVISIONAL_BASE, ChunkOutput, run_chunk_stage
from simdask.engine.context import RunContext, RunOptions, run_tag
from simdask.engine.deep_lists import deep_config, split_rows
from simdask.engine.delta_stage import DeltaInputs, cross_counts, run_delta
from simdask.engine.lsh_stage import lsh_meta
from simdask.engine.merge_stage import (
    MergeSpec,
    MergeStage,
    crossed_doc_ids,
    crossed_shard,
    merge_crossed_task,
    merge_task,
    shard_info,
    write_back,
)
from simdask.engine.quote_stage import quote_stage
from simdask.engine.run_request import RunOutcome, RunRequest
from simdask.engine.run_stats import finish_stats
from simdask.engine.run_targets import (
    Targets,
    choose_targets,
    dead_after,
    kept_heavy,
    n_chunks_after,
)
from simdask.engine.similarity_stage import EMPTY_ROWS, all_pairs, member_rows
from simdask.engine.sizing import batch_docs, range_note
from simdask.engine.stage import drive
from simdask.engine.stage_clock import start_task_stream
from simdask.ingest.sources import KnownHashes, SourceItem, item_keys
from simdask.kernels.changes import KnownDocument, ResolvedChanges, resolve_changes
from simdask.kernels.exclusions import Exclusions
from simdask.kernels.postings import shard_ranges
from simdask.kernels.segment_merge import tombstones_after
from simdask.kernels.similarity import max_block_docs, skipped_chunks
from simdask.storage.catalog import Catalog, RunChanges
from simdask.storage.digest_ahead import DigestsAhead, run_paths
from simdask.storage.lists import FLOORS_META
from simdask.storage.segments import Manifest, current_tombstones
from simdask.storage.shards import ShardStore, encode_shard
from simdask.storage.text_packs import TextStore
from simdask.summary import RunStats

__all__ = ["RunOptions", "RunOutcome", "RunRequest", "run_update"]


@dataclass(frozen=True)
class _Job:
    """What one run writes to: the index's catalog, shard store, texts and settings, and the
    committed segments (``manifest``) and tombstones (``tomb``, by doc ID) it starts from."""

    catalog: Catalog
    store: ShardStore
    config: IndexConfig
    bucket_dir: str
    replace_all: bool
    texts: TextStore
    manifest: Manifest
    tomb: np.ndarray
    exclusions: Exclusions | None = None
    digests: DigestsAhead = field(default_factory=DigestsAhead)


@dataclass(frozen=True)
class _Written:
    """What a run's merge or delta path decided for the commit and measured: ``manifests``
    (the ranges' segments after the run), ``dead`` (tombstoned postings per range),
    ``rows_replaced`` (the lists recomputed, documents crossing ``max_df`` included), ``trim``
    and ``skipped_chunks`` (None: left as they are), ``measured``: :class:`RunStats` fields."""

    manifests: dict[int, list[tuple[int, int, int]]]
    dead: dict[int, float]
    rows_replaced: np.ndarray
    measured: dict[str, Any]
    trim: np.ndarray | None = None
    skipped_chunks: int | None = None


def run_update(client: Client, req: RunRequest) -> RunOutcome:
    """Index what changed in ``req.items``; delete ``req.remove_keys`` and, for the sources in
    ``req.delete_missing_from``, their documents that are gone (:class:`RunRequest`). Writes
    shards as generation ``req.run_id``; commits nothing."""
    items, catalog, config, replace_all = list(req.items), req.catalog, req.config, req.replace_all
    ctx = _start(client, req.store, req.work_dir, items, req.run_id, req.options, req.cb)
    job = _Job(
        catalog=catalog,
        store=req.store,
        config=config,
        bucket_dir=str(req.work_dir / f"run-{req.run_id:06d}" / "buckets"),
        replace_all=replace_all,
        texts=TextStore(req.text_dir),
        manifest={} if replace_all else catalog.segments(),
        tomb=np.zeros(0, np.int64) if replace_all else current_tombstones(catalog),
        exclusions=req.exclusions,
    )
    stats = RunStats(transfer=ctx.transfer)
    cache_before = client.run(cache_stats) if req.options.worker_cache else {}
    t = time.time()
    remove_keys, delete_from = req.remove_keys, req.delete_missing_from
    known = {} if replace_all else _known(catalog, items, remove_keys, delete_from)
    chunked = _chunk(ctx, job, items, known, req.keep_hashes)
    stats.seconds["chunk"] = ctx.clock.mark("chunk", t)
    failpoints.hit("after_chunk")
    if not replace_all:  # keys the listing could not tell (e.g. a JSONL line's bad id)
        known.update(catalog.known_for(_run_keys(chunked) - known.keys()))
    resolved = resolve_changes(
        [v for r in chunked.results for v in r.versions()],
        [u for r in chunked.results for u in r.unchanged],
        [e for r in chunked.results for e in r.errors],
        known,
        (lambda n: list(range(n))) if replace_all else catalog.allocate_ids,
        remove_keys=remove_keys,
        delete_missing_from=delete_from,
        id_limit=PROVISIONAL_BASE,
        sources=[i.source for i in items],
        warnings=[w for r in chunked.results for w in r.warnings],
    )
    stats.words = resolved.words
    changes = _changes(resolved, config, replace_all)
    # MinHash LSH mode: this run's LSH generation; its manifest commits with the run
    lsh_args = (catalog, Path(req.text_dir).parent, config, chunked.results, resolved, req.run_id)
    changes.meta.update(lsh_meta(*lsh_args, replace_all, seconds=stats.seconds))
    if len(resolved.touched) == 0 and not replace_all:
        stats.heavy = kept_heavy(catalog, config)
        changes.skipped_chunks = int(catalog.meta("skipped_chunks") or 0)
        finish_stats(stats, ctx, cache_before)
        return RunOutcome(changes, resolved.counts, stats)
    dropped = resolved.counts.modified + resolved.counts.deleted  # does any document survive?
    n_known = 0 if replace_all else catalog.n_documents(limit=dropped + 1)
    _index(ctx, job, chunked, resolved, changes, stats, n_known)
    where = (Path(req.text_dir).parent, Path(job.bucket_dir).parent)
    cjob = CandidateJob(catalog, job.texts, *where, req.exclusions, config.ranges)
    with ctx.clock.stage("candidates"):
        args = (ctx, cjob, resolved, replace_all, config.candidates)
        changes.candidates, seconds = run_candidate_stage(*args)
        stats.seconds.update(seconds)
    finish_stats(stats, ctx, cache_before)
    failpoints.hit("after_similarity")
    return RunOutcome(changes, resolved.counts, stats, job.digests)


#: a run reads the whole catalog's known documents when the index holds fewer than this
#: many times as many documents as the run lists (then that costs what the run costs)
WHOLE_CATALOG = 4


def _known(
    catalog: Catalog, items: list[SourceItem], remove_keys, delete_missing_from
) -> dict[str, KnownDocument]:
    """The indexed documents a run may touch, looked up by key: those of the items (keys
    told before reading, :func:`~simdask.ingest.sources.item_keys`), of ``remove_keys`` and
    every document of the sources in ``delete_missing_from``. Costs what the run's items
    cost, not what the index holds; an index holding fewer than :data:`WHOLE_CATALOG` times
    as many documents as the run lists is read whole instead (no JSONL line parsed twice)."""
    size = WHOLE_CATALOG * (len(items) + len(remove_keys))
    if catalog.n_documents(limit=size) < size:
        return catalog.known_documents()
    keys = {k for k in item_keys(items) if k is not None} | set(remove_keys)
    return catalog.known_for(keys, delete_missing_from)


def _run_keys(chunked: ChunkOutput) -> set[str]:
    """Every key the chunking tasks read: versions, unchanged documents and errors."""
    out = set()
    for r in chunked.results:
        out.update(r.keys)
        out.update(k for _, k in r.unchanged)
        out.update(e[1] for e in r.errors)
    return out


def _start(client, store, work_dir, items, run_id, options, cb) -> RunContext:
    """The run's context: its task-name tag and the data placement chosen."""
    tag = run_tag(store, run_id)
    transfer, why = choose_transfer(
        options.transfer, client, work_dir, [i.path for i in items], store.url
    )
    cb.message(f"data transfer: {transfer} ({why})")
    start_task_stream(client)  # the busy profile (engine/stage_clock) reads it at the end
    return RunContext.start(client, run_id, tag, cb, transfer, options)


def _chunk(
    ctx: RunContext,
    job: _Job,
    items: list[SourceItem],
    known: dict,
    keep: Mapping[str, str] | None,
) -> ChunkOutput:
    """Read, hash and chunk what changed (``known``: the :class:`KnownDocument` by key);
    write buckets and text packs. The keys of ``keep`` are chunked even if unchanged, and
    keep the content hashes it gives."""
    if keep:
        known = {k: v for k, v in known.items() if k not in keep}
    size = ctx.options.batch_docs or batch_docs(len(items), ctx.n_threads)  # engine/sizing
    batches = [(i, items[i : i + size]) for i in range(0, len(items), size)]
    if (sz := ctx.sizing) is not None:
        sz.batch_docs, sz.batch_docs_set = size, bool(ctx.options.batch_docs)
        sz.batches, sz.ranges = len(batches), job.config.ranges
        sz.note = range_note(job.config.ranges, ctx.n_threads)
    known_hashes = KnownHashes({k: v.content_hash for k, v in known.items()})
    [known_f, excl_f] = ctx.broadcast(known_hashes, job.exclusions)
    out = run_chunk_stage(
        ctx,
        batches,
        known_f,
        job.config,
        known=known_hashes,
        bucket_dir=job.bucket_dir,
        texts=job.texts,
        exclusions_f=excl_f,
    )
    if keep:
        for r in out.results:
            r.hashes = [keep.get(k, h) for k, h in zip(r.keys, r.hashes, strict=True)]
    return out


def _changes(resolved: ResolvedChanges, config: IndexConfig, replace_all: bool) -> RunChanges:
    """The catalog changes of the documents; similarity rows follow from the later stages."""
    touched = resolved.touched
    meta = {FLOORS_META: "1"} if replace_all else {}  # a full build records every floor
    return RunChanges(
        upserted=resolved.upserted,
        deleted=resolved.deleted,
        rows=EMPTY_ROWS,
        rows_replaced=touched,
        reverse_replaced=touched,
        trim=np.zeros(0, np.int64),
        top_k=config.top_k,
        manifests={},
        errors=resolved.errors,
        skipped_chunks=0,
        replace_all=replace_all,
        config=config,
        meta=meta,
        depth=config.stored_depth,
    )


def _index(
    ctx: RunContext,
    job: _Job,
    chunked: ChunkOutput,
    resolved: ResolvedChanges,
    changes: RunChanges,
    stats: RunStats,
    n_known: int,
) -> None:
    """Delta segments when few are recomputed, else merge per range, then similarity. The
    one place where the stages' results enter the run's ``changes`` and ``stats``: the
    helpers below return theirs (:class:`_Written`, the similarity result)."""
    t = time.time()
    prov = (resolved.items + PROVISIONAL_BASE).astype(np.uint32)
    common = tuple(ctx.broadcast(prov, resolved.doc_ids, resolved.dropped, job.tomb))
    specs = _merge_specs(ctx, job)
    n_chunks = n_chunks_after(job.catalog, resolved, job.replace_all)
    [n_chunks_f] = ctx.broadcast(n_chunks)
    targets = choose_targets(
        job.catalog,
        job.config,
        resolved,
        replace_all=job.replace_all,
        n_known=n_known,
        n_chunks_f=n_chunks_f,
        n_docs=len(n_chunks),
    )
    stats.heavy, changes.rows_replaced = targets.kept, targets.rows_replaced
    if targets.refilled is not None:
        stats.refilled = targets.refilled
    changes.tombstones = np.asarray(resolved.dropped, np.int64)
    limit = min(ctx.options.fuse_members, max_block_docs(len(n_chunks)))
    if not targets.full and len(targets.members) <= limit:
        rows, written = _delta(ctx, job, specs, chunked.buckets, common, resolved, targets)
        _apply(changes, stats, written)
        _split_rows(ctx, job, resolved, changes, rows, n_chunks, stats)
        stats.seconds["merge+similarity"] = ctx.clock.mark("merge+similarity", t)
        return
    shards, members, written = _merge(ctx, job, specs, chunked.buckets, common, targets)
    _apply(changes, stats, written)
    job.digests.add(run_paths(job.store.local_root, job.texts.root, changes, ctx.run_id))
    chunked.buckets = None  # the workers free the run's pairs
    stats.seconds["merge"] = ctx.clock.mark("merge", t)
    failpoints.hit("after_merge")
    t = time.time()
    config = deep_config(job.config)
    skipped = ctx.gather_shards("skip", skipped_chunks, shards, config.max_df, stored=True)
    changes.skipped_chunks = int(sum(skipped))
    if targets.full:
        res = all_pairs(ctx, shards, n_chunks_f, len(n_chunks), config)
        changes.rows_replaced = changes.reverse_replaced = np.arange(len(n_chunks))
        if res.heavy is not None:  # kept: the re-bound
            res.heavy.rebound = bool(stats.heavy and stats.heavy.bound_docs) or None
        stats.heavy = res.heavy
    else:
        m = targets
        args = (m.n_chunks_f, m.n_docs, m.config(config), members, m.changed, m.cutoff)
        res = member_rows(ctx, shards, *args, m.bounded)
        changes.trim = res.trim
    ctx.traffic.received(res.rows)
    stats.blocks, stats.candidate_pair_counts = res.blocks, res.work
    stats.seconds["similarity"] = ctx.clock.mark("similarity", t)
    _split_rows(ctx, job, resolved, changes, res.rows, n_chunks, stats)


def _apply(changes: RunChanges, stats: RunStats, written: _Written) -> None:
    """What the merge or delta path returned, into the run's ``changes`` and ``stats``."""
    changes.manifests, changes.dead = written.manifests, written.dead
    changes.rows_replaced = written.rows_replaced
    if written.trim is not None:
        changes.trim = written.trim
    if written.skipped_chunks is not None:
        changes.skipped_chunks = written.skipped_chunks
    for name, value in written.measured.items():
        setattr(stats, name, value)


def _split_rows(ctx, job: _Job, resolved, changes: RunChanges, rows, n_chunks, stats) -> None:
    """The lists cut into what the catalog keeps (:func:`~.deep_lists.split_rows`), first
    corrected by :mod:`.quote_stage`; both return theirs, put into ``changes`` and ``stats``
    here."""
    if job.config.exclude_quotes and job.exclusions is not None and job.exclusions.quotes:
        with ctx.clock.stage("quotes"):
            q = quote_stage(ctx, job, resolved, changes, rows, n_chunks)
        rows, changes.quoted = q.rows, q.quoted
        changes.trim = np.union1d(np.asarray(changes.trim, np.int64), q.ranked_again)
        stats.seconds.update(q.seconds)
    cut = split_rows(rows, job.config, changes.replace_all, changes.rows_replaced)
    changes.rows, changes.reserve, changes.floors = cut.rows, cut.reserve, cut.floors


def _merge_specs(ctx: RunContext, job: _Job) -> list[MergeSpec]:
    """Where each range's merge reads and writes."""
    index_id = job.catalog.index_id
    return [
        MergeSpec(
            shard=s,
            lo=lo,
            hi=hi,
            old_generations=tuple(g for g, _, _ in job.manifest.get(s, [])),
            generation=ctx.run_id,
            store_root=job.store.location if ctx.shared else None,
            bucket_dir=job.bucket_dir if ctx.shared else None,
            index_id=index_id,
            layout=job.config.shard_layout,
            use_cache=bool(ctx.options.worker_cache),
        )
        for s, (lo, hi) in enumerate(shard_ranges(job.config.hash_bits, job.config.ranges))
    ]


def _merge(
    ctx: RunContext, job: _Job, specs, buckets, common, targets: Targets
) -> tuple[list, np.ndarray, _Written]:
    """Merge every shard; write back the rewritten ones if the workers cannot. Returns the
    merged shards' futures (kept on the workers), the members (an incremental run also
    recomputes the holders of chunks crossing ``max_df``, :func:`~.delta_stage.cross_counts`)
    and what it wrote."""
    cross = cross_counts(job.config.max_df)
    crossing = cross is not None and not targets.full
    if crossing:
        args = (*common, cross)
        merges = MergeStage(
            ctx, job.store, specs, buckets, merge_crossed_task, args, "mergex", job.tomb
        )
    else:
        merges = MergeStage(ctx, job.store, specs, buckets, merge_task, common, tomb=job.tomb)
    drive(ctx, merges)
    shards = merges.futures
    members, rows_replaced = targets.members, targets.rows_replaced
    measured: dict[str, Any] = {}
    if crossing:
        both = shards
        shards = ctx.map_shards("merge", crossed_shard, both, refs=True)
        found = ctx.gather_shards("crossed", crossed_doc_ids, both, refs=True)
        crossed = np.unique(np.concatenate([np.zeros(0, np.uint32), *found])).astype(np.uint32)
        members = np.union1d(members, crossed).astype(np.uint32)
        rows_replaced = np.union1d(rows_replaced, members)
        measured["df_crossed"] = len(crossed)
    infos = ctx.gather_shards("info", shard_info, shards, refs=True)
    run_id = ctx.run_id  # a rewritten range becomes one segment, without tombstoned postings
    manifests = {s: [(run_id, k, n)] for s, (g, k, n) in enumerate(infos) if g == run_id}
    if not ctx.shared:  # workers encode the rewritten shards, the client writes the files
        written = {s: shards[s] for s in manifests}
        write_back(ctx, job.store, written, encode_shard)
    measured["postings"] = int(sum(n for _, _, n in infos))
    measured["shards_rewritten"] = measured["segments_written"] = len(manifests)
    measured["merges_sent_to_cache"] = merges.sent_to_cache
    dead = dict.fromkeys(manifests, 0.0)
    return shards, members, _Written(manifests, dead, rows_replaced, measured)


def _delta(
    ctx: RunContext, job: _Job, specs, buckets, common, resolved, targets: Targets
) -> tuple[object, _Written]:
    """Few recomputed documents: a delta segment per range touched and tombstones for the
    documents modified or removed (:func:`~.delta_stage.run_delta`); returns the rows of
    the members, from the posting lists of their chunks only, and what it wrote."""
    dropped = np.asarray(resolved.dropped)
    inp = DeltaInputs(
        prov_f=common[0],
        final_f=common[1],
        members=targets.members,
        changed=targets.changed,
        dropped=dropped,
        manifest=job.manifest,
        tomb_old=job.tomb,
        tomb_new=tombstones_after(job.tomb, dropped, ctx.run_id),
        n_chunks_f=targets.n_chunks_f,
        n_docs=targets.n_docs,
        cutoff=targets.cutoff,
        exclusions=job.exclusions,
        tomb_old_f=common[3],
        bounded=targets.bounded,
    )
    cfg = targets.config(deep_config(job.config))
    out = run_delta(ctx, job.store, job.catalog, job.texts, cfg, specs, buckets, inp)
    rows_replaced = targets.rows_replaced
    measured: dict[str, Any] = {}
    if cross_counts(job.config.max_df) is not None:
        rows_replaced = np.union1d(rows_replaced, out.crossed)
        measured["df_crossed"] = len(out.crossed)
    measured.update(
        shards_rewritten=0,
        segments_written=len(out.segments),
        postings=int(sum(p for _, p in out.segments.values())),
        blocks=out.rows.blocks,
        candidate_pair_counts=out.rows.work,
        delta_seconds=out.seconds,
    )
    written = _Written(
        manifests={
            s: [*job.manifest.get(s, []), (ctx.run_id, *kp)] for s, kp in out.segments.items()
        },
        dead=dead_after(job.catalog, dropped, job.manifest, job.config.ranges),
        rows_replaced=rows_replaced,
        measured=measured,
        trim=out.rows.trim,
        skipped_chunks=int(job.catalog.meta("skipped_chunks") or 0) + out.skipped_delta,
    )
    return out.rows.rows, written
