"""Crash safety with real processes: the driver or a worker killed, exceptions, a full disk.

Every interrupted run must leave the index opening at the previous generation with the same
answers, and the next run must reach the same state as an uninterrupted one.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time

import pytest

from simdask import Index
from tests.helpers.cli import start as cli
from tests.helpers.compare import assert_same_index, documents_by_key, postings_by_key
from tests.helpers.corpus import make_docs, write_txt
from tests.helpers.waiting import held_at, reached, wait_until

pytestmark = pytest.mark.system


DOCS = make_docs(30, seed=8)


def update(index, src, failpoints=None) -> tuple[int, str]:
    p = cli(
        "update",
        index,
        src,
        "--delete-missing",
        "--workers",
        2,
        "--quiet",
        "--batch-docs",
        8,
        failpoints=failpoints,
    )
    _, err = p.communicate(timeout=180)
    return p.returncode, err


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A committed index of version 1 of a folder, and version 2 of the folder (changed in
    place: a folder is one source, its documents keyed by its name and their paths)."""
    tmp = tmp_path_factory.mktemp("crash")
    v1 = write_txt(DOCS, tmp / "docs")
    base = tmp / "base"
    rc, err = update(base, v1)
    assert rc == 0, err
    v2 = v1
    keys = sorted(DOCS)
    (v2 / f"{keys[0]}.txt").unlink()
    (v2 / f"{keys[1]}.txt").write_text(DOCS[keys[7]][:900] + " and some new words at the end")
    (v2 / "added.txt").write_text(DOCS[keys[4]] + " " + DOCS[keys[9]])
    (v2 / f"{keys[2]}.txt").unlink()
    (v2 / "later.txt").write_text(DOCS[keys[2]])  # same text under a new key: a recycled ID
    ref = tmp / "ref"
    shutil.copytree(base, ref)
    rc, err = update(ref, v2)
    assert rc == 0, err
    return tmp, base, v2, ref


def _state(path):
    with Index.open(path) as idx:
        return documents_by_key(idx), postings_by_key(idx), [r.to_dict() for r in idx.pairs()]


def _check_recovers(tmp, base, v2, ref, work, expect_committed=False):
    if expect_committed:
        with Index.open(work) as a, Index.open(ref) as b:
            assert_same_index(a, b)
    else:
        assert _state(work) == _state(base), "the interrupted run changed the committed state"
    rc, err = update(work, v2)
    assert rc == 0, err
    with Index.open(work) as a, Index.open(ref) as b:
        assert_same_index(a, b)
        live = set(a.catalog.shard_generations().values())
        # only the generation of the base index (current before the commit) is kept, for readers
        assert set(a.store.generations()) - live <= {1}
        assert not (a.path / "work").exists()
        assert set(a.texts.packs()) == {d.text_pack for d in a.catalog.documents()}


@pytest.mark.parametrize(
    "failpoint, committed",
    [
        ("after_chunk:kill", False),
        ("after_merge:kill", False),
        ("after_similarity:kill", False),
        ("before_commit:kill", False),
        ("after_commit:kill", True),
        ("chunk_task:raise", False),
        ("merge_task:raise", False),
        ("shard_write:enospc", False),
    ],
)
def test_driver_killed_or_stage_failing(setup, tmp_path, failpoint, committed):
    tmp, base, v2, ref = setup
    work = tmp_path / "work"
    shutil.copytree(base, work)
    rc, err = update(work, v2, failpoints=failpoint)
    assert rc != 0, err
    if failpoint.endswith(":raise") or failpoint.endswith(":enospc"):
        assert (rc == 1 and "simdask: error" in err) or "Error" in err
    _check_recovers(tmp, base, v2, ref, work, expect_committed=committed)


