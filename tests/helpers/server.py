"""``simdask serve`` as a real subprocess on a free port, for the web tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on at ``host`` now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def need_web() -> None:
    """Skip without the ``web`` extra (fail when CI=true: CI installs it)."""
    try:
        import jinja2  # noqa: F401
        import python_multipart  # noqa: F401
        import requests  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must install the web and test extras ({e.name} is missing)")
        pytest.skip(f"needs the web extra ({e.name})")


@contextmanager
def serving(index: Path, *args: str, host: str = "127.0.0.1", log: Path | None = None, env=None):
    """Run ``simdask serve INDEX --host HOST --port P ARGS`` until the block ends; yields
    ``(base_url, process)``. The server's stderr goes to ``log`` (read it on failure);
    ``env``: extra environment variables of the server."""
    need_web()
    port = free_port(host)
    log = log or index.parent / f"serve-{port}.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "simdask.cli",
                "serve",
                str(index),
                "--host",
                host,
                "--port",
                str(port),
                *args,
            ],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, **(env or {})},
        )
    try:
        deadline = time.time() + 240  # a shared, loaded machine starts it slowly
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"serve exited with {proc.returncode}: {log.read_text()}")
            with socket.socket() as s:
                if s.connect_ex((host, port)) == 0:
                    break
            if time.time() > deadline:
                raise TimeoutError(f"serve did not listen on {host}:{port}: {log.read_text()}")
            time.sleep(0.1)
        yield f"http://{host}:{port}", proc
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
