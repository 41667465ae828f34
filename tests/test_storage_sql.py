"""storage/sql.py: ``rows_in`` runs one query per batch of values and loses or repeats no row
at the batch boundaries; ``connection`` takes a Catalog or a bare connection."""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.storage import sql

pytestmark = pytest.mark.unit


def _db(n: int) -> sqlite3.Connection:
    c = sqlite3.connect(":memory:")
    c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)")
    c.executemany("INSERT INTO t VALUES (?, ?)", [(i, i * i) for i in range(n)])
    return c


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-5, 60), max_size=40), st.integers(1, 7))
def test_rows_in_equals_a_python_filter_whatever_the_batch(values, batch):
    c = _db(50)
    old = sql.BATCH
    sql.BATCH = batch
    try:
        got = sorted(sql.rows_in(c, "SELECT id, v FROM t WHERE id IN {in}", values))
    finally:
        sql.BATCH = old
    assert got == sorted({(i, i * i) for i in values if 0 <= i < 50})


def test_rows_in_with_no_values_runs_nothing():
    assert list(sql.rows_in(_db(3), "SELECT id FROM t WHERE id IN {in}", [])) == []


def test_connection_of_a_catalog_or_a_connection():
    c = _db(1)
    assert sql.connection(c) is c
    assert sql.connection(SimpleNamespace(conn=c)) is c
