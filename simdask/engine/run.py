"""One run as Dask tasks (DESIGN §3): chunk -> resolve IDs -> merge per shard -> similarity.

The driver lists work, submits the functions of :mod:`simdask.engine.tasks` with deterministic keys
(``simdask-<stage>-<index>-r<run>-<range>``), and turns their small results into a
:class:`~simdask.storage.catalog.RunChanges` that the index commits in one transaction.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xxhash
from distributed import Client, as_completed

from simdask import failpoints
from simdask.cluster.placement import TRANSFER_MODES, choose_transfer
from simdask.cluster.transfer import Traffic
from simdask.cluster.worker_cache import cache_stats
from simdask.config import IndexConfig
from simdask.engine.chunk_stage import run_chunk_stage
from simdask.engine.delta_stage import DeltaInputs, run_delta
from simdask.engine.merge_stage import MergeStage
from simdask.engine.similarity_stage import EMPTY_ROWS, SimilarityStage
from simdask.engine.tasks import PROVISIONAL_BASE, MergeSpec, merge_task
from simdask.errors import ConfigError
from simdask.ingest.sources import DEFAULT_MAX_FILE_BYTES, KnownHashes, SourceItem
from simdask.kernels.merge_policy import MergePolicy
from simdask.kernels.similarity import max_block_docs, skipped_chunks
from simdask.progress import Callback
from simdask.storage.catalog import Catalog, RunChanges
from simdask.storage.segments import current_tombstones
from simdask.storage.shards import ShardData, ShardStore, encode_shard, shard_ranges
from simdask.storage.text_packs import TextStore

__all__ = ["RunOptions", "RunOutcome", "run_update"]


@dataclass(frozen=True)
class RunOptions:
    """How a run is executed (not stored in the index).

    ``batch_docs``: documents per chunking task (None: about four tasks per worker, 500 to
    5,000 documents). ``block_pairs``: most candidate pair counts per similarity block (bounds
    memory: ~16 bytes each). ``blocks_in_flight``: similarity blocks computed at once.
    ``fuse_members``: an incremental run recomputing at most this many documents counts their
    pairs inside the merge tasks (one pass, no shard kept in memory between stages).
    ``transfer``: ``auto``, ``shared`` or ``dask`` (:mod:`simdask.cluster.placement`).
    ``worker_cache``: keep shards cached on the workers for the next run
    (:mod:`simdask.cluster.worker_cache`); None: only on a cluster simdask did not start itself.
    ``max_file_bytes``: larger files are not read (error kind ``too_large``; None: no limit).
    ``merge_policy``: when the segments of a range are compacted
    (:mod:`simdask.kernels.merge_policy`; ``MergePolicy(enabled=False)``: never on its own).
    """

    batch_docs: int | None = None
    block_pairs: int = 32_000_000
    blocks_in_flight: int = 4
    fuse_members: int = 1000
    max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES
    transfer: str = "auto"
    worker_cache: bool | None = None
    merge_policy: MergePolicy = field(default_factory=MergePolicy)

    def __post_init__(self) -> None:
        if self.transfer not in TRANSFER_MODES:
            raise ConfigError(
                f"transfer must be one of {', '.join(TRANSFER_MODES)}; got {self.transfer!r}"
            )


@dataclass
class RunOutcome:
    """The changes to commit, the counts for the summary and per-stage statistics."""

    changes: RunChanges
    counts: dict[str, int]
    stats: dict


def run_update(
    client: Client,
    catalog: Catalog,
    store: ShardStore,
    text_dir: Path,
    work_dir: Path,
    config: IndexConfig,
    items: list[SourceItem],
    *,
    run_id: int,
    options: RunOptions,
    cb: Callback,
    remove_keys: frozenset[str] = frozenset(),
    delete_missing_from: frozenset[str] = frozenset(),
    replace_all: bool = False,
) -> RunOutcome:
    """Index what changed in ``items``; delete ``remove_keys`` and, for the sources in
    ``delete_missing_from``, their documents that are gone. Writes shards as generation
    ``run_id``; commits nothing."""
    stats: dict = {"seconds": {}}
    tag = f"{xxhash.xxh3_64_hexdigest(_location(store).encode())[:8]}-r{run_id}"
    bucket_dir = str(work_dir / f"run-{run_id:06d}" / "buckets")
    known = {} if replace_all else catalog.known_documents()
    traffic = Traffic(client)
    n_workers = max(1, len(client.scheduler_info().get("workers", {})))
    in_flight = max(4, 2 * n_workers)
    transfer, why = choose_transfer(
        options.transfer,
        client,
        work_dir,
        [i.path for i in items],
        store.location if store.remote else None,
    )
    stats["transfer"] = transfer
    cb.message(f"data transfer: {transfer} ({why})")
    use_cache = bool(options.worker_cache)
    cache_before = client.run(cache_stats) if use_cache else {}

    # chunk: read, hash, chunk what changed, write buckets and text packs
    t = time.perf_counter()
    size = options.batch_docs or min(5000, max(500, -(-len(items) // (4 * n_workers))))
    batches = [(i, items[i : i + size]) for i in range(0, len(items), size)]
    known_hashes = KnownHashes({k: v[1] for k, v in known.items()})
    traffic.sent([known_hashes.keys, known_hashes.hi, known_hashes.lo], copies=n_workers)
    [known_f] = client.scatter([known_hashes], broadcast=True, hash=False)
    chunked = run_chunk_stage(
        client,
        batches,
        known_f,
        config,
        known=known_hashes,
        transfer=transfer,
        bucket_dir=bucket_dir,
        texts=TextStore(text_dir),
        run_id=run_id,
        tag=tag,
        cb=cb,
        traffic=traffic,
        in_flight=in_flight,
        max_file_bytes=options.max_file_bytes,
    )
    del known_f
    stats["seconds"]["chunk"] = time.perf_counter() - t
    failpoints.hit("after_chunk")

    r = _resolve(chunked.results, known, catalog, remove_keys, delete_missing_from, replace_all)
    stats["words"] = int(sum(d[5] for d in r["upserted"]))
    changed_ids = np.array(sorted({d[0] for d in r["upserted"]} | set(r["deleted"])), np.int64)
    changes = RunChanges(
        upserted=r["upserted"],
        deleted=r["deleted"],
        rows=EMPTY_ROWS,
        rows_replaced=changed_ids,
        reverse_replaced=changed_ids,
        trim=np.zeros(0, np.int64),
        top_k=config.top_k,
        manifests={},
        errors=r["errors"],
        skipped_chunks=0,
        replace_all=replace_all,
        config=config,
    )
    if len(changed_ids) == 0 and not replace_all:
        changes.skipped_chunks = int(catalog.meta("skipped_chunks") or 0)
        _traffic_stats(stats, traffic, client, cache_before)
        return RunOutcome(changes, r["counts"], stats)

    # merge per shard, then similarity
    t = time.perf_counter()
    ranges = shard_ranges(config.hash_bits, config.shards)
    manifest = {} if replace_all else catalog.segments()
    n_chunks = _n_chunks_after(catalog, r, replace_all)
    tomb_old = np.zeros(0, np.int64) if replace_all else current_tombstones(catalog)
    tomb_new = _tombstones_after(tomb_old, r["dropped"], run_id, len(n_chunks))
    changes.tombstones = r["dropped"].astype(np.int64)
    common = [r["prov"], r["final"], r["dropped"]]
    traffic.sent(common, copies=n_workers)
    prov_f, final_f, dropped_f = client.scatter(common, broadcast=True, hash=False)
    shared = transfer == "shared"
    specs = [
        MergeSpec(
            shard=s,
            lo=lo,
            hi=hi,
            old_generations=tuple(g for g, _, _ in manifest.get(s, [])),
            generation=run_id,
            store_root=str(store.root) if shared else None,
            bucket_dir=bucket_dir if shared else None,
            index_id=catalog.index_id,
            layout=config.shard_layout,
            use_cache=use_cache,
        )
        for s, (lo, hi) in enumerate(ranges)
    ]
    merges = MergeStage(
        client,
        store,
        specs,
        transfer=transfer,
        buckets=chunked.buckets,
        cb=cb,
        traffic=traffic,
        in_flight=in_flight,
        tomb=tomb_old,
    )
    traffic.sent(n_chunks, copies=n_workers)
    [n_chunks_f] = client.scatter([n_chunks], broadcast=True, hash=False)
    survivors = len(known) - r["counts"]["modified"] - r["counts"]["deleted"]
    full = replace_all or survivors == 0
    if not full:
        changed = np.array(sorted(d[0] for d in r["upserted"] if d[4] > 0), dtype=np.uint32)
        refill = catalog.refill_candidates(changed_ids, config.top_k)
        members = np.union1d(changed, refill).astype(np.uint32)
        changes.rows_replaced = np.union1d(changed_ids, members)
        stats["refilled"] = len(refill)
    limit = min(options.fuse_members, max_block_docs(len(n_chunks)))
    if not full and len(members) <= limit:
        inp = DeltaInputs(
            prov_f,
            final_f,
            members,
            changed,
            r["dropped"],
            manifest,
            tomb_old,
            tomb_new,
            n_chunks_f,
            len(n_chunks),
        )

        out = run_delta(
            client,
            merges,
            store,
            catalog,
            TextStore(text_dir),
            config,
            inp,
            ranges,
            tag,
            cb,
            traffic,
        )
        changes.rows, changes.trim = out["rows"], out["trim"]
        changes.skipped_chunks = int(catalog.meta("skipped_chunks") or 0) + out["skipped_delta"]
        changes.manifests = {
            s: [*manifest.get(s, []), (run_id, *kp)] for s, kp in out["segments"].items()
        }
        changes.dead = _dead_after(catalog, r["dropped"], manifest, config.shards)
        stats["shards_rewritten"] = 0
        stats["segments_written"] = len(out["segments"])
        stats["postings"] = int(sum(p for _, p in out["segments"].values()))
        stats["candidate_pair_counts"] = out["pairs"]
        stats["blocks"] = 1
        stats["delta_seconds"] = out["seconds"]
        stats["seconds"]["merge+similarity"] = time.perf_counter() - t
        _traffic_stats(stats, traffic, client, cache_before)
        failpoints.hit("after_similarity")
        return RunOutcome(changes, r["counts"], stats)
    shard_f = merges.run(merge_task, (prov_f, final_f, dropped_f, tomb_old), f"simdask-merge-{tag}")
    del chunked
    infos = client.gather(
        [
            client.submit(_shard_info, f, key=f"simdask-info-{tag}-s{s:04d}")
            for s, f in enumerate(shard_f)
        ]
    )
    changes.manifests = {s: [(run_id, k, n)] for s, (g, k, n) in enumerate(infos) if g == run_id}
    changes.dead = dict.fromkeys(changes.manifests, 0.0)
    if not shared:  # workers encode the rewritten shards, the client writes the files
        _write_back(
            client,
            store,
            run_id,
            {s: shard_f[s] for s in changes.manifests},
            encode_shard,
            tag,
            traffic,
        )
    stats["postings"] = int(sum(n for _, _, n in infos))
    stats["shards_rewritten"] = len(changes.manifests)
    stats["segments_written"] = len(changes.manifests)
    stats["merges_sent_to_cache"] = merges.sent_to_cache
    stats["seconds"]["merge"] = time.perf_counter() - t
    failpoints.hit("after_merge")

    t = time.perf_counter()
    skip_f = [
        client.submit(skipped_chunks, f, config.max_df, key=f"simdask-skip-{tag}-s{s:04d}")
        for s, f in enumerate(shard_f)
    ]
    changes.skipped_chunks = int(sum(client.gather(skip_f)))
    sim = SimilarityStage(client, shard_f, n_chunks_f, len(n_chunks), config, options, tag, cb)
    if full:
        changes.rows = sim.all_pairs(len(n_chunks))
        changes.rows_replaced = changes.reverse_replaced = np.arange(len(n_chunks))
    else:
        changes.rows, changes.trim = sim.members(members, changed)
    traffic.received(changes.rows)
    stats["blocks"] = sim.n_blocks
    stats["candidate_pair_counts"] = sim.work
    stats["seconds"]["similarity"] = time.perf_counter() - t
    _traffic_stats(stats, traffic, client, cache_before)
    failpoints.hit("after_similarity")
    return RunOutcome(changes, r["counts"], stats)


def _location(store: ShardStore) -> str:
    return store.location if store.remote else str(Path(store.root).resolve())


def _traffic_stats(stats: dict, traffic: Traffic, client: Client, cache_before: dict) -> None:
    stats["bytes_to_cluster"] = traffic.to_cluster
    stats["bytes_from_cluster"] = traffic.from_cluster
    if cache_before:
        after = client.run(cache_stats)
        hits = sum(h - cache_before.get(w, (0, 0, 0))[0] for w, (h, _, _) in after.items())
        misses = sum(m - cache_before.get(w, (0, 0, 0))[1] for w, (_, m, _) in after.items())
        stats["worker_cache"] = {
            "hits": int(hits),
            "misses": int(misses),
            "bytes": int(sum(b for _, _, b in after.values())),
        }


def _write_back(client, store, run_id, futures: dict, encode, tag, traffic) -> None:
    """Without a shared filesystem: each rewritten shard is encoded (in the store's layout,
    raw or compressed) on the worker that holds it, and the client writes the files as they
    arrive."""
    encoded = {
        client.submit(encode, f, store.compressed, key=f"simdask-encode-{tag}-s{s:04d}"): s
        for s, f in futures.items()
    }
    for fut in as_completed(encoded):
        files = traffic.gather(fut)
        store.write_encoded(run_id, encoded[fut], files)
        fut.release()


def _shard_info(shard: ShardData) -> tuple[int, int, int]:
    return shard.generation, len(shard.chunk_keys), shard.n_postings


def _tombstones_after(tomb: np.ndarray, dropped: np.ndarray, run_id: int, n: int) -> np.ndarray:
    """``tomb`` with this run's tombstones (``dropped`` at ``run_id``), at least ``n`` long."""
    out = np.zeros(max(len(tomb), n, int(dropped.max()) + 1 if len(dropped) else 0), np.int64)
    out[: len(tomb)] = tomb
    out[dropped.astype(np.int64)] = run_id
    return out


