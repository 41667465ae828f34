"""``simdask boilerplate INDEX``: the most widely shared passages, to see what to exclude.

Thin over :func:`simdask.read.boilerplate_passages.shared_passages`.
"""

from __future__ import annotations

import sys

from simdask.cli._args import add_format
from simdask.cli._common import EXIT_OK
from simdask.cli.output import write_rows
from simdask.index import Index
from simdask.read.boilerplate_passages import save_passages, shared_passages

__all__ = ["COLUMNS", "register", "run"]

COLUMNS = ("documents", "words", "passage")


def register(subparsers) -> None:
    """Declare ``boilerplate``."""
    p = subparsers.add_parser(
        "boilerplate",
        help="the passages most documents share (templates, assignment sheets, licences)",
        description="List the passages that many documents share word for word, the most "
        "widely shared first: how many documents hold each whole passage and its length in "
        "words. Each passage is listed once. Text is shown in lower case without punctuation, "
        "as simdask compares it. --save writes the passages to a file that "
        "`simdask update INDEX --exclude FILE` leaves out of every count.",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("--top", type=int, default=50, help="passages to list (default 50)")
    p.add_argument(
        "--min-documents", type=int, default=2, help="least documents holding a passage (2)"
    )
    p.add_argument(
        "--save",
        metavar="FILE",
        help="also write the passages listed to FILE (plain text, one passage a paragraph), "
        "to exclude them with `simdask update INDEX --exclude FILE`",
    )
    add_format(p)


def run(args) -> int:
    """Print the shared passages (and write them with ``--save``)."""

    with Index.open(args.index) as idx, idx.snapshot():  # one committed state
        rows = shared_passages(idx, args.top, args.min_documents)
    write_rows((r.to_dict() for r in rows), COLUMNS, args.format, sys.stdout)
    if args.save:
        save_passages(rows, args.save)
        print(f"{len(rows)} passages written to {args.save}", file=sys.stderr)
    return EXIT_OK
