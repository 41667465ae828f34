"""One range's merge in pieces of its chunk-ID span (issue 13 items 2 and 5): the Dask-free
loop of :func:`~simdask.engine.merge_stage.merge_task` and
:func:`~simdask.engine.segment_tasks.compact_task`.

The bucket files are memory-mapped and the old segments opened memory-mapped when the store
is raw; each piece (about ``spec.piece`` postings, :func:`~simdask.kernels.merge_pieces.
piece_bounds`) reads its rows of every input, is merged by the same kernels as a whole range
was (:func:`~simdask.kernels.postings.remap_docs`,
:func:`~simdask.kernels.postings.merge_shard`, :func:`~simdask.storage.segments.merge_shards`)
and handed to a sink (:class:`~simdask.storage.segment_writer.SegmentWriter`: appended to
the segment's files; :class:`~simdask.storage.segment_writer.PieceCollector`: kept in
memory). So the merge's transient memory follows the piece size, not the range's.
"""

from __future__ import annotations

import contextlib
import mmap
from itertools import pairwise
from pathlib import Path

import numpy as np

from simdask import failpoints
from simdask.kernels.merge_pieces import (
    csr_sample,
    csr_slice,
    piece_bounds,
    run_cuts,
    run_sample,
    sample_step,
)
from simdask.kernels.postings import ShardData, crossed_docs, doc_mask, merge_shard, remap_docs
from simdask.storage.backends import open_shard_store
from simdask.storage.segment_writer import PieceCollector
from simdask.storage.segments import merge_shards

__all__ = [
    "PieceResult",
    "bucket_runs",
    "compact_pieces",
    "mapped_segment",
    "merge_pieces",
    "segment_parts",
    "write_pieces",
]


def bucket_runs(spec, buckets: list[np.ndarray] | None) -> list[np.ndarray]:
    """The range's non-empty sorted runs of pair keys: the bucket files memory-mapped (shared
    filesystem) or the arrays sent (``buckets``)."""
    if buckets is None:
        files = sorted((Path(spec.bucket_dir) / f"shard-{spec.shard:04d}").glob("chunk-b*.npy"))
        buckets = [np.load(f, mmap_mode="r") for f in files]
    return [b for b in buckets if len(b)]


def mapped_segment(spec, generation: int, cached) -> ShardData:
    """Segment ``generation`` of the range without reading it whole: memory-mapped from a raw
    store (offsets as stored, uint32 or uint64); else ``cached(spec, generation)`` (the worker
    cache, or read into memory)."""
    if spec.use_cache or spec.store_root is None:
        return cached(spec, generation)
    store = open_shard_store(spec.store_root)
    arrays = store.open_arrays(generation, spec.shard)
    if "files" not in arrays:  # a compressed shard: zarr arrays, read it whole
        return store.read(generation, spec.shard)
    keys, offsets, docs = arrays["chunk_keys"], arrays["offsets"], arrays["doc_ids"]
    return ShardData(arrays["lo"], arrays["hi"], keys, offsets, docs, generation)


def segment_parts(spec, old: ShardData | None, cached) -> tuple[list[ShardData], bool]:
    """The range's old postings as ``(segments, live)``: the live postings the client sent
    (``live`` True: tombstones already applied) or the committed segments
    ``spec.old_generations`` (see :func:`mapped_segment`)."""
    if not spec.old_generations:
        return [], True
    if old is not None:
        return [old], True
    return [mapped_segment(spec, g, cached) for g in spec.old_generations], False


def _prev_piece(parts, live, tomb, a: int, b: int) -> ShardData | None:
    """The live old postings of chunks ``[a, b)``."""
    if not parts:
        return None
    pieces = [
        ShardData(a, b, *csr_slice(p.chunk_keys, p.offsets, p.doc_ids, a, b), p.generation)
        for p in parts
    ]
    if live:
        return pieces[0]
    return merge_shards(pieces, tomb, a, b)


def _delta_piece(runs, cuts, i: int, prov_ids, final_ids) -> np.ndarray:
    """This run's sorted pair keys of piece ``i`` (rows ``cuts[r][i]:cuts[r][i + 1]`` of run
    ``r``) with final doc IDs (as :func:`~simdask.engine.merge_stage.run_pairs` gives for the
    whole range)."""
    if not runs:
        return np.zeros(0, np.uint64)
    parts = [
        np.array(r[c[i] : c[i + 1]]).astype(np.uint64, copy=False)
        for r, c in zip(runs, cuts, strict=True)
    ]
    delta = np.concatenate(parts)
    del parts
    return remap_docs(delta, prov_ids, final_ids)


def _release(arrays) -> None:
    """Drop the pages of memory-mapped inputs from this process's resident set (they stay in
    the page cache): a piece's reads of the bucket files and old segments would otherwise
    count in the worker's RSS until the task ends, growing with the range."""
    seen = set()
    for a in arrays:
        m = getattr(a, "_mmap", None)  # np.memmap's mapping (views share it)
        if m is not None and id(m) not in seen and hasattr(m, "madvise"):
            seen.add(id(m))
            with contextlib.suppress(OSError, ValueError):
                m.madvise(mmap.MADV_DONTNEED)


