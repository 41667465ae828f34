"""The key scheme recorded in an index, and the migration of indexes keyed the old way.

Scheme 2 (this version): a folder source's documents are keyed ``<folder name>/<path inside
it>``; a file given directly by its name; a JSONL line by its ``id``
(:mod:`simdask.ingest.listing`). Scheme 1 (indexes made before the meta value
``key_scheme`` existed) keyed a folder's documents by the path inside the folder alone, so
that two folders holding ``smith.txt`` overwrote each other.

:func:`migrate_keys` renames the documents of folder sources of a scheme-1 index in one
transaction (the catalog records each document's source, its resolved path, so the folder's
name is known); JSONL ids and directly given files keep their keys. Doc IDs, shards, texts
and similarities refer to doc IDs, not keys, so nothing else changes.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from simdask.errors import IndexFormatError
from simdask.kernels.keys import FOLDER_SUFFIX, safe_text

if TYPE_CHECKING:
    from simdask.storage.catalog import Catalog

__all__ = ["KEY_SCHEME", "migrate_keys", "set_current_scheme"]

#: The key scheme this version writes (recorded as the catalog's meta value ``key_scheme``).
KEY_SCHEME = 2


def set_current_scheme(catalog: Catalog) -> None:
    """Record :data:`KEY_SCHEME` in a new index's catalog."""
    catalog.set_meta("key_scheme", str(KEY_SCHEME))


def _is_folder_source(source: str, keys: list[str]) -> bool:
    """Whether a scheme-1 source was a folder: it is one on disk now; else (gone) it was a
    file given directly when it gave one document keyed by its own name, JSONL when named
    ``.jsonl``, a folder otherwise."""
    path = Path(source)
    if path.is_dir():
        return True
    if path.exists() or source.lower().endswith(".jsonl"):
        return False
    return not (len(keys) == 1 and keys[0] == path.name)


def migrate_keys(catalog: Catalog) -> int:
    """Bring a scheme-1 index to :data:`KEY_SCHEME` (see the module docstring): the number of
    documents renamed (0 when the index is already current). Call with the writer lock held.
    Raises :class:`IndexFormatError` when a renamed key would equal another document's key
    (the index must then be rebuilt)."""
    found = catalog.meta("key_scheme")
    if found == str(KEY_SCHEME):
        return 0
    if found is not None:
        raise IndexFormatError(
            f"index at {catalog.path.parent} uses key scheme {found!r}; this simdask knows "
            f"schemes 1 and {KEY_SCHEME}"
        )
    by_source: dict[str, list[str]] = {}
    for key, source in catalog.conn.execute("SELECT key, source FROM documents"):
        by_source.setdefault(source, []).append(key)
    renamed = 0
    try:
        with catalog.transaction() as c:
            for source, keys in sorted(by_source.items()):
                name = Path(source).name
                if not name or not _is_folder_source(source, keys):
                    continue
                prefix = safe_text(name) + FOLDER_SUFFIX
                c.execute("UPDATE documents SET key = ? || key WHERE source = ?", (prefix, source))
                renamed += len(keys)
            c.execute(
                "INSERT OR REPLACE INTO meta (name, value) VALUES ('key_scheme', ?)",
                (str(KEY_SCHEME),),
            )
    except sqlite3.IntegrityError as e:
        raise IndexFormatError(
            f"index at {catalog.path.parent} keys a folder's documents by their path inside "
            "the folder (an older simdask); renaming them to <folder name>/<path> would give "
            f"two documents the same key ({e}): rebuild it with --rebuild"
        ) from e
    return renamed
