"""Durable files: what an index's catalog names is on stable storage before the catalog's
COMMIT (issue 30 item 14; promised in docs/formats.md, "Durability").

Every writer of a file the catalog will point to (shard segments, text packs, LSH parts)
writes it under a temporary name, then calls :func:`publish`: each file of the new tree is
fsynced, then each of its directories, the tree is renamed into place and the directories
from its parent up to the store's root are fsynced, so that the name survives a power cut
too. The catalog (SQLite, ``synchronous=FULL``) is committed after the run's writers have
returned, so a committed catalog never names a file a power cut can lose. On a filesystem
where fsync is a no-op (tmpfs) this costs nothing and promises nothing more than the
filesystem does.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["fsync_dir", "fsync_file", "fsync_tree", "publish", "sync_dirs_up_to"]


def fsync_file(path: str | os.PathLike[str]) -> None:
    """Flush the data and metadata of the file at ``path`` to stable storage."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Flush the entries (names) of the directory at ``path`` to stable storage."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(root: str | os.PathLike[str]) -> None:
    """Fsync every file under ``root`` (a file or a directory), then every directory, deepest
    first, ``root`` last."""
    root = Path(root)
    if not root.is_dir():
        fsync_file(root)
        return
    for here, _dirs, files in os.walk(root, topdown=False):
        for name in files:
            fsync_file(os.path.join(here, name))
        fsync_dir(here)


def sync_dirs_up_to(path: str | os.PathLike[str], top: str | os.PathLike[str]) -> None:
    """Fsync the directory ``path`` and each of its parents up to and including ``top`` (the
    entries of directories made on the way, e.g. a new generation's folder, become durable).
    ``path`` outside ``top``: only ``path`` itself."""
    path, top = Path(path).resolve(), Path(top).resolve()
    fsync_dir(path)
    while path != top and top in path.parents:
        path = path.parent
        fsync_dir(path)


def publish(
    tmp: str | os.PathLike[str], final: str | os.PathLike[str], top: str | os.PathLike[str]
) -> None:
    """Make the file or directory tree ``tmp`` durable, rename it to ``final`` (replacing a
    file there; a directory there must have been removed) and make the new name durable:
    the directories from ``final``'s parent up to ``top`` (the store's root) are fsynced."""
    fsync_tree(tmp)
    os.replace(tmp, final)
    sync_dirs_up_to(Path(final).parent, top)
