"""Real cluster processes for tests: `dask scheduler`, `dask worker`, an sshd on 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from distributed import Client

SSHD = "/usr/sbin/sshd"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before port {port} opened")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def start_scheduler(
    tmp: Path, port: int = 0, env: dict | None = None
) -> tuple[subprocess.Popen, str]:
    """A `dask scheduler` on 127.0.0.1; returns the process and its address."""
    sched_file = tmp / f"scheduler-{time.monotonic_ns()}.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--dashboard-address",
            ":0",
            "--scheduler-file",
            str(sched_file),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # stop() ends the process group
    )
    deadline = time.time() + 180  # a loaded machine (two cores, many test processes) is slow
    while time.time() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError, ValueError):  # not there, or not written whole yet
            return proc, json.loads(sched_file.read_text())["address"]
        time.sleep(0.1)
    stop([proc])
    raise RuntimeError(f"the dask scheduler did not start (exit status {proc.poll()})")


def start_worker(
    address: str, *extra: str, env: dict | None = None, cwd: str | Path | None = None
) -> subprocess.Popen:
    """A `dask worker` (with its nanny, which restarts a killed worker process), in the
    working directory ``cwd`` (None: this process's)."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_worker",
            address,
            "--nthreads",
            "1",
            "--nworkers",
            "1",
            "--no-dashboard",
            *extra,
        ],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # stop() ends the nanny and its worker process together
    )


def wait_for_workers(address: str, n: int) -> None:
    with Client(address, timeout=60) as c:
        c.wait_for_workers(n, timeout=180)  # a worker starts slowly on a loaded machine


def stop(procs: list[subprocess.Popen], grace: float = 5) -> None:
    """SIGTERM each process group, SIGKILL what is left after ``grace`` seconds."""
    for p in procs[::-1]:
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
    deadline = time.time() + grace
    for p in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=max(0.1, deadline - time.time()))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)  # also a worker process left by its nanny
        p.wait()


class Sshd:
    """An sshd of its own on 127.0.0.1: throwaway host and client keys, root login by key."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.port = free_port()
        self.host_key = tmp / "host_ed25519"
        self.client_key = tmp / "client_ed25519"
        for key in (self.host_key, self.client_key):
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True
            )
        (tmp / "authorized_keys").write_text(Path(f"{self.client_key}.pub").read_text())
        self.known_hosts = tmp / "known_hosts"
        host_pub = Path(f"{self.host_key}.pub").read_text().split()
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {host_pub[0]} {host_pub[1]}\n")
        config = tmp / "sshd_config"
        config.write_text(
            f"ListenAddress 127.0.0.1\nPort {self.port}\nHostKey {self.host_key}\n"
            f"AuthorizedKeysFile {tmp / 'authorized_keys'}\nPidFile {tmp / 'sshd.pid'}\n"
            "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
        )
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation directory
        self.log = open(tmp / "sshd.log", "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(config)], stdout=self.log, stderr=subprocess.STDOUT
        )
        try:
            wait_for_port(self.port, self.proc)
        except Exception as e:
            self.stop()
            raise RuntimeError(f"sshd did not start: {(tmp / 'sshd.log').read_text()}") from e

    def remote_python(self) -> Path:
        """A wrapper that runs this Python with this process's PYTHONPATH (SSH sessions do not
        inherit the environment): workers then import the simdask under test."""
        wrapper = self.tmp / "remote-python"
        pythonpath = os.environ.get("PYTHONPATH", "")
        wrapper.write_text(
            f"#!/bin/sh\nexport PYTHONPATH='{pythonpath}'\nexec '{sys.executable}' \"$@\"\n"
        )
        wrapper.chmod(0o755)
        return wrapper

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
        self.log.close()


def sshd_usable() -> bool:
    return Path(SSHD).exists() and shutil.which("ssh-keygen") is not None and os.geteuid() == 0