@pytest.mark.parametrize("task", ["chunk_task", "merge_task", "rows_task"])
def test_worker_killed_once_run_completes(setup, tmp_path, task):
    _tmp, base, v2, ref = setup
    work = tmp_path / "work"
    shutil.copytree(base, work)
    marker = tmp_path / "killed"
    rc, err = update(work, v2, failpoints=f"{task}:kill-once:{marker}")
    assert marker.exists(), "the failpoint never fired"
    assert rc == 0, err  # the task was retried on another worker
    with Index.open(work) as a, Index.open(ref) as b:
        assert_same_index(a, b)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_driver_and_workers_killed_at_random_moment(setup, tmp_path, seed):
    """Killed at a random moment of the run, which cannot pass its end: the run is held after
    its commit until released (never), so the kill always lands on a running process."""
    tmp, base, v2, ref = setup
    work = tmp_path / "work"
    shutil.copytree(base, work)
    gate = tmp_path / "never"
    p = cli(
        "update", work, v2, "--delete-missing", "--workers", 2, "--quiet", "--batch-docs", 8,
        failpoints=held_at("after_commit", gate),
    )  # fmt: skip
    time.sleep(random.Random(seed).uniform(0.5, 3.5))
    assert p.poll() is None, p.communicate()
    os.killpg(p.pid, signal.SIGKILL)
    p.communicate(timeout=60)
    with Index.open(work) as idx:
        committed = idx.catalog.last_run()["generation"] != 1
    _check_recovers(tmp, base, v2, ref, work, expect_committed=committed)


def _mount_tmpfs(path, size: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
    )
    return r.returncode == 0


def test_full_disk(setup, tmp_path):
    """A size-limited tmpfs when this process may mount one; else an injected ENOSPC."""
    tmp, base, v2, ref = setup
    mnt = tmp_path / "small"
    # tmpfs charges whole pages: room for the index plus ~256 KiB, less than a new generation
    pages = sum(-(-f.stat().st_size // 4096) for f in base.rglob("*") if f.is_file())
    dirs = sum(1 for d in base.rglob("*") if d.is_dir())
    if not _mount_tmpfs(mnt, f"{(pages + dirs) * 4 + 256}k"):
        if os.environ.get("CI") == "true" and os.geteuid() == 0:
            pytest.fail("CI runs as root: mounting a tmpfs must work")
        work = tmp_path / "work"
        shutil.copytree(base, work)
        rc, err = update(work, v2, failpoints="shard_write:enospc")
        assert rc == 1 and err.startswith("simdask: error: disk full writing"), err
        _check_recovers(tmp, base, v2, ref, work)
        return
    try:
        work = mnt / "index"
        shutil.copytree(base, work)
        big = tmp_path / "v3"
        shutil.copytree(v2, big)
        for i in range(40):  # far more new text than the disk has room for
            (big / f"extra{i}.txt").write_text(DOCS[sorted(DOCS)[i % 30]] + f" extra {i}")
        rc, err = update(work, big)
        # one clear line naming the path and the free space, no traceback (issue 12 item 11)
        assert rc == 1 and err.count("\n") == 1, err
        assert err.startswith(f"simdask: error: disk full writing {work}"), err
        assert "free on the filesystem of" in err and "needs" in err
        assert "the index is unchanged (generation 1)" in err
        assert _state(work) == _state(base)
        subprocess.run(["mount", "-o", "remount,size=64m", str(mnt)], check=True)
        _check_recovers(tmp, base, v2, ref, work)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_two_concurrent_updates_and_a_reader(setup, tmp_path):
    """One writer at a time: the second fails with a clear message, or waits with --wait;
    a reader sees the last committed state throughout."""
    _tmp, base, v2, ref = setup
    work = tmp_path / "work"
    shutil.copytree(base, work)
    before = _state(work)
    gate = tmp_path / "release"
    first = cli(
        "update", work, v2, "--delete-missing", "--workers", 2, "--quiet",
        failpoints=held_at("after_merge", gate),
    )  # fmt: skip
    # the first run holds the lock, and is held after its merge until the test releases it
    wait_until(reached(gate).exists, "the first run reaches its merge", proc=first)
    second = cli("update", work, v2, "--delete-missing", "--workers", 1, "--quiet")
    _, err2 = second.communicate(timeout=120)
    assert second.returncode == 1 and "another update is running" in err2
    assert _state(work) == before  # a reader sees the committed state during the update
    busy = tmp_path / "busy"
    waiting = cli(
        "update", work, v2, "--delete-missing", "--workers", 1, "--quiet", "--wait", 120,
        failpoints=f"lock_busy:mark:{busy}",
    )  # fmt: skip
    wait_until(busy.exists, "the third run finds the lock taken", proc=waiting)
    gate.touch()
    _, err1 = first.communicate(timeout=180)
    assert first.returncode == 0, err1
    _, errw = waiting.communicate(timeout=180)
    assert waiting.returncode == 0, errw  # waited for the lock, then found nothing to do
    assert "0 added, 0 modified, 0 deleted" in errw
    with Index.open(work) as a, Index.open(ref) as b:
        assert_same_index(a, b)
