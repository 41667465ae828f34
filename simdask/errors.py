"""The exception hierarchy of simdask.

Every error simdask raises on purpose is a :class:`SimdaskError`; each subclass also
derives from the builtin that fits, so ``except ValueError`` keeps working for callers
that do not know simdask.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "REPAIR_HINT",
    "ClusterError",
    "ConfigError",
    "DiskFullError",
    "DocumentNotFoundError",
    "ExtractionError",
    "IndexDamagedError",
    "IndexExistsError",
    "IndexFormatError",
    "IndexLockedError",
    "IndexNotFoundError",
    "KeyCollisionError",
    "NotAnIndexError",
    "RenderError",
    "ShardNotCachedError",
    "SimdaskError",
    "SourceError",
    "SourceOverlapError",
    "check_keys",
    "damaged",
]

#: what to do about a damaged index (ends every damage message)
REPAIR_HINT = (
    "restore the index folder from a backup, or rebuild it with "
    "`simdask update INDEX SOURCE... --rebuild`"
)


class SimdaskError(Exception):
    """Base class of all errors raised by simdask."""


class ConfigError(SimdaskError, ValueError):
    """A configuration value is out of range or of the wrong type."""


class ClusterError(SimdaskError, RuntimeError):
    """The Dask cluster cannot be reached or started, or failed during a run (the scheduler
    went away, workers kept dying); the index stays at its previous generation."""


class IndexFormatError(SimdaskError, ValueError):
    """The index on disk is of another format version or is damaged."""


class IndexDamagedError(IndexFormatError):
    """The index on disk is damaged: a catalog SQLite cannot read, a file whose size or
    checksum differs from the one recorded at its commit, a missing file, or a stored value
    outside its domain (a similarity above 100 %, a doc ID the catalog does not know). Never
    answered around: ``simdask check INDEX`` lists the damage (exit status 5); restore the
    index from a backup or rebuild it (``simdask update INDEX SOURCE... --rebuild``)."""


def damaged(what: str) -> IndexDamagedError:
    """The error a reader raises on damage: ``what`` was found, then how to see all damage and
    how to repair it."""
    return IndexDamagedError(
        f"{what}; run `simdask check INDEX` to list all damage, then {REPAIR_HINT}"
    )


class IndexNotFoundError(SimdaskError, FileNotFoundError):
    """There is no simdask index at the given path."""


class IndexExistsError(SimdaskError, FileExistsError):
    """An index already exists where a new one was to be created."""


class NotAnIndexError(IndexExistsError):
    """The path given for an index is a file, or a folder holding files but no simdask index:
    simdask creates an index only in a new or empty folder (and never deletes what it did not
    create)."""


class IndexLockedError(SimdaskError, BlockingIOError):
    """Another process is updating the index."""


class DocumentNotFoundError(SimdaskError, KeyError):
    """No document with the given key is in the index."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class DiskFullError(SimdaskError, OSError):
    """The disk filled up during a run: the message names the path, the free space and about
    how much the run needs; the run is not committed (the index keeps its generation)."""


class SourceError(SimdaskError, OSError):
    """A source (file, folder, JSONL file) cannot be read or has the wrong form."""


class KeyCollisionError(SimdaskError, ValueError):
    """Two sources would give a document the same key (two folders of the same name, e.g.
    ``2025/submissions`` and ``2026/submissions``): the run is refused before it starts and
    the message suggests a ``--key-prefix`` that keeps the keys apart."""


class SourceOverlapError(SimdaskError, ValueError):
    """A source lies inside a folder indexed from another source, or holds one: its files
    would be indexed twice under two keys (and paired with themselves); the run is refused
    before it starts and the message names a document already indexed and what to run."""


class ExtractionError(SimdaskError, ValueError):
    """Text could not be extracted from one document; ``kind`` names the reason."""

    def __init__(self, key: str, kind: str, message: str):
        super().__init__(f"{key}: {message}")
        self.key = key
        self.kind = kind
        self.message = message

    def __reduce__(self):  # pickled between client and workers: keep all three fields
        return (type(self), (self.key, self.kind, self.message))


class RenderError(SimdaskError, RuntimeError):
    """A page could not be rendered to a file (``report --pdf``): the program that renders it
    is missing, failed or timed out; the message says what to install or what it printed."""


class ShardNotCachedError(SimdaskError, LookupError):
    """A merge task was sent to a worker for its cached shard, which is no longer there (the
    worker restarted or evicted it); the client then sends the shard itself."""


def check_keys(kind: str, keys: Iterable[str], allowed: Iterable[str]) -> None:
    """Raise :class:`ConfigError` when ``keys`` (of a dict read back by ``kind``'s
    ``from_dict``, e.g. ``"IndexConfig"``) hold any not in ``allowed`` (its fields)."""
    names = sorted(allowed)
    unknown = sorted(set(keys) - set(names))
    if unknown:
        raise ConfigError(f"unknown {kind} keys {unknown}; expected a subset of {names}")
