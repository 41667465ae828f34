"""Tasks sized to the cluster, on a cluster larger than the machine (issue 32 items 2-3):
LocalClusters of 8 and 16 single-threaded worker processes on 2 cores (oversubscribed on
purpose). Every stage with one task per unit gives each worker at least
:data:`~simdask.engine.sizing.TASKS_PER_THREAD` tasks, or as many as the corpus allows
(stated per stage below), counted by the test itself from the scheduler's task stream by the
deterministic task names; and the index is the one a single worker builds.

The index's range count is its stored layout (``shards``): the merge and the per-range
passes run one task per range, so these builds use the range count the run summary
recommends for the cluster (4 a thread, :func:`~simdask.engine.sizing.range_note`); the
single-worker reference keeps the default 16 ranges (the results do not depend on it).
"""

from __future__ import annotations

from collections import Counter

import pytest
from distributed import Client, LocalCluster

from simdask import Index, IndexConfig
from simdask.engine.sizing import MIN_BATCH_DOCS, MIN_BLOCK_PAIRS, TASKS_PER_THREAD
from simdask.engine.stage_clock import task_stage
from tests.helpers.compare import documents_by_key, table_by_doc
from tests.helpers.corpus import make_docs, write_txt

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: stages with one task per unit of work (batch, range, block x range, block): each must
#: give every worker TASKS_PER_THREAD tasks, or what the corpus allows (rows: see below)
PER_UNIT = ("chunk", "merge", "skip", "info", "dfhist", "work", "bydoc", "pairs")
#: one-task steps of the heavy-chunk path (a corpus without heavy chunks has none)
SINGLE = ("hsizes", "hq", "hgroups")
N_DOCS = 1700  # 1,700 / 25 = 68 chunking batches: 4 a worker for 16 workers


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """N_DOCS short documents (the generator's texts cut to 30-90 words, its planted copies
    kept where they fall in): many tasks, little work each, on an oversubscribed machine."""
    docs = make_docs(N_DOCS, seed=11)
    short = {k: " ".join(t.split()[: 30 + i % 61]) for i, (k, t) in enumerate(sorted(docs.items()))}
    return write_txt(short, tmp_path_factory.mktemp("sizing") / "docs")


def _build(path, src, workers: int, shards: int):
    """Build on a fresh LocalCluster of ``workers`` single-threaded processes; the summary
    and this run's tasks per stage, counted from the scheduler's task stream."""
    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as lc,
        Client(lc) as client,
    ):
        idx = Index.create(path, IndexConfig(shards=shards))
        client.get_task_stream(count=0)  # the scheduler records the stream from here on
        summary = idx.update([src], client=client)
        stream = client.get_task_stream()
    keys = [r["key"] for r in stream if isinstance(r["key"], str)]
    # chunk task names: simdask-chunk-<tag>-bNNNNNN, the tag ending in -r<run>
    head = "simdask-chunk-"
    tags = {k[len(head) :].rsplit("-b", 1)[0] for k in keys if k.startswith(head)}
    assert len(tags) == 1, tags
    tag = tags.pop()
    assert tag.endswith(f"-r{summary.run_id}")
    counted = Counter(s for s in (task_stage(k, tag) for k in keys) if s is not None)
    return Index.open(path), summary, counted


@pytest.fixture(scope="module")
def reference(corpus, tmp_path_factory):
    idx, summary, _ = _build(tmp_path_factory.mktemp("ref") / "idx", corpus, 1, 16)
    return idx, summary


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("workers", [8, 16])
def test_every_stage_has_tasks_for_every_worker(workers, corpus, reference, tmp_path):
    shards = TASKS_PER_THREAD * workers
    idx, summary, counted = _build(tmp_path / "idx", corpus, workers, shards)
    want = TASKS_PER_THREAD * workers
    assert want * MIN_BATCH_DOCS <= N_DOCS  # the corpus allows 4 chunking tasks a worker
    for stage in PER_UNIT:
        assert counted[stage] >= want, (stage, counted)
    # similarity blocks: 4 a thread unless blocks of the floor's size cover the pair work;
    # this corpus's work is stated by the run (candidate pair counts)
    work = summary.stats.candidate_pair_counts
    allowed = min(want, -(-work // MIN_BLOCK_PAIRS))
    assert counted["rows"] == summary.stats.blocks >= allowed
    assert counted["pairs"] == summary.stats.blocks * shards
    unknown = set(counted) - set(PER_UNIT) - set(SINGLE) - {"rows"}
    assert not unknown, f"stages the test does not know: {unknown}"
    # the run says what it chose, and counted the same tasks from the scheduler
    sz = summary.stats.sizing
    assert (sz.workers, sz.threads, sz.ranges, sz.note) == (workers, workers, shards, None)
    assert sz.batches == counted["chunk"] and sz.batch_docs == -(-N_DOCS // want)
    assert summary.stats.profile.tasks == dict(counted)
    assert set(summary.serial_seconds) >= {"scan", "chunk", "merge", "similarity", "commit"}
    # the index is the single worker's: documents and every similarity list
    ref, ref_summary = reference
    assert ref_summary.stats.sizing.batches == TASKS_PER_THREAD  # 4 for its one thread
    assert documents_by_key(idx) == documents_by_key(ref)
    table = table_by_doc(idx)
    assert table and table == table_by_doc(ref)
    assert summary.similarity_rows == ref_summary.similarity_rows
