"""Run the ``simdask`` command as a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys


def run(*args, check=True, timeout=300, **kwargs) -> subprocess.CompletedProcess:
    """``python -m simdask.cli ARGS``; raises AssertionError with its output if ``check`` and
    the exit status is not 0."""
    proc = subprocess.run(
        [sys.executable, "-m", "simdask.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def start(
    *args, failpoints: str | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen:
    """Start ``python -m simdask.cli ARGS`` without waiting, in its own session (so that a
    kill of the process group reaches the driver and its workers), stdout and stderr piped
    as text. ``failpoints`` sets ``SIMDASK_FAILPOINTS`` (an inherited value is dropped);
    ``env`` adds or overrides further variables."""
    full = dict(os.environ)
    full.pop("SIMDASK_FAILPOINTS", None)
    if failpoints:
        full["SIMDASK_FAILPOINTS"] = failpoints
    full.update(env or {})
    return subprocess.Popen(
        [sys.executable, "-m", "simdask.cli", *map(str, args)],
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
