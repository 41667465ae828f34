"""Workers of an existing cluster that cannot run simdask's tasks (issue 30 item 11), with a
real ``dask scheduler`` and ``dask worker`` started here: a worker without simdask was a
62-line traceback, a worker of another dask version was silent, a scheduler without workers
was reported as a worker "killed from outside", and ``cluster --check`` exited 0 for the first
two. Now: one line each, exit status 4 (a warning for the versions), ``cluster --check``
non-zero, and no index folder left behind by a first run that could not start.

A worker "without simdask" runs with a ``sitecustomize`` that makes ``import simdask`` fail
(simdask is installed in this environment); a worker "of another dask" with one that makes
``importlib.metadata`` report dask 2000.1.0, which is where distributed reads versions from.
"""

from __future__ import annotations

import os

import pytest

from tests.helpers.cli import run
from tests.helpers.cluster import start_scheduler, start_worker, stop, wait_for_workers
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.system

_NO_SIMDASK = """\
import sys


class _Hide:
    def find_spec(self, name, path=None, target=None):
        if name == "simdask" or name.startswith("simdask."):
            raise ModuleNotFoundError(f"No module named {name!r}")


sys.meta_path.insert(0, _Hide())
"""

_OTHER_DASK = """\
import importlib.metadata

_version = importlib.metadata.version


def version(name):
    return "2000.1.0" if name == "dask" else _version(name)


importlib.metadata.version = version
"""


def _worker_env(tmp_path, site: str) -> dict[str, str]:
    folder = tmp_path / "worker-site"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(site)
    return {**os.environ, "PYTHONPATH": str(folder)}


@pytest.fixture
def scheduler(tmp_path):
    proc, address = start_scheduler(tmp_path)
    procs = [proc]
    yield address, procs
    stop(procs)


def _one_error_line(p) -> str:
    lines = p.stderr.splitlines()
    assert "Traceback" not in p.stderr and len(lines) == 1, p.stderr
    return lines[0]


def test_a_worker_without_simdask_is_one_line_naming_it(scheduler, tmp_path):
    address, procs = scheduler
    procs.append(start_worker(address, env=_worker_env(tmp_path, _NO_SIMDASK)))
    wait_for_workers(address, 1)
    src = write_txt(make_docs(8, seed=3), tmp_path / "src")
    index = tmp_path / "idx"
    p = run("update", index, src, "--scheduler", address, "--quiet", check=False)
    line = _one_error_line(p)
    assert p.returncode == 4, p.stderr
    assert line.startswith("simdask: error: the Dask worker tcp://127.0.0.1:"), line
    assert "cannot import simdask (ModuleNotFoundError" in line and "install simdask" in line
    assert not index.exists()  # a first run that could not start leaves nothing
    p = run("cluster", "--scheduler", address, "--check", check=False)
    assert p.returncode == 4 and "Traceback" not in p.stderr, p.stderr
    assert "simdask: problem: simdask differs: cannot import" in p.stderr, p.stderr


def test_a_worker_with_another_dask_version_is_a_warning_and_a_check_problem(scheduler, tmp_path):
    address, procs = scheduler
    procs.append(start_worker(address, env=_worker_env(tmp_path, _OTHER_DASK)))
    wait_for_workers(address, 1)
    src = write_txt(make_docs(8, seed=4), tmp_path / "src")
    p = run("update", tmp_path / "idx", src, "--scheduler", address, "--quiet", check=False)
    warned = [line for line in p.stderr.splitlines() if "other versions" in line]
    assert len(warned) == 1 and "dask 2000.1.0 on tcp://127.0.0.1:" in warned[0], p.stderr
    assert "Traceback" not in p.stderr
    p = run("cluster", "--scheduler", address, "--check", check=False)
    assert p.returncode == 4 and "simdask: problem: dask differs: 2000.1.0 on" in p.stderr


def test_a_scheduler_without_workers_says_so(scheduler, tmp_path):
    address, _ = scheduler
    src = write_txt(make_docs(8, seed=5), tmp_path / "src")
    index = tmp_path / "idx"
    p = run(
        "update", index, src, "--scheduler", address, "--connect-timeout", 2, "--quiet",
        check=False,
    )  # fmt: skip
    line = _one_error_line(p)
    assert p.returncode == 4, p.stderr
    assert f"the Dask scheduler at {address} has no workers" in line, line
    assert "killed" not in line
    assert not index.exists()
    p = run("cluster", "--scheduler", address, "--check", "--connect-timeout", 2, check=False)
    assert p.returncode == 4 and "simdask: problem: the cluster has no workers" in p.stderr
