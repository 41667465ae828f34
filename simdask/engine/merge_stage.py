"""The merge stage (DESIGN §3.3): one merge task per range, sent to the worker that caches its
committed segments (:mod:`~simdask.cluster.worker_cache`), with the old shard and the run's
pairs read from the shared filesystem or sent through Dask (:mod:`~simdask.cluster.placement`).

:func:`merge_task` and :func:`merge_crossed_task` are plain functions
of plain arguments (the tests call them directly); :class:`MergeStage` submits them under the
stage contract of :mod:`.stage`; :func:`write_back` stores the rewritten shards when the
workers cannot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from distributed import Client, Future, as_completed

from simdask.cluster.worker_cache import cache_entries, worker_cache
from simdask.engine.context import RunContext
from simdask.engine.range_merge import merge_pieces, write_pieces
from simdask.engine.segment_ref import SegmentRef
from simdask.errors import ShardNotCachedError
from simdask.kernels.merge_pieces import MERGE_PIECE_POSTINGS
from simdask.kernels.postings import ShardData, remap_docs
from simdask.storage.backends import open_shard_store
from simdask.storage.segments import merge_shards, read_range
from simdask.storage.shards import ShardStore

__all__ = [
    "MergeSpec",
    "MergeStage",
    "cache_retain",
    "cached_segment",
    "cached_shards",
    "crossed_doc_ids",
    "crossed_shard",
    "merge_crossed_task",
    "merge_task",
    "old_shard",
    "run_pairs",
    "write_back",
]


@dataclass(frozen=True)
class MergeSpec:
    """Where one range's merge finds its inputs and puts its output.

    ``old_generations``: the range's committed segments (oldest first; empty: none).
    ``store_root`` / ``bucket_dir``: the shard store and bucket files on a shared filesystem,
    or None when the client sends the bucket pairs and old postings and writes the result.
    ``index_id`` / ``layout`` / ``use_cache``: the worker-side segment cache key and whether
    to use it (:mod:`simdask.cluster.worker_cache`). ``piece``: postings merged at a time
    (:mod:`simdask.kernels.merge_pieces`; the merge's transient memory follows it).
    """

    shard: int
    lo: int
    hi: int
    old_generations: tuple[int, ...]
    generation: int
    store_root: str | None
    bucket_dir: str | None
    index_id: str = ""
    layout: str = ""
    use_cache: bool = False
    piece: int = MERGE_PIECE_POSTINGS


def cached_segment(spec, generation: int) -> ShardData:
    """One segment of ``spec.shard``: from this worker's cache, else read from the store
    (and cached). Raises :class:`ShardNotCachedError` when it is not cached and there is no
    shared store."""
    cache = worker_cache() if spec.use_cache else None
    if cache is not None:
        hit = cache.get(spec.index_id, spec.layout, spec.shard, generation)
        if hit is not None:
            return hit
    if spec.store_root is None:
        raise ShardNotCachedError(
            f"segment {spec.shard} of generation {generation} was expected in this "
            "worker's cache and is not there"
        )
    data = open_shard_store(spec.store_root).read(generation, spec.shard)
    if cache is not None:
        cache.put(spec.index_id, spec.layout, spec.shard, data)
    return data


def old_shard(spec: MergeSpec, tomb: np.ndarray, old: ShardData | None) -> ShardData | None:
    """The range's live postings before this run (its segments merged, tombstones applied):
    as sent by the client, or from this worker's cache or the store (see
    :func:`cached_segment`)."""
    if not spec.old_generations:
        return None
    if old is not None:
        return old
    parts = [cached_segment(spec, g) for g in spec.old_generations]
    return merge_shards(parts, tomb, spec.lo, spec.hi)


def run_pairs(spec, prov_ids, final_ids, buckets) -> np.ndarray:
    """This run's sorted pair keys of one range, with final doc IDs: from the bucket files
    (shared filesystem) or ``buckets``."""
    if buckets is None:
        files = sorted((Path(spec.bucket_dir) / f"shard-{spec.shard:04d}").glob("chunk-b*.npy"))
        buckets = [np.load(f) for f in files]
    parts = [b.astype(np.uint64, copy=False) for b in buckets if len(b)]
    delta = np.concatenate(parts) if parts else np.zeros(0, np.uint64)
    return remap_docs(delta, prov_ids, final_ids)


def merge_task(
    spec: MergeSpec,
    prov_ids: np.ndarray,
    final_ids: np.ndarray,
    dropped: np.ndarray,
    tomb: np.ndarray,
    buckets: list[np.ndarray] | None = None,
    old: ShardData | None = None,
) -> ShardData | SegmentRef:
    """Rewrite one range as a single segment (DESIGN §3.3): its live postings minus
    ``dropped`` plus the run's pairs.

    The pairs come from the bucket files (shared filesystem) or ``buckets``; they carry
    provisional IDs, replaced via ``prov_ids -> final_ids`` (sorted ``prov_ids``; unmapped
    ones, e.g. duplicate keys, are left out). ``tomb``: the committed tombstones
    (:mod:`simdask.kernels.segment_merge`). A range that does not change is not rewritten: its
    live postings are returned with the newest old generation. With a store, a rewritten
    range is written as generation ``spec.generation`` and, when the store is raw
    (memory-mappable), returned as a :class:`~simdask.engine.segment_ref.SegmentRef` to it,
    so that the worker does not keep the merged arrays; without one the client writes what
    this returns.
    """
    return _merge(spec, prov_ids, final_ids, dropped, tomb, buckets, old)[0]


def _merge(spec, prov_ids, final_ids, dropped, tomb, buckets, old, max_df=None):
    """:func:`merge_task` (and with ``max_df`` the crossed documents, else None): the range
    merged in pieces of about ``spec.piece`` postings (:mod:`.range_merge`), written piece by
    piece into a raw store. Returns ``(result, crossed)``."""
    crossed = []

    def merge(sink) -> bool:
        res = merge_pieces(
            spec, prov_ids, final_ids, dropped, tomb, buckets, old, sink, cached_segment, max_df
        )
        crossed.append(res.crossed)
        return res.changed

    data, n_chunks, n_postings = write_pieces(spec, spec.generation, spec.shard, merge)
    if n_chunks < 0:  # nothing changed: the range's live postings as they were
        return old_shard(spec, tomb, old), np.zeros(0, np.uint32)
    found = crossed[0] if max_df is not None else None
    if data is not None:  # no store or not raw: the merged shard in memory
        if spec.store_root is not None:
            open_shard_store(spec.store_root).write(spec.generation, spec.shard, data)
        if spec.use_cache:
            worker_cache().put(spec.index_id, spec.layout, spec.shard, data)
        return data, found
    # a raw store: the range as a reference to what was written, and the worker cache holds
    # the memory-mapped segment, not a copy in memory
    if spec.use_cache:
        mapped = open_shard_store(spec.store_root).map(spec.generation, spec.shard)
        worker_cache().put(spec.index_id, spec.layout, spec.shard, mapped)
    ref = SegmentRef(
        str(spec.store_root), spec.shard, spec.generation, spec.lo, spec.hi, n_chunks, n_postings
    )
    return ref, found


def merge_crossed_task(
    spec: MergeSpec,
    prov_ids: np.ndarray,
    final_ids: np.ndarray,
    dropped: np.ndarray,
    tomb: np.ndarray,
    max_df: int | None,
    buckets: list[np.ndarray] | None = None,
    old: ShardData | None = None,
) -> tuple[ShardData | SegmentRef, np.ndarray]:
    """:func:`merge_task`, and the documents holding a chunk of this shard whose document
    count crossed ``max_df`` (:func:`~simdask.kernels.postings.crossed_docs`, piece by
    piece): their similarities change although their content did not. Returns ``(shard,
    doc IDs)`` (sorted distinct uint32)."""
    data, found = _merge(spec, prov_ids, final_ids, dropped, tomb, buckets, old, max_df)
    return data, np.zeros(0, np.uint32) if found is None else found


def crossed_shard(crossed: tuple) -> ShardData:
    """The merged shard of a :func:`merge_crossed_task` result."""
    return crossed[0]


def crossed_doc_ids(crossed: tuple) -> np.ndarray:
    """The crossed documents of a :func:`merge_crossed_task` result."""
    return crossed[1]


def shard_info(shard: ShardData | SegmentRef) -> tuple[int, int, int]:
    """``(generation, distinct chunks, postings)`` of a merged range."""
    if isinstance(shard, SegmentRef):
        return shard.generation, shard.n_chunks, shard.n_postings
    return shard.generation, len(shard.chunk_keys), shard.n_postings


def cache_retain(index_id: str, layout: str, keep: dict[int, list[int]]) -> int:
    """Run on each worker: drop this index's cached segments whose layout differs or whose
    generation is not among ``keep[shard]`` (the range's committed segments); returns the
    bytes dropped."""
    cache = worker_cache()
    dropped = 0
    for e in cache.entries():
        if e.index_id == index_id and (
            e.layout != layout or e.generation not in keep.get(e.shard, ())
        ):
            dropped += cache.drop(e)
    return dropped


def cached_shards(client: Client, index_id: str, layout: str, gens: dict[int, list[int]]):
    """``{shard: worker address}`` of a worker caching every segment ``gens[shard]``."""
    held: dict[tuple[str, int], set[int]] = {}
    for addr, entries in client.run(cache_entries).items():
        for idx, lay, shard, gen, _ in entries:
            if idx == index_id and lay == layout and gen in gens.get(shard, ()):
                held.setdefault((addr, shard), set()).add(gen)
    found: dict[int, str] = {}
    for (addr, shard), have in sorted(held.items()):
        if have >= set(gens[shard]):
            found.setdefault(shard, addr)
    return found


class MergeStage:
    """One task per shard, ``task(spec, *args, buckets=..., old=...)`` (the
    :class:`~.stage.Stage` contract); :attr:`futures` in shard order once driven.

    A shard cached on a worker (:attr:`located`) is merged there. Without a shared filesystem
    a shard not cached is read by the client and scattered, at most ``ctx.in_flight`` at a
    time, and a merge sent to a worker whose cached copy has gone
    (:class:`ShardNotCachedError`) is sent again with the shard (task name suffix ``sent``).
    With one, the tasks read what they need from the store.
    """

    name = "merge"

    def __init__(
        self,
        ctx: RunContext,
        store: ShardStore,
        specs: list[MergeSpec],
        buckets: list[list] | None,
        task: Callable,
        args: tuple,
        key_stage: str = "merge",
        tomb: np.ndarray | None = None,
        needs_old: bool = True,
    ):
        self.ctx, self.store, self.specs, self.buckets = ctx, store, specs, buckets
        self.task, self.args, self.key_stage = task, args, key_stage
        self.tomb = np.zeros(0, np.int64) if tomb is None else tomb
        self.needs_old = needs_old
        self.size = len(specs)
        self.limit = self.size if ctx.shared or not needs_old else ctx.in_flight
        self.futures: list = [None] * self.size
        self.sent_to_cache = 0
        self.located: dict[int, str] = {}
        spec = specs[0] if specs else None
        if spec is not None and spec.use_cache:
            gens = {s.shard: list(s.old_generations) for s in specs if s.old_generations}
            ctx.client.run(cache_retain, spec.index_id, spec.layout, gens)
            self.located = cached_shards(ctx.client, spec.index_id, spec.layout, gens)

    def _submit(self, s: int, send_old: bool, suffix: str = "") -> Future:
        spec, ctx = self.specs[s], self.ctx
        old = None
        if send_old and spec.old_generations:
            gens = spec.old_generations
            old = ctx.traffic.scatter(read_range(self.store, s, gens, self.tomb, spec.lo, spec.hi))
        where = {}
        if s in self.located and not send_old:
            where = {"workers": [self.located[s]], "allow_other_workers": True}
        self.futures[s] = ctx.client.submit(
            self.task,
            spec,
            *self.args,
            buckets=None if self.buckets is None else self.buckets[s],
            old=old,
            key=ctx.key(self.key_stage, s=s, suffix=suffix),
            **where,
        )
        return self.futures[s]

    def submit(self, s: int) -> Future:
        send = self.needs_old and not self.ctx.shared and s not in self.located
        return self._submit(s, send)

    def collect(self, s: int, future: Future) -> Future | None:
        if future.status == "error":
            if self.ctx.shared or not isinstance(future.exception(), ShardNotCachedError):
                future.result()  # raises the task's error
            self.located.pop(s, None)
            return self._submit(s, True, "sent")
        if s in self.located:
            self.sent_to_cache += 1
        return None


def write_back(
    ctx: RunContext, store: ShardStore, futures: dict[int, Future], encode: Callable
) -> None:
    """Without a shared filesystem: each rewritten shard (``{shard: future}``) is encoded by
    ``encode(result, compressed)`` (in the store's layout, raw or compressed) on the worker
    that holds it, and the client writes the files as they arrive."""
    encoded = {
        ctx.client.submit(encode, f, store.compressed, key=ctx.key("encode", s=s)): s
        for s, f in futures.items()
    }
    for fut in as_completed(encoded, loop=ctx.client.loop):  # not the default client
        files = ctx.traffic.gather(fut)
        store.write_encoded(ctx.run_id, encoded[fut], files)
        fut.release()
