"""Chunk IDs wider than 32 bits (uint64, ``hash_bits`` 33..64) against brute-force references:
hashing, pair sorting, CSR postings, shard splits, merges, segments, storage and the config."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.config import DEFAULT_HASH_BITS, IndexConfig
from simdask.errors import ConfigError, IndexFormatError
from simdask.kernels.hashing import chunk_batch, chunk_id, hash_chunks
from simdask.kernels.ngrams import tokenize
from simdask.kernels.postings import (
    ShardData,
    build_postings,
    chunk_dtype,
    merge_shard,
    pack_pairs,
    pair_chunks,
    pair_docs,
    remap_docs,
    shard_of,
    shard_ranges,
    sort_pairs,
    split_sorted_by_shard,
)
from simdask.kernels.segment_merge import merge_segments, restrict
from simdask.kernels.words import chunks
from simdask.storage.backends import open_shard_store
from simdask.storage.shards import encode_shard

pytestmark = pytest.mark.unit

U32, U64 = 2**32 - 1, 2**64 - 1

#: (chunk, doc) pairs with 64-bit chunk IDs: small values (many shared chunks), the whole
#: range and its top end; doc IDs small or up to 2**32 - 1 (the packed fallback is then needed)
wide_pairs = st.sets(
    st.tuples(
        st.one_of(st.integers(0, 40), st.integers(0, U64), st.integers(U64 - 5, U64)),
        st.one_of(st.integers(0, 30), st.integers(0, U32)),
    ),
    max_size=150,
)


def wide_keys(pairs, shuffle_seed: int | None = None) -> np.ndarray:
    pairs = list(pairs)
    if shuffle_seed is not None:
        np.random.default_rng(shuffle_seed).shuffle(pairs)
    c = np.array([p[0] for p in pairs], np.uint64)
    d = np.array([p[1] for p in pairs], np.uint32)
    return pack_pairs(c, d)


def as_pairs(keys: np.ndarray) -> list[tuple[int, int]]:
    return list(zip(pair_chunks(keys).tolist(), pair_docs(keys).tolist(), strict=True))


def csr_pairs(chunk_keys, offsets, doc_ids) -> list[tuple[int, int]]:
    df = np.diff(np.asarray(offsets, dtype=np.int64))
    return list(zip(np.repeat(chunk_keys, df).tolist(), doc_ids.tolist(), strict=True))


# --------------------------------------------------------------------------------------------
# hashing


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet="abcdefgh éü .,", min_size=0, max_size=200),
    st.integers(2, 6),
    st.sampled_from([33, 40, 48, 56, 64]),
    st.integers(0, 2**64 - 1),
)
def test_wide_vectorised_ids_equal_scalar_reference(text, k, bits, seed):
    expected = sorted({chunk_id(c, bits, seed) for c in chunks(text, k)})
    batch = chunk_batch([text], k, bits, seed)
    assert batch.chunk_ids.dtype == np.uint64
    assert batch.chunk_ids.tolist() == expected
    tok = tokenize([text], seed)
    ids, _ = hash_chunks(tok.hashes, tok.word_offsets, k, bits, seed)
    assert ids.dtype == np.uint64 and int(ids.max(initial=0)) < 2**bits
    assert sorted(set(ids.tolist())) == expected


def test_truncation_keeps_the_top_bits_up_to_64():
    c = ("one", "two", "three", "four", "five")
    full = chunk_id(c, 64, 0)
    assert full >= 2**32  # not a 32-bit value widened
    for bits in (16, 28, 32, 33, 40, 48, 63):
        assert chunk_id(c, bits, 0) == full >> (64 - bits)
    assert chunk_dtype(32) == np.uint32 and chunk_dtype(33) == np.uint64


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet="abcde fgh", max_size=120), max_size=6), st.integers(2, 5))
def test_wide_batch_is_sorted_by_chunk_then_doc_and_equals_sets(texts, k):
    batch = chunk_batch(texts, k, 64, 7)
    got = list(zip(batch.chunk_ids.tolist(), batch.doc.tolist(), strict=True))
    ref = {(chunk_id(c, 64, 7), d) for d, t in enumerate(texts) for c in chunks(t, k)}
    assert got == sorted(ref)
    assert batch.n_chunks.tolist() == [len(set(chunks(t, k))) for t in texts]


# --------------------------------------------------------------------------------------------
# pair keys


@settings(max_examples=200, deadline=None)
@given(wide_pairs, st.integers(0, 3))
def test_sort_pairs_wide_equals_sorted_set(pairs, seed):
    keys = wide_keys(pairs, seed)
    assert keys.shape == (len(pairs), 2) and keys.dtype == np.uint64
    doubled = np.concatenate([keys, keys[: len(keys) // 2]])
    assert as_pairs(sort_pairs(doubled, distinct=True)) == sorted(pairs)
    assert as_pairs(sort_pairs(doubled)) == sorted(as_pairs(doubled))


def test_sort_pairs_both_wide_paths():
    """40-bit IDs beside small doc IDs are packed; 64-bit IDs beside 32-bit doc IDs are not:
    both give the order of Python's sort."""
    rng = np.random.default_rng(1)
    for bits, doc_max in ((40, 2**20), (64, U32), (64, 3), (63, 2)):
        c = rng.integers(0, 2**bits, 5000, dtype=np.uint64, endpoint=False)
        c = np.concatenate([c, c[:2000]])  # shared chunks
        d = rng.integers(0, doc_max, len(c), dtype=np.uint64, endpoint=True).astype(np.uint32)
        keys = pack_pairs(c, d)
        ref = sorted(set(zip(c.tolist(), d.tolist(), strict=True)))
        assert as_pairs(sort_pairs(keys, distinct=True)) == ref


