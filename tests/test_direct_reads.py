"""A cold query's reads of raw shards with ``pread`` (storage/direct_reads.py) through the
key sample stored with each segment: the kernels against brute force, the store's subsets
against the memory-mapped path, and the bytes a lookup reads bounded by the query's size,
not the shard's (a query that read whole arrays again fails here)."""

from __future__ import annotations

import errno
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask import Index, IndexConfig
from simdask.errors import IndexFormatError
from simdask.kernels.key_lookup import coalesce_ranges, sample_windows, window_positions
from simdask.kernels.postings import ShardData, find_keys
from simdask.storage import direct_reads, shard_codec
from simdask.storage.backends import open_shard_store
from simdask.storage.checksums import record_digest
from simdask.storage.zarr_raw import RawArrayFile, load_array, raw_array_file
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.unit

_NAMES = ("chunk_keys", "offsets", "doc_ids")


@settings(max_examples=300, deadline=None)
@given(
    st.sets(st.integers(0, 2**64 - 1), max_size=400),
    st.lists(st.integers(0, 2**64 - 1), max_size=60),
    st.sampled_from([1, 2, 4, 16, 128]),
    st.sampled_from([np.uint32, np.uint64]),
)
def test_sample_windows_find_every_key_like_a_set(keys, probes, step, dtype):
    top = int(np.iinfo(dtype).max) + 1
    keys = np.unique(np.array([k % top for k in keys], dtype))
    probes = [p % top for p in probes] + keys[:: max(1, len(keys) // 15)].tolist()
    ids = np.unique(np.array(probes, dtype))
    ids_in, starts, lengths = sample_windows(keys[::step], step, len(keys), ids)
    windows = (
        np.concatenate([keys[s : s + n] for s, n in zip(starts, lengths, strict=True)])
        if len(starts)
        else keys[:0]
    )
    present, at = find_keys(windows, ids_in)
    pos = window_positions(starts, lengths, at)
    where = {int(k): i for i, k in enumerate(keys.tolist())}
    want = [(int(i), where[int(i)]) for i in ids.tolist() if int(i) in where]
    assert present.tolist() == [w[0] for w in want]
    assert pos.tolist() == [w[1] for w in want]
    assert len(starts) <= len(ids) and np.all(lengths <= step)  # one window per ID at most


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 500), st.integers(0, 12)), max_size=40),
    st.integers(0, 30),
)
def test_coalesced_reads_hold_every_range(ranges, gap):
    data = np.arange(1000, dtype=np.int64) * 7
    ranges.sort()
    starts = np.array([s for s, _ in ranges], np.int64)
    lengths = np.array([n for _, n in ranges], np.int64)
    r_start, r_end, first = coalesce_ranges(starts, lengths, gap)
    buf = np.concatenate([data[s:e] for s, e in zip(r_start, r_end, strict=True)] + [data[:0]])
    for i, (s, n) in enumerate(ranges):
        assert buf[first[i] : first[i] + n].tolist() == data[s : s + n].tolist()
    assert np.all(r_start[1:] > r_end[:-1] + gap)  # reads farther apart than the gap
    assert int((r_end - r_start).sum()) <= int(lengths.sum()) + gap * max(len(ranges) - 1, 0)