def _dead_after(catalog: Catalog, dropped: np.ndarray, manifest: dict, n_ranges: int):
    """The estimated tombstoned postings per range after tombstoning ``dropped``: their
    chunks (``|A|`` before the run) spread evenly over the ranges (chunk IDs are hashes)."""
    ids = [int(d) for d in dropped]
    total = 0
    for i in range(0, len(ids), 5000):
        part = ids[i : i + 5000]
        total += catalog.conn.execute(
            "SELECT COALESCE(SUM(n_chunks), 0) FROM documents"
            f" WHERE doc_id IN ({','.join('?' * len(part))})",
            part,
        ).fetchone()[0]
    if not total:
        return {}
    old = catalog.dead_postings()
    return {s: old.get(s, 0.0) + total / n_ranges for s in manifest}


def _n_chunks_after(catalog: Catalog, r: dict, replace_all: bool) -> np.ndarray:
    """``|A|`` by doc ID after the run (0 for free IDs)."""
    rows = (
        []
        if replace_all
        else catalog.conn.execute("SELECT doc_id, n_chunks FROM documents").fetchall()
    )
    top = max([d for d, _ in rows] + [d[0] for d in r["upserted"]] + [-1])
    n = np.zeros(top + 1, dtype=np.int64)
    for d, c in rows:
        n[d] = c
    for d in r["deleted"]:
        n[d] = 0
    for d in r["upserted"]:
        n[d[0]] = d[4]
    return n


