"""Data placement and the worker-side shard cache on the session's LocalCluster.

* ``transfer="dask"`` (no shared filesystem) gives the same index as ``"shared"``, for a first
  build, an incremental run through the fused merge and one through the separate stages, and
  writes no bucket file;
* the shard cache: a second run's merges start from the cached shards (hits counted by the
  workers), a cached shard that is gone is sent by the client, a different layout drops them.
"""

from __future__ import annotations

import numpy as np
import pytest

from simdask import Index, IndexConfig
from simdask.cluster.placement import choose_transfer, probe_workers
from simdask.cluster.transfer import Traffic
from simdask.cluster.worker_cache import CacheEntry, ShardCache, cache_clear, cache_entries
from simdask.engine.chunk_stage import run_chunk_stage
from simdask.engine.context import RunContext
from simdask.engine.run import RunOptions
from simdask.errors import ConfigError
from simdask.ingest.sources import KnownHashes, list_items
from simdask.progress import Callback
from simdask.storage.shards import ShardData
from simdask.storage.text_packs import TextStore
from tests.helpers.compare import assert_same_index, assert_same_similarity
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.integration


def _shard(gen: int, n: int) -> ShardData:
    keys = np.arange(n, dtype=np.uint32)
    return ShardData(0, 1 << 20, keys, np.arange(n + 1, dtype=np.uint64), keys.copy(), gen)


def test_shard_cache_lru_limit_and_generations():
    one = _shard(1, 100)  # 400 + 808 + 400 = 1608 bytes
    cache = ShardCache(limit_bytes=4 * one.nbytes)
    assert cache.put("ix", "L", 0, one)
    assert cache.put("ix", "L", 0, _shard(2, 100))  # a newer generation keeps the older one
    assert {e.generation for e in cache.entries()} == {1, 2}
    assert cache.get("ix", "L", 0, 2) is not None  # segments of a range stay side by side
    assert cache.get("ix", "L", 0, 1) is not None  # (cache_retain drops uncommitted ones)
    assert {e.generation for e in cache.entries()} == {1, 2}
    assert cache.get("other", "L", 0, 2) is None and cache.get("ix", "L2", 0, 2) is None
    assert (cache.hits, cache.misses) == (2, 2)
    for s in range(1, 5):  # the least recently used entry goes first
        cache.put("ix", "L", s, _shard(2, 100))
    assert cache.nbytes <= cache.limit_bytes
    assert [e.shard for e in cache.entries()] == [1, 2, 3, 4]  # shard 0 was evicted
    assert cache.get("ix", "L", 0, 2) is None
    assert not cache.put("ix", "L", 9, _shard(2, 1000))  # larger than the whole cache
    e = cache.entries()[-1]
    assert cache.drop(e) == e.nbytes and cache.drop(e) == 0
    assert isinstance(e, CacheEntry)


def _build(path, sources, client, **opts):
    idx = Index.create(path, IndexConfig(shards=opts.pop("shards", 6), hash_bits=24))
    idx.update(sources, client=client, options=RunOptions(**opts))
    return idx


