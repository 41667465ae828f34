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
from simdask.kernels.lsh import batch_lsh
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
    member_pair_keys,
    skipped_chunks,
    top_k_rows,
)
from simdask.storage.shards import ShardData, ShardStore
from simdask.storage.text_packs import TextStore

__all__ = [
    "PROVISIONAL_BASE",
    "BatchResult",
    "MergeSpec",
    "UnchangedPayload",
    "block_rows_task",
    "chunk_task",
    "member_rows_task",
    "merge_pairs_task",
    "merge_task",
    "old_shard",
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
    lsh: tuple[np.ndarray, np.ndarray] | None = None  # (signatures, band keys) per prov_id


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
    lsh = sum(a.nbytes for a in res.lsh) if res.lsh else 0
    return sizeof(lists) + sizeof(res.spans) + len(res.pack_data or b"") + lsh + 200


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
    if config.lsh is not None:  # MinHash LSH mode: signatures over the same chunk IDs
        res.lsh = batch_lsh(cb.chunk_ids, cb.doc, len(texts), config.lsh_params, config.seed)
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
    """Where one shard's merge finds its inputs and puts its output.

    ``store_root`` / ``bucket_dir``: the shard store and bucket files on a shared filesystem,
    or None when the client sends the bucket pairs and old shard and writes the result.
    ``index_id`` / ``layout`` / ``use_cache``: the worker-side shard cache key and whether to
    use it (:mod:`simdask.cluster.worker_cache`).
    """

    shard: int
    lo: int
    hi: int
    old_generation: int | None
    generation: int
    store_root: str | None
    bucket_dir: str | None
    index_id: str = ""
    layout: str = ""
    use_cache: bool = False


def old_shard(spec: MergeSpec, old: ShardData | None) -> ShardData | None:
    """The shard's previous generation: as sent by the client, from this worker's cache, or
    read from the store. Raises :class:`ShardNotCachedError` when it is in none of them and
    there is no shared store."""
    if spec.old_generation is None:
        return None
    if old is not None:
        return old
    if spec.use_cache:
        hit = worker_cache().get(spec.index_id, spec.layout, spec.shard, spec.old_generation)
        if hit is not None:
            return hit
    if spec.store_root is None:
        raise ShardNotCachedError(
            f"shard {spec.shard} generation {spec.old_generation} was expected in this "
            "worker's cache and is not there"
        )
    return ShardStore(spec.store_root).read(spec.old_generation, spec.shard)


def merge_task(
    spec: MergeSpec,
    prov_ids: np.ndarray,
    final_ids: np.ndarray,
    dropped: np.ndarray,
    buckets: list[np.ndarray] | None = None,
    old: ShardData | None = None,
) -> ShardData:
    """Merge one shard (DESIGN §3.3): old postings minus ``dropped`` plus the run's pairs.

    The pairs come from the bucket files (shared filesystem) or ``buckets``; they carry
    provisional IDs, replaced via ``prov_ids -> final_ids`` (sorted ``prov_ids``; unmapped
    ones, e.g. duplicate keys, are left out). A shard that does not change is not rewritten:
    the old generation's data is returned as it is. With a store, a rewritten shard is written
    as generation ``spec.generation``; without one the client writes what this returns.
    """
    if buckets is None:
        files = sorted((Path(spec.bucket_dir) / f"shard-{spec.shard:04d}").glob("chunk-b*.npy"))
        buckets = [np.load(f) for f in files]
    parts = [b.astype(np.uint64, copy=False) for b in buckets if len(b)]
    delta = np.concatenate(parts) if parts else np.zeros(0, np.uint64)
    delta = remap_docs(delta, prov_ids, final_ids)
    prev = old_shard(spec, old)
    if prev is not None and len(delta) == 0 and not doc_mask(dropped, prev.doc_ids).any():
        data = prev
    else:
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


def merge_pairs_task(
    spec: MergeSpec,
    prov_ids: np.ndarray,
    final_ids: np.ndarray,
    dropped: np.ndarray,
    members: np.ndarray,
    n_docs: int,
    max_df: int | None,
    buckets: list[np.ndarray] | None = None,
    old: ShardData | None = None,
) -> tuple[tuple[int, int, int, int], np.ndarray, ShardData | None]:
    """:func:`merge_task`, then at once this shard's pair keys of ``members``
    (:func:`~simdask.kernels.similarity.member_pair_keys`) and its skipped-chunk count.

    For runs that recompute few documents: the merged shard is not kept as a task result for
    a later stage (only in the bounded worker cache, if used), so the next shard reuses that
    memory. Returns ``((generation, postings, skipped chunks, keys emitted), keys, shard)``,
    ``shard`` being the rewritten shard for the client to write when there is no store (None
    otherwise).
    """
    data = merge_task(spec, prov_ids, final_ids, dropped, buckets, old)
    keys = member_pair_keys(data, members, n_docs, max_df)
    head = (data.generation, data.n_postings, skipped_chunks(data, max_df), len(keys))
    to_write = data if spec.store_root is None and data.generation == spec.generation else None
    return head, keys, to_write


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
