"""Run the ``simdask`` command as a real subprocess."""

from __future__ import annotations

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
