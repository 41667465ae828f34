"""Dask's conventions (issue 32, items 5 and 6), on a real `dask scheduler` and two `dask
worker` processes started by the test in another working directory than the client's.

* an active ``distributed.Client`` is the cluster of ``Index.update()``, ``compact()`` and
  ``compute_totals()`` given no ``client=``;
* ``DASK_SCHEDULER_ADDRESS`` (``dask.config``'s ``scheduler-address``) is honoured by the
  command line and the API: ``update``, ``compute_totals`` and ``compact`` (and the command
  line's ``totals --compute`` and ``align``);
* relative INDEX and SOURCE paths are resolved before the data placement is decided, so a
  worker in another working directory still shares the filesystem (``auto`` picks ``shared``,
  ``--data-transfer shared`` is accepted).
"""

from __future__ import annotations

import os
import subprocess
import sys

import dask
import pytest
from distributed import Client

from simdask import Index, IndexConfig
from simdask.cluster.current import active_client, configured_scheduler
from simdask.cluster.spec import resolve_cluster
from simdask.cluster.workers import scheduler_workers
from tests.helpers.cluster import start_scheduler, start_worker, stop, wait_for_workers
from tests.helpers.compare import table_by_doc
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.system

CONFIG = IndexConfig(shards=4, hash_bits=32)
_CLI = (sys.executable, "-m", "simdask.cli")


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory):
    """(scheduler address, the workers' working directory): two workers started elsewhere."""
    tmp = tmp_path_factory.mktemp("cluster")
    away = tmp / "worker-cwd"
    away.mkdir()
    sched, address = start_scheduler(tmp)
    procs = [sched]
    try:
        procs += [start_worker(address, cwd=away) for _ in range(2)]
        wait_for_workers(address, 2)
        yield address, away
    finally:
        stop(procs)


def _count(dask_scheduler) -> int:
    return dask_scheduler.transition_counter


def _transitions(address: str) -> int:
    """Task transitions the scheduler has made so far (grows with every task it runs)."""
    with Client(address, set_as_default=False) as c:
        return c.run_on_scheduler(_count)


def _corpus(folder, name="docs", seed=5):
    write_txt(make_docs(30, seed=seed), folder / name)


def test_workers_run_elsewhere(elsewhere):
    address, away = elsewhere
    with Client(address, set_as_default=False) as c:
        assert set(c.run(os.getcwd).values()) == {str(away)}


def test_active_client_and_relative_paths(tmp_path, elsewhere, monkeypatch, client):
    address, away = elsewhere
    monkeypatch.chdir(tmp_path)
    _corpus(tmp_path)
    assert not (away / "docs").exists()  # "docs" read from the workers' directory: nothing
    assert active_client() is None
    before = _transitions(address)
    with Client(address) as ext:
        assert active_client() is ext
        idx = Index.create("idx", CONFIG)  # relative INDEX and SOURCE
        summary = idx.update(["docs"])  # no client=: the active one
        ran = _transitions(address) - before
        assert ran > 50, ran  # the run's tasks went to this scheduler
        assert summary.stats.transfer == "shared"  # paths resolved before the probe
        assert summary.stats.worker_cache is not None  # the cluster outlives the run
        before = _transitions(address)
        totals = idx.compute_totals()
        assert totals["documents"] > 0 and _transitions(address) > before
        _corpus(tmp_path, "more", seed=6)
        idx.update(["more"])
        before = _transitions(address)
        assert idx.compact(force=True)["segments_merged"] > 0
        assert _transitions(address) > before
        idx.close()
    ref = Index.create(tmp_path / "ref", CONFIG)
    ref.update([tmp_path / "docs", tmp_path / "more"], client=client)
    with Index.open("idx") as idx:
        assert table_by_doc(idx) == table_by_doc(ref) and table_by_doc(ref)


def test_dask_config_scheduler_address_in_the_api(tmp_path, elsewhere, monkeypatch):
    address, _ = elsewhere
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    _corpus(tmp_path)
    before = _transitions(address)
    with dask.config.set({"scheduler-address": address}):
        assert configured_scheduler() == address and active_client() is None
        with Index.create("idx", CONFIG) as idx:
            summary = idx.update(["docs"])
    assert _transitions(address) - before > 50
    assert summary.stats.transfer == "shared" and summary.added == len(make_docs(30, seed=5))
    with Client(address, set_as_default=False) as c:  # connected to, left running
        assert len(scheduler_workers(c)) == 2


