"""Per-block xxh3 sidecars of raw segments (simdask/storage/block_sums.py) and their lazy
verification (simdask/storage/verified.py): the sums, the blocks hashed, the damage seen."""

from __future__ import annotations

import os

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.errors import IndexDamagedError
from simdask.kernels.postings import ShardData
from simdask.storage import block_sums, checksums, verified
from simdask.storage.local_store import LocalShardStore
from simdask.storage.shard_codec import encode_shard

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def _fresh():
    verified.forget()
    yield
    verified.forget()


def _brute(data: bytes, block: int) -> list[int]:
    return [xxhash.xxh3_64_intdigest(data[i : i + block]) for i in range(0, len(data), block)]


@settings(max_examples=40, deadline=None)
@given(data=st.binary(max_size=5000), block=st.integers(1, 700))
def test_block_sums_are_each_blocks_xxh3(data, block):
    assert block_sums.block_sums(data, block).tolist() == _brute(data, block)


@settings(max_examples=60, deadline=None)
@given(
    ranges=st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 400)), max_size=12),
    block=st.integers(1, 600),
)
def test_block_range_covers_exactly_the_bytes_read(ranges, block):
    starts = [s for s, _ in ranges]
    ends = [s + n for s, n in ranges]
    want = sorted({b // block for s, e in zip(starts, ends, strict=True) for b in range(s, e)})
    assert block_sums.block_range(np.array(starts), np.array(ends), block).tolist() == want


def _shard(rng: np.random.Generator, n_keys: int) -> ShardData:
    keys = np.unique(rng.integers(0, 2**28, n_keys, dtype=np.uint64)).astype(np.uint32)
    df = rng.integers(1, 40, len(keys))
    offsets = np.concatenate([[0], np.cumsum(df)]).astype(np.uint64)
    docs = rng.integers(0, 5000, int(offsets[-1]), dtype=np.uint32)
    return ShardData(0, 2**28, keys, offsets, docs)


@settings(max_examples=8, deadline=None)
@given(n_keys=st.integers(1, 20_000), seed=st.integers(0, 2**32 - 1), pieces=st.booleans())
def test_written_sidecars_are_brute_force_block_sums(tmp_path_factory, n_keys, seed, pieces):
    """Both raw writers (whole segment, piece by piece) and the worker-side encoding write
    the sidecar of each large array: its sums are the brute-force xxh3 of each block."""
    tmp = tmp_path_factory.mktemp("s")
    data = _shard(np.random.default_rng(seed), n_keys)
    store = LocalShardStore(tmp / "shards")
    if pieces:
        w = store.writer(1, 0, 0, 2**28)
        cut = len(data.chunk_keys) // 2
        cut_off = int(data.offsets[cut])
        w.append(data.chunk_keys[:cut], data.offsets[: cut + 1], data.doc_ids[:cut_off])
        rest = data.offsets[cut:] - np.uint64(cut_off)
        w.append(data.chunk_keys[cut:], rest, data.doc_ids[cut_off:])
        w.close()
    else:
        store.write(1, 0, data)
    seg = store.path(1, 0)
    encoded = encode_shard(data, compressed=False)
    for name in block_sums.BLOCK_ARRAYS:
        raw = (seg / name / "c" / "0").read_bytes()
        side = seg / block_sums.sidecar_name(name)
        block, sums = block_sums.read_sidecar(side, len(raw))
        assert block == block_sums.BLOCK_BYTES
        assert sums.tolist() == _brute(raw, block)
        assert encoded[block_sums.sidecar_name(name)] == side.read_bytes()


def _segment_file(tmp_path, size: int) -> tuple[list, os.PathLike]:
    seg = tmp_path / "shards/gen-000001/shard-0000"
    (seg / "doc_ids/c").mkdir(parents=True)
    data = seg / "doc_ids/c/0"
    data.write_bytes(os.urandom(size))
    block_sums.write_sidecar(seg / "doc_ids")
    names = ["shards/gen-000001/shard-0000/doc_ids/c/0", "shards/gen-000001/shard-0000/doc_ids/"]
    names[1] += block_sums.SIDECAR
    return [(n, *checksums.digest(tmp_path / n)) for n in names], data


def _flip(path, at: int) -> None:
    with open(path, "r+b") as f:
        f.seek(at)
        old = f.read(1)
        f.seek(at)
        f.write(bytes([old[0] ^ 0x40]))


def _read(path, start: int, end: int) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        verified.verify_read(fd, path, [start], [end])
    finally:
        os.close(fd)


def test_lazy_verification_hashes_only_the_blocks_read(tmp_path, monkeypatch):
    monkeypatch.setattr(verified, "WHOLE_LIMIT", 0)
    block = block_sums.BLOCK_BYTES
    rows, data = _segment_file(tmp_path, 20 * block + 123)
    _flip(data, 7 * block + 5)  # a block no read below touches... until the last one
    before = verified.hashed_bytes()
    assert verified.verify_problems(tmp_path, rows, lazy=True) == []
    side_bytes = rows[1][1]
    assert verified.hashed_bytes() - before == side_bytes  # the sidecar only
    _read(data, 2 * block + 10, 3 * block + 10)  # blocks 2 and 3
    _read(data, 2 * block, 2 * block + 1)  # verified before: not hashed again
    assert verified.hashed_bytes() - before == side_bytes + 2 * block
    with pytest.raises(IndexDamagedError, match=r"block 7 .* other contents"):
        _read(data, 7 * block + 100, 7 * block + 200)
    # without lazy, the whole file is hashed and the damage found at once
    verified.forget()
    problems = verified.verify_problems(tmp_path, rows)
    assert len(problems) == 1 and "other contents than recorded" in problems[0]


def test_small_files_and_files_without_sidecar_are_hashed_whole(tmp_path):
    rows, data = _segment_file(tmp_path, 3 * block_sums.BLOCK_BYTES)  # < WHOLE_LIMIT
    _flip(data, 5)
    assert verified.verify_problems(tmp_path, rows, lazy=True) != []
    assert verified.verify_problems(tmp_path, rows[:1], lazy=True) != []


def test_a_file_changed_after_registration_is_hashed_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(verified, "WHOLE_LIMIT", 0)
    rows, data = _segment_file(tmp_path, 5 * block_sums.BLOCK_BYTES)
    assert verified.verify_problems(tmp_path, rows, lazy=True) == []
    _read(data, 0, 10)
    _flip(data, 3)  # block 0, verified before; the change time moves
    with pytest.raises(IndexDamagedError, match="other contents than recorded"):
        _read(data, 0, 10)


@pytest.mark.parametrize("extra", [0, 1, 4095, 4097])
def test_file_block_sums_read_in_pieces_equal_the_whole(tmp_path, extra):
    """A file longer than one read of READ_BLOCKS blocks (and not a multiple of a block) gives
    each block's xxh3 as if hashed at once: no block split across two reads."""
    size = block_sums.BLOCK_BYTES * block_sums.READ_BLOCKS * 2 + extra
    data = np.random.default_rng(extra).integers(0, 256, size, np.uint8).tobytes()
    path = tmp_path / "data"
    path.write_bytes(data)
    got = block_sums.file_block_sums(path)
    block = block_sums.BLOCK_BYTES
    want = [xxhash.xxh3_64_intdigest(data[i : i + block]) for i in range(0, size, block)]
    assert got.tolist() == want
    assert block_sums.file_block_sums(tmp_path / "data", 1000).tolist() == [
        xxhash.xxh3_64_intdigest(data[i : i + 1000]) for i in range(0, size, 1000)
    ]
