"""The chunking stage (DESIGN §3.1-2): one :func:`chunk_task` per batch of items, with or
without a shared filesystem (:mod:`simdask.cluster.placement`).

:func:`chunk_task` is a plain function of plain arguments (the tests call it directly);
:class:`ChunkStage` submits it under the stage contract of :mod:`.stage`. Bucket files
between this stage and the merge are named by shard and batch
(``buckets/shard-SSSS/chunk-bNNNNNN.npy``) and written atomically.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from dask.sizeof import sizeof
from distributed import Future

from simdask import failpoints
from simdask.config import IndexConfig
from simdask.engine.context import RunContext
from simdask.engine.stage import drive
from simdask.errors import ExtractionError
from simdask.ingest.sources import (
    DEFAULT_MAX_FILE_BYTES,
    KnownHashes,
    SourceItem,
    content_hash,
    fetch_item,
    parse_item,
)
from simdask.kernels.changes import NewVersion
from simdask.kernels.exclusions import Exclusions
from simdask.kernels.features import SORTED_CHUNK
from simdask.kernels.lsh_bands import batch_lsh
from simdask.kernels.postings import pack_pairs, split_sorted_by_shard
from simdask.storage.text_packs import TextStore

__all__ = [
    "PROVISIONAL_BASE",
    "BatchResult",
    "ChunkOutput",
    "ChunkStage",
    "UnchangedPayload",
    "bucket_path",
    "chunk_task",
    "run_chunk_stage",
]

#: Recomputed documents carry ``PROVISIONAL_BASE + item index`` as doc ID in bucket files until
#: the driver has given them their final IDs; doc IDs proper stay below it.
PROVISIONAL_BASE = 2**31


@dataclass
class BatchResult:
    """What a chunking task tells the driver (no chunk data: that went to bucket files).

    Per recomputed document (new content): ``prov_ids``, ``keys``, ``hashes``, ``n_words``,
    ``n_chunks``, ``spans`` (offset, length in ``pack``). ``unchanged``: ``(item, key)`` whose
    content hash equals the catalog's. ``errors``: ``(item, key, kind, message)``;
    ``warnings``: the same for recomputed documents indexed with a note (``control_bytes``).
    ``lsh``: in the MinHash LSH mode, signatures and band keys of the recomputed documents.
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
    warnings: list[tuple[int, str, str, str]] = field(default_factory=list)
    n_pairs: int = 0
    lsh: tuple[np.ndarray, np.ndarray] | None = None  # (signatures, band keys) per prov_id

    def versions(self) -> list[NewVersion]:
        """The recomputed documents, each with its item index in the run."""
        return [
            NewVersion(
                self.prov_ids[j] - PROVISIONAL_BASE,
                self.keys[j],
                self.source_of[j],
                self.hashes[j],
                self.n_chunks[j],
                self.n_words[j],
                self.pack,
                *self.spans[j],
            )
            for j in range(len(self.prov_ids))
        ]


@dataclass(frozen=True)
class UnchangedPayload:
    """Sent by the client in place of a document's bytes when it hashed them and found the
    document indexed with that content (no shared filesystem: unchanged files cost no
    transfer)."""

    key: str


@sizeof.register(BatchResult)
def _sizeof_batch(res: BatchResult) -> int:
    """Dask's size estimate of a batch result: its lists and the pack's bytes."""
    lists = (res.source_of, res.keys, res.hashes, res.unchanged, res.errors, res.warnings)
    lsh = sum(a.nbytes for a in res.lsh) if res.lsh else 0
    return sizeof(lists) + sizeof(res.spans) + len(res.pack_data or b"") + lsh + 200


def bucket_path(bucket_dir: str, shard: int, batch: int) -> Path:
    """The bucket file of one chunking task for one shard."""
    return Path(bucket_dir) / f"shard-{shard:04d}" / f"chunk-b{batch:06d}.npy"