def _cold_preadv(mode: str, calls: dict):
    """``os.preadv`` as a page cache would answer it: ``RWF_NOWAIT`` reads find nothing
    (``none``), the first half (``half``), or the flag is unknown (``unsupported``)."""
    real = direct_reads.os.preadv

    def preadv(fd, buffers, offset, *flags):
        if not flags:
            calls["blocking"] += 1
            return real(fd, buffers, offset)
        calls["nowait"] += 1
        if mode == "none":
            raise BlockingIOError(errno.EAGAIN, "not cached")
        if mode == "unsupported":
            raise OSError(errno.EOPNOTSUPP, "no RWF_NOWAIT here")
        half = memoryview(buffers[0])[: len(buffers[0]) // 2]
        return real(fd, [half], offset, *flags)

    return preadv


@pytest.mark.parametrize("mode", ["cached", "none", "half", "unsupported", "evicted"])
def test_gather_returns_every_range_however_much_is_cached(tmp_path, monkeypatch, mode):
    """Every range, overlapping or far apart, few long ones (copied as slices) or many short
    ones, whether the page cache holds the bytes, none, part of each read, or the system has
    no RWF_NOWAIT; what is not cached is announced (WILLNEED) before it is read."""
    data = np.arange(300_000, dtype=np.uint64) * 3 + 1
    path = tmp_path / "c0"
    data.tofile(path)
    raw = RawArrayFile(path, np.dtype("<u8"), len(data), 0)
    calls = {"nowait": 0, "blocking": 0, "advised": 0}
    real_advise = direct_reads.os.posix_fadvise

    def advise(fd, offset, length, advice):
        calls["advised"] += 1
        return real_advise(fd, offset, length, advice)

    monkeypatch.setattr(direct_reads.os, "posix_fadvise", advise)
    if mode in ("none", "half", "unsupported"):
        monkeypatch.setattr(direct_reads.os, "preadv", _cold_preadv(mode, calls))
    monkeypatch.setattr(direct_reads, "_NOWAIT", direct_reads._NOWAIT)  # restored after
    rng = np.random.default_rng(7)
    for case in range(40):
        n = int(rng.integers(1, 60))
        long = case % 2 == 0
        lengths = rng.integers(200 if long else 0, 3000 if long else 4, n)
        starts = np.sort(rng.integers(0, len(data) - 3000, n))
        if mode == "evicted":
            fd = os.open(path, os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)
        got = direct_reads.gather(raw, starts, lengths, gap_bytes=int(rng.choice([0, 64, 8192])))
        want = np.concatenate([data[s : s + k] for s, k in zip(starts, lengths, strict=True)])
        assert got.dtype == data.dtype and got.tolist() == want.tolist()
    if mode in ("none", "half"):
        assert calls["advised"] > 0 and calls["blocking"] > 0
    if mode == "unsupported":  # asked once, then never again
        assert calls["nowait"] == 1 and direct_reads._NOWAIT is None


def _shard(seed: int, n_keys: int, dtype, lo: int = 0, hi: int = 1 << 32) -> ShardData:
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(lo, hi, n_keys, dtype=np.uint64)).astype(dtype)
    df = rng.integers(1, 6, len(keys))
    offsets = np.zeros(len(keys) + 1, np.uint64)
    np.cumsum(df, out=offsets[1:])
    docs = rng.integers(0, 2**31, int(df.sum())).astype(np.uint32)  # order: not checked here
    return ShardData(lo, hi, keys, offsets, docs, seed)


class _Untouchable:
    """A stand-in for a memory-mapped array whose elements must not be read."""

    def __init__(self, arr):
        self.dtype, self.shape = arr.dtype, arr.shape

    def __len__(self):
        return self.shape[0]

    def __getitem__(self, _):
        raise AssertionError("the direct read touched a memory-mapped array")

    def __array__(self, *_, **__):
        raise AssertionError("the direct read touched a memory-mapped array")


def _rchar() -> int:
    """Bytes this process has read by system calls (``rchar`` of /proc/self/io: every read,
    pread or np.fromfile, whether from the disk or the page cache)."""
    with open("/proc/self/io", encoding="ascii") as f:
        return int(next(line for line in f if line.startswith("rchar:")).split()[1])


def _counting(monkeypatch) -> list[int]:
    """Bytes of every pread of direct_reads, appended to the returned list."""
    sizes: list[int] = []
    real = direct_reads.os.preadv

    def preadv(fd, buffers, offset, *flags):
        got = real(fd, buffers, offset, *flags)
        sizes.append(got)
        return got

    monkeypatch.setattr(direct_reads.os, "preadv", preadv)
    return sizes


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
@pytest.mark.parametrize("step", [1, 8, 512])
def test_direct_subset_equals_the_mapped_one(tmp_path, monkeypatch, dtype, step):
    monkeypatch.setattr(shard_codec, "KEY_SAMPLE_STEP", step)
    store = open_shard_store(tmp_path / "shards")
    data = _shard(step, 20_000, dtype)
    store.write(1, 0, data)
    rng = np.random.default_rng(1)
    for probe in range(6):
        ids = np.unique(
            np.concatenate(
                [
                    rng.choice(data.chunk_keys, 40 * probe),
                    rng.integers(0, 1 << 32, 40, dtype=np.uint64).astype(dtype),
                    data.chunk_keys[[0, -1]] if probe % 2 else data.chunk_keys[:0],
                ]
            )
        ).astype(dtype)
        want = store.read_subset(store.open_arrays(1, 0), ids, 1)
        arrays = store.open_arrays(1, 0)
        assert arrays["files"]["key_sample"][0] == step
        for name in _NAMES:
            arrays[name] = _Untouchable(arrays[name])
        got = store.read_subset(arrays, ids, 1, direct=True)
        for name in _NAMES:
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
        assert got.offsets.dtype == np.uint64 and got.doc_ids.dtype == np.uint32


