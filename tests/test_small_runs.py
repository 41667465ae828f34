"""`simdask update` of a few documents on a default local cluster runs its Dask workers in
its own process (threads): no worker processes to start. Same tasks, same index as worker
processes give; asking for workers or a memory limit still starts worker processes."""

from __future__ import annotations

import pytest

from simdask import Index
from simdask.cluster.placement import SMALL_RUN_ITEMS
from tests.helpers.cli import run
from tests.helpers.compare import assert_same_index
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.system

IN_PROCESS = "using in-process Dask workers (threads)"


def test_small_runs_in_process_equal_worker_processes(tmp_path):
    docs = make_docs(16, seed=9)
    keys = sorted(docs)
    folder = write_txt({k: docs[k] for k in keys[:10]}, tmp_path / "src")
    settings = ("--hash-bits", 24, "--shards", 4, "--top-k", 3)  # not --quiet: the messages
    a, b = tmp_path / "threads", tmp_path / "processes"
    for step in range(3):
        if step == 1:  # add three, modify one
            write_txt({k: docs[k] for k in keys[10:13]}, folder)
            (folder / f"{keys[0]}.txt").write_text(docs[keys[0]][:300] + " " + docs[keys[14]])
        if step == 2:  # delete two
            for k in keys[1:3]:
                (folder / f"{k}.txt").unlink()
        p = run("update", a, folder, *settings, "--delete-missing", "--dashboard-address", ":0")
        assert IN_PROCESS in p.stderr, p.stderr
        q = run("update", b, folder, *settings, "--delete-missing", "--workers", 2)
        assert IN_PROCESS not in q.stderr and "LocalCluster" in q.stderr, q.stderr
    with Index.open(a) as x, Index.open(b) as y:
        assert x.catalog.n_documents() == 11
        assert_same_index(x, y)


def test_more_documents_than_a_small_run_start_worker_processes(tmp_path):
    src = tmp_path / "many.jsonl"
    lines = [f'{{"id": "d{i}", "text": "w{i} x y z"}}' for i in range(SMALL_RUN_ITEMS + 1)]
    src.write_text("\n".join(lines) + "\n")
    p = run("update", tmp_path / "idx", src, "--hash-bits", 24, "--shards", 2)
    assert IN_PROCESS not in p.stderr and "LocalCluster" in p.stderr, p.stderr


def test_python_api_without_a_client_runs_small_runs_in_process(tmp_path, monkeypatch):
    """``Index.update`` given no client starts its LocalCluster as the command line does:
    threads for a small run, worker processes above SMALL_RUN_ITEMS documents."""
    import simdask.cluster.connect as connect_module

    asked = []
    real = connect_module.connect

    def recording(*args, **kwargs):
        asked.append(kwargs.get("processes", True))
        return real(*args, **kwargs)

    monkeypatch.setattr(connect_module, "connect", recording)
    docs = make_docs(6, seed=4)
    with Index.create(tmp_path / "idx") as idx:
        summary = idx.update([write_txt(docs, tmp_path / "src")])
        assert summary.added == len(docs) == idx.catalog.n_documents()
    assert asked == [False]
    from simdask.write.clusters import default_connector as _default_connector

    monkeypatch.setattr(connect_module, "connect", lambda **kw: kw)
    assert _default_connector(SMALL_RUN_ITEMS) == {"processes": False}
    assert _default_connector(SMALL_RUN_ITEMS + 1) == {"processes": True}
