"""``simdask backup INDEX DEST``: copy one committed generation while runs go on
(:mod:`simdask.storage.backup_copy`)."""

from __future__ import annotations

import sys

from simdask.cli._common import EXIT_OK
from simdask.storage.backup_copy import backup_index
from simdask.storage.remote import index_folder

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``backup``."""
    p = subparsers.add_parser(
        "backup",
        help="copy the index's last committed generation to a new folder (runs may go on)",
        description="Copy the last committed generation of INDEX to DEST (a new or empty "
        "folder): the catalog with SQLite's online backup, then every file that generation "
        "uses, each verified against the checksum recorded for it. Updates may run meanwhile "
        "(no lock is taken); if one commits and collects a file before it is copied, the "
        "backup starts again from the newer generation. DEST opens as an index of its own; "
        "`simdask check DEST` verifies it.",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("dest", metavar="DEST")


def run(args) -> int:
    """Copy; one line on stderr saying what was copied."""
    done = backup_index(index_folder(args.index), args.dest)
    print(
        f"simdask: generation {done.generation} of {args.index} copied to {args.dest}: "
        f"{done.files} files, {done.bytes / 2**20:.1f} MiB and the catalog"
        + (f" ({done.attempts} attempts)" if done.attempts > 1 else ""),
        file=sys.stderr,
    )
    return EXIT_OK
