"""The Dask task functions of delta segments and compaction (DESIGN §3, "Incremental cost").

Plain functions of plain arguments, like those of :mod:`simdask.engine.merge_stage`:

* :func:`delta_task` writes a run's new postings of one range as a small segment, without
  reading the range's older segments;
* :func:`delta_pairs_task` counts the recomputed documents' pairs in one range from the
  posting lists of their chunks only (base + deltas − tombstones, restricted to those chunks);
* :func:`delta_after_task` (runs with ``max_df``) gives those live postings after the run and
  the documents holding a chunk whose document count crossed ``max_df``, and
  :func:`extend_after_task` adds the posting lists of the crossed documents' other chunks;
* :func:`compact_task` merges some segments of a range into one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simdask import failpoints
from simdask.cluster.worker_cache import worker_cache
from simdask.engine.heavy_candidates import held_emit
from simdask.engine.merge_stage import MergeSpec, cached_segment, run_pairs
from simdask.engine.range_merge import compact_pieces, mapped_segment, write_pieces
from simdask.engine.segment_ref import SegmentRef
from simdask.kernels.heavy import member_keys
from simdask.kernels.merge_pieces import MERGE_PIECE_POSTINGS
from simdask.kernels.postings import build_postings, crossed_docs
from simdask.kernels.similarity import skipped_chunks
from simdask.storage.backends import open_shard_store
from simdask.storage.kept_maps import KEPT_MAP_BYTES, kept_maps
from simdask.storage.segments import RangeReader, add_delta, merge_shards
from simdask.storage.shards import ShardData

__all__ = [
    "CompactSpec",
    "RangeProbe",
    "compact_task",
    "crossed_after",
    "crossed_head",
    "delta_after_task",
    "delta_head",
    "delta_keys",
    "delta_pairs_task",
    "delta_task",
    "extend_after_task",
    "probe_maps",
    "segment_head",
]


def delta_task(
    spec: MergeSpec,
    prov_ids: np.ndarray,
    final_ids: np.ndarray,
    buckets: list[np.ndarray] | None = None,
    old: ShardData | None = None,
) -> ShardData:
    """This run's postings of one range as a segment of generation ``spec.generation``
    (written to the store when there is one, and cached on this worker with ``use_cache``;
    empty: nothing written). ``old`` is unused (the signature of
    :class:`~simdask.engine.merge_stage.MergeStage` tasks)."""
    keys = run_pairs(spec, prov_ids, final_ids, buckets)
    data = ShardData(spec.lo, spec.hi, *build_postings(keys), generation=spec.generation)
    if data.n_postings and spec.store_root is not None:
        failpoints.hit("merge_task")
        open_shard_store(spec.store_root).write(spec.generation, spec.shard, data)
    if data.n_postings and spec.use_cache:  # sent where the range's older segments are cached
        worker_cache().put(spec.index_id, spec.layout, spec.shard, data)
    return data


def segment_head(data: ShardData | SegmentRef) -> tuple[int, int]:
    """``(distinct chunks, postings)`` of a segment: what the driver gathers after a
    compaction (counts only: gathering every range's chunk keys held ~10 GB in the driver of
    a forced compaction at a million documents)."""
    if isinstance(data, SegmentRef):
        return data.n_chunks, data.n_postings
    return len(data.chunk_keys), data.n_postings


@dataclass(frozen=True)
class RangeProbe:
    """What a :func:`delta_pairs_task` reads itself from a store it can open (a shared
    filesystem): the committed segments ``generations`` of range ``shard``, restricted to the
    chunks of the run's delta and ``extra`` (sorted chunk IDs of dtype ``dtype``: those of
    the refilled documents), with the committed tombstones applied."""

    store_root: str
    shard: int
    lo: int
    hi: int
    generations: tuple[int, ...]
    extra: np.ndarray
    dtype: str

    def read(self, delta: ShardData, tomb_old: np.ndarray) -> ShardData:
        """The range's committed live postings of the probed chunks (memory-mapped pages; the
        maps are kept for later runs in this process, :func:`probe_maps`)."""
        ids = np.union1d(np.asarray(delta.chunk_keys, self.dtype), self.extra)
        store = open_shard_store(self.store_root, self.dtype)
        reader = RangeReader(store, opener=probe_maps().open_arrays)
        gens = list(self.generations)
        return reader.subset(self.shard, gens, ids.astype(self.dtype), tomb_old, self.lo, self.hi)


def probe_maps():
    """This process's kept segment maps (:func:`~simdask.storage.kept_maps.kept_maps`): at
    most a quarter of this Dask worker's memory limit (resident pages count in the worker's
    memory), :data:`~simdask.storage.kept_maps.KEPT_MAP_BYTES` at most."""
    budget = KEPT_MAP_BYTES
    try:
        from distributed import get_worker  # loads dask: only when a run needs it

        limit = get_worker().memory_manager.memory_limit
    except (ImportError, ValueError, AttributeError):
        limit = None
    if limit:
        budget = min(budget, int(limit) // 4)
    return kept_maps(budget)


def delta_pairs_task(
    delta: ShardData,
    before: ShardData | RangeProbe,
    tomb: np.ndarray,
    members: np.ndarray,
    n_docs: int,
    max_df: int | None,
    cutoff: int | None = None,
    tomb_old: np.ndarray | None = None,
    hold: bool = False,
) -> tuple[tuple[int, int], tuple]:
    """Pair keys of ``members`` in one range (:func:`~simdask.kernels.heavy.member_keys`,
    ``(light, heavy)`` with chunks of ``df > cutoff`` heavy) and the change of the range's
    skipped-chunk count.

    ``before``: the range's live postings before this run, restricted to the chunks probed
    (every chunk of a member, and of a removed document when ``max_df`` is set), or a
    :class:`RangeProbe` this task reads them with (under the committed tombstones
    ``tomb_old``); ``tomb``:
    the tombstones including this run's. The live postings after the run are ``before`` with
    this run's tombstones applied, plus ``delta``. Returns ``((skipped-chunk change, keys
    emitted), keys)``. With ``hold`` (the ``informative`` mode with a ``cutoff``) the keys are
    ``(light, hold)``: the light keys and the members'
    :class:`~simdask.kernels.heavy_overlap.HeavyHold`, whose overlap with the candidates is
    taken later (:mod:`simdask.engine.heavy_candidates`) instead of one key per heavy pair.
    """
    failpoints.hit("rows_task")
    if isinstance(before, RangeProbe):
        before = before.read(delta, tomb_old)
    after = add_delta(before, delta, tomb)
    if hold and cutoff is not None:
        keys = held_emit(after, members, n_docs, max_df, cutoff)
    else:
        keys = member_keys(after, members, n_docs, max_df, cutoff)
    skipped = skipped_chunks(after, max_df) - skipped_chunks(before, max_df)
    emitted = len(keys[0]) + (len(keys[1]) if isinstance(keys[1], np.ndarray) else 0)
    return (skipped, emitted), keys


def delta_after_task(
    delta: ShardData,
    before: ShardData,
    tomb: np.ndarray,
    max_df: int | None,
    cross_df: int | tuple[int, ...] | None = None,
) -> tuple[int, np.ndarray, ShardData]:
    """A run with ``max_df``, one range: the live postings after the run of the probed chunks
    (``before`` + ``delta`` − ``tomb``, see :func:`delta_pairs_task`), the change of the
    range's skipped-chunk count and the documents holding a chunk whose document count
    crossed ``max_df`` (:func:`~simdask.kernels.postings.crossed_docs`; exact because the
    probed chunks include every chunk whose count changed: those of the delta and of the
    dropped documents; ``cross_df``: the counts crossed instead of ``max_df``, see
    :func:`~simdask.engine.delta_stage.cross_counts`). Returns ``(skipped-chunk change,
    crossed doc IDs, after)``."""
    failpoints.hit("rows_task")
    after = add_delta(before, delta, tomb)
    skipped = skipped_chunks(after, max_df) - skipped_chunks(before, max_df)
    old = (before.chunk_keys, before.offsets)
    marks = max_df if cross_df is None else cross_df
    crossed = crossed_docs(old, (after.chunk_keys, after.offsets, after.doc_ids), marks)
    return skipped, crossed, after


def crossed_head(result: tuple) -> tuple[int, np.ndarray]:
    """``(skipped-chunk change, crossed doc IDs)`` of a :func:`delta_after_task` result."""
    return result[0], result[1]


def crossed_after(result: tuple) -> ShardData:
    """The live postings after the run of a :func:`delta_after_task` result."""
    return result[2]


def extend_after_task(result: tuple, more: ShardData, tomb: np.ndarray) -> ShardData:
    """The postings of a :func:`delta_after_task` result plus ``more``: the committed live
    posting lists of other chunks (those of documents recomputed because a chunk crossed
    ``max_df``; the run wrote no postings of them), with this run's tombstones ``tomb``
    applied."""
    after = result[2]
    if more.n_postings == 0:
        return after
    live = merge_shards([more], tomb, more.lo, more.hi)
    return merge_shards([after, live], np.zeros(0, np.int64), after.lo, after.hi)


def delta_head(result: tuple) -> tuple[int, int]:
    """``(skipped-chunk change, keys emitted)`` of a :func:`delta_pairs_task` result."""
    return result[0]


def delta_keys(
    result: tuple, lo: int = 0, hi: int | None = None, n_docs: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The ``(light, heavy)`` pair keys of a :func:`delta_pairs_task` result; with ``hi``,
    those of the members at positions ``lo..hi-1`` only, as keys of that block
    (``(position - lo) * n_docs + o``)."""
    if hi is None:
        return result[1]
    lo_key, last = np.uint32(lo * n_docs), np.uint32(hi * n_docs - 1)
    light, heavy = ((k[(k >= lo_key) & (k <= last)] - lo_key).astype(np.uint32) for k in result[1])
    return light, heavy


