"""Readers verify only the blocks a query reads (issue 30 item 3 follow-up): per-block xxh3
sidecars written with every raw segment (simdask/storage/block_sums.py), checked block by
block by a query's ``pread`` lookups (simdask/storage/verified.py, direct_reads.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask import Index, IndexConfig
from simdask.errors import IndexDamagedError
from simdask.kernels.postings import ShardData
from simdask.storage import block_sums, checksums, direct_reads, verified
from simdask.storage.shard_codec import encode_shard
from simdask.storage.shards import LocalShardStore
from simdask.storage.verify import check_index
from tests.helpers.corpus import make_docs, write_txt


@pytest.fixture(autouse=True)
def _fresh():
    verified.forget()
    yield
    verified.forget()


def _brute(data: bytes, block: int) -> list[int]:
    return [xxhash.xxh3_64_intdigest(data[i : i + block]) for i in range(0, len(data), block)]


@pytest.mark.unit
@settings(max_examples=40, deadline=None)
@given(data=st.binary(max_size=5000), block=st.integers(1, 700))
def test_block_sums_are_each_blocks_xxh3(data, block):
    assert block_sums.block_sums(data, block).tolist() == _brute(data, block)


@pytest.mark.unit
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


@pytest.mark.unit
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


@pytest.mark.unit
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


@pytest.mark.unit
def test_small_files_and_files_without_sidecar_are_hashed_whole(tmp_path):
    rows, data = _segment_file(tmp_path, 3 * block_sums.BLOCK_BYTES)  # < WHOLE_LIMIT
    _flip(data, 5)
    assert verified.verify_problems(tmp_path, rows, lazy=True) != []
    assert verified.verify_problems(tmp_path, rows[:1], lazy=True) != []


@pytest.mark.unit
def test_a_file_changed_after_registration_is_hashed_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(verified, "WHOLE_LIMIT", 0)
    rows, data = _segment_file(tmp_path, 5 * block_sums.BLOCK_BYTES)
    assert verified.verify_problems(tmp_path, rows, lazy=True) == []
    _read(data, 0, 10)
    _flip(data, 3)  # block 0, verified before; the change time moves
    with pytest.raises(IndexDamagedError, match="other contents than recorded"):
        _read(data, 0, 10)


# --- a real index: a query reads some blocks of its doc_ids, not all ---

DOCS = make_docs(400, seed=31)
QUERY = " ".join(DOCS[sorted(DOCS)[17]].split()[:40])


@pytest.fixture(scope="module")
def built(tmp_path_factory, client):
    tmp = tmp_path_factory.mktemp("blocks")
    src = write_txt(DOCS, tmp / "src")
    with Index.create(tmp / "base", IndexConfig(hash_bits=28, shards=1)) as idx:
        idx.update([src], client=client)
    return tmp / "base"


def _answer(index) -> list:
    with Index.open(index) as idx:
        return [m.to_dict() for m in idx.query(QUERY, 0.0)]


@pytest.fixture(scope="module")
def blocks_read(built):
    """``(doc_ids file name, answer, blocks of it the query reads)`` with lazy verification."""
    seen: list = []
    real = direct_reads.verify_read

    def record(fd, path, starts, ends):
        seen.append((str(path), list(starts), list(ends)))
        return real(fd, path, starts, ends)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(verified, "WHOLE_LIMIT", 0)
        mp.setattr(direct_reads, "verify_read", record)
        verified.forget()
        answer = _answer(built)
    doc_ids = next(p for p in built.rglob("doc_ids/c/0"))
    got = [(s, e) for p, s, e in seen if p.endswith("doc_ids/c/0")]
    starts = np.concatenate([s for s, _ in got])
    ends = np.concatenate([e for _, e in got])
    read = block_sums.block_range(starts, ends, block_sums.BLOCK_BYTES).tolist()
    n_blocks = -(-doc_ids.stat().st_size // block_sums.BLOCK_BYTES)
    assert answer and 0 < len(read) < n_blocks, (len(read), n_blocks)
    return doc_ids.relative_to(built), answer, read, n_blocks


@pytest.mark.system
def test_a_flip_in_a_block_the_query_reads_is_damage(built, blocks_read, tmp_path, monkeypatch):
    name, _, read, _ = blocks_read
    work = tmp_path / "i"
    shutil.copytree(built, work)
    _flip(work / name, read[len(read) // 2] * block_sums.BLOCK_BYTES + 3)
    monkeypatch.setattr(verified, "WHOLE_LIMIT", 0)
    with pytest.raises(IndexDamagedError, match="has other contents than its recorded block"):
        _answer(work)
    # the command: exit 5 with the pointer to `simdask check`
    q = tmp_path / "q.txt"
    q.write_text(QUERY, encoding="utf-8")
    code = (
        "import sys; from simdask.storage import verified; verified.WHOLE_LIMIT = 0; "
        "from simdask.cli.main import main; sys.exit(main())"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, "query", str(work), str(q)], capture_output=True, text=True
    )
    assert p.returncode == 5 and "simdask check" in p.stderr, p.stderr


@pytest.mark.system
def test_a_flip_in_a_block_not_read_leaves_the_answer_and_check_finds_it(
    built, blocks_read, tmp_path, monkeypatch
):
    name, answer, read, n_blocks = blocks_read
    unread = next(b for b in range(n_blocks) if b not in set(read))
    work = tmp_path / "i"
    shutil.copytree(built, work)
    _flip(work / name, unread * block_sums.BLOCK_BYTES + 3)
    monkeypatch.setattr(verified, "WHOLE_LIMIT", 0)
    assert _answer(work) == answer
    # the same answer: the damaged file was not hashed whole (it would be damage)
    kinds = {(d.kind, d.name) for d in check_index(work).damage}
    assert ("checksum", name.as_posix()) in kinds
