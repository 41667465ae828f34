"""Run as ``python -m tests.helpers.sigmask_probe worker_loop|plain`` (a fresh interpreter,
so that multiprocessing's resource tracker is not running yet): start one process as
distributed's nanny starts a worker (an ``AsyncProcess`` created in a coroutine on the
cluster's event loop: :func:`simdask.cluster.children.worker_loop`'s, or a plain
``LoopRunner``'s) and print the signals blocked in that process as it was born (read from
``/proc/PID/status`` while it sleeps; nothing in it changes its mask: no
``SIMDASK_WORKER_NO_CTRL_C``), then the signals blocked in this process's main thread."""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager

from distributed.process import AsyncProcess
from distributed.utils import LoopRunner, sync

from simdask.cluster.children import worker_loop


def blocked(pid: int | str) -> list[int]:
    """The signal numbers blocked in ``pid``'s main thread (``SigBlk`` of its status)."""
    with open(f"/proc/{pid}/status") as f:
        mask = int(next(line.split()[1] for line in f if line.startswith("SigBlk")), 16)
    return [s for s in range(1, 65) if mask >> (s - 1) & 1]


@contextmanager
def plain_loop():
    """A running event loop in a thread of its own started as distributed starts one."""
    runner = LoopRunner()
    runner.start()
    try:
        yield runner.loop
    finally:
        runner.stop()


async def _spawn() -> AsyncProcess:
    proc = AsyncProcess(target=time.sleep, args=(60,), name="probe")
    await proc.start()
    return proc


def main(kind: str) -> None:
    """Print the signals the probe child was born with and those of the main thread."""
    os.environ.pop("SIMDASK_WORKER_NO_CTRL_C", None)
    with worker_loop() if kind == "worker_loop" else plain_loop() as loop:
        proc = sync(loop, _spawn)
        try:
            print("child", *blocked(proc.pid))
        finally:
            sync(loop, proc.kill)
            sync(loop, proc.join)
    print("main", *blocked("self"))


if __name__ == "__main__":
    main(sys.argv[1])
