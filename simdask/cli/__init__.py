"""The ``simdask`` command: argument parsing and printing only; the work is in the API.

:func:`main` is the command's entry point (the ``simdask`` script, ``python -m simdask.cli``).
Importing this package imports nothing heavy; :func:`main` imports the commands (numpy, the
parser and the command modules: a large part of a short command's time) only once it can turn
a Ctrl-C into the command's one line ``simdask: interrupted`` and exit status 130, whenever it
comes: during those imports, during the run (:func:`simdask.cli.main.main`), or while the
process shuts down afterwards (distributed's exit handlers, threads being joined) — issue 30
item 11. A Ctrl-C before this code runs at all (Python's own start-up, its first tens of
milliseconds) is Python's.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from contextlib import suppress
from importlib import import_module
from os import _exit  # public, documented: end the process without Python's shutdown

from simdask.failpoints import hit

__all__ = ["EXIT_INTERRUPTED", "main"]

#: the exit status of an interrupted command (as :data:`simdask.cli._common.EXIT_INTERRUPTED`)
EXIT_INTERRUPTED = 130


def _say_interrupted() -> int:
    print("simdask: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def _exit_at_once(signum, frame) -> None:
    """SIGINT once the command has returned: the process only shuts down (its output is
    flushed), so stop at once with the one line instead of a traceback from an exit handler
    (said once: not again after an interrupted command)."""
    if _returned[0] != EXIT_INTERRUPTED:
        os.write(2, b"simdask: interrupted\n")
    _exit(EXIT_INTERRUPTED)


#: the status :func:`main` returned as the command (None: it has not, or not as the command)
_returned: list[int | None] = [None]


def _ignore_late() -> None:
    """The last exit handler (registered when this package is imported, before distributed
    registers its own: they run first). From here on Python tears the process down and puts
    the default disposition back (a Ctrl-C then killed it silently, status -2): an interrupt
    now is ignored. An interrupted command ends here with status 130: CPython remembers a
    ``KeyboardInterrupt`` that passed through its own machinery even when the program caught
    it (seen with a Ctrl-C while modules were imported) and then ends the process by killing
    it with SIGINT (status -2, no message) whatever status the program exits with; everything
    that needs an orderly exit (the other exit handlers, joined threads, flushed output) has
    run by now."""
    if _returned[0] is None:
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if _returned[0] == EXIT_INTERRUPTED:
        _flush()
        if "logging" in sys.modules:
            sys.modules["logging"].shutdown()
        _exit(EXIT_INTERRUPTED)


atexit.register(_ignore_late)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed pipe or stream: nothing more to say
            stream.flush()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``simdask`` command; returns the exit status (see
    :mod:`simdask.cli.main`), 130 with one line when interrupted at any moment. Called as the
    command (``argv`` None: the arguments of the process), it also guards the process's
    shutdown after it returns (:func:`_exit_at_once`, :func:`_ignore_late`)."""
    if argv is None:
        _quiet_resource_tracker()
    try:
        # a test learns that the interrupt guard is in place; inside it, so that a Ctrl-C
        # during the failure point's own work (it creates a file) is handled like any other
        hit("cli_start")
        # imported here, under the interrupt guard, not at the top: numpy and every command
        # module take a noticeable part of a short command (a Ctrl-C then was a traceback)
        command = import_module("simdask.cli.main")
        globals()["main"] = _entry  # importing the module ``main`` rebound this package's name
        status = command.main(argv)
        _guard_shutdown(argv, status)
    except KeyboardInterrupt:
        _guard_shutdown(argv, EXIT_INTERRUPTED)
        status = _say_interrupted()
    _flush()
    if _returned[0] == EXIT_INTERRUPTED:
        _silence_stderr()
    return status


#: the warnings filter (``-W``) that multiprocessing hands to the resource tracker it starts
RESOURCE_TRACKER_QUIET = "ignore:resource_tracker:UserWarning"


def _quiet_resource_tracker() -> None:
    """The resource tracker process that multiprocessing starts beside a local cluster keeps
    the command's stderr and outlives it. When a Ctrl-C cuts a worker's start short (the
    nanny's queue is made while the command already shuts down), the tracker removes the
    queue's leftover semaphore, as is its job, and then warned about it on the terminal after
    ``simdask: interrupted`` (``There appear to be 1 leaked semaphore objects``). The tracker
    takes this process's ``-W`` options (``sys.warnoptions``, read when it starts): it is told
    to keep those warnings to itself. This process's own warnings are not changed."""
    if RESOURCE_TRACKER_QUIET not in sys.warnoptions:
        sys.warnoptions.append(RESOURCE_TRACKER_QUIET)


def _silence_stderr() -> None:
    """After ``simdask: interrupted``, the process's shutdown says nothing more: a cluster
    whose start was interrupted is closed by distributed's exit handler with a traceback of
    its own (``AssertionError: Status.init``), which is not the user's concern."""
    with suppress(OSError):  # no /dev/null: the shutdown may then print
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)


def _guard_shutdown(argv: list[str] | None, status: int) -> None:
    """From now on a Ctrl-C stops the process at once with the one line, and the process ends
    with ``status`` (:func:`_ignore_late`); only for the command itself (``argv`` None), and
    only when SIGINT is not ignored (``nohup``, ``cmd &``)."""
    if argv is None and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _exit_at_once)
        _returned[0] = status


_entry = main
