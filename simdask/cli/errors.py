"""``simdask errors INDEX``: the per-file errors of the last run (key, kind, message)."""

from __future__ import annotations

import sys

from simdask.cli._args import add_format
from simdask.cli._common import EXIT_OK
from simdask.cli.output import write_rows
from simdask.index import Index

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``errors``."""
    p = subparsers.add_parser("errors", help="per-file errors of the last run (key, kind, message)")
    p.add_argument("index", metavar="INDEX")
    add_format(p)


def run(args) -> int:
    """Print the errors (none: just the header of a table or CSV)."""
    with Index.open(args.index) as idx:
        last = idx.catalog.last_run()
        errs = idx.catalog.errors_of_run(last["run_id"]) if last else []
    rows = ({"key": k, "kind": kind, "message": m} for k, kind, m in errs)
    write_rows(rows, ("key", "kind", "message"), args.format, sys.stdout)
    return EXIT_OK
