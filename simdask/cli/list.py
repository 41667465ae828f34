"""``simdask list INDEX [PATTERN]``: the keys of the documents, all or those matching."""

from __future__ import annotations

import sys

from simdask.cli._common import EXIT_OK
from simdask.cli.output import table_cell, write_rows
from simdask.index import Index
from simdask.storage.lookup import match_keys

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``list``."""
    p = subparsers.add_parser(
        "list",
        help="the keys of the documents, all or those matching a pattern",
        description="Print the keys of the indexed documents, one a line, in order. PATTERN: "
        "a shell pattern matched against the whole key ('essays/*', '*smith*'), or, without "
        "* ? [, a part of the key (case-insensitive).",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("pattern", metavar="PATTERN", nargs="?")
    p.add_argument(
        "-o",
        "--format",
        choices=("lines", "jsonl", "csv"),
        default="lines",
        help="lines (default: keys only, control characters escaped), or jsonl/csv rows "
        "of key, words, chunks, status",
    )


def run(args) -> int:
    """Print the keys (nothing matching: a note on stderr)."""
    with Index.open(args.index) as idx, idx.snapshot():  # one committed state
        keys = match_keys(idx.catalog, args.pattern)
        if args.format == "lines":
            for k in keys:
                print(table_cell(k))
        else:
            wanted = set(keys)
            rows = (
                {"key": d.key, "words": d.n_words, "chunks": d.n_chunks, "status": d.status}
                for d in sorted(idx.catalog.documents(), key=lambda d: d.key)
                if d.key in wanted
            )
            write_rows(rows, ("key", "words", "chunks", "status"), args.format, sys.stdout)
    if not keys:
        print(f"simdask: no document key matches {args.pattern!r}", file=sys.stderr)
    return EXIT_OK
