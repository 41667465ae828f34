"""Logging of the ``simdask`` command (called once, from :func:`simdask.cli.main.main`).

A default run prints only simdask's own lines: the loggers of Dask, distributed, tornado,
bokeh and asyncio (connection chatter, shutdown ``CommClosedError`` tracebacks, "Task
exception was never retrieved") and distributed's ``UserWarning``s (e.g. "Port 8787 is already
in use") are shown with ``--verbose`` only, or written to ``--log-file``.
"""

from __future__ import annotations

import logging
import os
import sys
import time
import warnings
from typing import TextIO

__all__ = ["THIRD_PARTY_LOGGERS", "configure_logging", "restore_stderr"]

#: the ``--log-file`` handlers and files of the current command (closed at its end)
_LOG_FILES: list[tuple[logging.Handler, TextIO]] = []

#: loggers that are not simdask's: quiet unless ``--verbose`` (or sent to ``--log-file``)
THIRD_PARTY_LOGGERS = ("distributed", "dask", "tornado", "bokeh", "asyncio", "fsspec")


class _Writer(logging.Handler):
    """Writes to ``stream`` (None: the current ``sys.stderr``); not a StreamHandler, so
    distributed's ``silence_logs`` (which sets the level of the StreamHandlers of its loggers)
    leaves it alone."""

    def __init__(self, stream=None) -> None:
        super().__init__()
        self.stream = stream

    def emit(self, record: logging.LogRecord) -> None:
        try:
            out = self.stream or sys.stderr
            out.write(self.format(record) + "\n")
            out.flush()
        except Exception:
            self.handleError(record)


class _Tee:
    """``sys.stderr`` for a command given ``--log-file``: every line simdask prints there
    (its messages, the run summary, warnings and the final error line) also goes to the log
    file, with a timestamp; progress bars (carriage returns, terminal escapes) do not."""

    def __init__(self, stream, log) -> None:
        self.stream = stream
        self.log = log
        self.pending = ""

    def write(self, text: str) -> int:
        n = self.stream.write(text)
        if "\r" in text or "\x1b" in text:  # a progress bar's redraw: the terminal's only
            return n
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            self.log.write(f"{stamp} {line}\n")
        if lines:
            self.log.flush()
        return n

    def flush(self) -> None:
        self.stream.flush()
        self.log.flush()

    def __getattr__(self, name: str):  # isatty, fileno, encoding: the terminal's
        return getattr(self.stream, name)


def _own_records(record: logging.LogRecord) -> bool:
    """True for the records of simdask's own loggers (and of ``__main__`` scripts)."""
    return record.name.split(".", 1)[0] in ("simdask", "__main__", "root")


def configure_logging(verbose: bool = False, log_file: str | None = None) -> None:
    """Configure logging for one command: simdask's warnings (INFO with ``verbose``) to stderr;
    the third-party loggers to ``log_file`` (INFO and up; appended) if given and to stderr with
    ``verbose``, else nowhere (a failure is reported by simdask's own message). The log file
    holds the logs of this process (client and, for a LocalCluster, the scheduler); the worker
    processes log to stderr with ``verbose`` only."""
    level = logging.INFO if verbose else logging.WARNING
    logging.basicConfig(level=level, stream=sys.stderr, force=True)
    # dask reads its logging config from the environment when it is first imported (after
    # this: the CLI imports dask lazily); an inherited DASK_LOGGING__DISTRIBUTED must not
    # decide what --verbose and --log-file show
    os.environ["DASK_LOGGING__DISTRIBUTED"] = "info" if (verbose or log_file) else "critical"
    if not verbose:  # also loggers named after a file path (distributed's ``log_errors``)
        for handler in logging.getLogger().handlers:
            handler.addFilter(_own_records)
    file_handler = None
    if log_file:
        log = open(log_file, "a", encoding="utf-8")  # noqa: SIM115 - closed by restore_stderr
        file_handler = _Writer(log)
        _LOG_FILES.append((file_handler, log))
        sys.stderr = _Tee(sys.stderr, log)  # simdask's own lines, the summary, errors
        file_handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
        )
        logging.getLogger().addHandler(file_handler)
    verbose_handler = _Writer()
    verbose_handler.setFormatter(logging.Formatter(logging.BASIC_FORMAT))
    for name in THIRD_PARTY_LOGGERS:
        logger = logging.getLogger(name)
        for h in list(logger.handlers):  # distributed installs its own stderr handler
            logger.removeHandler(h)
        logger.propagate = False
        # a handler that drops everything: without any handler in a logger's chain, Python's
        # last-resort handler prints WARNING and up to stderr, e.g. for child loggers that
        # distributed's config gives their own level ("distributed.client": warning)
        logger.addHandler(logging.NullHandler())
        if verbose:
            logger.addHandler(verbose_handler)
        if file_handler is not None:
            logger.addHandler(file_handler)
        logger.setLevel(logging.INFO if (verbose or file_handler) else logging.CRITICAL + 1)
    if not verbose:
        warnings.filterwarnings("ignore", module=r"distributed(\..*)?$")
        warnings.filterwarnings("ignore", module=r"dask(\..*)?$")


def restore_stderr() -> None:
    """The end of a command given ``--log-file``: ``sys.stderr`` is the terminal's again, the
    log file's handler is removed from the loggers and the file closed."""
    if isinstance(sys.stderr, _Tee):
        sys.stderr.flush()
        sys.stderr = sys.stderr.stream
    while _LOG_FILES:
        handler, log = _LOG_FILES.pop()
        for name in ("", *THIRD_PARTY_LOGGERS):
            logging.getLogger(name).removeHandler(handler)
        log.close()
