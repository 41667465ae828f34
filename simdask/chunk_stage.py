"""The chunking stage on the cluster (DESIGN §3.1-2): one :func:`~simdask.tasks.chunk_task` per
batch of items, with or without a shared filesystem (:mod:`simdask.placement`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from dask.sizeof import sizeof
from distributed import Client, as_completed

from .config import IndexConfig
from .errors import ExtractionError
from .progress import Callback
from .sources import SourceItem, fetch_item
from .tasks import BatchResult, chunk_task
from .texts import TextStore

__all__ = ["ChunkOutput", "Traffic", "run_chunk_stage"]


@dataclass
class Traffic:
    """Bytes the client sent to and received from the cluster in one run (``dask.sizeof`` of
    the objects scattered, passed and gathered: document bytes, shards, results)."""

    to_cluster: int = 0
    from_cluster: int = 0

    def sent(self, obj, copies: int = 1) -> None:
        """Count an object sent to the cluster (``copies`` times: broadcast to that many
        workers)."""
        self.to_cluster += int(sizeof(obj)) * copies

    def received(self, obj) -> None:
        """Count an object received from the cluster."""
        self.from_cluster += int(sizeof(obj))


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


def run_chunk_stage(
    client: Client,
    batches: list[tuple[int, list[SourceItem]]],
    known_f,
    config: IndexConfig,
    *,
    transfer: str,
    bucket_dir: str,
    texts: TextStore,
    run_id: int,
    tag: str,
    cb: Callback,
    traffic: Traffic,
    in_flight: int,
) -> ChunkOutput:
    """Chunk all batches. ``transfer='shared'``: workers read items and write bucket files and
    packs. ``'dask'``: the client reads each batch's bytes, at most ``in_flight`` batches ahead,
    and writes the packs the tasks return; the pairs stay on the workers."""
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
                payloads.append(fetch_item(item))
            except ExtractionError as e:
                payloads.append(e)
        traffic.sent(payloads)
        [payload_f] = client.scatter([payloads], hash=False)
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
        res = client.submit(_result, f, key=f"simdask-chunkres-{tag}-b{b:06d}").result()
        traffic.received(res)
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
