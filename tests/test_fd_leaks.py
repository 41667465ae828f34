"""A long-running process (a notebook, `serve` with uploads) that updates, removes and
compacts through the Python API keeps no file descriptor on deleted shard files (issue 30
item 13: ~48 more after each round, their disk space never freed)."""

from __future__ import annotations

import os

import pytest

from simdask import Index, IndexConfig
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.integration


def _open_deleted() -> list[str]:
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.endswith("(deleted)"):
            out.append(target)
    return out


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc (Linux)")
def test_rounds_of_update_remove_compact_leave_no_deleted_file_open(tmp_path):
    docs = make_docs(30, seed=5)
    src = write_txt(docs, tmp_path / "src")
    before = len(_open_deleted())
    with Index.create(tmp_path / "idx", IndexConfig(shards=4, hash_bits=28)) as idx:
        idx.update([src])  # a small run: the Dask workers are threads of this process
        for r in range(3):
            new = src / f"n{r}.txt"
            new.write_text(docs["d001"] + f" and round {r} of new words", encoding="utf-8")
            idx.update([src])
            assert idx.query(docs["d002"])[0].key == "src/d002.txt"
            idx.remove([f"src/n{r}.txt"])
            new.unlink()
            idx.compact(force=True)
            assert idx.query(docs["d002"])[0].key == "src/d002.txt"
            leaked = [p for p in _open_deleted() if str(tmp_path) in p]
            assert not leaked, f"round {r}: {len(leaked)} deleted files open, e.g. {leaked[:3]}"
    assert len(_open_deleted()) <= before
