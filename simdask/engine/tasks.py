"""The functions Dask runs (DESIGN §3): chunk a batch, merge a shard, count and select pairs.

Plain functions of plain arguments: the tests call them directly; :mod:`simdask.engine.run`
only submits them with deterministic keys. Files between stages are named by stage, range and
task (``buckets/shard-SSSS/chunk-bNNNNNN.npy``) and written atomically.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from dask.sizeof import sizeof

from simdask import failpoints
from simdask.cluster.worker_cache import worker_cache
from simdask.config import IndexConfig
from simdask.errors import ExtractionError, ShardNotCachedError
from simdask.ingest.sources import (
    DEFAULT_MAX_FILE_BYTES,
    KnownHashes,
    SourceItem,
    fetch_item,
    parse_item,
)
from simdask.kernels.hashing import chunk_batch
from simdask.kernels.postings import (
    doc_mask,
    merge_shard,
    pack_pairs,
    remap_docs,
    split_sorted_by_shard,
)
from simdask.kernels.similarity import (
    candidate_mask,
    count_keys,
    directed_rows,
    top_k_rows,
)
from simdask.storage.segments import merge_shards
from simdask.storage.shards import ShardData, ShardStore
from simdask.storage.text_packs import TextStore

__all__ = [
    "PROVISIONAL_BASE",
    "BatchResult",
    "MergeSpec",
    "UnchangedPayload",
    "block_rows_task",
    "cached_segment",
    "chunk_task",
    "member_rows_task",
    "merge_task",
    "old_shard",
    "run_pairs",
]

#: Recomputed documents carry ``PROVISIONAL_BASE + item index`` as doc ID in bucket files until
#: the driver has given them their final IDs; doc IDs proper stay below it.
PROVISIONAL_BASE = 2**31


@dataclass
class BatchResult:
    """What a chunking task tells the driver (no chunk data: that went to bucket files).

    Per recomputed document (new content): ``prov_ids``, ``keys``, ``hashes``, ``n_words``,
    ``n_chunks``, ``spans`` (offset, length in ``pack``). ``unchanged``: keys whose content
    hash equals the catalog's. ``errors``: ``(key, kind, message)``.
    """

    source_of: list[str] = field(default_factory=list)
    prov_ids: list[int] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    n_words: list[int] = field(default_factory=list)
    n_chunks: list[int] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)
    pack: str | None = None
    pack_data: bytes | None = None
    unchanged: list[tuple[int, str]] = field(default_factory=list)
    errors: list[tuple[int, str, str, str]] = field(default_factory=list)
    n_pairs: int = 0


@dataclass(frozen=True)
class UnchangedPayload:
    """Sent by the client in place of a document's bytes when it hashed them and found the
    document indexed with that content (no shared filesystem: unchanged files cost no
    transfer)."""

    key: str


@sizeof.register(BatchResult)
def _sizeof_batch(res: BatchResult) -> int:
    """Dask's size estimate of a batch result: its lists and the pack's bytes."""
    lists = (res.source_of, res.keys, res.hashes, res.unchanged, res.errors)
    return sizeof(lists) + sizeof(res.spans) + len(res.pack_data or b"") + 200


@sizeof.register(ShardData)
def _sizeof_shard(data: ShardData) -> int:
    """Dask's size estimate of a shard (for its memory accounting and spilling): its arrays.
    Registered here, with the task functions every worker imports, so that reading shards
    (e.g. for a query) does not import dask."""
    return data.nbytes + 200


def bucket_path(bucket_dir: str, shard: int, batch: int) -> Path:
    """The bucket file of one chunking task for one shard."""
    return Path(bucket_dir) / f"shard-{shard:04d}" / f"chunk-b{batch:06d}.npy"


def _save_atomic(path: Path, arr: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    with open(tmp, "wb") as f:
        np.save(f, arr.astype("<u8", copy=False))
    os.replace(tmp, path)


def chunk_task(
    items: list[SourceItem],
    first_item: int,
    known: KnownHashes,
    config: IndexConfig,
    bucket_dir: str | None,
    text_dir: str | None,
    run_id: int,
    batch: int,
    payloads: list[bytes | ExtractionError] | None = None,
    max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES,
) -> BatchResult | tuple[BatchResult, list[np.ndarray]]:
    """Read a batch of items; extract and chunk those whose content hash differs from the
    indexed one (an unchanged document is hashed, never extracted).

    Item ``i`` that is recomputed gets provisional doc ID ``PROVISIONAL_BASE + first_item + i``
    in its pairs (sorted little-endian uint64 pair keys per shard range); its text goes to the
    pack ``rRRRRRR-bBBBBBB.pack``. Files over ``max_file_bytes`` are not read.

    On a shared filesystem (``bucket_dir`` and ``text_dir`` given) the items are read from disk,
    the pairs written as bucket files and the pack into ``text_dir``; returns the
    :class:`BatchResult`. Without one (both None), the client passes each item's bytes (or the
    error reading it) in ``payloads``; returns ``(result, pairs per shard)`` and the result
    carries the pack's bytes in ``pack_data`` for the client to write.
    """
    res = BatchResult()
    texts: list[str] = []
    for i, item in enumerate(items):
        index = first_item + i
        try:
            data = fetch_item(item, max_file_bytes) if payloads is None else payloads[i]
            if isinstance(data, ExtractionError):
                raise data
            if isinstance(data, UnchangedPayload):  # the client found it unchanged
                res.unchanged.append((index, data.key))
                continue
            key, text, digest = parse_item(item, data, known)
        except ExtractionError as e:
            res.errors.append((index, e.key, e.kind, e.message))
            continue
        if text is None:  # known.unchanged(key, digest): not extracted
            res.unchanged.append((index, key))
            continue
        res.prov_ids.append(PROVISIONAL_BASE + index)
        res.keys.append(key)
        res.source_of.append(item.source)
        res.hashes.append(digest)
        texts.append(text)
    cb = chunk_batch(texts, config.k, config.hash_bits, config.seed)
    res.n_words = cb.n_words.tolist()
    res.n_chunks = cb.n_chunks.tolist()
    ids = np.asarray(res.prov_ids, dtype=np.uint32)
    # doc IDs grow with the batch index, so the (chunk, doc) order of cb is kept
    keys = pack_pairs(cb.chunk_ids, ids[cb.doc] if len(ids) else cb.doc.astype(np.uint32))
    res.n_pairs = len(keys)
    parts = split_sorted_by_shard(keys, config.shard_width, config.shards)
    if texts:
        res.pack = f"r{run_id:06d}-b{batch:06d}.pack"
    if bucket_dir is None:
        if texts:
            res.pack_data, res.spans = TextStore.encode_pack(texts)
        failpoints.hit("chunk_task")
        return res, [np.ascontiguousarray(p, dtype=np.uint64) for p in parts]
    for shard, part in enumerate(parts):
        if len(part):
            _save_atomic(bucket_path(bucket_dir, shard, batch), part)
    if texts:
        res.spans = TextStore(text_dir).write_pack(res.pack, texts)
    failpoints.hit("chunk_task")
    return res


@dataclass(frozen=True)
class MergeSpec:
    """Where one range's merge finds its inputs and puts its output.

    ``old_generations``: the range's committed segments (oldest first; empty: none).
    ``store_root`` / ``bucket_dir``: the shard store and bucket files on a shared filesystem,
    or None when the client sends the bucket pairs and old postings and writes the result.
    ``index_id`` / ``layout`` / ``use_cache``: the worker-side segment cache key and whether
    to use it (:mod:`simdask.cluster.worker_cache`).
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
    data = ShardStore(spec.store_root).read(generation, spec.shard)
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
) -> ShardData:
    """Rewrite one range as a single segment (DESIGN §3.3): its live postings minus
    ``dropped`` plus the run's pairs.

    The pairs carry provisional IDs, replaced via ``prov_ids -> final_ids`` (sorted
    ``prov_ids``; unmapped ones, e.g. duplicate keys, are left out). ``tomb``: the committed
    tombstones (:mod:`simdask.kernels.segments`). A range that does not change is not
    rewritten: its live postings are returned with the newest old generation. With a store,
    a rewritten range is written as generation ``spec.generation``; without one the client
    writes what this returns.
    """
    delta = run_pairs(spec, prov_ids, final_ids, buckets)
    prev = old_shard(spec, tomb, old)
    if prev is not None and len(delta) == 0 and not doc_mask(dropped, prev.doc_ids).any():
        return prev
    failpoints.hit("merge_task")
    arrays = merge_shard(
        None if prev is None else (prev.chunk_keys, prev.offsets, prev.doc_ids),
        delta,
        dropped,
    )
    data = ShardData(spec.lo, spec.hi, *arrays, generation=spec.generation)
    if spec.store_root is not None:
        ShardStore(spec.store_root).write(spec.generation, spec.shard, data)
    if spec.use_cache:
        worker_cache().put(spec.index_id, spec.layout, spec.shard, data)
    return data


