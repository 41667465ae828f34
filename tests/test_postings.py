"""Postings kernels (pure numpy) against brute-force Python: pair keys, CSR, shard splits."""

from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.config import IndexConfig
from simdask.errors import ConfigError
from simdask.kernels.postings import (
    build_postings,
    crossed_docs,
    doc_mask,
    pack_pairs,
    remap_docs,
    sorted_unique,
    split_sorted_by_shard,
)
from simdask.storage.shards import shard_ranges

pytestmark = pytest.mark.unit


U32 = 2**32 - 1


def keys_of(pairs) -> np.ndarray:
    """Sorted distinct pair keys of ``(chunk, doc)`` pairs."""
    pairs = list(pairs)
    c = np.array([p[0] for p in pairs], np.uint32)
    d = np.array([p[1] for p in pairs], np.uint32)
    return sorted_unique(pack_pairs(c, d))


def postings_to_pairs(chunk_keys, offsets, doc_ids) -> list[tuple[int, int]]:
    df = np.diff(offsets.astype(np.int64))
    return list(zip(np.repeat(chunk_keys, df).tolist(), doc_ids.tolist(), strict=True))


pair_sets = st.sets(
    st.tuples(
        st.one_of(st.integers(0, 50), st.integers(0, U32), st.integers(U32 - 5, U32)),
        st.one_of(st.integers(0, 30), st.integers(0, U32), st.just(U32)),
    ),
    max_size=200,
)


# --------------------------------------------------------------------------------------------
# pair keys and sorted_unique


@settings(max_examples=200, deadline=None)
@given(pair_sets)
def test_pack_pairs_orders_by_chunk_then_doc(pairs):
    keys = keys_of(pairs)
    assert keys.dtype == np.uint64
    decoded = [(int(k) >> 32, int(k) & U32) for k in keys.tolist()]
    assert decoded == sorted(pairs)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 2**64 - 1), max_size=100),
    st.sampled_from([np.uint64, np.uint32, np.int64]),
)
def test_sorted_unique_equals_set(values, dtype):
    info = np.iinfo(dtype)
    values = [v % (int(info.max) + 1) for v in values]
    if dtype is np.int64:
        values = [v - 2**62 for v in values]
    a = np.array(values, dtype=dtype)
    got = sorted_unique(a)
    assert got.dtype == a.dtype
    assert got.tolist() == sorted(set(values))
    assert a.tolist() == values  # input not modified


# --------------------------------------------------------------------------------------------
# build_postings (CSR)


def brute_index(pairs) -> dict[int, list[int]]:
    index: dict[int, list[int]] = defaultdict(list)
    for c, d in pairs:
        index[c].append(d)
    return {c: sorted(ds) for c, ds in sorted(index.items())}


def check_csr(pairs, chunk_keys, offsets, doc_ids):
    index = brute_index(pairs)
    assert chunk_keys.dtype == np.uint32
    assert offsets.dtype == np.uint64
    assert doc_ids.dtype == np.uint32
    assert chunk_keys.tolist() == list(index)
    expect_off = np.concatenate([[0], np.cumsum([len(v) for v in index.values()])])
    assert offsets.tolist() == expect_off.astype(np.int64).tolist()
    assert doc_ids.tolist() == [d for ds in index.values() for d in ds]


@settings(max_examples=300, deadline=None)
@given(pair_sets)
def test_build_postings_equals_inverted_index(pairs):
    csr = build_postings(keys_of(pairs))
    check_csr(pairs, *csr)
    assert sorted(postings_to_pairs(*csr)) == sorted(pairs)
    # the inverse gives back the very keys
    back = pack_pairs(np.repeat(csr[0], np.diff(csr[1].astype(np.int64))), csr[2])
    np.testing.assert_array_equal(back, keys_of(pairs))


