"""One conformance suite for every shard-store backend (a local directory, an fsspec URL):
what is written is read back exactly, subsets equal a brute-force dict, generations are
listed and removed, a shard is either complete or missing."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.errors import IndexFormatError
from simdask.kernels.postings import ShardData, build_postings, pack_pairs, sorted_unique
from simdask.storage.backends import open_shard_store
from simdask.storage.local_store import LocalShardStore
from simdask.storage.remote import UrlShardStore
from simdask.storage.shards import ShardStore, encode_shard

pytestmark = pytest.mark.unit

BACKENDS = ["local", "file-url", "memory-url"]


def _store(kind: str, tmp_path) -> ShardStore:
    if kind == "local":
        return open_shard_store(tmp_path / "shards")
    if kind == "file-url":
        return open_shard_store(f"file://{tmp_path}/url-shards")
    return open_shard_store(f"memory://simdask-test-{uuid.uuid4().hex}")


def _shard(pairs: dict[int, set[int]], lo: int = 0, hi: int = 1 << 16) -> ShardData:
    chunks = [c for c, docs in pairs.items() for _ in docs]
    docs = [d for c in pairs for d in sorted(pairs[c])]
    keys = sorted_unique(pack_pairs(np.array(chunks, np.uint32), np.array(docs, np.uint32)))
    chunk_keys, offsets, doc_ids = build_postings(keys)
    return ShardData(lo, hi, chunk_keys, offsets, doc_ids)


def _as_dict(data: ShardData) -> dict[int, list[int]]:
    off = data.offsets.astype(np.int64)
    return {
        int(c): data.doc_ids[off[i] : off[i + 1]].tolist() for i, c in enumerate(data.chunk_keys)
    }


PAIRS = {3: {1, 7}, 10: {2}, 11: {1, 2, 3, 9}, 500: {4}, 65000: {0, 8}}


@pytest.mark.parametrize("kind", BACKENDS)
def test_backend_kind_and_layout(kind, tmp_path):
    store = _store(kind, tmp_path)
    expected = LocalShardStore if kind == "local" else UrlShardStore
    assert type(store) is expected
    assert store.compressed is (kind != "local") and (store.url is None) is (kind == "local")
    assert store.can_mmap is (kind == "local") and (store.local_root is None) is (kind != "local")
    assert store.location.startswith("file://" if kind == "file-url" else "")


@pytest.mark.parametrize("kind", BACKENDS)
def test_write_read_roundtrip_and_missing(kind, tmp_path):
    store = _store(kind, tmp_path)
    assert store.generations() == [] and not store.exists(1, 0)
    with pytest.raises(IndexFormatError, match="shard 0 of generation 1 is missing"):
        store.read(1, 0)
    data = _shard(PAIRS)
    assert store.write(1, 0, data) > 0
    assert store.exists(1, 0) and not store.exists(1, 1) and not store.exists(2, 0)
    back = store.read(1, 0)
    assert (back.lo, back.hi, back.generation) == (0, 1 << 16, 1)
    assert back.offsets.dtype == np.uint64 and back.doc_ids.dtype == np.uint32
    assert _as_dict(back) == {c: sorted(d) for c, d in sorted(PAIRS.items())}
    assert store.counts(1, 0) == (len(PAIRS), sum(len(d) for d in PAIRS.values()))


@pytest.mark.parametrize("kind", BACKENDS)
def test_stored_ranges_and_remove_shard(kind, tmp_path):
    """What garbage collection asks of every backend: the ranges stored in a generation, and
    one shard removed (the others and other generations stay; missing is fine)."""
    store = _store(kind, tmp_path)
    assert store.stored_ranges(1) == []
    for gen, shard in [(1, 0), (1, 2), (2, 0)]:
        store.write(gen, shard, _shard(PAIRS))
    assert store.stored_ranges(1) == [0, 2] and store.stored_ranges(2) == [0]
    store.remove_shard(1, 0)
    store.remove_shard(1, 5)  # missing: nothing happens
    assert store.stored_ranges(1) == [2] and not store.exists(1, 0)
    assert store.exists(1, 2) and store.exists(2, 0)
    assert _as_dict(store.read(1, 2)) == {c: sorted(d) for c, d in sorted(PAIRS.items())}


@pytest.mark.parametrize("kind", BACKENDS)
def test_write_encoded_equals_write(kind, tmp_path):
    store = _store(kind, tmp_path)
    data = _shard(PAIRS)
    store.write_encoded(2, 3, encode_shard(data, compressed=store.compressed))
    assert _as_dict(store.read(2, 3)) == _as_dict(data)
    with pytest.raises(IndexFormatError, match="leaves the shard directory"):
        store.write_encoded(2, 4, {"../evil": b"x"})
    assert not store.exists(2, 4)


@pytest.mark.parametrize("kind", BACKENDS)
def test_rewrite_replaces_an_earlier_attempt(kind, tmp_path):
    store = _store(kind, tmp_path)
    store.write(5, 0, _shard({1: {1}, 2: {2}}))
    store.write(5, 0, _shard({9: {4, 5}}))
    assert _as_dict(store.read(5, 0)) == {9: [4, 5]}


@pytest.mark.parametrize("kind", BACKENDS)
def test_generations_nbytes_and_removal(kind, tmp_path):
    store = _store(kind, tmp_path)
    for gen in (3, 1, 7):
        for shard in (0, 1):
            store.write(gen, shard, _shard(PAIRS))
    assert store.generations() == [1, 3, 7]
    per_shard = store.shard_nbytes(3, 0)
    assert per_shard > 0 and store.nbytes(3) == per_shard + store.shard_nbytes(3, 1)
    store.remove_generation(3)
    store.remove_generation(42)  # missing is fine
    assert store.generations() == [1, 7] and not store.exists(3, 0)
    assert store.nbytes(3) == 0


@st.composite
def shards_and_queries(draw):
    pairs = draw(
        st.dictionaries(
            st.integers(0, 2000), st.sets(st.integers(0, 50), min_size=1, max_size=6), max_size=40
        )
    )
    ids = draw(st.sets(st.integers(0, 2000), max_size=30))
    return pairs, sorted(ids)


@pytest.mark.parametrize("kind", BACKENDS)
@settings(max_examples=25, deadline=None)
@given(case=shards_and_queries())
def test_read_subset_equals_brute_force(kind, tmp_path_factory, case):
    pairs, ids = case
    store = _store(kind, tmp_path_factory.mktemp("s"))
    store.write(1, 0, _shard(pairs, 0, 2001))
    arrays = store.open_arrays(1, 0)
    got = store.read_subset(arrays, np.array(ids, np.uint32), generation=1)
    expected = {c: sorted(pairs[c]) for c in ids if c in pairs}
    assert _as_dict(got) == expected
    assert (got.lo, got.hi, got.generation) == (0, 2001, 1)
