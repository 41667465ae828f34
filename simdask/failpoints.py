"""Named failure points for crash tests (off unless ``SIMDASK_FAILPOINTS`` is set).

``SIMDASK_FAILPOINTS="merge:kill,commit:raise"`` makes the process that reaches point
``merge`` SIGKILL itself and point ``commit`` raise. Actions: ``kill`` (SIGKILL, as a power
cut or OOM killer would), ``raise`` (an exception), ``enospc`` (``OSError(ENOSPC)``, a full
disk), ``sigint`` (SIGINT to this process, as Ctrl-C would: a ``KeyboardInterrupt`` at this
point), ``slow`` (sleep 3 s and go on). ``name:wait:/path/release`` creates
``/path/release.reached`` and blocks until the file ``/path/release`` exists (a test holds a
run at a known point for as long as it needs, then releases it or kills the process); after
600 s it raises instead. ``name:mark:/path`` creates ``/path`` and goes on (a test learns that
a point was reached).
``name:kill-once:/path/marker`` fires only if the marker file does not exist yet and
creates it (to kill one worker once, so a retry can succeed). Worker processes inherit the
variable from the process that starts them.

``SIMDASK_FAILPOINTS_TRACE=/path/file`` appends the name of every point reached to that file
(one a line), so a test can check that a run reaches the points it enumerates, in order.
"""

from __future__ import annotations

import errno
import os
import signal
import threading
import time

__all__ = ["FailpointError", "hit"]


class FailpointError(RuntimeError):
    """Raised by a ``raise`` failpoint."""


def hit(name: str) -> None:
    """Fail here if the environment asks for it; otherwise do nothing."""
    trace = os.environ.get("SIMDASK_FAILPOINTS_TRACE")
    if trace:
        with open(trace, "a", encoding="utf-8") as f:
            f.write(name + "\n")
    spec = os.environ.get("SIMDASK_FAILPOINTS")
    if not spec:
        return
    for entry in spec.split(","):
        point, _, action = entry.partition(":")
        if point != name:
            continue
        if action.startswith("kill-once:"):
            marker = action.split(":", 1)[1]
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                continue
            os.close(fd)
            action = "kill"
        if action.startswith("mark:"):
            with open(action.split(":", 1)[1], "a"):
                pass
            continue
        if action.startswith("wait:"):
            _wait_for_release(name, action.split(":", 1)[1])
            continue
        if action == "slow":
            time.sleep(3)
            continue
        if action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif action == "sigint":  # to the main thread, so that it is raised right here
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            time.sleep(0.05)
        elif action == "raise":
            raise FailpointError(f"failpoint {name!r} raised")
        elif action == "enospc":
            raise OSError(errno.ENOSPC, f"No space left on device (failpoint {name!r})")


#: seconds a ``wait`` failpoint blocks at most before it raises
WAIT_LIMIT = 600.0


def _wait_for_release(name: str, release: str) -> None:
    """Mark ``release + '.reached'``, then poll for ``release`` (every 20 ms)."""
    with open(release + ".reached", "a"):
        pass
    deadline = time.monotonic() + WAIT_LIMIT
    while not os.path.exists(release):
        if time.monotonic() > deadline:
            raise FailpointError(f"failpoint {name!r} waited {WAIT_LIMIT:.0f} s for {release}")
        time.sleep(0.02)
