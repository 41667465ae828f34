"""One run as Dask tasks (DESIGN §3): chunk batches -> merge per shard -> similarity -> commit.

This module only wires the pure kernels of :mod:`simdask.chunks`, :mod:`simdask.postings`
and :mod:`simdask.similarity` into tasks with deterministic names; the task functions below are
plain functions that the tests call directly.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xxhash
from distributed import Client, as_completed

from .chunks import chunk_batch
from .config import IndexConfig
from .errors import ExtractionError
from .postings import build_postings, drop_docs, pack_pairs, split_sorted_by_shard
from .progress import Callback
from .shards import ShardData, ShardStore, shard_ranges
from .similarity import (
    block_pair_counts,
    directed_rows,
    pair_work,
    plan_blocks,
    skipped_chunks,
    sum_pair_counts,
    top_k_rows,
)
from .sources import SourceItem, read_item

__all__ = [
    "BatchResult",
    "RunOptions",
    "block_rows_task",
    "chunk_task",
    "merge_task",
    "run_build",
]


@dataclass(frozen=True)
class RunOptions:
    """How a run is executed (not stored in the index).

    ``batch_docs``: documents per chunking task (None: about four tasks per worker, at least
    500 and at most 5,000 documents). ``block_pairs``: at most this many candidate pair counts
    per similarity block (bounds memory: ~16 bytes each). ``blocks_in_flight``: similarity
    blocks computed at once.
    """

    batch_docs: int | None = None
    block_pairs: int = 32_000_000
    blocks_in_flight: int = 4


@dataclass
class BatchResult:
    """What a chunking task tells the driver about its documents (no chunk data)."""

    doc_ids: list[int] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    n_words: list[int] = field(default_factory=list)
    n_chunks: list[int] = field(default_factory=list)
    errors: list[tuple[str, str, str]] = field(default_factory=list)
    n_pairs: int = 0


def _bucket_path(bucket_dir: str, shard: int, batch: int) -> Path:
    return Path(bucket_dir) / f"shard-{shard:04d}" / f"chunk-b{batch:06d}.npy"


def chunk_task(
    items: list[SourceItem], first_doc_id: int, config: IndexConfig, bucket_dir: str, batch: int
) -> BatchResult:
    """Read and chunk a batch; write its sorted pair keys split by shard as bucket files.

    Item ``i`` gets doc ID ``first_doc_id + i``. Files are ``shard-SSSS/chunk-bNNNNNN.npy``
    (little-endian uint64 pair keys), written atomically.
    """
    res = BatchResult()
    texts: list[str] = []
    for i, item in enumerate(items):
        try:
            key, text, digest = read_item(item)
        except ExtractionError as e:
            res.errors.append((e.key, e.kind, e.message))
            continue
        res.doc_ids.append(first_doc_id + i)
        res.keys.append(key)
        res.sources.append(item.source)
        res.hashes.append(digest)
        texts.append(text)
    cb = chunk_batch(texts, config.k, config.hash_bits, config.seed)
    res.n_words = cb.n_words.tolist()
    res.n_chunks = cb.n_chunks.tolist()
    ids = np.asarray(res.doc_ids, dtype=np.uint32)
    # doc IDs grow with the batch index, so the (chunk, doc) order of cb is kept
    keys = pack_pairs(cb.chunk_ids, ids[cb.doc] if len(ids) else cb.doc.astype(np.uint32))
    res.n_pairs = len(keys)
    for shard, part in enumerate(split_sorted_by_shard(keys, config.shard_width, config.shards)):
        if len(part):
            _save_atomic(_bucket_path(bucket_dir, shard, batch), part)
    return res


def _save_atomic(path: Path, arr: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    with open(tmp, "wb") as f:
        np.save(f, arr.astype("<u8", copy=False))
    os.replace(tmp, path)


def merge_task(
    bucket_dir: str,
    shard: int,
    lo: int,
    hi: int,
    dropped: np.ndarray,
    store_root: str,
    generation: int,
) -> ShardData:
    """Merge one shard's bucket files into CSR postings and write them as ``generation``.

    ``dropped``: doc IDs (uint32) whose postings are left out. Returns the shard (kept in
    worker memory for the similarity stage).
    """
    files = sorted((Path(bucket_dir) / f"shard-{shard:04d}").glob("chunk-b*.npy"))
    parts = [np.load(f) for f in files]
    keys = np.concatenate(parts) if parts else np.zeros(0, np.uint64)
    keys = np.sort(keys.astype(np.uint64, copy=False), kind="stable")
    keys = drop_docs(keys, dropped)
    chunk_keys, offsets, doc_ids = build_postings(keys)
    data = ShardData(lo, hi, chunk_keys, offsets, doc_ids)
    ShardStore(store_root).write(generation, shard, data)
    return data


def block_rows_task(
    parts: list[tuple[np.ndarray, np.ndarray]],
    n_chunks: np.ndarray,
    threshold: float,
    top_k: int,
):
    """Reduce one block's per-shard counts; rows over ``threshold`` percent, best ``top_k`` each."""
    keys, shared = sum_pair_counts(parts)
    return top_k_rows(*directed_rows(keys, shared, n_chunks, threshold), top_k)


