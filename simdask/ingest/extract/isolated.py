"""Extraction in a helper process of its own, bounded in memory and CPU (issue 30 item 5):
PDF (PDFium) and RTF (striprtf).

PDFium decompresses and parses a PDF's content streams in C++: a 1 MB PDF whose content
stream inflates to 400 MB took a process past 4 GB, which no check in Python can see coming
(filters chain, object streams hide page dictionaries, encryption hides stream data);
striprtf's regular expressions take quadratic time on some small files. So these formats are
read in a child process (``python -m simdask.ingest.extract.isolated_child``) whose address space
is limited to ``ExtractLimits.pdf_memory_bytes`` and whose CPU time per document to 1.25
times ``cpu_seconds`` (``RLIMIT_AS``, ``RLIMIT_CPU``; the PDF pages loop stops at ``cpu_seconds``
itself). A document that needs more kills the child, not the Dask worker or the web server:
the file is reported (``bomb`` or ``too_large`` for memory, ``too_complex`` for time), and
the next document starts a new child. One child per process serves one document at a time
(PDFium is not thread-safe anyway); it is started on first use (~0.3 s) and ends with its
parent (it exits when its input closes).

Protocol over the child's stdin/stdout: a request is one JSON line ``{"format", "name",
"limits", "size"}`` followed by ``size`` bytes of PDF; the answer one JSON line, ``{"ok": true,
"size"}`` followed by the UTF-8 text, or ``{"ok": false, "kind", "message"}``.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from simdask.errors import ExtractionError
from simdask.ingest.extract.extract_limits import ExtractLimits, kind_over

__all__ = ["Helper", "extract_isolated", "helper"]

_ROOT = str(Path(__file__).resolve().parents[3])  # the folder holding the simdask package
_TIME_SIGNALS = (signal.SIGXCPU,)
_WHAT = {
    "pdf": "a PDF that PDFium reads",
    "rtf": "an RTF document read",
    "doc": "an old Word document that antiword reads",
}


class Helper:
    """The parent's side: :meth:`extract` sends one PDF to the child and returns its text,
    starting (or restarting) the child as needed. Thread-safe (one request at a time)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.lock = threading.Lock()
        atexit.register(self.close)

    def _start(self) -> subprocess.Popen:
        path = os.environ.get("PYTHONPATH", "")
        env = {**os.environ, "PYTHONPATH": _ROOT + (os.pathsep + path if path else "")}
        return subprocess.Popen(
            [sys.executable, "-m", "simdask.ingest.extract.isolated_child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )

    def extract(self, fmt: str, data: bytes, name: str, limits: ExtractLimits) -> str:
        """The text of ``data`` as ``isolated_child.READERS[fmt]`` gives it, read in the
        child. Raises :class:`ExtractionError` as it does, and of kind ``bomb`` or
        ``too_large`` (the child ran out of ``limits.pdf_memory_bytes``) or ``too_complex``
        (out of CPU time)."""
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self.proc = self._start()
            proc, began = self.proc, time.monotonic()
            head = {"format": fmt, "name": name, "limits": limits.to_dict(), "size": len(data)}
            try:
                proc.stdin.write(json.dumps(head).encode() + b"\n")
                proc.stdin.write(data)
                proc.stdin.flush()
                answer = json.loads(proc.stdout.readline() or b"null")
                if answer is not None and answer["ok"]:
                    text = proc.stdout.read(answer["size"])
                    if len(text) == answer["size"]:
                        return text.decode("utf-8", "surrogatepass")
                    answer = None
            except (BrokenPipeError, ConnectionResetError, ValueError):
                answer = None
            except BaseException:  # interrupted mid-request: the child's input is out of step
                self.close(kill=True)
                raise
            if answer is None:  # the child died on this document
                raise self._died(proc, fmt, data, name, limits, time.monotonic() - began)
            raise ExtractionError(name, answer["kind"], answer["message"])

    def _died(
        self,
        proc: subprocess.Popen,
        fmt: str,
        data: bytes,
        name: str,
        limits: ExtractLimits,
        wall: float,
    ) -> ExtractionError:
        """The error for a document the child died reading (the child is reaped)."""
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        self.proc = None
        for pipe in (proc.stdin, proc.stdout):  # no descriptor left open by a dead child
            with contextlib.suppress(OSError):
                pipe.close()
        if -code in _TIME_SIGNALS:
            return ExtractionError(
                name,
                "too_complex",
                f"expected {_WHAT[fmt]} within {limits.cpu_seconds:g} s of CPU, "
                f"found it still working after {wall:.0f} s",
            )
        budget = limits.pdf_memory_bytes
        kind = kind_over(limits, budget, len(data))
        return ExtractionError(
            name,
            kind,
            f"expected {_WHAT[fmt]} within {budget / 2**20:,.0f} MiB of memory, "
            f"found this {len(data):,}-byte file needs more (the reader stopped with code "
            f"{code})"
            + (
                ": its content inflates far beyond the file (a decompression bomb)"
                if kind == "bomb"
                else ""
            ),
        )

    def close(self, kill: bool = False) -> None:
        """End the child (it exits when its input closes; ``kill``: at once)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if kill:
                proc.kill()
            proc.stdin.close()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        proc.stdout.close()


_HELPER: Helper | None = None
_HELPER_LOCK = threading.Lock()


def helper() -> Helper:
    """This process's :class:`Helper` (created on first use)."""
    global _HELPER
    with _HELPER_LOCK:
        if _HELPER is None:
            _HELPER = Helper()
        return _HELPER


def extract_isolated(fmt: str, data: bytes, name: str, limits: ExtractLimits) -> str:
    """The text of ``data`` read by ``isolated_child.READERS[fmt]`` in this process's
    helper (see the module docstring and :meth:`Helper.extract`)."""
    return helper().extract(fmt, data, name, limits)
