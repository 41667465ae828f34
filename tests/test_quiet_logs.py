"""What a default run prints (issue 12 item 13): only simdask's own lines. Dask's logs, the
shutdown ``CommClosedError`` tracebacks and asyncio's "Task exception was never retrieved" are
shown with ``--verbose`` or written to ``--log-file``, never by default (real subprocesses, a
real LocalCluster)."""

from __future__ import annotations

import os
import re

import pytest

from tests.helpers.cli import run
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.system

_NOISE = ("distributed", "INFO:", "Traceback", "asyncio", "CommClosedError", "UserWarning")


def _env():
    return {**os.environ, "SIMDASK_CONFIG": ""}


def _assert_own_lines_only(stderr: str) -> None:
    for word in _NOISE:
        assert word not in stderr, stderr


def test_demo_prints_only_simdask_lines(tmp_path):
    p = run(
        "demo",
        "--docs",
        40,
        "--words",
        120,
        "--workers",
        1,
        "--dashboard-address",
        ":0",
        "--quiet",
        env=_env(),
    )
    _assert_own_lines_only(p.stderr)
    lines = p.stderr.splitlines()
    assert lines[0] == "generating 40 documents of ~120 words ..."
    assert lines[1].startswith("run 1 committed generation 1: 40 added")
    assert "the 15 most similar directed pairs" in p.stdout or "most similar" in p.stdout


def test_update_quiet_verbose_and_log_file(tmp_path):
    src = write_txt(make_docs(12, seed=4), tmp_path / "src")
    common = ("--workers", 1, "--dashboard-address", ":0")
    p = run("update", tmp_path / "i", src, "--quiet", *common, env=_env())
    _assert_own_lines_only(p.stderr)
    # committed, time, data transfer, the similarity mode used and why, the tasks chosen and
    # the serial time, the files added (the first 5 and a count), then the heading of the
    # failed or too short files and the one too-short file make_docs plants
    lines = p.stderr.splitlines()
    assert len(lines) == 9, p.stderr
    assert lines[0].startswith("run 1 committed") and lines[2].startswith("data transfer")
    assert lines[3] == (
        "similarity mode exact (auto: heavy-only search 0 x 0 documents = 0 pairs <= budget "
        "5e+08); no heavy chunks"
    )
    assert lines[4].startswith("tasks: 1 workers, 1 threads; chunking 1 batches")
    assert lines[5].startswith("serial (no worker busy): scan ")
    assert lines[6].startswith("added (15): ") and lines[6].endswith(
        "and 10 more (simdask -v ... lists all)"
    )
    assert lines[7:] == [
        "failed or too short (1):",
        "  too_short: src/tiny.txt: 3 words: too few to be compared (fewer than one chunk)",
    ], p.stderr
    p = run("--verbose", "update", tmp_path / "i", src, "--quiet", *common, env=_env())
    # Dask's INFO lines, from this process ("INFO:distributed...") or from a worker process
    # ("... - distributed.nanny - INFO - ..."), depending on which logs first
    assert re.search(r"INFO:distributed\.|distributed\.\S+ - INFO - ", p.stderr), p.stderr
    log = tmp_path / "simdask.log"
    p = run("--log-file", log, "update", tmp_path / "i", src, "--quiet", *common, env=_env())
    _assert_own_lines_only(p.stderr)
    assert "INFO distributed.scheduler: " in log.read_text()
