"""The catalog gives its free pages back when that pays (issue 30 item 13,
simdask/storage/vacuum.py)."""

from __future__ import annotations

import sqlite3

import pytest

from simdask.storage import vacuum

pytestmark = pytest.mark.unit

#: free bytes from which these small catalogs pay (the default, 8 MiB, needs bigger ones)
LEAST = 1 << 20


def _catalog(path, rows: int) -> sqlite3.Connection:
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)")
    c.executemany("INSERT INTO t VALUES (?, ?)", ((i, bytes(1000)) for i in range(rows)))
    return c


def test_a_half_free_catalog_is_vacuumed_and_shrinks(tmp_path):
    path = tmp_path / "catalog.sqlite"
    c = _catalog(path, 4_000)  # ~4 MB
    c.execute("DELETE FROM t WHERE k < 2000")  # half of the pages free
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size, pages, free = vacuum.free_pages(c)
    assert free * size > LEAST and free > 0.25 * pages
    before = path.stat().st_size
    freed = vacuum.vacuum_if_it_pays(c, path, least=LEAST)
    assert freed >= (free - 10) * size
    assert vacuum.free_pages(c)[2] == 0
    assert path.stat().st_size <= before - freed + size
    assert c.execute("SELECT count(*) FROM t").fetchone()[0] == 2_000
    assert vacuum.vacuum_if_it_pays(c, path, least=LEAST) == 0  # nothing free any more
    c.close()


def test_no_vacuum_when_it_does_not_pay_or_there_is_no_room(tmp_path, monkeypatch):
    path = tmp_path / "catalog.sqlite"
    c = _catalog(path, 4_000)
    c.execute("DELETE FROM t WHERE k < 400")  # 10 % free: below the share
    assert vacuum.vacuum_if_it_pays(c, path, least=LEAST) == 0 and vacuum.free_pages(c)[2] > 0
    c.execute("DELETE FROM t WHERE k < 2000")
    monkeypatch.setattr(vacuum, "free_bytes", lambda p: 1 << 20)  # no room for a copy
    assert vacuum.vacuum_if_it_pays(c, path, least=LEAST) == 0 and vacuum.free_pages(c)[2] > 0
    c.close()
