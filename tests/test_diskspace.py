"""The disk-full error of a run (simdask/storage/diskspace.py); the real full disk is in
tests/test_crash.py::test_full_disk (a size-limited tmpfs)."""

from __future__ import annotations

import errno
import sqlite3

import pytest

from simdask.errors import DiskFullError
from simdask.storage.diskspace import disk_full, estimate_run_bytes, is_disk_full

pytestmark = pytest.mark.unit


def test_is_disk_full():
    assert is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert is_disk_full(sqlite3.OperationalError("database or disk is full"))
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert is_disk_full(outer)


def test_message_names_path_and_space(tmp_path):
    e = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "x"))
    err = disk_full(e, tmp_path, needed=3 * 2**20, free_at_start=2**20, unchanged="kept")
    assert isinstance(err, DiskFullError) and isinstance(err, OSError)
    assert str(err) == (
        f"disk full writing {tmp_path / 'x'}: the run filled the 1.0 MiB free on the filesystem "
        f"of {tmp_path} and needs about 3.0 MiB free (at least 2.0 MiB more): free space or put "
        "the index on another disk; kept"
    )
    err = disk_full(e, tmp_path, needed=100, free_at_start=2**20, unchanged="kept")
    assert "needs more than 1.0 MiB free" in str(err)
    assert disk_full(ValueError("x"), tmp_path, 1, 1, "kept") is None


def test_estimate(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 1000)
    assert estimate_run_bytes(500, [str(tmp_path / "a"), str(tmp_path / "a")]) == 3500
    assert estimate_run_bytes(500, [str(tmp_path / "gone")]) == 500


def test_an_io_error_on_the_catalog_of_a_full_disk_is_not_damage(tmp_path, monkeypatch):
    """Issue 30 item 10: opening a WAL catalog creates files beside it; on a full disk SQLite
    says "disk I/O error", which every command reported as a damaged catalog."""
    from simdask.errors import IndexDamagedError
    from simdask.storage import diskspace

    cat = tmp_path / "catalog.sqlite"
    io = sqlite3.OperationalError("disk I/O error")
    monkeypatch.setattr(diskspace, "free_bytes", lambda path: 12 * 1024)
    err = diskspace.catalog_error(cat, io)
    assert isinstance(err, DiskFullError) and "\n" not in str(err)
    assert str(err).startswith(f"disk full: SQLite cannot use the catalog {cat} (disk I/O error)")
    assert "with 12.0 KiB free on the filesystem of" in str(err)
    assert "needs about 1.0 MiB free there" in str(err) and "damaged" not in str(err)
    full = sqlite3.OperationalError("database or disk is full")
    monkeypatch.setattr(diskspace, "free_bytes", lambda path: 50 * 2**30)
    assert isinstance(diskspace.catalog_error(cat, full), DiskFullError)
    # with room on the disk, an I/O error or a malformed file is damage
    for e in (io, sqlite3.DatabaseError("database disk image is malformed")):
        err = diskspace.catalog_error(cat, e)
        assert isinstance(err, IndexDamagedError) and "simdask check" in str(err)
