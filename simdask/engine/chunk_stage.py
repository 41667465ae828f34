"""The chunking stage on the cluster (DESIGN §3.1-2): one :func:`~.tasks.chunk_task` per
batch of items, with or without a shared filesystem (:mod:`simdask.cluster.placement`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from distributed import Client, as_completed

from simdask.cluster.transfer import Traffic
from simdask.config import IndexConfig
from simdask.engine.tasks import BatchResult, UnchangedPayload, chunk_task
from simdask.errors import ExtractionError
from simdask.ingest.sources import (
    DEFAULT_MAX_FILE_BYTES,
    KnownHashes,
    SourceItem,
    content_hash,
    fetch_item,
    parse_item,
)
from simdask.progress import Callback
from simdask.storage.text_packs import TextStore

__all__ = ["ChunkOutput", "run_chunk_stage"]


@dataclass
class ChunkOutput:
    """Per batch: the small results; without a shared filesystem also, per shard, the futures
    of every batch's pairs for that shard (``buckets[shard]``)."""

    results: list[BatchResult]
    buckets: list[list] | None = field(default=None)


def _result(out):
    return out[0]


def _bucket(out, shard: int):
    return out[1][shard]


def _payload(item: SourceItem, data: bytes, known: KnownHashes) -> bytes | UnchangedPayload:
    """What the client sends for one item: its bytes, or a marker when ``known`` holds it
    unchanged (files: hash of the bytes; JSONL lines: parsed for their id and text, which is
    cheap, while extraction of a changed file is left to the workers)."""
    if item.key is not None:
        key = item.prefix + item.key
        return UnchangedPayload(key) if known.unchanged(key, content_hash(data)) else data
    try:
        key, text, _ = parse_item(item, data, known)
    except ExtractionError:
        return data  # the worker reports it
    return UnchangedPayload(key) if text is None else data


def run_chunk_stage(
    client: Client,
    batches: list[tuple[int, list[SourceItem]]],
    known_f,
    config: IndexConfig,
    *,
    known: KnownHashes,
    transfer: str,
    bucket_dir: str,
    texts: TextStore,
    run_id: int,
    tag: str,
    cb: Callback,
    traffic: Traffic,
    in_flight: int,
    max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES,
) -> ChunkOutput:
    """Chunk all batches. ``transfer='shared'``: workers read items and write bucket files and
    packs. ``'dask'``: the client reads each batch's bytes, at most ``in_flight`` batches ahead,
    and writes the packs the tasks return; the pairs stay on the workers. The client hashes
    the files it reads and sends no bytes for those ``known`` holds unchanged. Either way text is
    extracted in the tasks; files over ``max_file_bytes`` are not read."""
    cb.stage("chunk", len(batches))
    if transfer == "shared":
        futs = [
            client.submit(
                chunk_task,
                part,
                first,
                known_f,
                config,
                bucket_dir,
                str(texts.root),
                run_id,
                b,
                max_file_bytes=max_file_bytes,
                key=f"simdask-chunk-{tag}-b{b:06d}",
            )
            for b, (first, part) in enumerate(batches)
        ]
        for _ in as_completed(futs):
            cb.advance(1)
        results = client.gather(futs)
        traffic.received(results)
        cb.end_stage()
        return ChunkOutput(results)

    results: list[BatchResult | None] = [None] * len(batches)
    buckets: list[list] = [[] for _ in range(config.shards)]
    running = as_completed()
    batch_of = {}
    todo = list(enumerate(batches))

    def submit_next() -> None:
        b, (first, part) = todo.pop(0)
        payloads: list[bytes | ExtractionError] = []
        for item in part:
            try:
                data = fetch_item(item, max_file_bytes)
            except ExtractionError as e:
                payloads.append(e)
                continue
            payloads.append(_payload(item, data, known))
        payload_f = traffic.scatter(payloads)
        f = client.submit(
            chunk_task,
            part,
            first,
            known_f,
            config,
            None,
            None,
            run_id,
            b,
            payload_f,
            key=f"simdask-chunk-{tag}-b{b:06d}",
        )
        batch_of[f.key] = b
        running.add(f)

    for _ in range(min(in_flight, len(todo))):
        submit_next()
    for f in running:
        b = batch_of.pop(f.key)
        res = traffic.gather(client.submit(_result, f, key=f"simdask-chunkres-{tag}-b{b:06d}"))
        if res.pack_data is not None:
            texts.write_pack_bytes(res.pack, res.pack_data)
            res.pack_data = None
        results[b] = res
        for s in range(config.shards):
            buckets[s].append(
                client.submit(_bucket, f, s, key=f"simdask-bucket-{tag}-b{b:06d}-s{s:04d}")
            )
        cb.advance(1)
        if todo:
            submit_next()
    cb.end_stage()
    return ChunkOutput([r for r in results if r is not None], buckets)
