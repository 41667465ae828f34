"""Worker processes started here do not take the terminal's Ctrl-C (issue 30 item 11).

A Ctrl-C in a terminal sends SIGINT to the whole foreground process group: the ``simdask``
process and the worker processes of its LocalCluster. A worker still importing its modules
printed a ``KeyboardInterrupt`` traceback of its own (tens of lines) beside simdask's one line.
The ``simdask`` process alone decides what an interrupt means: it closes its cluster, which
ends its workers (a worker whose parent is gone exits by itself: distributed's
``parent_alive_pipe``).

A signal mask cannot carry this (multiprocessing's ``spawn`` starts a worker with none
blocked), nor can ignoring SIGINT here while the cluster starts (a Ctrl-C then would be lost);
an ignored signal stays ignored across ``exec`` only when it is ignored at start-up. So the
worker processes start with :data:`WORKER_ENVIRON`: the folder ``worker_site`` first on
their ``PYTHONPATH``, whose ``sitecustomize`` ignores SIGINT before anything else is imported
(and then runs the environment's own ``sitecustomize``, if any).
"""

from __future__ import annotations

import os

__all__ = ["WORKER_SITE", "worker_environ"]

#: the folder whose ``sitecustomize`` makes a worker process ignore SIGINT
WORKER_SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker_site")


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
