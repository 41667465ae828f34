"""``simdask text INDEX KEY``: a document's extracted text as indexed."""

from __future__ import annotations

import sys

from simdask.cli._common import EXIT_OK
from simdask.index import Index

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``text``."""
    p = subparsers.add_parser("text", help="print a document's extracted text as indexed")
    p.add_argument("index", metavar="INDEX")
    p.add_argument(
        "key", metavar="KEY", help="a key, a path as given to update, or a unique end of a key"
    )


def run(args) -> int:
    """Print the text on stdout, as stored (no newline added)."""
    with Index.open(args.index) as idx, idx.snapshot():  # one committed state
        sys.stdout.write(idx.text(idx.resolve_key(args.key)))
    return EXIT_OK
