"""The two on-disk layouts of a shard: raw (local stores: one uncompressed zarr chunk per
array, memory-mapped by queries) and compressed (fsspec URLs, and indexes written before the
raw layout). Both are read back exactly, by zarr itself and by simdask's direct reader, and a
query gives the same answer on either."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import zarr
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask import Index, IndexConfig
from simdask.errors import IndexFormatError
from simdask.storage.backends import open_shard_store
from simdask.storage.checksums import DIGEST_META
from simdask.storage.shards import ShardData, encode_shard
from simdask.storage.zarr_raw import array_shape, load_array, map_array, raw_array_file
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.unit


_NAMES = ("chunk_keys", "offsets", "doc_ids")


def _shard(seed: int, n_keys: int = 3000, lo: int = 0, hi: int = 1 << 20) -> ShardData:
    """A valid shard: distinct sorted keys in [lo, hi), 1-6 sorted distinct docs per key."""
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(lo, hi, n_keys)).astype(np.uint32)
    df = rng.integers(1, 7, len(keys))
    offsets = np.zeros(len(keys) + 1, np.uint64)
    np.cumsum(df, out=offsets[1:])
    docs = [np.sort(rng.choice(5000, d, replace=False)) for d in df]
    docs = np.concatenate(docs) if docs else np.zeros(0, np.uint32)
    return ShardData(lo, hi, keys, offsets, docs.astype(np.uint32), seed)


def _assert_same(a: ShardData, b: ShardData) -> None:
    for name in _NAMES:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert b.offsets.dtype == np.uint64 and (a.lo, a.hi) == (b.lo, b.hi)


def test_local_store_writes_raw_arrays_zarr_reads_them(tmp_path):
    store = open_shard_store(tmp_path / "shards")
    data = _shard(1)
    store.write(7, 0, data)
    shard_dir = store.path(7, 0)
    group = zarr.open_group(str(shard_dir), mode="r")
    for name in _NAMES:
        raw = raw_array_file(shard_dir / name)
        assert raw is not None and raw.path == shard_dir / name / "c" / "0"
        # the file is exactly the little-endian elements: what the zarr v3 spec says
        expected = np.asarray(getattr(data, name), dtype=raw.dtype)
        assert raw.dtype.byteorder in "<=" and raw.path.read_bytes() == expected.tobytes()
        # zarr itself reads the same values
        np.testing.assert_array_equal(group[name][:], getattr(data, name))
        assert array_shape(shard_dir / name) == (len(getattr(data, name)),)
    # offsets fit in 32 bits here, so they are stored as uint32
    assert raw_array_file(shard_dir / "offsets").dtype == np.dtype("<u4")
    _assert_same(data, store.read(7, 0))
    assert store.counts(7, 0) == (len(data.chunk_keys), len(data.doc_ids))


def test_offsets_beyond_32_bits_are_stored_as_uint64(tmp_path):
    store = open_shard_store(tmp_path / "shards")
    # only the offsets' dtype is checked here: 2**32 postings do not fit in a test
    data = ShardData(
        0, 100, np.array([5], np.uint32), np.array([0, 2**32], np.uint64), np.zeros(0, np.uint32)
    )
    store.write(1, 0, data)
    raw = raw_array_file(store.path(1, 0) / "offsets")
    assert raw.dtype == np.dtype("<u8")
    assert store.read(1, 0).offsets.tolist() == [0, 2**32]


def test_compressed_shards_in_a_local_store_are_still_read(tmp_path):
    """A shard written compressed (an index from before the raw layout, or files encoded for
    a URL store) is read through zarr; raw and compressed shards mix in one store."""
    store = open_shard_store(tmp_path / "shards")
    a, b = _shard(2), _shard(3)
    store.write_encoded(4, 0, encode_shard(a, compressed=True))
    store.write_encoded(4, 1, encode_shard(b, compressed=False))
    assert raw_array_file(store.path(4, 0) / "doc_ids") is None
    meta = json.loads((store.path(4, 0) / "chunk_keys" / "zarr.json").read_text())
    assert [c["name"] for c in meta["codecs"]] != ["bytes"]  # really compressed
    assert raw_array_file(store.path(4, 1) / "doc_ids") is not None
    _assert_same(a, store.read(4, 0))
    _assert_same(b, store.read(4, 1))
    assert not isinstance(store.open_arrays(4, 0)["chunk_keys"], np.ndarray)
    assert isinstance(store.open_arrays(4, 1)["chunk_keys"], np.memmap)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**20), n_ids=st.integers(0, 400), n_keys=st.integers(0, 2000))
def test_read_subset_same_on_both_layouts_as_brute_force(tmp_path_factory, seed, n_ids, n_keys):
    store = open_shard_store(tmp_path_factory.mktemp("s"))
    data = _shard(seed, n_keys=n_keys, hi=1 << 14)
    store.write_encoded(1, 0, encode_shard(data, compressed=True))
    store.write(1, 1, data)
    rng = np.random.default_rng(seed + 1)
    ids = np.unique(
        np.concatenate(
            [
                rng.integers(0, 1 << 14, n_ids),
                rng.choice(data.chunk_keys, min(n_ids, len(data.chunk_keys))),
            ]
        )
    ).astype(np.uint32)
    want = {
        int(k): data.doc_ids[data.offsets[i] : data.offsets[i + 1]].tolist()
        for i, k in enumerate(data.chunk_keys.tolist())
        if k in set(ids.tolist())
    }
    for s in (0, 1):
        sub = store.read_subset(store.open_arrays(1, s), ids, 1)
        got = {
            int(k): sub.doc_ids[sub.offsets[i] : sub.offsets[i + 1]].tolist()
            for i, k in enumerate(sub.chunk_keys.tolist())
        }
        assert got == want


def test_raw_reader_rejects_a_truncated_chunk_and_ignores_other_layouts(tmp_path):
    store = open_shard_store(tmp_path / "shards")
    store.write(1, 0, _shard(5))
    chunk = store.path(1, 0) / "doc_ids" / "c" / "0"
    size = chunk.stat().st_size
    with open(chunk, "r+b") as f:
        f.truncate(size - 4)
    with pytest.raises(IndexFormatError, match=rf"expected {size} bytes .* found {size - 4}"):
        store.read(1, 0)
    with pytest.raises(IndexFormatError, match="expected zarr array metadata"):
        raw_array_file(tmp_path / "nowhere")
    # 2-d, big-endian or chunked arrays are not the raw layout: None, zarr reads them
    g = zarr.open_group(str(tmp_path / "other"), mode="w")
    g.create_array("two_d", data=np.zeros((2, 2), np.uint32), compressors=None)
    g.create_array("chunked", data=np.arange(10, dtype=np.uint32), chunks=(3,), compressors=None)
    for name in ("two_d", "chunked"):
        assert raw_array_file(tmp_path / "other" / name) is None


def test_empty_and_all_zero_arrays(tmp_path):
    store = open_shard_store(tmp_path / "shards")
    empty = ShardData.empty(0, 64)
    zeros = ShardData(
        0, 64, np.array([0], np.uint32), np.array([0, 1], np.uint64), np.zeros(1, np.uint32)
    )
    store.write(1, 0, empty)
    store.write(1, 1, zeros)
    _assert_same(empty, store.read(1, 0))
    _assert_same(zeros, store.read(1, 1))
    raw = raw_array_file(store.path(1, 1) / "doc_ids")
    assert raw.path is not None and load_array(raw).tolist() == [0]  # zero chunk written
    raw = raw_array_file(store.path(1, 0) / "doc_ids")
    assert raw.length == 0 and len(map_array(raw)) == 0


@pytest.mark.integration
def test_query_and_preload_on_raw_and_compressed_shards(tmp_path, client):
    """The same index with its shards rewritten compressed (as an older simdask wrote them)
    answers queries exactly as with raw shards, with and without preload; preloading raw
    shards copies nothing into the process, preloading compressed ones reads them whole."""
    docs = make_docs(30, seed=8)
    write_txt(docs, tmp_path / "docs")
    with Index.create(tmp_path / "idx", IndexConfig(shards=4, hash_bits=20)) as idx:
        idx.update([tmp_path / "docs"], client=client)
    queries = [docs["d001"] + " " + docs["d007"][:300], docs["short_inside"], "few words"]
    with Index.open(tmp_path / "idx") as idx:
        want = idx.query_many(queries, 0.0)
        assert want[0] and want[1] and not want[2]
        assert idx.preload() > 0 and idx.reads._shards == {}  # mapped: nothing copied
        assert idx.query_many(queries, 0.0) == want
        gens = idx.catalog.shard_generations()
        for s, g in gens.items():  # the same shards, compressed, in place
            idx.store.write_encoded(g, s, encode_shard(idx.store.read(g, s), compressed=True))
        # as an older simdask wrote them: no checksums recorded (else their sizes differ)
        idx.catalog.conn.execute("DELETE FROM files")  # as an index before checksums
        idx.catalog.conn.execute("DELETE FROM meta WHERE name = ?", (DIGEST_META,))
    for preload in (False, True):
        with Index.open(tmp_path / "idx") as idx:
            assert raw_array_file(idx.store.path(gens[0], 0) / "chunk_keys") is None
            if preload:
                assert idx.preload() == sum(d.nbytes for d in idx.reads._shards.values()) > 0
                assert len(idx.reads._shards) == len(gens)
            assert idx.query_many(queries, 0.0) == want


@pytest.mark.system
def test_query_process_imports_neither_dask_nor_zarr(tmp_path, client):
    """`simdask query` reads memory-mapped shards and the catalog only: a new process does
    not pay for importing dask, distributed and zarr (about 1 s here), pandas, tqdm, fsspec
    or the MinHash LSH search (a cold start reads and compiles every module it imports)."""
    docs = make_docs(12, seed=3)
    write_txt(docs, tmp_path / "docs")
    with Index.create(tmp_path / "idx", IndexConfig(shards=3)) as idx:
        idx.update([tmp_path / "docs"], client=client)
    q = tmp_path / "q.txt"
    q.write_text(docs["d001"], encoding="utf-8")
    probe = (
        "import sys\n"
        "from simdask.cli import main\n"
        f"rc = main(['query', {str(tmp_path / 'idx')!r}, {str(q)!r}, '-o', 'jsonl'])\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'dask', 'distributed', "
        "'zarr', 'pandas', 'tqdm', 'fsspec'} | {'simdask.read.lsh_search'} & set(sys.modules))\n"
        "print('HEAVY', heavy, rc, file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "HEAVY [] 0" in out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert rows[0]["key"] == "docs/d001.txt" and rows[0]["similarity"] == 100.0
