"""Run by Python at start-up in the worker processes of a LocalCluster simdask starts (this
folder is put first on their ``PYTHONPATH``; see :mod:`simdask.cluster.children`): with
``SIMDASK_WORKER_NO_CTRL_C=1`` in the environment, SIGINT is ignored before the worker imports
anything, so a Ctrl-C in the terminal (sent to the whole process group) reaches only the
``simdask`` process, which closes its cluster; a worker never prints a ``KeyboardInterrupt``
traceback of its own. The worker was born with SIGINT blocked (the nanny's thread blocks it),
so a Ctrl-C during Python's start-up before this file is pending: ignoring SIGINT discards it,
and only then is SIGINT unblocked. Then the ``sitecustomize`` this one hides, if any, is run
as usual.
"""

import importlib.machinery
import importlib.util
import os
import signal
import sys

if os.environ.get("SIMDASK_WORKER_NO_CTRL_C") == "1":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # discards a pending SIGINT
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != _here]
)
if _spec is not None and _spec.loader is not None:  # the environment's own sitecustomize
    _spec.loader.exec_module(importlib.util.module_from_spec(_spec))
