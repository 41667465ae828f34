"""Waiting for a condition the test controls, with a deadline that fails loudly (no sleeps
that assume something has happened by then)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def wait_until(
    cond: Callable[[], object],
    what: str,
    timeout: float = 120.0,
    proc: subprocess.Popen | None = None,
) -> object:
    """Poll ``cond`` every 20 ms until it returns something true, and return that.

    Fails (AssertionError naming ``what``) after ``timeout`` seconds, or at once when ``proc``
    has exited meanwhile (with its output)."""
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"{what}: the process exited ({proc.returncode})\n{out}\n{err}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.02)


def held_at(point: str, release: Path) -> str:
    """The ``SIMDASK_FAILPOINTS`` entry that holds a process at ``point`` until ``release``
    exists (:mod:`simdask.failpoints`, action ``wait``)."""
    return f"{point}:wait:{release}"


def reached(release: Path) -> Path:
    """The marker a ``wait`` failpoint creates when a process reaches it."""
    return release.with_name(release.name + ".reached")
