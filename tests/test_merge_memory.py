"""The merge stage does not keep the merged index in worker memory (issue 13 item 5): with a
shared raw store the merge tasks' results are references to the written segments
(simdask.engine.segment_ref), the later stages map them one range at a time, and the worker
cache holds memory-mapped segments, not copies; the rows are the same as a build whose merged
shards travel through Dask (the client writes them back: today's behaviour there)."""

from __future__ import annotations

import numpy as np
import pytest

from simdask import Index, IndexConfig, RunOptions, failpoints
from simdask.cluster.worker_cache import cache_clear
from simdask.engine.segment_ref import SegmentRef
from tests.helpers.corpus import make_docs, rel, write_txt

pytestmark = pytest.mark.integration


def _merge_results(dask_worker) -> list[tuple[str, str, int]]:
    """On a worker: ``(key, type, bytes)`` of the merge tasks' results it holds."""
    from dask.sizeof import sizeof

    return [
        (k, type(v).__name__, sizeof(v))
        for k, v in dask_worker.data.items()
        if isinstance(k, str) and k.startswith("simdask-merge-")
    ]


def _cached_arrays(dask_worker=None) -> list[tuple[int, bool]]:
    """On a worker: ``(shard, every array memory-mapped)`` of each cached segment."""
    from simdask.cluster.worker_cache import worker_cache

    cache = worker_cache()
    out = []
    for e in cache.entries():
        data = cache.get(e.index_id, e.layout, e.shard, e.generation)
        arrays = (data.chunk_keys, data.doc_ids)  # offsets are copied when stored as uint32
        out.append((e.shard, all(isinstance(a, np.memmap) for a in arrays)))
    return out


def _table(idx: Index) -> set:
    return {(rel(r.doc), rel(r.other), r.shared, round(r.similarity, 9)) for r in idx.pairs()}


def test_merged_shards_are_not_held_in_worker_memory(tmp_path, client, monkeypatch):
    docs = make_docs(40, seed=11)
    src = write_txt(docs, tmp_path / "docs")
    seen: dict = {}
    hit = failpoints.hit

    def spy(name: str) -> None:
        if name == "after_merge":  # the merge stage is done, the similarity stage not begun
            seen["results"] = [r for rs in client.run(_merge_results).values() for r in rs]
            seen["cache"] = [c for cs in client.run(_cached_arrays).values() for c in cs]
        hit(name)

    monkeypatch.setattr(failpoints, "hit", spy)
    cfg = IndexConfig(hash_bits=32, shards=6, top_k=1000)
    client.run(cache_clear)
    shared = Index.create(tmp_path / "shared", cfg)
    opts = RunOptions(transfer="shared", worker_cache=True)
    s = shared.update([src], client=client, options=opts)
    results, cached = seen.pop("results"), seen.pop("cache")
    # every range's merge result is a small reference, none a merged shard
    assert len(results) == cfg.shards, results
    assert {t for _, t, _ in results} == {SegmentRef.__name__}
    assert sum(n for *_, n in results) < 300 * cfg.shards
    # the worker cache keeps the new segments for the next run, memory-mapped
    assert sorted(sh for sh, _ in cached) == list(range(cfg.shards))
    assert all(mapped for _, mapped in cached)
    client.run(cache_clear)

    # through Dask (no shared store): the merged shards are the results, as before
    sent = Index.create(tmp_path / "sent", cfg)
    d = sent.update([src], client=client, options=RunOptions(transfer="dask", worker_cache=False))
    assert {t for _, t, _ in seen.pop("results")} == {"ShardData"}
    # the same rows and postings either way
    assert _table(shared) == _table(sent) and len(_table(shared)) > 10
    assert s.extra["postings"] == d.extra["postings"] > 0
    drop = {"seconds"}
    assert {k: v for k, v in s.extra["heavy"].items() if k not in drop} == {
        k: v for k, v in d.extra["heavy"].items() if k not in drop
    }
