"""Reads that see one committed state from start to end (issue 30 item 1).

A reader takes a SQLite read transaction (WAL: it never blocks a writer, and a commit during
it stays invisible to it) and does all its catalog reads inside: the manifest, tombstones,
chunk counts *and* the doc-ID-to-key look-ups of its answer, so that a document deleted
meanwhile, and its doc ID recycled by a later run, never lends its key to the answer. The
settings are compared at the start of each snapshot: an ``update --rebuild`` with other
settings takes effect in a long-running reader (``serve``) at its next read.

Segment files a snapshot names are kept by the writer for one more commit (see
:mod:`simdask.write.garbage`); a reader held across two commits may find one gone:
:func:`read_consistent` then reads again in a newer snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from simdask.errors import IndexDamagedError

__all__ = ["follow_config", "read_consistent", "snapshot"]

T = TypeVar("T")


def follow_config(index) -> None:
    """Take the index's stored settings when they are not those ``index`` holds (an
    ``update --rebuild`` with other settings committed since): new config, the shard store
    told the new chunk-ID type, caches dropped."""
    stored = index.catalog.check_format()
    if stored == index.config:
        return
    index.store.key_dtype = np.dtype(stored.chunk_dtype)  # the store checks what it reads
    index.config = stored
    index.drop_caches()


@contextmanager
def snapshot(index) -> Iterator[Any]:
    """``with snapshot(index):`` every catalog read of the block sees one committed state,
    and ``index.config`` is the settings of that state (nested blocks share the outer one)."""
    with index.catalog.read_snapshot():
        follow_config(index)
        yield index


def read_consistent(index, fn: Callable[..., T], *args: Any, attempts: int = 3) -> T:
    """``fn(index, *args)`` inside one :func:`snapshot`; read again in a newer snapshot (at
    most ``attempts`` times in all) when it found a file missing or of another size while
    the committed generation moved on meanwhile (files of its snapshot collected after two
    commits: not damage). Damage seen in the current generation is raised."""
    attempt = 0
    while True:
        attempt += 1
        generation = -1
        try:
            with snapshot(index):
                generation = index.catalog.generation
                return fn(index, *args)
        except (IndexDamagedError, FileNotFoundError):
            if attempt >= attempts or generation < 0 or index.catalog.generation == generation:
                raise
            index.drop_caches()