def test_build_postings_random_large():
    rng = np.random.default_rng(0)
    c = rng.zipf(1.5, 30_000) % 5000
    d = rng.integers(0, 2000, 30_000)
    pairs = set(zip(c.tolist(), d.tolist(), strict=True))
    csr = build_postings(keys_of(pairs))
    check_csr(pairs, *csr)


def test_build_postings_empty():
    keys, offsets, docs = build_postings(np.zeros(0, np.uint64))
    assert keys.dtype == np.uint32 and len(keys) == 0
    assert offsets.dtype == np.uint64 and offsets.tolist() == [0]
    assert docs.dtype == np.uint32 and len(docs) == 0


# --------------------------------------------------------------------------------------------
# shard ranges and splitting by shard


@pytest.mark.parametrize(
    ("bits", "n_shards"), [(32, 1), (32, 3), (32, 16), (32, 4096), (28, 7), (16, 16), (20, 1000)]
)
def test_shard_ranges_cover_the_space(bits, n_shards):
    ranges = shard_ranges(bits, n_shards)
    assert len(ranges) == n_shards
    assert ranges[0][0] == 0 and ranges[-1][1] == 2**bits
    for (_, hi), (lo, _) in itertools.pairwise(ranges):
        assert hi == lo
    assert all(lo < hi for lo, hi in ranges)
    widths = {hi - lo for lo, hi in ranges[:-1]}
    assert len(widths) <= 1  # equal, but the last may be shorter
    assert ranges[-1][1] - ranges[-1][0] <= (widths.pop() if widths else 2**bits)
    assert IndexConfig(hash_bits=bits, shards=n_shards).shard_width == ranges[0][1]


@pytest.mark.parametrize(("bits", "n_shards"), [(16, 4095), (20, 1500)])
def test_settings_leaving_empty_ranges_are_rejected(bits, n_shards):
    """With ceil-width ranges, too many shards over a small space would leave empty ranges."""
    with pytest.raises(ConfigError, match="non-empty"):
        IndexConfig(hash_bits=bits, shards=n_shards)


@pytest.mark.parametrize(("bits", "n_shards"), [(16, 3856), (16, 4096), (20, 1498)])
def test_accepted_settings_have_valid_ranges(bits, n_shards):
    IndexConfig(hash_bits=bits, shards=n_shards)
    ranges = shard_ranges(bits, n_shards)
    assert all(lo < hi <= 2**bits for lo, hi in ranges) and ranges[-1][1] == 2**bits
    for (_, hi), (lo, _) in itertools.pairwise(ranges):
        assert hi == lo


def check_split(keys: np.ndarray, bits: int, n_shards: int):
    ranges = shard_ranges(bits, n_shards)
    width = ranges[0][1] - ranges[0][0]
    parts = split_sorted_by_shard(keys, width, n_shards)
    assert len(parts) == n_shards
    assert sum(len(p) for p in parts) == len(keys)
    np.testing.assert_array_equal(np.concatenate(parts), keys)
    for (lo, hi), part in zip(ranges, parts, strict=True):
        chunk = (part >> np.uint64(32)).astype(np.int64)
        assert bool(np.all((chunk >= lo) & (chunk < hi))), (lo, hi, chunk)
    return parts


@pytest.mark.parametrize("n_shards", [1, 3, 16])
def test_split_32_bits_top_ids_land_in_last_shard(n_shards):
    top = [U32, U32 - 1, U32 - 1000]
    pairs = {(c, d) for c in top for d in (0, 5, U32)} | {(0, 1), (2**31, 2), (2**31 - 1, 3)}
    keys = keys_of(pairs)
    parts = check_split(keys, 32, n_shards)
    last = parts[-1]
    got_top = sorted({int(k) >> 32 for k in last.tolist()} & set(top))
    assert got_top == sorted(top)
    assert len(parts[0]) >= 1 and int(parts[0][0]) >> 32 == 0


