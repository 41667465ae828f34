"""Creating an index: its catalog, written under a temporary name and linked into place, in
a new or empty folder only (simdask never turns a user's folder into an index)."""

from __future__ import annotations

import os
import re
import shutil
import uuid
from pathlib import Path

from simdask.config import IndexConfig
from simdask.errors import ConfigError, IndexExistsError, NotAnIndexError
from simdask.storage.catalog import Catalog
from simdask.storage.durable import fsync_file, sync_dirs_up_to
from simdask.storage.key_migration import set_current_scheme
from simdask.storage.remote import RemoteStore, is_url

__all__ = [
    "CATALOG_NAME",
    "RANGES_FOR_CLUSTER",
    "STARTING_RANGES",
    "create_catalog",
    "discard_uncommitted",
    "ranges_open",
]

CATALOG_NAME = "catalog.sqlite"
#: catalog metadata of an index created without a range count (``IndexConfig.shards`` None):
#: its first run chooses one for its cluster (:func:`ranges_open`)
RANGES_FOR_CLUSTER = "ranges_for_cluster"
#: the range count stored until then (what a reader of the empty index sees)
STARTING_RANGES = 16

# what simdask itself puts in an index folder before its catalog exists, and in work/
_OWN_BEFORE_CATALOG = re.compile(r"writer\.lock|\.catalog-[0-9a-f]{12}\.sqlite(-wal|-shm)?")


def create_catalog(path: Path, config: IndexConfig, shard_store: str | None = None) -> Catalog:
    """Create the catalog of a new index in ``path`` (a new or empty folder) and return it.

    The catalog is written under a temporary name and linked into place, so an interrupted
    creation leaves no half-made index. ``config.shards`` None: :data:`STARTING_RANGES` is
    stored, marked as open for the first run to choose (:func:`ranges_open`). Raises
    :class:`IndexExistsError` if there is an index at ``path`` and :class:`NotAnIndexError`
    if ``path`` is a file or a folder holding anything else (simdask never turns a user's
    folder into an index).
    """
    final = path / CATALOG_NAME
    if final.exists():
        raise IndexExistsError(f"an index already exists at {path}")
    if shard_store is not None and not is_url(shard_store):
        raise ConfigError(
            f"shard store must be an fsspec URL such as s3://bucket/prefix or "
            f"file:///path; found {shard_store!r}"
        )
    if shard_store is not None:
        RemoteStore(shard_store)  # an unknown protocol or missing library fails here
    _check_new_folder(path)
    existing = next(p for p in (path, *path.absolute().parents) if p.exists())
    path.mkdir(parents=True, exist_ok=True)
    for old in path.glob(".catalog-*"):  # left by an interrupted creation
        if _OWN_BEFORE_CATALOG.fullmatch(old.name):
            old.unlink(missing_ok=True)
    tmp = path / f".catalog-{uuid.uuid4().hex[:12]}.sqlite"
    try:
        catalog = Catalog(tmp, create=True)
        catalog.init_meta(config.replace(shards=config.shards or STARTING_RANGES))
        if config.shards is None:
            catalog.set_meta(RANGES_FOR_CLUSTER, "1")
        set_current_scheme(catalog)
        if shard_store is not None:
            catalog.set_meta("shard_store", shard_store)
        catalog.close()
        _link_new(tmp, final)
        fsync_file(final)  # the new index's name durable too (docs/formats.md, Durability)
        sync_dirs_up_to(path, existing)  # up to the folder that existed before
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    return Catalog(final)


def ranges_open(catalog: Catalog) -> bool:
    """Whether the next run of this index chooses its range count: it was created without
    one and no run has committed yet (generation 0)."""
    return catalog.meta(RANGES_FOR_CLUSTER) == "1" and catalog.generation == 0


def _check_new_folder(path: Path) -> None:
    """Refuse a file, and a folder holding anything simdask did not put there."""
    if path.exists() and not path.is_dir():
        raise NotAnIndexError(
            f"INDEX {path} is a file: expected a simdask index folder, or a new or empty folder "
            "to create one in"
        )
    if not path.is_dir():
        return
    others = sorted(p.name for p in path.iterdir() if not _OWN_BEFORE_CATALOG.fullmatch(p.name))
    if others:
        raise NotAnIndexError(
            f"{path} is not a simdask index (no {CATALOG_NAME}) but a folder with "
            f"{len(others)} entries (e.g. {others[0]!r}): an index is created only in a new or "
            "empty folder, so nothing was changed (did you swap INDEX and SOURCE? the command "
            "is `simdask update INDEX SOURCE...`)"
        )


def _link_new(tmp: Path, final: Path) -> None:
    """Put ``tmp`` at ``final``, never replacing a catalog another process created meanwhile."""
    try:
        os.link(tmp, final)
    except FileExistsError:
        raise IndexExistsError(f"an index already exists at {final.parent}") from None
    except OSError:  # a filesystem without hard links
        if final.exists():
            raise IndexExistsError(f"an index already exists at {final.parent}") from None
        os.replace(tmp, final)


#: what a new index holds before its first commit (a run that failed before it committed:
#: the catalog, its SQLite side files, the writer lock; nothing else to lose)
_OWN_BEFORE_COMMIT = re.compile(r"catalog\.sqlite(-wal|-shm|-journal)?|writer\.lock")
#: the data folders a first run writes into before its commit (texts, shard segments, work
#: files, LSH bands, candidate lists): in an index at generation 0 they hold nothing committed
_RUN_FOLDERS = frozenset({"texts", "shards", "work", "lsh", "candidates"})


def discard_uncommitted(path: Path, made_folder: bool) -> bool:
    """Remove the index this command created at ``path`` when nothing was ever committed to
    it (its catalog at generation 0, no other files than :data:`_OWN_BEFORE_COMMIT` and the
    run's own data folders :data:`_RUN_FOLDERS`): an update that could not reach its cluster,
    or was interrupted before its first commit, leaves no empty index behind (issue 30 item
    11). ``made_folder``: the folder did not exist before (removed too). Returns True if
    removed."""
    try:
        names = {p.name for p in path.iterdir()}
        if not names or not all(_own_uncommitted(path / n) for n in names):
            return False
        catalog = Catalog(path / CATALOG_NAME)
        try:
            generation = catalog.generation
        finally:
            catalog.close()
    except Exception:  # whatever is there cannot be read: leave it as it is
        return False
    if generation != 0:
        return False
    for n in names:
        if (path / n).is_dir():
            shutil.rmtree(path / n, ignore_errors=True)
        else:
            (path / n).unlink(missing_ok=True)
    if made_folder:
        path.rmdir()
    return True


def _own_uncommitted(entry: Path) -> bool:
    """Whether ``entry`` of a new index folder is simdask's own before the first commit."""
    if entry.is_dir() and not entry.is_symlink():
        return entry.name in _RUN_FOLDERS
    return _OWN_BEFORE_COMMIT.fullmatch(entry.name) is not None
