"""The range count of a new index, chosen for its cluster (issue 32 item 2): the pure rule
(:func:`simdask.engine.sizing.new_ranges`), ``IndexConfig.shards`` None (not given), what a
new index stores, and which settings a run of an existing index uses
(:func:`simdask.write.settings.run_config`). The runs on a cluster of 8 worker threads are in
tests/test_new_ranges_cluster.py."""

from __future__ import annotations

import json
import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simdask import Index, IndexConfig
from simdask.engine.sizing import (
    MAX_RANGES,
    MIN_RANGE_DOCS,
    MIN_RANGES,
    TASKS_PER_THREAD,
    TaskSizing,
    new_ranges,
    range_note,
)
from simdask.errors import ConfigError
from simdask.storage.catalog import Catalog
from simdask.storage.create import RANGES_FOR_CLUSTER, ranges_open
from simdask.write.settings import run_config, update_config

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("threads", "ranges"),
    [(1, 16), (2, 16), (4, 16), (5, 32), (8, 32), (16, 64), (64, 256), (1000, 4096)],
)
def test_ranges_for_threads(threads, ranges):
    # 4 tasks a thread, rounded up to a power of two; at least 16 (a laptop's index unchanged)
    assert new_ranges(threads) == ranges
    assert new_ranges(threads, None) == ranges


@pytest.mark.parametrize("threads", [1024, 1025, 4096, 100_000])
def test_ranges_are_capped(threads):
    assert new_ranges(threads) == MAX_RANGES == 4096
    IndexConfig(shards=new_ranges(threads))  # a count an index allows


@pytest.mark.parametrize(
    ("threads", "n_docs", "ranges"),
    [
        (8, 800, 32),  # 800 / 25 = 32 ranges allowed: the cluster's 32
        (8, 799, 16),  # 31.96: rounded down to 16
        (16, 800, 32),  # the cluster wants 64; the first run's documents allow 32
        (16, 100_000, 64),
        (1024, 10, 16),  # a tiny first run: never below 16
        (1024, 0, 16),
        (1024, 50_000, 1024),  # 50,000 / 25 = 2,000: the largest power of two below
        (1024, 10**9, 4096),
        (2, 10**9, 16),
    ],
)
def test_ranges_for_threads_and_documents(threads, n_docs, ranges):
    assert new_ranges(threads, n_docs) == ranges


@given(threads=st.integers(0, 10**5), n_docs=st.one_of(st.none(), st.integers(0, 10**9)))
def test_ranges_rule_properties(threads, n_docs):
    r = new_ranges(threads, n_docs)
    assert MIN_RANGES <= r <= MAX_RANGES and r & (r - 1) == 0  # a power of two in bounds
    if r > MIN_RANGES:  # above the floor, the documents of the first run fill every range
        assert n_docs is None or n_docs >= r * MIN_RANGE_DOCS
    want = TASKS_PER_THREAD * max(1, threads)
    if n_docs is None or n_docs >= want * MIN_RANGE_DOCS * 2:
        # the documents allow it: 4 tasks a thread (the run summary has no note), or the cap
        assert r >= want or r == MAX_RANGES
        assert range_note(r, max(1, threads)) is None or r == MAX_RANGES
        assert r < 2 * want or r == MIN_RANGES  # the smallest such power of two
    assert new_ranges(threads + 1, n_docs) >= r  # more threads never fewer ranges


def test_shards_none_means_not_given():
    c = IndexConfig()
    assert c.shards is None
    assert IndexConfig.from_dict(c.to_dict()) == c
    for bad in (0, 4097, True, 2.0, "16"):
        with pytest.raises(ConfigError, match="shards"):
            IndexConfig(shards=bad)
    with pytest.raises(ConfigError, match="shards None"):
        _ = c.shard_width  # what depends on the ranges needs a number
    with pytest.raises(ConfigError, match="shards None"):
        _ = c.shard_layout
    assert IndexConfig(shards=16).shard_width == 2**60
    # a stored config (always a number) reads unchanged
    stored = {**IndexConfig(shards=16).to_dict(), "slack": None}
    assert IndexConfig.from_dict(stored).shards == 16


def _stored(path) -> dict:
    conn = sqlite3.connect(path / "catalog.sqlite")
    try:
        return dict(conn.execute("SELECT name, value FROM meta").fetchall())
    finally:
        conn.close()


def test_a_new_index_stores_a_number_and_leaves_its_ranges_open(tmp_path):
    with Index.create(tmp_path / "auto") as idx:
        assert idx.config.shards == 16 and ranges_open(idx.catalog)
        assert idx.reads.config.shards == 16
    meta = _stored(tmp_path / "auto")
    assert json.loads(meta["config"])["shards"] == 16 and meta[RANGES_FOR_CLUSTER] == "1"
    for n in (16, 8):
        with Index.create(tmp_path / f"n{n}", IndexConfig(shards=n)) as idx:
            assert idx.config.shards == n and not ranges_open(idx.catalog)
        assert RANGES_FOR_CLUSTER not in _stored(tmp_path / f"n{n}")
    with Index.open(tmp_path / "auto") as idx:  # another process sees it open as well
        assert ranges_open(idx.catalog)


def test_run_config_keeps_or_chooses_the_ranges(tmp_path):
    with Index.create(tmp_path / "new") as idx:
        # not given: the run chooses them for its cluster
        assert run_config(idx, None, False) == (idx.config, True)
        cfg, choose = run_config(idx, IndexConfig(top_k=5), False)
        assert (cfg.shards, cfg.top_k, choose) == (16, 5, True)
        # given, even the number stored: kept
        assert run_config(idx, IndexConfig(shards=16), False) == (idx.config, False)
        cfg, choose = run_config(idx, IndexConfig(shards=8), False)  # no documents yet
        assert (cfg.shards, choose) == (8, False)
    with Index.create(tmp_path / "given", IndexConfig(shards=8)) as idx:
        assert run_config(idx, IndexConfig(), True) == (idx.config, False)  # keeps its 8
    # the command line's settings: an update given no --shards keeps the index's
    assert update_config(tmp_path / "given", {"top_k": 7}).shards == 8
    assert update_config(tmp_path / "missing", {"top_k": 7}).shards is None
    assert update_config(tmp_path / "given", {"shards": 32}).shards == 32


def test_task_sizing_says_who_chose_the_ranges():
    sz = TaskSizing(8, 8, batch_docs=25, batches=32, ranges=32, ranges_chosen=True)
    assert "32 ranges (chosen for the cluster)" in sz.describe()
    sz.ranges_chosen = False
    assert "32 ranges" in sz.describe() and "chosen" not in sz.describe()


def test_a_catalog_never_stores_a_range_count_of_none(tmp_path):
    cat = Catalog(tmp_path / "c.sqlite", create=True)
    try:
        with pytest.raises(ConfigError, match="shards None"):
            cat.init_meta(IndexConfig())
        cat.init_meta(IndexConfig(shards=4))
        assert cat.check_format().shards == 4
    finally:
        cat.close()