def block_rows_task(
    parts: list[np.ndarray],
    doc_lo: int,
    n_chunks: np.ndarray,
    threshold: float,
    top_k: int,
):
    """All-pairs block: count the shards' pair keys (:func:`block_pair_keys`); rows over
    ``threshold`` percent both ways, best ``top_k`` per document.

    A document's rows come from several blocks, so the caller keeps the best ``top_k`` again
    over all blocks.
    """
    failpoints.hit("rows_task")
    keys, shared = count_keys(parts)
    n_docs = len(n_chunks)
    first = np.arange(doc_lo, doc_lo + (int(keys[-1]) // n_docs + 1 if len(keys) else 0))
    keep = candidate_mask(keys, shared, first, n_chunks, threshold)
    keys = keys[keep].astype(np.int64)
    d = keys // n_docs + doc_lo
    o = keys % n_docs
    return top_k_rows(*directed_rows(d, o, shared[keep], n_chunks, threshold), top_k)


def member_rows_task(
    parts: list[np.ndarray],
    block: np.ndarray,
    n_chunks: np.ndarray,
    changed: np.ndarray,
    members: np.ndarray,
    threshold: float,
    top_k: int,
):
    """Rows of the recomputed documents ``r`` of ``block`` (keys of :func:`member_pair_keys`).

    Returns ``(forward, reverse)``: forward rows ``r -> o`` (complete for each ``r`` of the
    block, cut to ``top_k``) and reverse rows ``o -> r`` for ``r`` whose content changed
    (``changed``) and ``o`` not itself recomputed (not in ``members``); every row has
    similarity >= ``threshold`` percent. Each is ``(doc, other, shared, similarity)``.
    """
    failpoints.hit("rows_task")
    keys, shared = count_keys(parts)
    n_docs = len(n_chunks)
    keep = candidate_mask(keys, shared, block.astype(np.int64), n_chunks, threshold)
    keys = keys[keep].astype(np.int64)
    r = block[keys // n_docs].astype(np.int64)
    o = keys % n_docs
    s = shared[keep].astype(np.int64)
    sim_r = 100.0 * s / n_chunks[r]
    fwd = sim_r >= threshold
    forward = top_k_rows(r[fwd], o[fwd], s[fwd], sim_r[fwd], top_k)
    rev = np.isin(r, changed) & ~np.isin(o, members)
    r, o, s = r[rev], o[rev], s[rev]
    sim_o = 100.0 * s / n_chunks[o]
    keep = sim_o >= threshold
    return forward, (o[keep], r[keep], s[keep], sim_o[keep])
