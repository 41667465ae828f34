"""A worker's freed heap between similarity blocks (docs/scale.md, "Worker heap between
blocks"): simdask's workers keep freed heap resident (a 4 GiB trim threshold), so after each
block the driver has every worker return it once its RSS grew by more than
:data:`~simdask.cluster.heap.TRIM_STEP_BYTES` (:func:`~simdask.cluster.heap.trim_grown`)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import psutil
import pytest

from simdask.cluster.connect import WORKER_MALLOC_ENV, connect
from simdask.cluster.heap import _malloc_trim
from simdask.cluster.transfer import Traffic
from simdask.engine.context import RunContext, RunOptions
from simdask.engine.similarity_stage import BlockPass, run_blocks
from simdask.progress import Callback
from tests.helpers.components import need

pytestmark = pytest.mark.system  # starts a subprocess / worker processes

MIB = 2**20

_STEP_SCRIPT = """
import numpy as np
from simdask.cluster.heap import trim_grown

def churn(mib):  # mib x 1 MiB in the heap (mmap threshold 32 MiB), then freed
    keep = [np.ones(1 << 17) for _ in range(mib)]
    last = np.ones(1 << 10)  # an allocation above them: the heap top stays in use
    del keep
    return last

a = churn(400)
print(trim_grown(1 << 30))  # grew by ~0.5 GiB < the step: kept
print(trim_grown(64 << 20))  # > the step: trimmed
print(trim_grown(64 << 20))  # no growth since: kept
b = churn(400)
print(trim_grown(1 << 30))  # grew by 400 MiB since the last trim < the step: kept
print(trim_grown(64 << 20))  # > the step: trimmed
"""


def test_trim_grown_trims_only_past_its_step():
    """trim_grown returns the freed heap exactly when the RSS grew past its step since its last
    trim (under the workers' malloc settings, where glibc itself keeps it)."""
    need(_malloc_trim() is not None, "glibc's malloc_trim", "a glibc-based Linux")
    env = {**os.environ, **WORKER_MALLOC_ENV}
    out = subprocess.run(
        [sys.executable, "-c", _STEP_SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    kept1, trimmed1, again, kept2, trimmed2 = (int(x) for x in out.stdout.split())
    assert kept1 == 0 and again == 0 and kept2 == 0
    assert trimmed1 > 300 * MIB and trimmed2 > 300 * MIB  # of the 400 MiB freed each time


_HELD_SCRIPT = """
import numpy as np
from simdask.cluster.heap import trim_grown

first = [np.ones(1 << 17) for _ in range(100)]
del first
print(trim_grown(64 << 20))  # 100 MiB freed: trimmed, the mark set
held = [np.ones(1 << 17) for _ in range(400)]  # another block's task holds 400 MiB
print(trim_grown(64 << 20))  # the RSS grew by 400 MiB, all of it in use: kept, mark unchanged
last = np.ones(1 << 10)  # an allocation above them: the heap top stays in use
del held
print(trim_grown(64 << 20))  # that task ended: its 400 MiB freed and trimmed
"""


def test_memory_in_use_while_trimming_does_not_raise_the_mark():
    """A trim that runs while another task holds memory neither counts that memory as freed
    nor takes it as the new mark: once the task frees it, the next call returns it (CI's
    failure of session 15: blocks in flight overlapped the trim after the block before)."""
    need(_malloc_trim() is not None, "glibc's malloc_trim", "a glibc-based Linux")
    env = {**os.environ, **WORKER_MALLOC_ENV}
    out = subprocess.run(
        [sys.executable, "-c", _HELD_SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    first, while_held, after = (int(x) for x in out.stdout.split())
    assert first > 50 * MIB
    assert while_held < 50 * MIB
    assert after > 300 * MIB


def churn_emit(shard, mib: int) -> np.ndarray:
    """An emission task that leaves ``mib`` MiB of freed heap behind (1 MiB arrays)."""
    keep = [np.ones(1 << 17) for _ in range(mib)]
    del keep
    return np.zeros(1, np.int64)


def small_rows(parts: list) -> int:
    return len(parts)


def worker_rss(dask_worker=None) -> int:
    return psutil.Process().memory_info().rss


def test_block_driver_returns_each_blocks_freed_heap():
    """Blocks whose tasks free 400 MiB each leave no worker holding it: without the trim after
    each block the workers' 4 GiB trim threshold keeps it all resident."""
    need(_malloc_trim() is not None, "glibc's malloc_trim", "a glibc-based Linux")
    with connect(workers=2, threads_per_worker=1) as client:
        shards = client.scatter([0, 1], hash=False)
        before = client.run(worker_rss)
        opts = RunOptions(blocks_in_flight=2)
        ctx = RunContext(client, 1, "t-heap", Callback(), Traffic(client), "dask", 2, 4, opts)
        p = BlockPass(churn_emit, lambda mib: (mib,), small_rows, lambda mib: ())
        out = run_blocks(ctx, shards, [400] * 3, p)
        after = client.run(worker_rss)
    assert out == [2] * 3
    for w, rss in after.items():
        assert rss - before[w] < 200 * MIB, (w, before[w], rss)