def _mapped(runs, parts) -> list:
    """The inputs that may be memory maps: the runs and the old segments' arrays."""
    return [*runs, *(a for p in parts for a in (p.chunk_keys, p.offsets, p.doc_ids))]


def _samples(runs, parts, step: int) -> list[np.ndarray]:
    """Every input's sample of chunk IDs (:func:`~simdask.kernels.merge_pieces.run_sample`,
    :func:`~simdask.kernels.merge_pieces.csr_sample`), one input's pages mapped at a time (a
    strided read maps pages all over the file)."""
    out = []
    for r in runs:
        out.append(run_sample(r, step))
        _release([r])
    for p in parts:
        out.append(csr_sample(p.chunk_keys, p.offsets, step))
        _release(_mapped([], [p]))
    return out


class PieceResult:
    """What :func:`merge_pieces` did: ``changed`` (False: no piece had new postings or
    dropped documents, the range is as it was) and ``crossed`` (with ``max_df``: the
    documents holding a chunk whose document count crossed it; sorted distinct uint32)."""

    def __init__(self, changed: bool, crossed: np.ndarray):
        self.changed, self.crossed = changed, crossed


def merge_pieces(
    spec, prov_ids, final_ids, dropped, tomb, buckets, old, sink, cached, max_df=None
) -> PieceResult:
    """Merge one range (``spec``: a :class:`~simdask.engine.merge_stage.MergeSpec`) piece by
    piece into ``sink`` (``append(keys, offsets, docs)`` in chunk-ID order): its live old
    postings minus ``dropped`` plus the run's pairs, exactly as one
    :func:`~simdask.kernels.postings.merge_shard` of the whole range. ``cached(spec, g)``
    gives an old segment when the worker cache is used."""
    runs = bucket_runs(spec, buckets)
    parts, live = segment_parts(spec, old, cached)
    step = sample_step(spec.piece, len(runs) + len(parts))
    samples = _samples(runs, parts, step)
    bounds = piece_bounds(samples, step, spec.piece, spec.lo, spec.hi)
    del samples
    inputs = _mapped(runs, parts)
    changed = not parts  # a range without old segments is always written
    crossed = []
    if changed:
        failpoints.hit("merge_task")
    cuts = [run_cuts(r, bounds) for r in runs]
    for i, (a, b) in enumerate(pairwise(bounds)):
        delta = _delta_piece(runs, cuts, i, prov_ids, final_ids)
        prev = _prev_piece(parts, live, tomb, a, b)
        before = None if prev is None else (prev.chunk_keys, prev.offsets, prev.doc_ids)
        if not changed and (len(delta) or doc_mask(dropped, prev.doc_ids).any()):
            changed = True
            failpoints.hit("merge_task")
        arrays = merge_shard(before, delta, dropped)
        del delta
        if max_df is not None:
            crossed.append(crossed_docs(None if prev is None else before[:2], arrays, max_df))
        sink.append(*arrays)
        del arrays, prev, before
        _release(inputs)
    found = np.unique(np.concatenate([np.zeros(0, np.uint32), *crossed])).astype(np.uint32)
    return PieceResult(changed, found)


def write_pieces(spec, generation: int, shard: int, merge) -> tuple[ShardData | None, int, int]:
    """Run ``merge(sink)`` (pieces in chunk-ID order) into segment ``generation`` of range
    ``shard`` in the store ``spec.store_root``: written piece by piece when the store is raw
    (returns ``(None, distinct chunks, postings)``), else put together in memory and
    returned as a :class:`ShardData` (the caller writes it; no store: ``spec.store_root``
    None). ``merge`` returns whether the result is to be kept; when not, nothing is written
    and ``(None, -1, -1)`` is returned."""

    store = None if spec.store_root is None else open_shard_store(spec.store_root)
    writer = None if store is None else store.writer(generation, shard, spec.lo, spec.hi)
    if writer is None:
        sink = PieceCollector()
        if not merge(sink):
            return None, -1, -1
        data = ShardData(spec.lo, spec.hi, *sink.close(), generation=generation)
        return data, len(data.chunk_keys), data.n_postings
    try:
        keep = merge(writer)
    except BaseException:
        writer.discard()
        raise
    if not keep:
        writer.discard()
        return None, -1, -1
    writer.close()
    return None, writer.n_keys, writer.n_postings


def compact_pieces(spec, parts: list[ShardData], tomb: np.ndarray, sink) -> None:
    """Merge segments ``parts`` of one range (``spec``: a
    :class:`~simdask.engine.segment_tasks.CompactSpec`), dropping the postings ``tomb``
    hides, piece by piece into ``sink``: exactly
    :func:`~simdask.storage.segments.merge_shards` of the whole range."""
    step = sample_step(spec.piece, len(parts))
    bounds = piece_bounds(_samples([], parts, step), step, spec.piece, spec.lo, spec.hi)
    inputs = _mapped([], parts)
    for a, b in pairwise(bounds):
        merged = _prev_piece(parts, False, tomb, a, b)
        sink.append(merged.chunk_keys, merged.offsets, merged.doc_ids)
        del merged
        _release(inputs)
