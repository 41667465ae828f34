"""Worker processes started here never take the terminal's Ctrl-C (issue 30 item 11).

A Ctrl-C in a terminal sends SIGINT to the whole foreground process group: the ``simdask``
process and the worker processes of its LocalCluster. A worker still importing its modules
printed a ``KeyboardInterrupt`` traceback of its own (tens of lines), or, interrupted inside
Python's own start-up (the ``site`` module), ``Fatal Python error: init_import_site``, beside
simdask's one line. The ``simdask`` process alone decides what an interrupt means: it closes
its cluster, which ends its workers (a worker whose parent is gone exits by itself:
distributed's ``parent_alive_pipe``).

How a worker is kept out of it, from its first instruction to its end:

1. **Born with SIGINT blocked.** A process inherits the signal mask of the thread that
   started it, across ``fork`` and ``exec`` (multiprocessing's ``spawn`` runs
   ``_posixsubprocess.fork_exec``, which restores the calling thread's mask in the child).
   distributed's nanny starts a worker from a thread of its own (``AsyncProcess``), created
   by the cluster's event-loop thread, which inherits the mask of the thread that created it.
   :func:`worker_loop` starts that event-loop thread with SIGINT blocked (only its own
   thread: this process's main thread keeps taking Ctrl-C), so every worker the nannies
   start, restarts included, begins life with SIGINT blocked: a Ctrl-C during its interpreter
   start-up stays pending, never delivered.
2. **Then ignored, the pending one discarded.** The worker processes start with
   :func:`worker_environ`: the folder ``worker_site`` first on their ``PYTHONPATH``, whose
   ``sitecustomize`` sets SIGINT to ``SIG_IGN`` (which discards a pending SIGINT, POSIX) and
   only then unblocks it. The standard library's resource tracker does the same (block,
   spawn, ignore, unblock).

Why not a process group or a session of their own (``setsid``): multiprocessing's ``spawn``
offers no hook between ``fork`` and ``exec`` (its ``fork_exec`` call passes no ``setsid``,
no process group and no ``preexec_fn``), and a ``setpgid`` from the parent after the fork
races with the child's ``exec`` (it fails once the child has exec'd). Blocking the signal
needs no hook, and the workers stay in simdask's process group, so a ``kill`` of the group
still reaches them.

One trap: the resource tracker's start (``multiprocessing.resource_tracker.ensure_running``,
at the first ``spawn`` of a process) unblocks SIGINT in the thread that calls it, whatever was
blocked before: the first worker would be started unprotected. :func:`worker_loop` starts the
tracker first, from the calling thread.

A remote worker (``--ssh``, an existing scheduler) is not a child of this process and not in
the terminal's process group: a Ctrl-C never reaches it; simdask closes the SSH cluster (the
remote processes end with their SSH sessions) or leaves the existing cluster running.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing import resource_tracker
from typing import Any

from distributed.utils import LoopRunner

__all__ = ["WORKER_SITE", "sigint_blocked", "worker_environ", "worker_loop"]

#: the folder whose ``sitecustomize`` makes a worker process ignore SIGINT
WORKER_SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker_site")

_MASKS = hasattr(signal, "pthread_sigmask")  # not on Windows: nothing to block there


def worker_environ() -> dict[str, str]:
    """The environment variables a local worker process starts with (besides the others of
    distributed's ``pre-spawn-environ``) so that it ignores SIGINT from its first import:
    ``SIMDASK_WORKER_NO_CTRL_C=1`` and :data:`WORKER_SITE` before the current
    ``PYTHONPATH``."""
    path = os.environ.get("PYTHONPATH")
    return {
        "SIMDASK_WORKER_NO_CTRL_C": "1",
        "PYTHONPATH": WORKER_SITE + (os.pathsep + path if path else ""),
    }


@contextmanager
def sigint_blocked() -> Iterator[None]:
    """SIGINT blocked in the calling thread for the block (a SIGINT sent meanwhile stays
    pending for the process; another thread that does not block it takes it); the threads
    started inside, and the processes they start, inherit the blocked SIGINT. The previous
    mask is put back at the end."""
    if not _MASKS:
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextmanager
def worker_loop() -> Iterator[Any]:
    """A running Tornado ``IOLoop`` for a LocalCluster (its ``loop=``), in a thread of its own
    that blocks SIGINT, so that every worker process the cluster's nannies start is born with
    SIGINT blocked (see the module's text); stopped at the end of the block (after the
    cluster using it was closed). The calling thread's signal mask is unchanged."""
    if _MASKS:  # started here, not by the first worker's spawn (see the module's text)
        resource_tracker.ensure_running()
    runner = LoopRunner()
    with sigint_blocked():
        runner.start()  # the "IO loop" thread inherits the blocked SIGINT
    try:
        yield runner.loop
    finally:
        runner.stop()
