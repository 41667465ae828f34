"""Tasks sized to the cluster (engine/sizing) and the busy/serial arithmetic of a run
(engine/stage_clock), against brute force; issue 32 items 1-2."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simdask.engine.sizing import (
    BLOCK_BYTES_PER_PAIR,
    BLOCK_MEMORY_SHARE,
    MAX_BATCH_DOCS,
    MIN_BATCH_DOCS,
    MIN_BLOCK_PAIRS,
    TASKS_PER_THREAD,
    TaskSizing,
    batch_docs,
    block_budget,
    memory_block_pairs,
    range_note,
    view_bytes,
    view_windows,
)
from simdask.engine.stage_clock import (
    StageClock,
    overlap_length,
    profile_of,
    task_stage,
    union_intervals,
    union_length,
)
from simdask.kernels.similarity import plan_blocks
from simdask.summary import RunStats, RunSummary

pytestmark = pytest.mark.unit


@given(st.integers(0, 3_000_000), st.integers(1, 2048))
def test_batch_docs_rule(n_items, threads):
    size = batch_docs(n_items, threads)
    assert MIN_BATCH_DOCS <= size <= MAX_BATCH_DOCS
    batches = -(-n_items // size)
    want = TASKS_PER_THREAD * threads
    if size > MIN_BATCH_DOCS and size < MAX_BATCH_DOCS:
        # at the rule's own size: at least the tasks aimed at, and not one batch more
        assert batches <= want
        assert -(-n_items // (size - 1)) > want
    if size == MIN_BATCH_DOCS:  # the corpus allows no more tasks of the floor's size
        assert n_items <= want * MIN_BATCH_DOCS and batches <= want


def test_batch_docs_examples():
    assert batch_docs(5039, 2) == 630  # the man pages on a 2-thread cluster: 8 tasks
    assert batch_docs(5039, 16) == 79  # 64 tasks: 4 a thread
    assert batch_docs(1000, 64) == MIN_BATCH_DOCS  # too small a corpus: 40 tasks of 25
    assert batch_docs(10**7, 2) == MAX_BATCH_DOCS


@given(st.integers(0, 10**12), st.integers(1, 4096), st.integers(1, 10**9))
def test_block_budget_rule(work, threads, block_pairs):
    b = block_budget(work, threads, block_pairs)
    assert 1 <= b <= block_pairs
    if block_pairs >= MIN_BLOCK_PAIRS:
        assert b >= MIN_BLOCK_PAIRS
    # blocks of this budget: at least TASKS_PER_THREAD a thread unless the floor or the
    # ceiling stops it
    if MIN_BLOCK_PAIRS < b < block_pairs:
        assert work / b > TASKS_PER_THREAD * threads - 1


@given(
    st.integers(0, 10**12),
    st.integers(1, 64),
    st.integers(1, 10**9),
    st.one_of(st.none(), st.integers(0, 2**40)),
    st.integers(1, 16),
)
def test_block_budget_respects_the_memory_budget(
    work, threads, block_pairs, memory_limit, in_flight
):
    """Blocks sized from the workers' memory limit: ``in_flight`` blocks of the budget, at
    BLOCK_BYTES_PER_PAIR a pair count, fit in BLOCK_MEMORY_SHARE of the limit (or the
    budget is a single pair count); without a limit the rule of work alone."""
    memory = memory_block_pairs(memory_limit, in_flight)
    b = block_budget(work, threads, block_pairs, memory)
    assert 1 <= b <= block_pairs
    if not memory_limit:
        assert memory is None
        assert b == block_budget(work, threads, block_pairs)
        return
    room = memory_limit * BLOCK_MEMORY_SHARE
    assert b == 1 or b * BLOCK_BYTES_PER_PAIR * in_flight <= room
    # the memory bound is the only thing that lowers the budget below the work rule
    assert b == min(block_budget(work, threads, block_pairs), memory)


def test_memory_block_pairs_examples():
    # a 4 GiB worker, 4 blocks in flight: 512 MiB for 4 blocks of 32 bytes a pair count
    assert memory_block_pairs(4 << 30, 4) == (4 << 30) // 8 // 128
    # the 12 GiB workers of docs/scale.md's 2-core VM bind it: 12.6 M pair counts a block
    # (1.5 GiB for 4 blocks), not the default 32 M, nor the 22 M the work alone would give
    assert block_budget(5_639_403_009, 2, 32_000_000, memory_block_pairs(12 << 30, 4)) == (
        (12 << 30) // 8 // 128
    )
    # a 1 GiB worker: 1 M pair counts a block, below the floor MIN_BLOCK_PAIRS * 4
    assert block_budget(10**10, 2, 32_000_000, memory_block_pairs(1 << 30, 4)) == (1 << 30) // 1024
    assert memory_block_pairs(None, 4) is None and memory_block_pairs(0, 4) is None


def test_plan_blocks_meets_the_rule():
    rng = np.random.default_rng(3)
    work = rng.integers(0, 50_000, 20_000)
    for threads in (2, 8, 16, 64):
        blocks = plan_blocks(work, block_budget(int(work.sum()), threads, 32_000_000))
        assert len(blocks) >= TASKS_PER_THREAD * threads


def test_range_note():
    assert range_note(64, 16) is None
    note = range_note(16, 16)
    assert note is not None and "16 ranges for 16 worker threads" in note
    assert "--shards 64" in note
    assert "--shards 128" in range_note(16, 17)


def test_sizing_describe_and_dict():
    s = TaskSizing(4, 8, 125, False, 32, 16, 2**21, 32, None)
    assert s.describe() == (
        "tasks: 4 workers, 8 threads; chunking 32 batches of 125 documents (auto); 16 ranges; "
        "similarity 32 blocks of <= 2.1e+06 pair counts"
    )
    assert "note" not in s.to_dict() and s.to_dict()["threads"] == 8


intervals = st.lists(
    st.tuples(st.integers(0, 200), st.integers(0, 30)).map(lambda t: (t[0], t[0] + t[1])),
    max_size=40,
)


@given(intervals, st.integers(0, 250), st.integers(0, 250))
def test_union_and_overlap_against_cells(iv, lo, hi):
    cells = set()
    for a, b in iv:
        cells.update(range(a, b))
    starts = np.array([a for a, _ in iv], float)
    stops = np.array([b for _, b in iv], float)
    assert union_length(starts, stops) == len(cells)
    u = union_intervals(starts, stops)
    assert np.all(u[1:, 0] > u[:-1, 1]) if len(u) > 1 else True
    assert overlap_length(u, lo, hi) == len([c for c in cells if lo <= c < hi])


def test_task_stage_names():
    assert task_stage("simdask-chunk-ab12cd34-r7-b000003", "ab12cd34-r7") == "chunk"
    assert task_stage("simdask-pairs-ab12cd34-r7-b000001-s0004", "ab12cd34-r7") == "pairs"
    assert task_stage("simdask-chunk-ab12cd34-r8-b000003", "ab12cd34-r7") is None
    assert task_stage("sum-ab12cd34-r7", "ab12cd34-r7") is None


def _rec(key, *spans):
    return {
        "key": key,
        "startstops": [{"action": "compute", "start": a, "stop": b} for a, b in spans],
    }


def test_profile_of_synthetic_stream():
    clock = StageClock(started=100.0, ended=130.0)
    clock.windows = [("chunk", 101.0, 110.0), ("merge", 112.0, 120.0)]
    tag = "t-r1"
    records = [
        _rec("simdask-chunk-t-r1-b000000", (102.0, 105.0)),
        _rec("simdask-chunk-t-r1-b000001", (104.0, 108.0)),  # overlaps: busy 102..108
        _rec("simdask-merge-t-r1-s0000", (113.0, 119.0)),
        _rec("simdask-rows-t-r1-b000000", (121.0, 122.0)),  # outside the windows: between
        _rec("other-task", (125.0, 126.0)),  # another client's: busy, not this run's
        {
            "key": "simdask-merge-t-r1-s0001",
            "startstops": [{"action": "transfer", "start": 112.0, "stop": 113.0}],
        },
    ]
    p = profile_of(records, clock, tag)
    assert p.tasks == {"chunk": 2, "merge": 2, "rows": 1}
    assert p.task_seconds == {"chunk": 7.0, "merge": 6.0, "rows": 1.0}
    assert p.stage_seconds == {"chunk": 9.0, "merge": 8.0, "between": 13.0}
    assert p.busy_seconds == {"chunk": 6.0, "merge": 6.0, "between": 2.0}
    assert p.serial_seconds == {"chunk": 3.0, "merge": 2.0, "between": 11.0}


def test_summary_serial_seconds():
    clock = StageClock(started=0.0, ended=10.0)
    clock.windows = [("chunk", 0.0, 4.0)]
    stats = RunStats(profile=profile_of([_rec("simdask-chunk-t-b000000", (1.0, 3.0))], clock, "t"))
    s = RunSummary(1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, stats=stats)
    s.seconds = {"scan": 0.5, "chunk": 4.0, "commit": 1.5, "total": 12.0}
    # other: 12 s in all less the scan, the run's 10 s and the commit
    want = {"scan": 0.5, "chunk": 2.0, "between": 6.0, "commit": 1.5, "other": 0.0}
    assert s.serial_seconds == want
    s.seconds["total"] = 14.0
    assert s.serial_seconds["other"] == 2.0
    assert s.to_dict()["serial_seconds"] == s.serial_seconds
    assert s.to_dict()["extra"]["profile"]["tasks"] == {"chunk": 1}
    line = s.describe_serial()
    assert line.startswith("serial (no worker busy): scan 0.50s, chunk 2.00s")
    assert line.endswith("12.0s of 14.0s (86 %)")


def test_view_windows_are_the_fewest_whose_views_fit():
    """Views of 1,000 lists of 100 postings in 16 ranges of 10,000 documents: 4 bytes a
    posting, 5 an emitting one, 4 a document a range; windows divide only the emitting part."""
    k, lists, n, ranges = 100_000, 1_000, 10_000, 16
    whole = view_bytes(k, lists, n, ranges)
    assert whole == 4 * k + 5 * (k - lists) + 4 * (n + 1) * ranges
    emitting = 5 * (k - lists)
    assert view_windows(k, lists, n, ranges, per_worker=whole) == 1
    assert view_windows(k, lists, n, ranges, per_worker=whole - 1) == 2
    assert view_windows(k, lists, n, ranges, per_worker=whole - emitting // 2) == 2
    assert view_windows(k, lists, n, ranges, per_worker=whole - emitting * 2 // 3) == 3
    assert view_windows(k, lists, n, ranges, per_worker=1) == 4  # at most MAX_VIEW_WINDOWS
