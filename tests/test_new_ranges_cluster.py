"""A new index's range count chosen for its cluster (issue 32 item 2), on a LocalCluster of 8
single-threaded worker processes on 2 cores (oversubscribed on purpose): built through the
API and the command line without a range count, the index gets 32 ranges
(:func:`~simdask.engine.sizing.new_ranges`: 4 tasks per thread) and the merge runs at least 4
tasks per worker thread, counted from the scheduler's task stream; a range count given
(``IndexConfig(shards=...)``, ``--shards``) is kept, and so is an index's own by
``--rebuild`` without ``--shards``; the results do not depend on the ranges."""

from __future__ import annotations

from collections import Counter

import pytest
from distributed import Client, LocalCluster

from simdask import Index, IndexConfig
from simdask.cli.main import main
from simdask.engine.sizing import MIN_RANGE_DOCS, TASKS_PER_THREAD
from simdask.engine.stage_clock import task_stage
from simdask.storage.create import ranges_open
from tests.helpers.compare import documents_by_key, table_by_doc
from tests.helpers.corpus import make_docs, write_txt

pytestmark = [pytest.mark.integration, pytest.mark.slow]

WORKERS = 8
RANGES = TASKS_PER_THREAD * WORKERS  # 32
N_DOCS = RANGES * MIN_RANGE_DOCS  # the fewest documents a first run needs for 32 ranges


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """N_DOCS short documents (30-90 words, the generator's planted copies where they fall)."""
    docs = make_docs(N_DOCS, seed=5)
    short = {k: " ".join(t.split()[: 30 + i % 61]) for i, (k, t) in enumerate(sorted(docs.items()))}
    return write_txt(short, tmp_path_factory.mktemp("ranges") / "docs")


@pytest.fixture(scope="module")
def client():
    with (
        LocalCluster(
            n_workers=WORKERS, threads_per_worker=1, processes=True, dashboard_address=None
        ) as lc,
        Client(lc) as c,
    ):
        yield c


def _stream(client) -> int:
    """How many tasks the scheduler's task stream holds (it records from the first call)."""
    return len(client.get_task_stream())


def _merge_tasks(client, since: int, run: int) -> int:
    """The merge tasks of run ``run`` in the scheduler's task stream after its first
    ``since`` tasks, by their names (``simdask-merge-<tag>-sNNNN``, the tag ending in
    ``-r<run>``)."""
    stream = client.get_task_stream()[since:]
    keys = [r["key"] for r in stream if isinstance(r["key"], str)]
    head = "simdask-chunk-"
    tags = {k[len(head) :].rsplit("-b", 1)[0] for k in keys if k.startswith(head)}
    assert len(tags) == 1, tags
    tag = tags.pop()
    assert tag.endswith(f"-r{run}"), tag
    return Counter(task_stage(k, tag) for k in keys)["merge"]


@pytest.mark.timeout(1200)
def test_api_new_index_gets_ranges_for_the_cluster(client, corpus, tmp_path):
    assert sum(client.nthreads().values()) == WORKERS
    auto = Index.create(tmp_path / "auto")  # no range count given
    assert auto.config.shards == 16 and ranges_open(auto.catalog)
    since = _stream(client)
    summary = auto.update([corpus], client=client)
    merges = _merge_tasks(client, since, summary.run_id)
    assert auto.config.shards == RANGES == summary.stats.sizing.ranges
    assert summary.stats.sizing.ranges_chosen and summary.stats.sizing.note is None
    assert "32 ranges (chosen for the cluster)" in summary.stats.sizing.describe()
    assert merges == RANGES >= TASKS_PER_THREAD * WORKERS  # 4 merge tasks a worker thread
    with Index.open(tmp_path / "auto") as again:  # stored, and fixed from now on
        assert again.config.shards == RANGES and not ranges_open(again.catalog)
        assert again.update([corpus], client=client, rebuild=True).stats.sizing.ranges == RANGES
    # a range count given is kept: the same cluster, 16 (the number stored before a first run)
    given = Index.create(tmp_path / "given", IndexConfig(shards=16))
    since = _stream(client)
    summary = given.update([corpus], client=client)
    assert given.config.shards == 16 == _merge_tasks(client, since, summary.run_id)
    assert not summary.stats.sizing.ranges_chosen and summary.stats.sizing.note is not None
    # the same index either way; reads of the updated object cut its own ranges
    assert documents_by_key(auto) == documents_by_key(given)
    table = table_by_doc(auto)
    assert table and table == table_by_doc(given)
    text = sorted(corpus.glob("*.txt"))[7].read_text(encoding="utf-8")
    assert [m.key for m in auto.query(text)] == [m.key for m in given.query(text)]
    auto.close()
    given.close()


def _shards(path) -> int:
    with Index.open(path) as idx:
        return idx.config.shards


@pytest.mark.timeout(1200)
def test_cli_new_index_gets_ranges_for_the_cluster(client, corpus, tmp_path):
    addr = client.scheduler.address
    run = ["update", "--quiet", "--scheduler", addr]
    assert main([*run, str(tmp_path / "auto"), str(corpus)]) == 0
    assert _shards(tmp_path / "auto") == RANGES
    assert main([*run, "--shards", "8", str(tmp_path / "given"), str(corpus)]) == 0
    assert _shards(tmp_path / "given") == 8
    # --rebuild without --shards keeps the index's 8 (the cluster would choose 32)
    assert main([*run, "--rebuild", str(tmp_path / "given"), str(corpus)]) == 0
    assert _shards(tmp_path / "given") == 8