@settings(max_examples=200, deadline=None)
@given(wide_pairs)
def test_build_postings_wide_equals_inverted_index(pairs):
    keys, offsets, docs = build_postings(sort_pairs(wide_keys(pairs), distinct=True))
    index = defaultdict(list)
    for c, d in sorted(pairs):
        index[c].append(d)
    assert keys.dtype == np.uint64 and docs.dtype == np.uint32
    assert keys.tolist() == list(index)
    assert docs.tolist() == [d for ds in index.values() for d in ds]
    assert np.diff(offsets.astype(np.int64)).tolist() == [len(v) for v in index.values()]


@settings(max_examples=100, deadline=None)
@given(wide_pairs, st.sampled_from([33, 40, 64]), st.sampled_from([1, 2, 3, 16, 4096]))
def test_split_wide_by_shard_equals_python(pairs, bits, n_shards):
    pairs = {(c % 2**bits, d) for c, d in pairs}
    keys = sort_pairs(wide_keys(pairs), distinct=True)
    cfg = IndexConfig(hash_bits=bits, shards=n_shards)
    ranges = shard_ranges(bits, n_shards)
    assert ranges[-1][1] == 2**bits and ranges[0][0] == 0
    parts = split_sorted_by_shard(keys, cfg.shard_width, n_shards)
    assert len(parts) == n_shards
    for (lo, hi), part in zip(ranges, parts, strict=True):
        assert as_pairs(part) == sorted(p for p in pairs if lo <= p[0] < hi)
    owner = shard_of(pair_chunks(keys), cfg.shard_width)
    assert owner.tolist() == [p[0] // cfg.shard_width for p in sorted(pairs)]


@settings(max_examples=100, deadline=None)
@given(wide_pairs, st.dictionaries(st.integers(0, 30), st.integers(0, 2**31), max_size=20))
def test_remap_docs_wide_equals_python(pairs, mapping):
    keys = sort_pairs(wide_keys(pairs), distinct=True)
    old = np.array(sorted(mapping), np.uint32)
    new = np.array([mapping[o] for o in sorted(mapping)], np.uint32)
    got = as_pairs(remap_docs(keys, old, new))
    assert got == sorted((c, mapping[d]) for c, d in pairs if d in mapping)


@settings(max_examples=150, deadline=None)
@given(wide_pairs, wide_pairs, st.sets(st.integers(0, 30), max_size=8))
def test_merge_shard_wide_equals_python(old_pairs, new_pairs, dropped):
    old_pairs = {(c, d) for c, d in old_pairs if d <= 30}
    dropped_docs = sorted(dropped)
    # delta: new documents (ids above the old ones) and documents re-added after dropping
    delta = {(c, d + 31) for c, d in new_pairs if d <= 30} | {
        (c, d) for c, d in new_pairs if d in dropped
    }
    old = build_postings(sort_pairs(wide_keys(old_pairs), distinct=True))
    merged = merge_shard(
        old, sort_pairs(wide_keys(delta), distinct=True), np.array(dropped_docs, np.uint32)
    )
    expect = sorted({p for p in old_pairs if p[1] not in dropped} | delta)
    assert csr_pairs(*merged) == expect
    assert merged[0].dtype == np.uint64 or not len(merged[0])
    # a range without old postings, and an empty delta
    assert csr_pairs(*merge_shard(None, sort_pairs(wide_keys(delta), True), np.zeros(0))) == (
        sorted(delta)
    )
    only_drop = merge_shard(old, np.zeros(0, np.uint64), np.array(dropped_docs, np.uint32))
    assert csr_pairs(*only_drop) == sorted(p for p in old_pairs if p[1] not in dropped)


@settings(max_examples=100, deadline=None)
@given(st.lists(wide_pairs, min_size=1, max_size=4), st.data())
def test_merge_segments_wide_equals_python(segment_pairs, data):
    gens = list(range(1, len(segment_pairs) + 1))
    tomb = np.array(data.draw(st.lists(st.integers(0, 5), min_size=31, max_size=31)), np.int64)
    segs = [build_postings(sort_pairs(wide_keys(p), distinct=True)) for p in segment_pairs]
    segs = [(s[0].astype(np.uint64), *s[1:]) for s in segs]  # empty segments too
    got = merge_segments(segs, gens, tomb)
    live = {
        (c, d)
        for p, g in zip(segment_pairs, gens, strict=True)
        for c, d in p
        if d >= len(tomb) or tomb[d] <= g
    }
    assert got[0].dtype == np.uint64
    assert csr_pairs(*got) == sorted(live)
    wanted = sorted({c for c, _ in live})[::2]
    sub = restrict(got, np.array(wanted, np.uint64))
    assert csr_pairs(*sub) == sorted(p for p in live if p[0] in set(wanted))


# --------------------------------------------------------------------------------------------
# storage: uint64 chunk keys on disk, little-endian, checked on open


def _wide_shard(lo=0, hi=2**64) -> ShardData:
    pairs = {(2**64 - 1, 3), (2**63 + 5, 1), (2**63 + 5, 2), (7, 0), (2**40, 9)}
    return ShardData(lo, hi, *build_postings(sort_pairs(wide_keys(pairs), True)), generation=1)


def test_wide_shard_round_trip_raw_and_compressed(tmp_path):
    data = _wide_shard()
    store = open_shard_store(tmp_path / "s", key_dtype=np.uint64)
    store.write(1, 0, data)
    meta = json.loads((store.path(1, 0) / "chunk_keys" / "zarr.json").read_text())
    assert meta["data_type"] == "uint64"
    assert meta["codecs"] == [{"name": "bytes", "configuration": {"endian": "little"}}]
    raw = (store.path(1, 0) / "chunk_keys" / "c" / "0").read_bytes()
    assert raw == np.asarray(data.chunk_keys, dtype="<u8").tobytes()
    back = store.read(1, 0)
    assert back.chunk_keys.dtype == np.uint64
    assert back.chunk_keys.tolist() == data.chunk_keys.tolist() and back.hi == 2**64
    sub = store.read_subset(store.open_arrays(1, 0), np.array([2**63 + 5, 2**64 - 1], np.uint64))
    assert csr_pairs(sub.chunk_keys, sub.offsets, sub.doc_ids) == [
        (2**63 + 5, 1),
        (2**63 + 5, 2),
        (2**64 - 1, 3),
    ]
    # the compressed layout (URL stores) keeps the width too
    files = encode_shard(data, compressed=True)
    comp = open_shard_store(tmp_path / "c", key_dtype=np.uint64)
    comp._store_files(1, 0, files)
    got = comp.read(1, 0)
    assert got.chunk_keys.dtype == np.uint64
    assert got.chunk_keys.tolist() == data.chunk_keys.tolist()
    sub = comp.read_subset(comp.open_arrays(1, 0), np.array([2**64 - 1], np.uint64))
    assert sub.doc_ids.tolist() == [3]


def test_chunk_key_width_is_checked_on_open(tmp_path):
    wide = open_shard_store(tmp_path / "w")
    wide.write(1, 0, _wide_shard())
    with pytest.raises(IndexFormatError, match=r"chunk_keys are uint64 on disk.*expect uint32"):
        open_shard_store(tmp_path / "w", key_dtype=np.uint32).read(1, 0)
    with pytest.raises(IndexFormatError, match="chunk_keys are uint64"):
        open_shard_store(tmp_path / "w", key_dtype=np.uint32).open_arrays(1, 0)
    narrow = ShardData(
        0, 2**28, *build_postings(pack_pairs(np.array([5], np.uint32), np.array([1], np.uint32)))
    )
    open_shard_store(tmp_path / "n").write(1, 0, narrow)
    old = open_shard_store(tmp_path / "n", key_dtype=np.uint32).read(1, 0)
    assert old.chunk_keys.dtype == np.uint32 and old.chunk_keys.tolist() == [5]
    with pytest.raises(IndexFormatError, match=r"chunk_keys are uint32 on disk.*expect uint64"):
        open_shard_store(tmp_path / "n", key_dtype=np.uint64).read(1, 0)
    # an empty range of a wide index may have been written with uint32 keys: no values, fine
    empty = ShardData.empty(0, 2**30)
    open_shard_store(tmp_path / "e").write(1, 0, empty)
    got = open_shard_store(tmp_path / "e", key_dtype=np.uint64).read(1, 0)
    assert got.chunk_keys.dtype == np.uint64 and len(got.chunk_keys) == 0


# --------------------------------------------------------------------------------------------
# config


def test_hash_bits_range_and_default():
    assert DEFAULT_HASH_BITS == IndexConfig().hash_bits == 64
    assert IndexConfig().chunk_dtype == np.uint64
    assert IndexConfig(hash_bits=28).chunk_dtype == np.uint32
    for bits in (16, 32, 33, 40, 64):
        for shards in (1, 3, 4096):
            cfg = IndexConfig(hash_bits=bits, shards=shards)
            ranges = shard_ranges(bits, shards)
            assert ranges[-1][1] == 2**bits
            assert all(a[1] == b[0] and a[0] < a[1] for a, b in itertools.pairwise(ranges))
            assert cfg.shard_width == -(-(2**bits) // shards)
    for bad in (15, 65, 128):
        with pytest.raises(ConfigError, match=f"hash_bits must be in 16..64, got {bad}"):
            IndexConfig(hash_bits=bad)
    assert IndexConfig.from_dict(IndexConfig(hash_bits=48).to_dict()).hash_bits == 48
    ids = np.array([0, 2**63, 2**64 - 1], np.uint64)
    assert shard_of(ids, IndexConfig(shards=1).shard_width).tolist() == [0, 0, 0]
    assert shard_of(ids, IndexConfig(shards=4096).shard_width).tolist() == [0, 2048, 4095]
