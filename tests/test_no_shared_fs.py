"""Workers that do not share the client's filesystem: a real `dask scheduler` and two `dask
worker` processes, each worker in its own mount namespace where the test's directory (index
and documents) is hidden under an empty tmpfs. simdask must notice (``--data-transfer auto``),
move documents, pairs and shards through Dask, and give the same index as a local run; the
shards stay cached on the long-lived workers for the next run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from distributed import Client

from simdask import Index, IndexConfig
from simdask.engine.run import RunOptions
from tests.helpers.cluster import start_scheduler, stop, wait_for_workers
from tests.helpers.compare import assert_same_index, assert_same_similarity
from tests.helpers.corpus import make_docs, write_txt

_CAN_UNSHARE = os.geteuid() == 0 and shutil.which("unshare") is not None
pytestmark = [  # one list: a second assignment would drop the tier marker
    pytest.mark.system,
    pytest.mark.skipif(
        not _CAN_UNSHARE and os.environ.get("CI") != "true",
        reason="needs root and unshare(1) to give workers their own mount namespace",
    ),
]


@pytest.fixture
def hidden_cluster(tmp_path):
    """(scheduler address, folder the workers cannot see)."""
    yield from _hidden_cluster(tmp_path, {})


@pytest.fixture
def hidden_cluster_kill_merge(tmp_path):
    """As ``hidden_cluster``; the first merge task on the cluster kills its worker process."""
    marker = tmp_path / "killed-once"
    env = {"SIMDASK_FAILPOINTS": f"merge_task:kill-once:{marker}"}
    yield from _hidden_cluster(tmp_path, env)


def _hidden_cluster(tmp_path, env):
    hidden = tmp_path / "client-only"
    hidden.mkdir()
    scheduler, address = start_scheduler(tmp_path)
    procs = [scheduler]
    try:
        worker = f"{sys.executable} -m distributed.cli.dask_worker {address} --nthreads 1"
        worker += " --no-dashboard --local-directory /tmp"
        for _ in range(2):
            procs.append(
                subprocess.Popen(
                    ["unshare", "-m", "sh", "-c", f"mount -t tmpfs none {hidden} && exec {worker}"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env={**os.environ, **env},
                    start_new_session=True,  # stop() ends the nanny and its worker together
                )
            )
        wait_for_workers(address, 2)
        yield address, hidden
    finally:
        stop(procs)


def test_workers_without_the_clients_files(hidden_cluster, tmp_path, client):
    address, hidden = hidden_cluster
    docs = make_docs(40, seed=23)
    src = write_txt(docs, hidden / "docs")
    config = IndexConfig(shards=5, hash_bits=22)
    with Client(address) as ext:
        # the workers really do not see the folder
        seen = ext.run(os.path.exists, str(src / f"{sorted(docs)[0]}.txt"))
        assert list(seen.values()) == [False, False]
        idx = Index.create(hidden / "index", config)
        first = idx.update([src], client=ext)
        assert first.extra["transfer"] == "dask"
        ref = Index.create(tmp_path / "ref", config)
        ref.update([src], client=client, options=RunOptions(worker_cache=False))
        assert_same_index(idx, ref)
        assert_same_similarity(idx, ref)

        # an incremental run writes delta segments: no old segment is needed on the workers
        (src / "tail.txt").write_text(docs[sorted(docs)[3]] + " with a few new words at its end")
        (src / f"{sorted(docs)[5]}.txt").unlink()
        second = idx.update([src], client=ext, delete_missing=True)
        ref.update([src], client=client, delete_missing=True)
        assert second.extra["transfer"] == "dask"
        assert second.extra["shards_rewritten"] == 0 and second.extra["segments_written"] >= 1
        assert second.extra["worker_cache"]["hits"] == second.extra["worker_cache"]["misses"] == 0
        assert_same_index(idx, ref)
        assert_same_similarity(idx, ref)
        # compaction merges them where the workers cache the segments, not sent by the client
        out = idx.compact(client=ext, force=True, options=RunOptions(worker_cache=True))
        assert out["ranges"] == config.shards == out["ranges_from_cache"]
        assert {len(v) for v in idx.catalog.segments().values()} == {1}
        assert_same_index(idx, ref)
        assert_same_similarity(idx, ref)


def test_cli_shared_mode_refused_when_workers_cannot_see(hidden_cluster):
    address, hidden = hidden_cluster
    src = write_txt(make_docs(5, seed=2), hidden / "docs")
    cmd = [sys.executable, "-m", "simdask.cli", "update", str(hidden / "ix"), str(src)]
    cmd += ["--scheduler", address, "--quiet"]
    p = subprocess.run([*cmd, "--data-transfer", "shared"], capture_output=True, text=True)
    assert p.returncode != 0
    assert "--data-transfer shared needs workers that see" in p.stderr
    assert "Traceback" not in p.stderr, p.stderr
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "data transfer: dask" in p.stderr + p.stdout
    with Index.open(hidden / "ix") as idx:
        assert idx.catalog.counts()["documents"] == len(list(src.glob("*.txt")))


def test_worker_killed_during_merge_without_shared_filesystem(hidden_cluster_kill_merge, tmp_path):
    """A worker killed while merging, in the ``dask`` placement. Either the pairs and document
    bytes it held exist nowhere else, so the run fails with a message naming the cluster
    problem, the index stays at its previous generation and the next run (nanny restarted the
    worker) completes; or the other worker still held a copy of them and the retried task
    succeeds. Which one is a race the test does not control (issue 34 item 8: it failed once
    under load): the test's ``dask scheduler`` runs the Active Memory Manager, whose
    ReduceReplicas policy drops the second copy of broadcast data about every 2 s, so whether
    the copy is still there when the kill comes depends on timing. Both outcomes are correct;
    each is checked, and both end with the same index as an undisturbed run."""
    address, hidden = hidden_cluster_kill_merge
    docs = make_docs(30, seed=41)
    src = write_txt(docs, hidden / "docs")
    cmd = [sys.executable, "-m", "simdask.cli", "update", str(hidden / "ix"), str(src)]
    cmd += ["--scheduler", address, "--quiet", "--shards", "4", "--hash-bits", "22"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert (tmp_path / "killed-once").exists()  # the kill happened, whatever the outcome
    assert "Traceback" not in p.stderr, p.stderr
    if p.returncode != 0:  # the data died with the worker
        assert p.returncode == 4, p.stderr  # EXIT_CLUSTER
        assert "worker" in p.stderr and "unchanged (generation 0)" in p.stderr, p.stderr
        # nothing was committed to the new index: it is removed, no empty index is left
        # behind (tests/test_failed_first_run.py)
        assert not (hidden / "ix" / "catalog.sqlite").exists(), sorted(os.listdir(hidden))
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
    ref = Index.create(tmp_path / "ref", IndexConfig(shards=4, hash_bits=22))
    with Client(address) as ext:
        ref.update([src], client=ext, options=RunOptions(transfer="dask"))
    with Index.open(hidden / "ix") as idx:
        assert_same_index(idx, ref)
        assert_same_similarity(idx, ref)
