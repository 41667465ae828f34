"""``simdask mark INDEX A B STATUS [--note TEXT]``: keep a decision on a pair;
``simdask mark INDEX DOC SOURCE --exclude-source`` (``--include-source``): leave a source out
of one document's total; ``simdask mark INDEX --list``: the decisions kept (to export
them). Thin over :func:`simdask.write.marking.mark_pair` and :mod:`simdask.storage.decisions`."""

from __future__ import annotations

import sys

from simdask.cli._args import add_format
from simdask.cli._common import EXIT_OK
from simdask.cli.output import write_rows
from simdask.errors import ConfigError, DocumentNotFoundError
from simdask.index import Index
from simdask.read.review import iso_time
from simdask.storage.decisions import STATUSES, all_decisions, source_exclusions
from simdask.write.marking import exclude_source, mark_pair

__all__ = ["COLUMNS", "register", "run"]

COLUMNS = ("a_key", "b_key", "status", "note", "marked_at")
#: the status ``mark --list`` gives a source left out of a document (a_key: the document)
EXCLUDED = "source_excluded"


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
    p.add_argument(
        "--exclude-source",
        action="store_true",
        help="leave B out of A's total and list of sources (a source A cites properly, the "
        "student's own earlier work), in every view, which says so; no STATUS needed",
    )
    p.add_argument("--include-source", action="store_true", help="take an --exclude-source back")
    p.add_argument("--list", action="store_true", help="print the decisions kept")
    add_format(p)


def _two(idx: Index, args, resolve: bool) -> tuple[str, str]:
    """The keys A and B name (when not ``resolve``, a name the index no longer holds is
    taken as typed: a removed document's decision can still be cleared)."""
    if args.a is None or args.b is None:
        raise ConfigError("expected two documents A B, found fewer arguments")
    if resolve:
        return idx.resolve_key(args.a), idx.resolve_key(args.b)
    return _known_or_typed(idx, args.a), _known_or_typed(idx, args.b)


def _known_or_typed(idx: Index, typed: str) -> str:
    """The key ``typed`` names, or ``typed`` itself when the index no longer holds it."""
    try:
        return idx.resolve_key(typed)
    except DocumentNotFoundError:
        return typed


def run(args) -> int:
    """Keep the decision, or print the decisions."""
    with Index.open(args.index) as idx:
        if args.list:
            rows = [
                {**d.to_dict(), "marked_at": iso_time(d.marked_at)}
                for d in all_decisions(idx.catalog)
            ]
            rows += [
                {"a_key": x.doc_key, "b_key": x.source_key, "status": EXCLUDED, "note": x.note,
                 "marked_at": iso_time(x.marked_at)}
                for x in source_exclusions(idx.catalog)
            ]  # fmt: skip
            write_rows(rows, COLUMNS, args.format, sys.stdout)
            return EXIT_OK
        if args.exclude_source or args.include_source:
            doc, source = _two(idx, args, resolve=args.exclude_source)
            exclude_source(idx, doc, source, args.exclude_source, args.note)
            said = "left out of" if args.exclude_source else "counted again in"
            print(f"{source} {said} the total of {doc}", file=sys.stderr)
            return EXIT_OK
        if args.status is None:
            raise ConfigError("expected A B STATUS (or --list), found fewer arguments")
        a, b = _two(idx, args, resolve=args.status != "clear")
        mark_pair(idx, a, b, args.status, args.note)
    print(f"{a} and {b}: {args.status}", file=sys.stderr)
    return EXIT_OK
