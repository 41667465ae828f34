"""An I/O recorder for durability tests (tests/test_durability*.py): which inodes were
fsynced, and renamed into which directories, in order; and a check at each catalog COMMIT."""

from __future__ import annotations

import os
from pathlib import Path

from simdask.storage.catalog import Catalog

#: the folders of an index whose files the catalog names
_STORES = ("shards", "texts", "lsh")


def _inode(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


class SyncRecorder:
    """Wraps ``os.fsync`` and ``os.replace``: ``synced[inode]`` is the step of the inode's
    last fsync, ``renamed_into[dir inode]`` the step of the last rename into that directory."""

    def __init__(self, monkeypatch):
        self.step = 0
        self.synced: dict[tuple[int, int], int] = {}
        self.renamed_into: dict[tuple[int, int], int] = {}
        real_fsync, real_replace = os.fsync, os.replace

        def fsync(fd):
            real_fsync(fd)
            self.step += 1
            self.synced[_inode(os.fstat(fd))] = self.step

        def replace(src, dst, **kw):
            real_replace(src, dst, **kw)
            self.step += 1
            parent = Path(dst).parent if kw.get("dst_dir_fd") is None else None
            if parent is not None:
                self.renamed_into[_inode(os.stat(parent))] = self.step

        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "replace", replace)

    def unsynced(self, top: Path, files: list[Path]) -> list[str]:
        """What is not durable now of ``files`` (each under ``top``): one line per fault."""
        faults = []
        for f in files:
            at = self.synced.get(_inode(f.stat()))
            if at is None:
                faults.append(f"{f.relative_to(top)}: never fsynced")
                continue
            d = f.parent
            while True:
                ino = _inode(d.stat())
                need = max(at, self.renamed_into.get(ino, 0))
                if self.synced.get(ino, 0) <= need:
                    faults.append(f"{f.relative_to(top)}: directory {d} not fsynced after it")
                if d == top:
                    break
                d = d.parent
        return faults


def store_files(index_dir: Path) -> list[Path]:
    """The files under the index's stores, temporary (hidden) files left out."""
    out = []
    for store in _STORES:
        for here, dirs, files in os.walk(index_dir / store):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            out += [Path(here, f) for f in files if not f.startswith(".")]
    return out


def install_commit_checks(monkeypatch, recorder: SyncRecorder) -> dict:
    """Every catalog opened gets a trace callback that checks, at each COMMIT, that the files
    of its index are durable; returns ``{"commits": n, "files": n, "faults": [...]}``."""
    seen = {"commits": 0, "files": 0, "faults": []}
    real_init = Catalog.__init__

    def init(self, path, *, create=False):
        real_init(self, path, create=create)
        index_dir = Path(path).parent

        def trace(statement: str) -> None:
            if statement.strip().upper() != "COMMIT":
                return
            files = store_files(index_dir)
            seen["commits"] += 1
            seen["files"] += len(files)
            seen["faults"] += recorder.unsynced(index_dir, files)

        self.conn.set_trace_callback(trace)

    monkeypatch.setattr(Catalog, "__init__", init)
    return seen
