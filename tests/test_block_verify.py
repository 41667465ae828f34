"""Readers verify only the blocks a query reads (issue 30 item 3 follow-up): per-block xxh3
sidecars written with every raw segment (simdask/storage/block_sums.py), checked block by
block by a query's ``pread`` lookups (simdask/storage/verified.py, direct_reads.py), on a real
index: damage in a block read is exit 5, damage elsewhere leaves the answer and `check` sees it."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest

from simdask import Index, IndexConfig
from simdask.errors import IndexDamagedError
from simdask.storage import block_sums, direct_reads, verified
from simdask.storage.verify import check_index
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.system


@pytest.fixture(autouse=True)
def _fresh():
    verified.forget()
    yield
    verified.forget()


def _flip(path, at: int) -> None:
    with open(path, "r+b") as f:
        f.seek(at)
        old = f.read(1)
        f.seek(at)
        f.write(bytes([old[0] ^ 0x40]))


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
