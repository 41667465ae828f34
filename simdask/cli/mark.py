"""``simdask mark INDEX A B STATUS [--note TEXT]``: keep a decision on a pair;
``simdask mark INDEX --list``: the decisions kept (to export them). Thin over
:func:`simdask.write.decisions.mark_pair` and :mod:`simdask.storage.decisions`."""

from __future__ import annotations

import sys

from simdask.cli._args import add_format
from simdask.cli._common import EXIT_OK
from simdask.cli.output import write_rows
from simdask.errors import ConfigError
from simdask.index import Index
from simdask.read.review import iso_time
from simdask.storage.decisions import STATUSES, all_decisions
from simdask.write.decisions import mark_pair

__all__ = ["COLUMNS", "register", "run"]

COLUMNS = ("a_key", "b_key", "status", "note", "marked_at")


def register(subparsers) -> None:
    """Declare ``mark``."""
    p = subparsers.add_parser(
        "mark",
        help="keep a decision on a pair: reviewed, dismissed or confirmed, with a note",
        description="Keep a decision on a pair of documents: reviewed, dismissed or confirmed, "
        "with a note; clear forgets it. Decisions are kept in the index across later updates, "
        "never change the similarities, and are shown by `simdask report` and "
        "`simdask similar --details`. --list prints every decision (e.g. --format csv to "
        "export them).",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("a", metavar="A", nargs="?", help="a document (key, path or unique key end)")
    p.add_argument("b", metavar="B", nargs="?", help="the other document")
    p.add_argument("status", metavar="STATUS", nargs="?", choices=(*STATUSES, "clear"))
    p.add_argument("--note", default="", help="a note kept with the decision")
    p.add_argument("--list", action="store_true", help="print the decisions kept")
    add_format(p)


def run(args) -> int:
    """Keep the decision, or print the decisions."""
    with Index.open(args.index) as idx:
        if args.list:
            rows = [
                {**d.to_dict(), "marked_at": iso_time(d.marked_at)}
                for d in all_decisions(idx.catalog)
            ]
            write_rows(rows, COLUMNS, args.format, sys.stdout)
            return EXIT_OK
        if args.status is None:
            raise ConfigError("expected A B STATUS (or --list), found fewer arguments")
        clearing = args.status == "clear"
        a = args.a if clearing else idx.resolve_key(args.a)
        b = args.b if clearing else idx.resolve_key(args.b)
        mark_pair(idx, a, b, args.status, args.note)
    print(f"{a} and {b}: {args.status}", file=sys.stderr)
    return EXIT_OK
