"""`--scheduler`: a real `dask scheduler` and two `dask worker` processes started by the test.

Results on the external cluster equal those of the in-process test cluster, for several shard
counts; the cluster keeps running after the run (simdask only connects to it).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from distributed import Client

from simdask import Index, IndexConfig
from simdask.cluster.workers import scheduler_workers
from tests.helpers.cluster import start_scheduler, start_worker, stop, wait_for_workers
from tests.helpers.compare import postings_by_key, table_by_doc
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.system


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    sched, address = start_scheduler(tmp_path_factory.mktemp("cluster"))
    procs = [sched]
    try:
        procs += [start_worker(address) for _ in range(2)]
        wait_for_workers(address, 2)
        yield address
    finally:
        stop(procs)


def test_cli_on_existing_cluster_equals_local_run(tmp_path, scheduler, client):
    docs = make_docs(30, seed=17)
    src = write_txt(docs, tmp_path / "docs")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "simdask.cli",
            "update",
            tmp_path / "ext",
            src,
            "--scheduler",
            scheduler,
            "--hash-bits",
            "32",
            "--shards",
            "4",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    local = Index.create(tmp_path / "loc", IndexConfig(hash_bits=32, shards=4))
    local.update([src], client=client)
    ext = Index.open(tmp_path / "ext")
    assert table_by_doc(ext) == table_by_doc(local) and table_by_doc(ext)
    assert postings_by_key(ext) == postings_by_key(local)
    with Client(scheduler) as c:  # simdask left the cluster running
        assert len(scheduler_workers(c)) == 2


def test_shard_counts_on_existing_cluster(tmp_path, scheduler):
    docs = make_docs(30, seed=19)
    src = write_txt(docs, tmp_path / "docs")
    tables = []
    with Client(scheduler) as c:
        for shards in (4, 16, 64):
            idx = Index.create(tmp_path / f"i{shards}", IndexConfig(hash_bits=28, shards=shards))
            idx.update([src], client=c)
            tables.append(table_by_doc(idx))
    assert tables[0] and tables[0] == tables[1] == tables[2]
