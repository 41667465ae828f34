"""The Dask task functions of delta segments and compaction (DESIGN §3, "Incremental cost").

Plain functions of plain arguments, like :mod:`simdask.engine.tasks`:

* :func:`delta_task` writes a run's new postings of one range as a small segment, without
  reading the range's older segments;
* :func:`delta_pairs_task` counts the recomputed documents' pairs in one range from the
  posting lists of their chunks only (base + deltas − tombstones, restricted to those chunks);
* :func:`compact_task` merges some segments of a range into one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simdask import failpoints
from simdask.cluster.worker_cache import worker_cache
from simdask.engine.tasks import MergeSpec, cached_segment, member_rows_task, run_pairs
from simdask.kernels.postings import build_postings
from simdask.kernels.similarity import member_pair_keys, skipped_chunks
from simdask.storage.segments import merge_shards
from simdask.storage.shards import ShardData, ShardStore

__all__ = [
    "CompactSpec",
    "compact_task",
    "delta_pairs_task",
    "delta_rows_task",
    "delta_task",
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
        ShardStore(spec.store_root).write(spec.generation, spec.shard, data)
    if data.n_postings and spec.use_cache:  # sent where the range's older segments are cached
        worker_cache().put(spec.index_id, spec.layout, spec.shard, data)
    return data


def segment_head(data: ShardData) -> tuple[int, int, np.ndarray]:
    """``(distinct chunks, postings, chunk_keys)`` of a segment (what the driver gathers)."""
    return len(data.chunk_keys), data.n_postings, data.chunk_keys


def delta_pairs_task(
    delta: ShardData,
    before: ShardData,
    tomb: np.ndarray,
    members: np.ndarray,
    n_docs: int,
    max_df: int | None,
) -> tuple[tuple[int, int], np.ndarray]:
    """Pair keys of ``members`` in one range (:func:`member_pair_keys`) and the change of the
    range's skipped-chunk count.

    ``before``: the range's live postings before this run, restricted to the chunks probed
    (every chunk of a member, and of a removed document when ``max_df`` is set); ``tomb``:
    the tombstones including this run's. The live postings after the run are ``before`` with
    this run's tombstones applied, plus ``delta``. Returns ``((skipped-chunk change, keys
    emitted), keys)``.
    """
    failpoints.hit("rows_task")
    after = merge_shards([before, delta], tomb, delta.lo, delta.hi)
    keys = member_pair_keys(after, members, n_docs, max_df)
    skipped = skipped_chunks(after, max_df) - skipped_chunks(before, max_df)
    return (skipped, len(keys)), keys


def delta_rows_task(
    pairs: list[tuple[tuple[int, int], np.ndarray]],
    members: np.ndarray,
    n_chunks: np.ndarray,
    changed: np.ndarray,
    members_again: np.ndarray,
    threshold: float,
    top_k: int,
):
    """:func:`~simdask.engine.tasks.member_rows_task` over the ranges' results of
    :func:`delta_pairs_task`; returns ``(forward, reverse, skipped-chunk change, keys)``."""
    forward, reverse = member_rows_task(
        [k for _, k in pairs], members, n_chunks, changed, members_again, threshold, top_k
    )
    return forward, reverse, sum(h[0] for h, _ in pairs), sum(h[1] for h, _ in pairs)


@dataclass(frozen=True)
class CompactSpec:
    """One range's compaction: merge its segments ``generations`` into one segment of
    ``generation`` (see :class:`~simdask.engine.tasks.MergeSpec` for the other fields)."""

    shard: int
    lo: int
    hi: int
    generations: tuple[int, ...]
    generation: int
    store_root: str | None
    index_id: str = ""
    layout: str = ""
    use_cache: bool = False


def compact_task(
    spec: CompactSpec, tomb: np.ndarray, parts: list[ShardData] | None = None
) -> ShardData:
    """Merge segments of one range, dropping the postings tombstones hide (k-way merge;
    :func:`~simdask.kernels.segments.merge_segments`), into a segment of
    ``spec.generation``: written to the store when there is one, else returned for the client
    to write. ``parts``: the segments, sent by the client (no shared filesystem); else from
    this worker's cache or the store."""
    if parts is None:
        parts = [cached_segment(spec, g) for g in spec.generations]
    merged = merge_shards(list(parts), tomb, spec.lo, spec.hi)
    data = ShardData(
        spec.lo, spec.hi, merged.chunk_keys, merged.offsets, merged.doc_ids, spec.generation
    )
    failpoints.hit("compact_task")
    if spec.store_root is not None:
        ShardStore(spec.store_root).write(spec.generation, spec.shard, data)
    if spec.use_cache:
        worker_cache().put(spec.index_id, spec.layout, spec.shard, data)
    return data
