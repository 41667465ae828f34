"""``simdask boilerplate INDEX``: the most widely shared passages, to see what to exclude.

Thin over :func:`simdask.read.boilerplate.shared_passages`.
"""

from __future__ import annotations

import sys

from simdask.cli._args import add_format
from simdask.cli._common import EXIT_OK
from simdask.cli.output import write_rows
from simdask.index import Index
from simdask.read.boilerplate import shared_passages

__all__ = ["COLUMNS", "register", "run"]

COLUMNS = ("documents", "words", "passage")


def register(subparsers) -> None:
    """Declare ``boilerplate``."""
    p = subparsers.add_parser(
        "boilerplate",
        help="the most widely shared passages (templates, licences, set phrases)",
        description="List the passages (runs of chunks) held by the most documents, with how "
        "many documents hold each whole passage and its length in words, most documents first. "
        "Passages are shown as normalised words (DESIGN §1).",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("--top", type=int, default=50, help="passages to list (default 50)")
    p.add_argument(
        "--min-documents", type=int, default=2, help="least documents holding a passage (2)"
    )
    add_format(p)


def run(args) -> int:
    """Print the shared passages."""

    with Index.open(args.index) as idx, idx.snapshot():  # one committed state
        rows = shared_passages(idx, args.top, args.min_documents)
    write_rows((r.to_dict() for r in rows), COLUMNS, args.format, sys.stdout)
    return EXIT_OK