def test_a_lookup_reads_what_the_query_needs_not_the_shard(tmp_path, monkeypatch):
    """A few IDs looked up in a shard of 400,000 keys read the sample, one window of keys
    per ID, two offsets and the postings of each ID found: bounded by the query, not the
    shard. This fails if the lookup reads (or maps) a whole array again."""
    store = open_shard_store(tmp_path / "shards")
    data = _shard(3, 400_000, np.uint64)
    store.write(1, 0, data)
    keys = data.chunk_keys
    ids = np.unique(np.concatenate([keys[:: len(keys) // 20], [keys[5] + 1]])).astype(np.uint64)
    sizes = _counting(monkeypatch)
    arrays = store.open_arrays(1, 0)
    for name in _NAMES:
        arrays[name] = _Untouchable(arrays[name])
    rchar = _rchar()
    got = store.read_subset(arrays, ids, 1, direct=True)
    rchar = _rchar() - rchar
    held = set(keys.tolist())
    assert got.chunk_keys.tolist() == [int(i) for i in ids.tolist() if i in held]
    step = shard_codec.KEY_SAMPLE_STEP
    sample_bytes = -(-len(keys) // step) * 8  # read once per open segment, by np.fromfile
    windows = len(ids) * step * 8
    lists = len(ids) * (2 * 8 + direct_reads.GAP_BYTES + 5 * 4 + direct_reads.GAP_BYTES)
    assert sum(sizes) <= windows + lists
    assert rchar <= sample_bytes + windows + lists + 65536  # + the metadata read at opening
    assert rchar < 0.05 * (keys.nbytes + data.offsets.nbytes)
    assert len(sizes) <= 3 * len(ids)  # a few system calls per ID
    before = len(sizes)
    store.read_subset(arrays, ids[:3], 1, direct=True)  # the sample was kept with `arrays`
    assert len(sizes) - before <= 3 * 3


def test_sample_of_another_length_or_dtype_is_refused(tmp_path):
    store = open_shard_store(tmp_path / "shards")
    store.write(1, 0, _shard(4, 3000, np.uint32))
    sample = store.path(1, 0) / "key_sample" / "c" / "0"
    good = sample.read_bytes()
    assert np.array_equal(
        load_array(raw_array_file(store.path(1, 0) / "key_sample")),
        load_array(raw_array_file(store.path(1, 0) / "chunk_keys"))[:: shard_codec.KEY_SAMPLE_STEP],
    )
    sample.write_bytes(good[:-4])
    with pytest.raises(IndexFormatError, match="key_sample"):
        store.open_arrays(1, 0)


@pytest.mark.integration
def test_query_reads_no_mapped_page_unless_preloaded(tmp_path, client, monkeypatch):
    """A query of an index written with key samples gives the same matches read directly
    (the maps untouched) as from preloaded maps; an index whose segments have no sample (as
    written before) is still queried through the maps."""
    docs = make_docs(30, seed=5)
    write_txt(docs, tmp_path / "docs")
    with Index.create(tmp_path / "idx", IndexConfig(shards=4)) as idx:
        idx.update([tmp_path / "docs"], client=client)
    queries = [docs["d002"] + " " + docs["d009"][:400], docs["short_inside"]]
    with Index.open(tmp_path / "idx") as idx:
        idx.preload()
        want = idx.query_many(queries, 0.0)
    assert want[0] and want[1]
    store_cls = type(idx.store)
    real_open = store_cls.open_arrays

    def open_untouchable(self, generation, shard):
        arrays = real_open(self, generation, shard)
        assert "key_sample" in arrays["files"]
        return {k: _Untouchable(v) if k in _NAMES else v for k, v in arrays.items()}

    monkeypatch.setattr(store_cls, "open_arrays", open_untouchable)
    with Index.open(tmp_path / "idx") as idx:
        assert idx.query_many(queries, 0.0) == want
    monkeypatch.setattr(store_cls, "open_arrays", real_open)
    for path in (tmp_path / "idx" / "shards").rglob("key_sample"):  # as written before
        for f in sorted(path.rglob("*"), reverse=True):
            f.rmdir() if f.is_dir() else f.unlink()
        path.rmdir()
    with Index.open(tmp_path / "idx") as idx:
        idx.catalog.conn.execute("DELETE FROM files WHERE name LIKE '%key_sample%'")
        record_digest(idx.catalog.conn)  # as such an index recorded its checksum table
        assert idx.query_many(queries, 0.0) == want