@pytest.mark.parametrize("fuse", [0, 1000])
def test_dask_transfer_equals_shared(tmp_path, client, fuse):
    docs = make_docs(50, seed=31)
    src = write_txt(docs, tmp_path / "docs")
    a = _build(tmp_path / "a", [src], client, transfer="shared", batch_docs=9)
    b = _build(tmp_path / "b", [src], client, transfer="dask", batch_docs=9)
    assert_same_index(a, b)
    assert_same_similarity(a, b)
    assert not (tmp_path / "b" / "work").exists() or not list(
        (tmp_path / "b" / "work").rglob("*.npy")
    )
    # incremental: modify, add, delete; through the fused merge (1000) or the stages (0)
    keys = sorted(docs)
    (src / f"{keys[0]}.txt").write_text(docs[keys[1]] + " and more words at the end")
    (src / f"{keys[2]}.txt").unlink()
    (src / "new.txt").write_text(docs[keys[3]][: len(docs[keys[3]]) // 2])
    for idx, mode in ((a, "shared"), (b, "dask")):
        s = idx.update(
            [src],
            client=client,
            delete_missing=True,
            options=RunOptions(transfer=mode, fuse_members=fuse, worker_cache=False),
        )
        assert (s.added, s.modified, s.deleted) == (1, 1, 1)
        assert s.extra["transfer"] == mode
    assert_same_index(a, b)
    assert_same_similarity(a, b)
    assert b.texts.packs() and b.text("docs/new.txt") == (src / "new.txt").read_text()


def test_dask_transfer_reports_unreadable_files(tmp_path, client):
    """Without a shared filesystem the client reads the files: one that is gone by then is a
    per-file error of the run, the others are chunked by the workers."""
    docs = make_docs(6, seed=5)
    src = write_txt(docs, tmp_path / "docs")
    items = list_items([src])
    (src / f"{sorted(docs)[2]}.txt").unlink()  # gone between listing and reading
    traffic = Traffic(client)
    ctx = RunContext(client, 1, "t-unreadable", Callback(), traffic, "dask", 2, in_flight=1)
    out = run_chunk_stage(
        ctx,
        [(0, items[:4]), (4, items[4:])],
        client.scatter(KnownHashes({}), hash=False),
        IndexConfig(shards=3, hash_bits=20),
        known=KnownHashes({}),
        bucket_dir=str(tmp_path / "unused"),
        texts=TextStore(tmp_path / "texts"),
    )
    errors = [e for r in out.results for e in r.errors]
    assert [(e[1], e[2]) for e in errors] == [(f"docs/{sorted(docs)[2]}.txt", "unreadable")]
    assert "cannot read" in errors[0][3]
    assert sum(len(r.keys) for r in out.results) == len(docs) - 1
    assert len(out.buckets) == 3 and all(len(b) == 2 for b in out.buckets)
    pairs = sum(len(f.result()) for b in out.buckets for f in b)
    assert pairs == sum(r.n_pairs for r in out.results) > 0
    assert not (tmp_path / "unused").exists()
    assert len(TextStore(tmp_path / "texts").packs()) == 2
    assert traffic.to_cluster >= sum(
        len(t.encode()) for k, t in docs.items() if k != sorted(docs)[2]
    )


def test_probe_sees_shared_filesystem(tmp_path, client):
    doc = tmp_path / "d.txt"
    doc.write_text("hello world")
    reasons = probe_workers(client, tmp_path / "work", [str(doc)])
    assert len(reasons) == 2 and not any(reasons.values())
    assert choose_transfer("auto", client, tmp_path / "work", [str(doc)])[0] == "shared"
    with pytest.raises(ConfigError, match="one of auto, shared, dask"):
        choose_transfer("nfs", client, tmp_path / "work", [])
    assert not list((tmp_path / "work").iterdir())  # probe files cleaned up


def test_worker_cache_serves_the_next_run(tmp_path, client):
    client.run(cache_clear)
    docs = make_docs(40, seed=8)
    src = write_txt(docs, tmp_path / "docs")
    for mode in ("shared", "dask"):
        idx = Index.create(tmp_path / mode, IndexConfig(shards=5, hash_bits=22))
        # fuse_members=0: ranges are rewritten whole (the path that reads old segments)
        opts = RunOptions(transfer=mode, worker_cache=True, fuse_members=0)
        first = idx.update([src], client=client, options=opts)
        gens = idx.catalog.shard_generations()
        cached = {(e[2], e[3]) for entries in client.run(cache_entries).values() for e in entries}
        assert {(s, g) for s, g in gens.items()} <= cached
        assert first.extra["worker_cache"]["hits"] == 0
        (src / "extra.txt").write_text(docs[sorted(docs)[4]] + " plus a tail of new words")
        second = idx.update([src], client=client, options=opts)
        # every shard's merge found its previous generation in a worker's cache
        assert second.extra["worker_cache"]["hits"] == 5
        assert second.extra["worker_cache"]["misses"] == 0
        assert second.extra["merges_sent_to_cache"] == 5
        ref = Index.create(tmp_path / f"{mode}-ref", IndexConfig(shards=5, hash_bits=22))
        ref.update([src], client=client, options=RunOptions(worker_cache=False))
        assert_same_index(idx, ref)
        assert_same_similarity(idx, ref)
        (src / "extra.txt").unlink()
        if mode == "dask":  # bytes sent: the shards stayed on the workers
            assert second.extra["bytes_to_cluster"] < first.extra["bytes_to_cluster"]


def test_cache_gone_and_layout_change(tmp_path, client, monkeypatch):
    docs = make_docs(30, seed=9)
    src = write_txt(docs, tmp_path / "docs")
    idx = Index.create(tmp_path / "ix", IndexConfig(shards=4, hash_bits=22))
    opts = RunOptions(transfer="dask", worker_cache=True, fuse_members=0)
    idx.update([src], client=client, options=opts)
    # the cache is emptied after the client located the shards: merges must be re-sent
    from simdask.engine.merge_stage import MergeStage

    orig = MergeStage.__init__

    def init_then_clear(self, *a, **kw):
        orig(self, *a, **kw)
        assert self.located  # the shards were found in the caches ...
        self.ctx.client.run(cache_clear)  # ... and are gone when the merges run

    monkeypatch.setattr(MergeStage, "__init__", init_then_clear)
    (src / "extra.txt").write_text(docs[sorted(docs)[1]] + " more words for the tail")
    s = idx.update([src], client=client, options=opts)
    monkeypatch.undo()
    assert s.extra["worker_cache"]["hits"] == 0 and s.extra["worker_cache"]["misses"] == 4
    ref = Index.create(tmp_path / "ref", IndexConfig(shards=4, hash_bits=22))
    ref.update([src], client=client, options=RunOptions(worker_cache=False))
    assert_same_index(idx, ref)
    assert_same_similarity(idx, ref)
    # a rebuild with another shard layout drops this index's cached shards of the old one
    idx.update(
        [src],
        client=client,
        rebuild=True,
        config=IndexConfig(shards=3, hash_bits=22),
        options=opts,
    )
    (src / "extra2.txt").write_text("yet another text with enough words to make chunks here")
    idx.update([src], client=client, options=opts)
    layouts = {
        e[1]
        for entries in client.run(cache_entries).values()
        for e in entries
        if e[0] == idx.catalog.index_id
    }
    assert layouts == {IndexConfig(shards=3, hash_bits=22).shard_layout}


class _SchedulerOnlyClient:
    """Stands in for a client that reaches the scheduler but not the workers' ports."""

    def __init__(self):
        self.calls = []

    def scatter(self, objs, hash=True, direct=None):
        self.calls.append(("scatter", direct))
        if direct:
            raise OSError("Timed out trying to connect to tcp://10.0.0.9:40001")
        return [f"future-of-{objs[0]!r}"]

    def gather(self, future, direct=None):
        self.calls.append(("gather", direct))
        if direct:
            raise OSError("Timed out trying to connect to tcp://10.0.0.9:40001")
        return b"result"


def test_traffic_goes_direct_and_falls_back_to_the_scheduler(client):
    t = Traffic(client)
    fut = t.scatter(b"x" * 1000)
    assert t.gather(fut) == b"x" * 1000 and t.direct
    assert t.to_cluster >= 1000 and t.from_cluster >= 1000
    fake = _SchedulerOnlyClient()
    t = Traffic(fake)
    assert t.scatter(b"abc") == "future-of-b'abc'" and not t.direct
    assert t.gather("f") == b"result"
    # after the first failure the direct route is not tried again
    assert fake.calls == [("scatter", True), ("scatter", None), ("gather", None)]