def _save_atomic(path: Path, arr: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    with open(tmp, "wb") as f:
        np.save(f, arr.astype("<u8", copy=False))
    os.replace(tmp, path)


def _read_batch(
    items: list[SourceItem],
    first_item: int,
    known: KnownHashes,
    payloads: list | None,
    max_file_bytes: int | None,
) -> tuple[BatchResult, list[str]]:
    """Read and hash the items; extract those whose content changed. Returns the result
    without chunk counts and the texts of the recomputed documents."""
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
            notes: list[tuple[str, str]] = []
            key, text, digest = parse_item(item, data, known, max_file_bytes, notes)
        except ExtractionError as e:
            res.errors.append((index, e.key, e.kind, e.message))
            continue
        if text is None:  # known.unchanged(key, digest): not extracted
            res.unchanged.append((index, key))
            continue
        res.warnings.extend((index, key, kind, message) for kind, message in notes)
        res.prov_ids.append(PROVISIONAL_BASE + index)
        res.keys.append(key)
        res.source_of.append(item.source)
        res.hashes.append(digest)
        texts.append(text)
    return res, texts


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
    exclusions: Exclusions | None = None,
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
    carries the pack's bytes in ``pack_data`` for the client to write. ``exclusions``: what
    the index leaves out of every chunk set (templates, quotations, reference lists); the
    texts are stored whole.
    """
    res, texts = _read_batch(items, first_item, known, payloads, max_file_bytes)
    cb = SORTED_CHUNK.chunk(texts, config.k, config.hash_bits, config.seed, exclusions)
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


@dataclass
class ChunkOutput:
    """Per batch: the small results; without a shared filesystem also, per shard, the futures
    of every batch's pairs for that shard (``buckets[shard]``, in batch order)."""

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


class ChunkStage:
    """One :func:`chunk_task` per batch (the :class:`~.stage.Stage` contract).

    Shared filesystem: all batches are submitted at once; workers read the items and write
    bucket files and packs. Otherwise the client reads each batch's bytes, at most
    ``ctx.in_flight`` batches ahead, and writes the packs the tasks return; the pairs stay on
    the workers (:attr:`buckets`).
    """

    name = "chunk"

    def __init__(
        self, ctx: RunContext, batches, known_f, config, known, bucket_dir, texts, excl_f=None
    ):
        self.ctx, self.batches, self.known_f, self.config = ctx, batches, known_f, config
        self.excl_f = excl_f
        self.known, self.bucket_dir, self.texts = known, bucket_dir, texts
        self.size = len(batches)
        self.limit = self.size if ctx.shared else ctx.in_flight
        self.futures: list = [None] * self.size
        self.results: list[BatchResult | None] = [None] * self.size
        self.buckets = None if ctx.shared else [[None] * self.size for _ in range(config.shards)]

    def submit(self, b: int) -> Future:
        ctx, (first, part) = self.ctx, self.batches[b]
        max_bytes = ctx.options.max_file_bytes
        args = (part, first, self.known_f, self.config)
        if ctx.shared:
            return ctx.client.submit(
                chunk_task,
                *args,
                self.bucket_dir,
                str(self.texts.root),
                ctx.run_id,
                b,
                max_file_bytes=max_bytes,
                exclusions=self.excl_f,
                key=ctx.key("chunk", b=b),
            )
        payloads: list[bytes | ExtractionError | UnchangedPayload] = []
        for item in part:
            try:
                data = fetch_item(item, max_bytes)
            except ExtractionError as e:
                payloads.append(e)
                continue
            payloads.append(_payload(item, data, self.known))
        payload_f = ctx.traffic.scatter(payloads)
        return ctx.client.submit(
            chunk_task,
            *args,
            None,
            None,
            ctx.run_id,
            b,
            payload_f,
            exclusions=self.excl_f,
            key=ctx.key("chunk", b=b),
        )

    def collect(self, b: int, future: Future) -> None:
        ctx = self.ctx
        if ctx.shared:  # the results are gathered at once when all are done
            self.futures[b] = future
            return None
        res = ctx.traffic.gather(ctx.client.submit(_result, future, key=ctx.key("chunkres", b=b)))
        if res.pack_data is not None:
            self.texts.write_pack_bytes(res.pack, res.pack_data)
            res.pack_data = None
        self.results[b] = res
        for s, bucket in enumerate(self.buckets):
            bucket[b] = ctx.client.submit(_bucket, future, s, key=ctx.key("bucket", b=b, s=s))
        return None


def run_chunk_stage(
    ctx: RunContext,
    batches: list[tuple[int, list[SourceItem]]],
    known_f,
    config: IndexConfig,
    *,
    known: KnownHashes,
    bucket_dir: str,
    texts: TextStore,
    exclusions_f=None,
) -> ChunkOutput:
    """Chunk all batches ``(first item index, items)`` (:class:`ChunkStage`). ``known_f``: the
    future of ``known`` on every worker. The client hashes the files it reads and sends no
    bytes for those ``known`` holds unchanged. Either way text is extracted in the tasks;
    files over ``ctx.options.max_file_bytes`` are not read. ``exclusions_f``: the future of
    the index's :class:`~simdask.kernels.exclusions.Exclusions` on every worker (or None)."""
    stage = ChunkStage(ctx, batches, known_f, config, known, bucket_dir, texts, exclusions_f)
    drive(ctx, stage)
    if ctx.shared:
        results = ctx.client.gather(stage.futures)
        ctx.traffic.received(results)
        return ChunkOutput(results)
    return ChunkOutput([r for r in stage.results if r is not None], stage.buckets)
