"""The workers a scheduler has, asked without the client's cache (issue 12's flaky fuzz test).

``Client.scheduler_info()["workers"]`` can be empty while every worker is there: the client's
periodic update (every ``distributed.client.scheduler-info-interval``) overwrites the cached
answer with one that has no per-worker information. That, not a dying worker, made
tests/test_extract_fuzz_pipeline.py see "no workers" at the start of an example, and it made
:func:`~simdask.cluster.connect.cluster_errors` turn a run's own error into "Dask workers
died". Here the client's update runs every 5 ms instead of 2 s, so that the race shows within
a second or two.
"""

from __future__ import annotations

import ast
import os
import time
from pathlib import Path

import dask
import pytest
from distributed import Client

import simdask
from simdask.cluster.connect import cluster_errors
from simdask.cluster.workers import scheduler_workers
from simdask.errors import ClusterError

pytestmark = pytest.mark.integration

SECONDS = 2.0  # of calls in a tight loop: ~400 periodic updates at 5 ms


@pytest.fixture(scope="module")
def racy(client):
    """A second client of the session's cluster whose cache is refreshed every 5 ms, and the
    worker processes' pids (a restarted worker would have another)."""
    with dask.config.set({"distributed.client.scheduler-info-interval": "5ms"}):
        c = Client(client.scheduler.address)
    pids = c.run(os.getpid)
    yield c, pids
    c.close()


def _calls(fn) -> int:
    n, end = 0, time.monotonic() + SECONDS
    while time.monotonic() < end:
        fn()
        n += 1
    return n


def test_scheduler_workers_sees_every_worker_every_time(racy):
    c, pids = racy
    seen = []
    n = _calls(lambda: seen.append(frozenset(scheduler_workers(c))))
    assert n > 100
    assert set(seen) == {frozenset(pids)}  # every call: both workers, by address
    assert all(w["status"] == "running" for w in scheduler_workers(c).values())
    assert c.run(os.getpid) == pids  # and no worker restarted meanwhile


def test_a_runs_own_error_is_not_reported_as_dead_workers(racy):
    c, pids = racy
    wrong = []

    def once():
        try:
            with cluster_errors(c):
                raise ValueError("the run's own error")
        except ValueError:
            pass
        except ClusterError as e:  # workers_before or now read as empty
            wrong.append(str(e))

    n = _calls(once)
    assert n > 100
    assert wrong == []
    assert c.run(os.getpid) == pids


def test_simdask_never_reads_workers_from_the_client_cache():
    root = Path(simdask.__file__).parent
    calls = [
        f"{p.relative_to(root)}:{node.lineno}"
        for p in root.rglob("*.py")
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "scheduler_info"
    ]
    assert calls == []  # use simdask.cluster.workers.scheduler_workers