@dataclass
class BuildOutcome:
    """What :func:`run_build` hands to the index for committing."""

    documents: list[tuple]
    errors: list[tuple[str, str, str]]
    rows: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    stats: dict


def _gather_in_order(client: Client, futures: list, cb: Callback) -> list:
    for _ in as_completed(futures):
        cb.advance(1)
    return client.gather(futures)


def run_build(
    client: Client,
    items: list[SourceItem],
    config: IndexConfig,
    work_dir: Path,
    store: ShardStore,
    generation: int,
    run_id: int,
    options: RunOptions,
    cb: Callback,
) -> BuildOutcome:
    """Build every shard of ``generation`` from ``items`` and compute all-pairs similarity."""
    stats: dict = {"seconds": {}}
    # deterministic task names: the index (by path) and the run
    tag = f"{xxhash.xxh3_64_hexdigest(str(store.root.resolve()).encode())[:8]}-r{run_id}"
    bucket_dir = str(work_dir / f"run-{run_id:06d}" / "buckets")
    n_workers = max(1, len(client.scheduler_info().get("workers", {})))

    # 1+2. chunk batches -> bucket files
    t = time.perf_counter()
    size = options.batch_docs or min(5000, max(500, -(-len(items) // (4 * n_workers))))
    batches = [(i, items[i : i + size]) for i in range(0, len(items), size)]
    cb.stage("chunk", len(batches))
    futs = [
        client.submit(
            chunk_task, part, first, config, bucket_dir, b, key=f"simdask-chunk-{tag}-b{b:06d}"
        )
        for b, (first, part) in enumerate(batches)
    ]
    results: list[BatchResult] = _gather_in_order(client, futs, cb)
    cb.end_stage()
    stats["seconds"]["chunk"] = time.perf_counter() - t

    documents, errors, dropped = _collect_documents(results)
    n_docs = len(items)
    n_chunks = np.zeros(max(n_docs, 1), dtype=np.int64)
    for d in documents:
        n_chunks[d[0]] = d[4]
    stats["words"] = int(sum(d[5] for d in documents))
    stats["postings_written"] = int(sum(r.n_pairs for r in results))

    # 3. merge per shard
    t = time.perf_counter()
    ranges = shard_ranges(config.hash_bits, config.shards)
    cb.stage("merge", len(ranges))
    [dropped_f] = client.scatter([np.asarray(dropped, dtype=np.uint32)], broadcast=True)
    shard_f = [
        client.submit(
            merge_task,
            bucket_dir,
            s,
            lo,
            hi,
            dropped_f,
            str(store.root),
            generation,
            key=f"simdask-merge-{tag}-s{s:04d}",
        )
        for s, (lo, hi) in enumerate(ranges)
    ]
    for _ in as_completed(shard_f):
        cb.advance(1)
    cb.end_stage()
    stats["seconds"]["merge"] = time.perf_counter() - t

    # 4. similarity in blocks of doc IDs
    t = time.perf_counter()
    work_f = [
        client.submit(pair_work, f, n_docs, config.max_df, key=f"simdask-work-{tag}-s{s:04d}")
        for s, f in enumerate(shard_f)
    ]
    skip_f = [
        client.submit(skipped_chunks, f, config.max_df, key=f"simdask-skip-{tag}-s{s:04d}")
        for s, f in enumerate(shard_f)
    ]
    work = np.sum(client.gather(work_f), axis=0) if n_docs else np.zeros(0, np.int64)
    stats["skipped_chunks"] = int(sum(client.gather(skip_f)))
    stats["candidate_pair_counts"] = int(work.sum())
    blocks = plan_blocks(work, options.block_pairs)
    stats["blocks"] = len(blocks)
    [n_chunks_f] = client.scatter([n_chunks], broadcast=True)
    cb.stage("similarity", len(blocks))
    rows = _similarity_blocks(client, shard_f, blocks, n_chunks_f, config, options, tag, cb)
    cb.end_stage()
    stats["seconds"]["similarity"] = time.perf_counter() - t
    stats["postings"] = int(
        sum(
            client.gather(
                [
                    client.submit(_n_postings, f, key=f"simdask-np-{tag}-s{s:04d}")
                    for s, f in enumerate(shard_f)
                ]
            )
        )
    )
    del shard_f
    shutil.rmtree(work_dir / f"run-{run_id:06d}", ignore_errors=True)
    return BuildOutcome(documents, errors, rows, stats)


def _n_postings(shard: ShardData) -> int:
    return shard.n_postings


def _similarity_blocks(client, shard_f, blocks, n_chunks_f, config, options, tag, cb):
    """Run blocks with at most ``options.blocks_in_flight`` at once; final top-k over all."""
    pending = list(enumerate(blocks))
    running = as_completed()
    out = []

    def submit(b: int, lo: int, hi: int) -> None:
        parts = [
            client.submit(
                block_pair_counts, f, lo, hi, config.max_df, key=f"simdask-pairs-{tag}-b{b}-s{s}"
            )
            for s, f in enumerate(shard_f)
        ]
        running.add(
            client.submit(
                block_rows_task,
                parts,
                n_chunks_f,
                config.threshold,
                config.top_k,
                key=f"simdask-rows-{tag}-b{b}",
            )
        )

    for _ in range(min(options.blocks_in_flight, len(pending))):
        b, (lo, hi) = pending.pop(0)
        submit(b, lo, hi)
    for fut in running:
        out.append(fut.result())
        fut.release()
        cb.advance(1)
        if pending:
            b, (lo, hi) = pending.pop(0)
            submit(b, lo, hi)
    if not out:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty, np.zeros(0, np.float64)
    cols = [np.concatenate([o[i] for o in out]) for i in range(4)]
    return top_k_rows(*cols, config.top_k)


def _collect_documents(results: list[BatchResult]):
    """Document rows, per-file errors, and doc IDs to drop (duplicate keys)."""
    documents: list[tuple] = []
    errors: list[tuple[str, str, str]] = []
    dropped: list[int] = []
    seen: dict[str, int] = {}
    for r in results:
        errors.extend(r.errors)
        for i, key in enumerate(r.keys):
            doc_id = r.doc_ids[i]
            if key in seen:
                errors.append(
                    (key, "duplicate_key", f"key {key!r} given twice in this run; first one kept")
                )
                dropped.append(doc_id)
                continue
            seen[key] = doc_id
            status = "indexed" if r.n_chunks[i] > 0 else "too_short"
            if status == "too_short":
                errors.append(
                    (key, "too_short", f"{r.n_words[i]} words; a chunk needs at least k words")
                )
            documents.append(
                (doc_id, key, r.sources[i], r.hashes[i], r.n_chunks[i], r.n_words[i], status)
            )
    return documents, errors, dropped