def _resolve(results, known, catalog, remove_keys, delete_missing_from, replace_all) -> dict:
    """Decide per document: added, modified, unchanged, deleted, failed; give final doc IDs."""
    events = []
    for res in results:
        events += [(i, "error", e) for i, *e in res.errors]
        events += [(i, "same", key) for i, key in res.unchanged]
        for j, prov in enumerate(res.prov_ids):
            row = (
                res.keys[j],
                res.source_of[j],
                res.hashes[j],
                res.n_chunks[j],
                res.n_words[j],
                res.pack,
                *res.spans[j],
            )
            events.append((prov - PROVISIONAL_BASE, "new", row))
    events.sort(key=lambda e: e[0])
    errors, seen, recomputed = [], set(), []
    counts = dict.fromkeys(("added", "modified", "unchanged", "deleted", "failed", "too_short"), 0)
    for index, what, data in events:
        if what == "error":
            errors.append(tuple(data))
            counts["failed"] += 1
            seen.add(data[0])  # a known document that failed to read keeps its old version
            continue
        key = data if what == "same" else data[0]
        if key in seen:
            errors.append(
                (key, "duplicate_key", f"key {key!r} given twice in this run; first kept")
            )
            counts["failed"] += 1
            continue
        seen.add(key)
        if what == "same":
            counts["unchanged"] += 1
        else:
            recomputed.append((index, data))
    # a key given to remove but present in this run's sources is indexed, not deleted
    gone = {k for k in remove_keys if k in known and k not in seen}
    gone |= {k for k, (_, _, src) in known.items() if src in delete_missing_from and k not in seen}
    deleted = sorted(known[k][0] for k in gone)
    counts["deleted"] = len(deleted)
    new = [x for x in recomputed if x[1][0] not in known]
    fresh = list(range(len(new))) if replace_all else catalog.allocate_ids(len(new))
    if fresh and fresh[-1] >= PROVISIONAL_BASE:
        raise ConfigError(f"doc IDs must stay below {PROVISIONAL_BASE}; this run needs {fresh[-1]}")
    final_of = dict(zip((i for i, _ in new), fresh, strict=True))
    upserted, prov, final = [], [], []
    for index, (key, source, digest, n_chunks, n_words, pack, off, length) in recomputed:
        doc_id = final_of.get(index, known[key][0] if key in known else -1)
        counts["added" if key not in known else "modified"] += 1
        status = "indexed" if n_chunks > 0 else "too_short"
        if status == "too_short":
            counts["too_short"] += 1
            errors.append((key, "too_short", f"{n_words} words; a chunk needs at least k words"))
        upserted.append((doc_id, key, source, digest, n_chunks, n_words, status, pack, off, length))
        prov.append(PROVISIONAL_BASE + index)
        final.append(doc_id)
    modified = [d[0] for d in upserted if d[1] in known]
    return {
        "upserted": upserted,
        "deleted": deleted,
        "errors": errors,
        "counts": counts,
        "prov": np.array(prov, dtype=np.uint32),
        "final": np.array(final, dtype=np.uint32),
        "dropped": np.array(sorted(set(modified) | set(deleted)), dtype=np.uint32),
    }
