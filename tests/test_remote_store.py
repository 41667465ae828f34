"""Shards under an fsspec URL: ``file://`` (workers share it: they read and write the shards
there themselves) and ``memory://`` (only the client's process sees it: the run notices, and
shards travel through Dask). Both give the same index as the default local store."""

from __future__ import annotations

import subprocess
import sys
import uuid

import fsspec
import numpy as np
import pytest

from simdask import ConfigError, Index, IndexConfig
from simdask.engine.run import RunOptions
from simdask.errors import IndexFormatError
from simdask.storage.backends import open_shard_store
from simdask.storage.shards import ShardData, encode_shard
from tests.helpers.compare import assert_same_index, assert_same_similarity
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.integration


def _shard(gen: int) -> ShardData:
    rng = np.random.default_rng(gen)
    keys = np.unique(rng.integers(0, 1 << 20, 3000)).astype(np.uint32)
    offsets = np.arange(len(keys) + 1, dtype=np.uint64) * 2
    return ShardData(0, 1 << 20, keys, offsets, rng.integers(0, 99, 2 * len(keys)), gen)


@pytest.mark.parametrize("scheme", ["file", "memory"])
def test_store_operations_under_a_url(tmp_path, scheme):
    url = f"file://{tmp_path}/s" if scheme == "file" else f"memory://t-{uuid.uuid4().hex}/s"
    store = open_shard_store(url)
    assert store.url is not None and store.generations() == [] and not store.exists(3, 0)
    data = _shard(3)
    store.write(3, 0, data)
    store.write_encoded(3, 1, encode_shard(data))
    store.write(4, 0, _shard(4))
    assert store.generations() == [3, 4] and store.exists(3, 1)
    for s in (0, 1):
        back = store.read(3, s)
        for name in ("chunk_keys", "offsets", "doc_ids"):
            np.testing.assert_array_equal(getattr(back, name), getattr(data, name))
        assert (back.lo, back.hi, back.generation) == (0, 1 << 20, 3)
    assert store.counts(3, 0) == (len(data.chunk_keys), len(data.doc_ids))
    assert store.shard_nbytes(3, 0) == store.shard_nbytes(3, 1) > 0
    assert store.nbytes(3) == 2 * store.shard_nbytes(3, 0)
    # files without the completion marker (an interrupted upload) count as missing
    fs, base = fsspec.core.url_to_fs(url)
    fs.rm(f"{base}/gen-000004/shard-0000/.complete")
    assert not store.exists(4, 0)
    with pytest.raises(IndexFormatError, match="shard 0 of generation 4 is missing"):
        store.read(4, 0)
    store.remove_generation(4)
    assert store.generations() == [3]
    with pytest.raises(IndexFormatError, match="leaves the shard directory"):
        store.write_encoded(5, 0, {"../evil": b""})


def test_index_with_shards_at_urls(tmp_path, client):
    docs = make_docs(40, seed=12)
    src = write_txt(docs, tmp_path / "docs")
    config = IndexConfig(shards=4, hash_bits=22)
    ref = Index.create(tmp_path / "ref", config)
    ref.update([src], client=client, options=RunOptions(worker_cache=False))
    file_url = f"file://{tmp_path}/elsewhere/shards"
    mem_url = f"memory://simdask-{uuid.uuid4().hex}/shards"
    shared = Index.create(tmp_path / "a", config, shard_store=file_url)
    in_memory = Index.create(tmp_path / "b", config, shard_store=mem_url)
    s1 = shared.update([src], client=client, options=RunOptions(worker_cache=False))
    s2 = in_memory.update([src], client=client, options=RunOptions(worker_cache=False))
    # the workers reach file:// themselves; memory:// lives in this process only
    assert (s1.extra["transfer"], s2.extra["transfer"]) == ("shared", "dask")
    assert not (tmp_path / "a" / "shards").exists()
    assert (tmp_path / "elsewhere" / "shards" / f"gen-{s1.generation:06d}").is_dir()
    fs, base = fsspec.core.url_to_fs(mem_url)
    assert fs.exists(f"{base}/gen-{s2.generation:06d}/shard-0000/.complete")
    # an incremental run, then compare with the local index
    (src / "more.txt").write_text(docs[sorted(docs)[2]] + " followed by some new words here")
    for idx in (ref, shared, in_memory):
        idx.update([src], client=client, options=RunOptions(worker_cache=False))
    for idx in (shared, in_memory):
        assert_same_index(idx, ref)
        assert_same_similarity(idx, ref)
        assert idx.query(docs[sorted(docs)[5]]) == ref.query(docs[sorted(docs)[5]])
        assert idx.query(docs[sorted(docs)[5]])[0].key == f"docs/{sorted(docs)[5]}.txt"
        assert idx.stats()["documents"] == ref.stats()["documents"]
    # reopening finds the store; asking for another one is refused
    shared.close()
    again = Index.open(tmp_path / "a")
    assert again.store.location == file_url and again.shard(0).n_postings > 0
    with pytest.raises(ConfigError, match="keeps its shards at"):
        Index.open_or_create(tmp_path / "a", shard_store="file:///somewhere/else")
    with pytest.raises(ConfigError, match="fsspec URL"):
        Index.create(tmp_path / "c", shard_store=str(tmp_path / "plain-path"))


@pytest.mark.system
def test_cli_shard_store(tmp_path):
    docs = make_docs(12, seed=3)
    src = write_txt(docs, tmp_path / "docs")
    url = f"file://{tmp_path}/remote-shards"
    cmd = [sys.executable, "-m", "simdask.cli", "update", str(tmp_path / "ix"), str(src)]
    cmd += ["--shard-store", url, "--workers", "1", "--quiet", "--shards", "3"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert list((tmp_path / "remote-shards").glob("gen-*/shard-0002/.complete"))
    p = subprocess.run(
        [*cmd[:-5], "--shard-store", "file:///other", "--workers", "1"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 1 and "keeps its shards at" in p.stderr
