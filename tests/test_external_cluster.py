"""`--scheduler`: a real `dask scheduler` and two `dask worker` processes started by the test.

Results on the external cluster equal those of the in-process test cluster, for several shard
counts; the cluster keeps running after the run (simdask only connects to it).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from distributed import Client

from simdask import Index, IndexConfig

from conftest import make_docs, write_txt
from incremental_util import postings_by_key, table_by_doc


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cluster")
    sched_file = tmp / "scheduler.json"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    procs = [
        subprocess.Popen(
            [
                *dask,
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--dashboard-address",
                ":0",
                "--scheduler-file",
                str(sched_file),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        deadline = time.time() + 60
        while not sched_file.exists() and time.time() < deadline:
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        for _ in range(2):
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "distributed.cli.dask_worker",
                        address,
                        "--nthreads",
                        "1",
                        "--nworkers",
                        "1",
                        "--no-dashboard",
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        with Client(address) as c:
            c.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for p in procs[::-1]:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


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
        assert len(c.scheduler_info()["workers"]) == 2


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