@settings(max_examples=200, deadline=None)
@given(
    pair_sets,
    st.sampled_from([16, 20, 28, 32]),
    st.sampled_from([1, 2, 3, 16, 100]),
)
def test_split_sorted_by_shard_property(pairs, bits, n_shards):
    pairs = {(c % 2**bits, d) for c, d in pairs}
    check_split(keys_of(pairs), bits, n_shards)


def test_split_on_range_edges():
    bits, n_shards = 28, 3
    ranges = shard_ranges(bits, n_shards)
    edges = sorted({x for lo, hi in ranges for x in (lo, hi - 1)})
    keys = keys_of((c, d) for c in edges for d in (0, U32))
    parts = check_split(keys, bits, n_shards)
    assert [len(p) for p in parts] == [4, 4, 4]


# --------------------------------------------------------------------------------------------
# dropping and remapping documents


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 60), max_size=100),
    st.sets(st.integers(0, 80), max_size=20),
)
def test_doc_mask_drops_like_a_python_filter(docs, members):
    d = np.array(docs, np.uint32)
    m = np.array(sorted(members), np.uint32)
    mask = doc_mask(m, d)
    assert mask.dtype == bool and len(mask) == len(docs)
    assert d[~mask].tolist() == [x for x in docs if x not in members]
    assert d[mask].tolist() == [x for x in docs if x in members]


def test_drop_docs_from_postings():
    """Dropping documents from CSR postings = rebuilding without their pairs."""
    rng = np.random.default_rng(5)
    pairs = set(
        zip(rng.integers(0, 300, 3000).tolist(), rng.integers(0, 100, 3000).tolist(), strict=True)
    )
    dropped = set(rng.choice(100, 15, replace=False).tolist())
    keys = keys_of(pairs)
    kept = keys[~doc_mask(np.array(sorted(dropped), np.uint32), (keys & U32).astype(np.uint32))]
    check_csr({p for p in pairs if p[1] not in dropped}, *build_postings(kept))


@settings(max_examples=200, deadline=None)
@given(
    st.sets(st.tuples(st.integers(0, 40), st.integers(0, 30)), max_size=100),
    st.dictionaries(st.integers(0, 30), st.integers(0, 1000), max_size=30),
)
def test_remap_docs_equals_python(pairs, mapping):
    old = np.array(sorted(mapping), np.uint32)
    new = np.array([mapping[x] for x in sorted(mapping)], np.uint32)
    got = remap_docs(keys_of(pairs), old, new)
    want = sorted({(c, mapping[d]) for c, d in pairs if d in mapping})
    # distinct old docs may map to the same new doc: keys may then repeat; compare multisets
    want_multi = sorted((c, mapping[d]) for c, d in pairs if d in mapping)
    decoded = [(int(k) >> 32, int(k) & U32) for k in got.tolist()]
    assert decoded == want_multi
    if len(set(mapping.values())) == len(mapping):
        assert decoded == want


@settings(max_examples=300, deadline=None)
@given(
    st.sets(st.tuples(st.integers(0, 6), st.integers(0, 9)), max_size=40),
    st.sets(st.tuples(st.integers(0, 6), st.integers(0, 9)), max_size=40),
    st.one_of(st.none(), st.integers(2, 4)),
)
def test_crossed_docs_equals_python(old, new, max_df):
    """Holders (after) of every chunk whose count crossed ``max_df``, by Python sets."""
    df_old, df_new, holders = defaultdict(int), defaultdict(int), defaultdict(set)
    for c, _ in old:
        df_old[c] += 1
    for c, d in new:
        df_new[c] += 1
        holders[c].add(d)
    want = set()
    if max_df is not None:
        for c in df_new:
            if (df_old[c] <= max_df) != (df_new[c] <= max_df):
                want |= holders[c]
    old_csr = build_postings(keys_of(old)) if old else None
    got = crossed_docs(
        None if old_csr is None else old_csr[:2], build_postings(keys_of(new)), max_df
    )
    assert got.dtype == np.uint32 and got.tolist() == sorted(want)
