"""One writer at a time: an exclusive ``fcntl`` lock on ``INDEX/writer.lock``.

The lock belongs to the process holding the open file, so a killed writer releases it at
once; readers never take it (they read the last committed state from SQLite).
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from simdask import failpoints
from simdask.errors import IndexLockedError

__all__ = ["WriterLock"]


class WriterLock:
    """``with WriterLock(index_dir, wait=seconds):`` — wait up to ``wait`` s (0: fail at once).

    Not re-entrant: the writer (:class:`simdask.writer.Writer`) takes it once per write, and a
    second attempt — from another process or from this one — waits or fails like any other.
    """

    def __init__(self, index_dir: str | os.PathLike[str], wait: float = 0.0):
        self.path = (Path(index_dir) / "writer.lock").resolve()
        self.wait = wait
        self._fd: int | None = None

    def __enter__(self) -> WriterLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                failpoints.hit("lock_busy")
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "unknown"
                    os.close(fd)
                    raise IndexLockedError(
                        f"another update is running on {self.path.parent} ({holder}); "
                        f"waited {self.wait:g} s (use --wait SECONDS to wait longer)"
                    ) from None
                time.sleep(0.2)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} since {time.strftime('%Y-%m-%d %H:%M:%S')}".encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
