"""Checksums of a run's files hashed ahead of its commit (issue 32 item 1).

The commit records ``(name, size, xxh3)`` of every file the run wrote, read back on the
client's machine (:func:`~simdask.storage.checksums.run_files`). A build's shard files are
final once the merge has written them, and its text packs once the chunking has, while the
similarity stage still runs on the workers for minutes: :class:`DigestsAhead` hashes them
in a background thread of the client then, so that the commit, which no worker helps with,
only looks the digests up. A file whose size, modification time or inode changed after it
was hashed (or that could not be read then) is hashed again by the commit: what is recorded
is what the commit finds, as before.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from simdask.storage.checksums import digest, shard_files

__all__ = ["DigestsAhead", "run_paths"]


def _stamp(path: str) -> tuple[int, int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns, st.st_ino


def _hash(path: str) -> tuple[tuple[int, int, int], tuple[int, str]]:
    """The file's stamp (unchanged while it was read) and its digest."""
    before = _stamp(path)
    out = digest(path)
    if _stamp(path) != before:
        raise OSError(f"{path} changed while it was hashed")
    return before, out


class DigestsAhead:
    """Digests computed in background (daemon) threads, one thread per :meth:`add`;
    :meth:`digest` takes one from there when the file is as it was hashed."""

    def __init__(self) -> None:
        self._futures: dict[str, Future[tuple[tuple[int, int, int], tuple[int, str]]]] = {}
        self.hits = 0

    def add(self, paths: Iterable[str | os.PathLike[str]]) -> None:
        """Start hashing ``paths`` (those not added before), in order, in a new thread."""
        todo = []
        for p in map(str, paths):
            if p not in self._futures:
                self._futures[p] = Future()
                todo.append(p)
        if todo:
            threading.Thread(
                target=self._run, args=(todo,), name="simdask-digests-ahead", daemon=True
            ).start()

    def _run(self, paths: list[str]) -> None:
        for p in paths:
            fut = self._futures[p]
            try:
                fut.set_result(_hash(p))
            except Exception as e:  # reported by digest(): the commit hashes the file itself
                fut.set_exception(e)

    def digest(self, path: str | os.PathLike[str]) -> tuple[int, str]:
        """``(size, xxh3)`` of ``path`` as :func:`~simdask.storage.checksums.digest` gives
        it now: from the thread when it hashed this very file (waiting for it if it is
        still at work), else hashed here."""
        fut = self._futures.get(str(path))
        if fut is not None:
            try:
                stamp, out = fut.result()
                if _stamp(str(path)) == stamp:
                    self.hits += 1
                    return out
            except Exception:  # not hashed ahead (gone, changed, unreadable): hashed here
                pass
        return digest(path)


def run_paths(shard_root: Path | None, text_root: Path, changes: Any, run_id: int) -> list[Path]:
    """The local files run ``run_id`` wrote as ``changes`` (a
    :class:`~simdask.storage.commit.RunChanges`) records them: its segments under
    ``shard_root`` (None: a URL store, nothing to hash here) and its documents' text packs
    under ``text_root``; what the commit hashes (``Writer._checksums``), LSH files aside."""
    out = []
    if shard_root is not None:
        for shard, segs in sorted(changes.manifests.items()):
            d = shard_root / f"gen-{run_id:06d}" / f"shard-{shard:04d}"
            if any(g == run_id for g, _, _ in segs):
                out += [p for _, p in shard_files(d, run_id, shard)]
    packs = {d.text_pack for d in changes.upserted if d.text_pack is not None}
    return out + [text_root / p for p in sorted(packs)]