def _totals(idx) -> list:
    return sorted(idx.totals(), key=lambda t: t.doc)


def test_scheduler_address_runs_totals_and_compaction(tmp_path, elsewhere, monkeypatch, client):
    address, _ = elsewhere
    monkeypatch.chdir(tmp_path)
    _corpus(tmp_path)
    _corpus(tmp_path, "more", seed=6)
    ref = Index.create(tmp_path / "ref", CONFIG)  # no cluster found: totals in this process
    ref.update([tmp_path / "docs", tmp_path / "more"], client=client)
    assert active_client() is None and configured_scheduler() is None
    before = _transitions(address)
    ref.compute_totals()
    assert _transitions(address) == before  # nothing configured: not that scheduler
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", address)
    with Index.create("idx", CONFIG) as idx:
        idx.update(["docs"])
        idx.update(["more"])
        before = _transitions(address)
        got = idx.compute_totals()
        assert _transitions(address) - before >= 1  # the alignment ran there
        assert got["aligned"] > 0 and got["documents"] > 0
        before = _transitions(address)
        assert idx.compact(force=True)["segments_merged"] > 0
        assert _transitions(address) - before >= 4  # one merge task a range at least
        assert _totals(idx) == _totals(ref) and _totals(ref)
        assert table_by_doc(idx) == table_by_doc(ref)
    with Client(address, set_as_default=False) as c:  # connected to, left running
        assert len(scheduler_workers(c)) == 2


def test_scheduler_address_totals_and_align_on_the_command_line(tmp_path, elsewhere, client):
    address, _ = elsewhere
    _corpus(tmp_path)
    with Index.create(tmp_path / "idx", CONFIG) as idx:
        idx.update([tmp_path / "docs"], client=client)
    names = sorted(p.name for p in (tmp_path / "docs").iterdir())
    (tmp_path / "pairs.tsv").write_text(f"docs/{names[0]}\tdocs/{names[1]}\n")
    env = {**os.environ, "DASK_SCHEDULER_ADDRESS": address, "SIMDASK_CONFIG": ""}
    env.pop("SIMDASK_SCHEDULER", None)
    for cmd in (["totals", "idx", "--compute", "--quiet"], ["align", "pairs.tsv"]):
        before = _transitions(address)
        proc = subprocess.run(
            [*_CLI, *cmd], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0, proc.stderr
        assert _transitions(address) - before >= 1, cmd  # its tasks went to that scheduler
    with Index.open(tmp_path / "idx") as idx:
        assert _totals(idx)  # the CLI's computation was committed


@pytest.mark.parametrize("transfer", ["shared", "auto"])
def test_dask_scheduler_address_on_the_command_line(tmp_path, elsewhere, transfer):
    address, _ = elsewhere
    _corpus(tmp_path)
    before = _transitions(address)
    env = {**os.environ, "DASK_SCHEDULER_ADDRESS": address, "SIMDASK_CONFIG": ""}
    env.pop("SIMDASK_SCHEDULER", None)
    proc = subprocess.run(
        [*_CLI, "update", "idx", "docs", "--shards", "4", "--data-transfer", transfer],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"using the Dask scheduler at {address}" in proc.stderr
    assert "data transfer: shared" in proc.stderr
    assert _transitions(address) - before > 50


def test_dask_address_is_a_layer_below_simdask_settings(tmp_path):
    dask_env = {"DASK_SCHEDULER_ADDRESS": "tcp://10.1.2.3:8786", "SIMDASK_CONFIG": ""}
    r = resolve_cluster({}, dask_env)
    assert (r.spec.kind, r.spec.scheduler, r.sources["scheduler"]) == (
        "scheduler",
        "tcp://10.1.2.3:8786",
        "dask",
    )
    mine = resolve_cluster({}, {**dask_env, "SIMDASK_SCHEDULER": "tcp://10.9.9.9:1"})
    assert mine.spec.scheduler == "tcp://10.9.9.9:1" and mine.sources["scheduler"] == "env"
    assert resolve_cluster({"kind": "local"}, dask_env).spec.kind == "local"
    ssh = resolve_cluster({"ssh_hosts": ("a", "b")}, dask_env)
    assert ssh.spec.kind == "ssh"
