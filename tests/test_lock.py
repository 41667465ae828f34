"""The writer lock: exclusive (also within a process: it is taken once), gone with its holder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from simdask.errors import IndexLockedError
from simdask.storage.lock import WriterLock

pytestmark = pytest.mark.unit


TRY = (
    "import sys; from simdask.storage.lock import WriterLock\n"
    "from simdask.errors import IndexLockedError\n"
    "try:\n    WriterLock(sys.argv[1]).__enter__()\nexcept IndexLockedError as e:\n"
    "    print(e); sys.exit(3)\n"
)
HOLD = (
    "import sys, time; from simdask.storage.lock import WriterLock\n"
    "WriterLock(sys.argv[1]).__enter__()\nprint('held', flush=True)\ntime.sleep(60)\n"
)


def other_process_tries(path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", TRY, str(path)], capture_output=True, text=True)


@pytest.mark.system  # another process tries the lock
def test_exclusive_here_and_elsewhere(tmp_path):
    with WriterLock(tmp_path):
        # not re-entrant: the writer takes it once
        with pytest.raises(IndexLockedError, match=f"pid {os.getpid()}"), WriterLock(tmp_path):
            pass
        p = other_process_tries(tmp_path)  # the outer lock is still held
        assert p.returncode == 3 and "another update is running" in p.stdout
        assert f"pid {os.getpid()}" in p.stdout
    assert other_process_tries(tmp_path).returncode == 0


@pytest.mark.system
def test_killed_holder_releases_the_lock(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(IndexLockedError):
        WriterLock(tmp_path, wait=0.3).__enter__()
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    holder.stdout.close()  # filterwarnings = error: an unclosed pipe fails the test
    with WriterLock(tmp_path, wait=0):  # free at once: no waiting allowed
        pass
