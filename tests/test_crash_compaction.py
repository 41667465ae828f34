"""Crash safety of compaction with real processes: `simdask compact` killed or failing at
every stage leaves the old state (or, after its commit, the new one), and the next compaction
reaches the same state as an uninterrupted one."""

from __future__ import annotations

import os
import random
import shutil
import signal
import time

import pytest

from simdask import Index
from simdask.storage.segments import stored_segments
from tests.helpers.cli import start as cli
from tests.helpers.compare import assert_same_index, documents_by_key, postings_by_key
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.system

DOCS = make_docs(24, seed=5)


def run(*args, failpoints=None) -> tuple[int, str]:
    p = cli(*args, "--workers", 2, failpoints=failpoints)
    _, err = p.communicate(timeout=180)
    return p.returncode, err


def compact(index, failpoints=None):
    return run("compact", index, "--force", failpoints=failpoints)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """An index with a base and two delta segments per range, tombstones included, and a
    copy of it compacted without interruption."""
    tmp = tmp_path_factory.mktemp("crashc")
    src = write_txt(DOCS, tmp / "src")
    base = tmp / "base"
    keys = sorted(DOCS)
    assert run("update", base, src, "--quiet")[0] == 0
    (src / f"{keys[0]}.txt").unlink()
    (src / f"{keys[1]}.txt").write_text(DOCS[keys[6]][:900] + " and new words at the end")
    (src / "added.txt").write_text(DOCS[keys[4]] + " " + DOCS[keys[9]])
    assert run("update", base, src, "--delete-missing", "--quiet")[0] == 0
    (src / f"{keys[2]}.txt").unlink()
    (src / "later.txt").write_text(DOCS[keys[2]])  # a recycled doc ID
    assert run("update", base, src, "--delete-missing", "--quiet")[0] == 0
    with Index.open(base) as idx:
        assert {len(v) for v in idx.catalog.segments().values()} == {3}
    ref = tmp / "ref"
    shutil.copytree(base, ref)
    rc, err = compact(ref)
    assert rc == 0, err
    with Index.open(ref) as idx:
        assert {len(v) for v in idx.catalog.segments().values()} == {1}
    return tmp, base, ref


def _state(path):
    with Index.open(path) as idx:
        return (
            documents_by_key(idx),
            postings_by_key(idx),
            [r.to_dict() for r in idx.pairs()],
            idx.catalog.segments(),
        )


def _check_recovers(base, ref, work, committed: bool):
    before = _state(base)
    after = _state(work)
    if committed:
        assert after[:3] == before[:3] and {len(v) for v in after[3].values()} == {1}
    else:
        assert after == before, "the interrupted compaction changed the committed state"
    rc, err = compact(work)
    assert rc == 0, err
    rc, err = compact(work)  # nothing due: collects what the interrupted run left
    assert rc == 0 and "nothing to compact" in err, err
    with Index.open(work) as a, Index.open(ref) as b:
        assert_same_index(a, b)
        live = {(g, s) for s, segs in a.catalog.segments().items() for g, _, _ in segs}
        assert set(stored_segments(a.store)) == live
        assert not (a.path / "work").exists()


@pytest.mark.parametrize(
    "failpoint, committed",
    [
        ("compact_task:raise", False),
        ("shard_write:enospc", False),
        ("after_compaction:kill", False),
        ("before_compaction_commit:kill", False),
        ("after_compaction_commit:kill", True),
    ],
)
def test_compaction_killed_or_failing(setup, tmp_path, failpoint, committed):
    _tmp, base, ref = setup
    work = tmp_path / "work"
    shutil.copytree(base, work)
    rc, err = compact(work, failpoints=failpoint)
    assert rc != 0, err
    _check_recovers(base, ref, work, committed)


def test_compaction_worker_killed_once_completes(setup, tmp_path):
    _tmp, base, ref = setup
    work = tmp_path / "work"
    shutil.copytree(base, work)
    marker = tmp_path / "killed"
    rc, err = compact(work, failpoints=f"compact_task:kill-once:{marker}")
    assert marker.exists(), "the failpoint never fired"
    assert rc == 0, err  # the task was retried on another worker
    with Index.open(work) as a, Index.open(ref) as b:
        assert_same_index(a, b)


def test_compaction_whose_workers_keep_dying_is_one_line_and_exit_4(setup, tmp_path):
    """Issue 30 item 11: it ended in a FutureCancelledError traceback (exit 1) where an update
    says in one line that workers died (exit 4)."""
    _tmp, base, ref = setup
    work = tmp_path / "work"
    shutil.copytree(base, work)
    rc, err = compact(work, failpoints="compact_task:kill")
    assert rc == 4 and "Traceback" not in err, err
    line = [x for x in err.splitlines() if x.startswith("simdask: error:")]
    assert len(line) == 1 and "died during the run" in line[0], err
    assert line[0].endswith("the index is unchanged"), err
    _check_recovers(base, ref, work, committed=False)


@pytest.mark.parametrize("seed", [1, 2])
def test_compaction_killed_at_random_moment(setup, tmp_path, seed):
    _tmp, base, ref = setup
    delay = random.Random(seed).uniform(0.5, 3.0)
    for attempt in range(5):
        work = tmp_path / f"work{attempt}"
        shutil.copytree(base, work)
        p = cli("compact", work, "--force", "--workers", 2)
        time.sleep(delay)
        running = p.poll() is None  # the kill must hit a running compaction
        if running:
            os.killpg(p.pid, signal.SIGKILL)
        p.communicate(timeout=60)
        if running:
            break
        delay /= 2  # it ended before the kill: try again earlier on a fresh copy
    assert running, f"the compaction always ended before the kill (last delay {delay:.2f} s)"
    with Index.open(work) as idx:
        committed = {len(v) for v in idx.catalog.segments().values()} == {1}
    _check_recovers(base, ref, work, committed)