@dataclass(frozen=True)
class CompactSpec:
    """One range's compaction: merge its segments ``generations`` into one segment of
    ``generation`` (see :class:`~simdask.engine.merge_stage.MergeSpec` for the other fields;
    ``piece``: postings merged at a time)."""

    shard: int
    lo: int
    hi: int
    generations: tuple[int, ...]
    generation: int
    store_root: str | None
    index_id: str = ""
    layout: str = ""
    use_cache: bool = False
    piece: int = MERGE_PIECE_POSTINGS


def compact_task(
    spec: CompactSpec, tomb: np.ndarray, parts: list[ShardData] | None = None
) -> ShardData | SegmentRef:
    """Merge segments of one range, dropping the postings tombstones hide (k-way merge;
    :func:`~simdask.kernels.segment_merge.merge_segments`), into a segment of
    ``spec.generation``, in pieces of about ``spec.piece`` postings
    (:func:`~simdask.engine.range_merge.compact_pieces`). Written piece by piece into a raw
    store and returned as a :class:`~simdask.engine.segment_ref.SegmentRef`; put together in
    memory otherwise, written to the store when there is one and returned (no store: for
    the client to write). ``parts``: the segments, sent by the client (no shared
    filesystem); else from this worker's cache or the store (memory-mapped when raw)."""
    if parts is None:
        parts = [mapped_segment(spec, g, cached_segment) for g in spec.generations]

    def merge(sink) -> bool:
        compact_pieces(spec, list(parts), tomb, sink)
        failpoints.hit("compact_task")
        return True

    data, n_chunks, n_postings = write_pieces(spec, spec.generation, spec.shard, merge)
    if data is not None:
        if spec.store_root is not None:
            open_shard_store(spec.store_root).write(spec.generation, spec.shard, data)
        if spec.use_cache:
            worker_cache().put(spec.index_id, spec.layout, spec.shard, data)
        return data
    if spec.use_cache:
        mapped = open_shard_store(spec.store_root).map(spec.generation, spec.shard)
        worker_cache().put(spec.index_id, spec.layout, spec.shard, mapped)
    root = str(spec.store_root)
    return SegmentRef(root, spec.shard, spec.generation, spec.lo, spec.hi, n_chunks, n_postings)
