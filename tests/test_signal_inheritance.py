"""The processes a test starts see SIGINT at its default, even when pytest itself was started
with SIGINT ignored (``nohup pytest``, ``pytest &`` in a non-interactive shell; issue 34 item
8): else every test that interrupts a ``simdask`` process with SIGINT (a Ctrl-C, the
``sigint`` failpoint) would see the signal ignored. ``conftest.pytest_configure`` puts
Python's own handler back in the pytest process; a handled signal is reset to its default
across ``exec``, an ignored one would stay ignored.

Checked here in a child started as the tests start theirs, and, to show the check can fail, in
a pytest started under a parent that ignores SIGINT, with and without the conftest's hook.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

#: prints what a freshly started Python does on SIGINT
PROBE = "import signal; h = signal.getsignal(signal.SIGINT); print(h is signal.default_int_handler)"

ROOT = Path(__file__).resolve().parent.parent


def test_a_child_of_the_tests_takes_sigint():
    p = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    assert p.stdout.strip() == "True", p.stdout


def _pytest_with_sigint_ignored(tmp_path, hook: bool) -> subprocess.CompletedProcess:
    """Run this module's first test in a pytest started with SIGINT ignored (as ``nohup`` or
    ``&`` leave it), with (``hook``) or without the conftest's ``pytest_configure``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    if not hook:  # the same test with a conftest of its own that leaves SIGINT ignored
        (tmp_path / "conftest.py").write_text("")
        (tmp_path / "test_probe.py").write_text(
            "import subprocess, sys\n"
            f"PROBE = {PROBE!r}\n"
            "def test_probe():\n"
            "    p = subprocess.run([sys.executable, '-c', PROBE], capture_output=True, "
            "text=True, check=True)\n"
            "    assert p.stdout.strip() == 'True', p.stdout\n"
        )
        args += ["--rootdir", str(tmp_path), str(tmp_path / "test_probe.py")]
    else:
        args += [f"{__file__}::test_a_child_of_the_tests_takes_sigint"]
    return subprocess.run(
        args,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path if not hook else ROOT,
        timeout=300,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # as nohup/& leave it
    )


@pytest.mark.parametrize("hook", [True, False])
def test_under_a_parent_that_ignores_sigint(tmp_path, hook):
    p = _pytest_with_sigint_ignored(tmp_path, hook)
    assert (p.returncode == 0) == hook, p.stdout + p.stderr
