"""Reading a committed segment that turns out unreadable is damage (issue 30 item 9).

A segment the catalog names was complete when it was committed: if its metadata no longer
parses (a flipped byte in ``zarr.json``), a compressed chunk no longer decodes, a file has gone,
or the shapes its metadata declares are not the sizes the catalog recorded, the index is
damaged. Readers then stop with :class:`~simdask.errors.IndexDamagedError` (exit 5, a pointer
to ``simdask check``), never a library's traceback (zarr, numcodecs, json) or a plain error
(exit 1), and never an allocation sized by a damaged header: the declared shapes are compared
with the catalog's counts (:func:`check_counts`) before the arrays are read. This matters most
where the files' checksums are not recorded (a ``--shard-store`` URL, an index written before
checksums); a local index's files are hashed first (:mod:`simdask.storage.verified`).

No zarr imported here (the query path's cold start): the errors are caught by their builtin
bases, which zarr's, numcodecs' and json's errors derive from.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from simdask.errors import IndexDamagedError, IndexFormatError, damaged

__all__ = ["UNREADABLE", "check_counts", "segment_damage"]

#: what reading a damaged segment raises, by builtin base (json, zarr metadata and numcodecs
#: errors derive from these); connection, permission and other OS errors are not damage
UNREADABLE = (
    IndexFormatError,
    ValueError,
    KeyError,
    IndexError,
    TypeError,
    RuntimeError,
    EOFError,
    MemoryError,
    FileNotFoundError,
    NotADirectoryError,
    IsADirectoryError,
)


@contextmanager
def segment_damage(where: str) -> Iterator[None]:
    """Turn a failure to read committed segments (see :data:`UNREADABLE`) into
    :class:`~simdask.errors.IndexDamagedError` naming ``where`` (the index or shard store)."""
    try:
        yield
    except IndexDamagedError:
        raise
    except UNREADABLE as e:
        raise damaged(
            f"a segment of the index at {where} cannot be read ({type(e).__name__}: {e})"
        ) from None


def check_counts(
    where: str, generation: int, shard: int, recorded: tuple[int, int], found: tuple[int, int]
) -> None:
    """Raise :class:`~simdask.errors.IndexDamagedError` when a segment's metadata declares
    ``found`` = ``(distinct chunks, postings)`` other than the catalog's ``recorded``."""
    if tuple(found) != tuple(recorded):
        raise damaged(
            f"segment of range {shard}, generation {generation} of the index at {where}: its "
            f"metadata declares {found[0]} chunk IDs and {found[1]} postings, the catalog "
            f"recorded {recorded[0]} and {recorded[1]}"
        )
