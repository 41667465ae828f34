"""``simdask similar INDEX [KEY]``: the stored similar pairs, all or of one document."""

from __future__ import annotations

import sys

from simdask.cli._args import add_format
from simdask.cli._common import EXIT_OK, PAIR_COLUMNS
from simdask.cli.output import write_rows
from simdask.index import Index

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``similar``."""
    p = subparsers.add_parser("similar", help="stored similar pairs, all or of one document")
    p.add_argument("index", metavar="INDEX")
    p.add_argument("key", metavar="KEY", nargs="?", help="a document's key (default: all pairs)")
    p.add_argument(
        "--min", type=float, default=0.0, metavar="PCT", help="least similarity, percent"
    )
    add_format(p)


def run(args) -> int:
    """Print the pairs, best first."""
    with Index.open(args.index) as idx:
        rows = idx.similar(args.key, args.min) if args.key else idx.pairs(args.min)
        write_rows((r.to_dict() for r in rows), PAIR_COLUMNS, args.format, sys.stdout)
    return EXIT_OK
