"""Durability on power loss (issue 30 item 14, issue 34 item 3): before the catalog's COMMIT
every file the catalog names (shard segments, text packs, LSH parts) and every directory entry
leading to it is on stable storage, and SQLite commits with ``synchronous=FULL``.

A killed process cannot show a missing fsync (the page cache survives it), so these tests
record the I/O instead: ``os.fsync`` and ``os.replace`` are wrapped to note which inode was
synced or renamed into which directory, in order, and SQLite's trace callback checks, at the
moment each ``COMMIT`` statement is sent, that every file under the index's stores was
fsynced and that every directory from the file up to the index folder was fsynced after the
file and after the last rename into it. Removing any fsync of
:mod:`simdask.storage.durable` or of a writer's path to it fails these tests.
"""

from __future__ import annotations

import os
import sqlite3

import numpy as np
import pytest

from simdask.config import IndexConfig
from simdask.kernels.postings import ShardData
from simdask.storage import durable
from simdask.storage.catalog import Catalog
from simdask.storage.create import create_catalog
from simdask.storage.local_store import LocalShardStore
from simdask.storage.lsh_store import LshStore
from simdask.storage.text_packs import TextStore
from tests.helpers.durability import SyncRecorder, store_files

pytestmark = pytest.mark.unit


@pytest.fixture
def recorder(monkeypatch):
    return SyncRecorder(monkeypatch)


def _shard(lo: int = 0, hi: int = 1 << 20) -> ShardData:
    keys = np.array([3, 9, 70], np.uint64)
    return ShardData(
        lo=lo,
        hi=hi,
        chunk_keys=keys,
        offsets=np.array([0, 2, 3, 5], np.uint64),
        doc_ids=np.array([0, 1, 1, 0, 2], np.uint32),
    )


def test_publish_syncs_the_tree_then_renames_then_syncs_the_names(tmp_path, recorder):
    tmp = tmp_path / "store" / ".tmp-x"
    (tmp / "a" / "c").mkdir(parents=True)
    (tmp / "a" / "c" / "0").write_bytes(b"data")
    (tmp / "zarr.json").write_text("{}")
    durable.publish(tmp, tmp_path / "store" / "x", tmp_path)
    files = [tmp_path / "store" / "x" / "a" / "c" / "0", tmp_path / "store" / "x" / "zarr.json"]
    assert recorder.unsynced(tmp_path, files) == []
    # and the check itself fails for a file written after the syncs
    (tmp_path / "store" / "late").write_bytes(b"x")
    assert recorder.unsynced(tmp_path, [tmp_path / "store" / "late"]) == [
        "store/late: never fsynced"
    ]


@pytest.mark.parametrize("how", ["write", "writer"])
def test_local_shard_store_writes_durable_segments(tmp_path, recorder, how):
    store = LocalShardStore(tmp_path / "shards")
    data = _shard()
    if how == "write":
        store.write(3, 1, data)
    else:
        w = store.writer(3, 1, data.lo, data.hi)
        w.append(data.chunk_keys, data.offsets, data.doc_ids)
        w.close()
    files = store_files(tmp_path)
    assert len(files) >= 4  # group metadata, arrays' metadata and data
    assert recorder.unsynced(tmp_path, files) == []


def test_text_packs_and_lsh_parts_are_durable(tmp_path, recorder):
    TextStore(tmp_path / "texts").write_pack("r000001-b000000.pack", ["one text", "two"])
    lsh = LshStore(tmp_path / "lsh")
    lsh.write_sig(2, 0, np.arange(20, dtype="<u4").reshape(2, 10))
    lsh.write_band(2, 0, np.array([1, 5], "<u8"), np.array([0, 1], "<u4"))
    files = store_files(tmp_path)
    assert {f.name for f in files} == {
        "r000001-b000000.pack",
        "sig-0000.npy",
        "bkey-0000.npy",
        "bdoc-0000.npy",
    }
    assert recorder.unsynced(tmp_path, files) == []


def test_catalog_commits_with_synchronous_full(tmp_path):
    cat = Catalog(tmp_path / "c.sqlite", create=True)
    try:
        assert cat.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert cat.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        cat.close()


def test_the_check_sees_a_segment_written_without_fsync(tmp_path, recorder, monkeypatch):
    """The recorder is not blind: a shard store publishing with a plain rename is caught."""

    def undurable(tmp, final, top):
        os.replace(tmp, final)

    monkeypatch.setattr("simdask.storage.local_store.publish", undurable)
    LocalShardStore(tmp_path / "shards").write(1, 0, _shard())
    faults = recorder.unsynced(tmp_path, store_files(tmp_path))
    assert faults and all("never fsynced" in f for f in faults)


def test_sqlite_trace_callback_sees_commit(tmp_path):
    """The COMMIT check relies on SQLite's trace callback naming the statement as sent."""
    conn = sqlite3.connect(tmp_path / "t.sqlite", isolation_level=None)
    seen = []
    conn.set_trace_callback(seen.append)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("COMMIT")
    conn.close()
    assert "COMMIT" in seen


def test_a_new_index_catalog_and_its_name_are_durable(tmp_path, recorder):
    create_catalog(tmp_path / "new" / "idx", IndexConfig()).close()
    assert recorder.unsynced(tmp_path, [tmp_path / "new" / "idx" / "catalog.sqlite"]) == []
