"""``simdask query INDEX FILE...``: documents that are not in the index, compared against it.

Read-only (no writer lock, no cluster). Thin over :func:`simdask.queries.query_files` (files,
folders, JSONL). Exit status: 0 when every query document was read, 3 when some could not be
(each is named on stderr; the others are still queried and printed), 1 for a simdask error
such as a missing index.
"""

from __future__ import annotations

import sys

from simdask.cli._args import add_format
from simdask.cli._common import EXIT_OK, EXIT_UNREADABLE, NOTE_KINDS
from simdask.cli.output import write_rows
from simdask.index import Index
from simdask.ingest.sources import TEXT_SUFFIXES
from simdask.pairs import holds
from simdask.queries import query_files

__all__ = ["COLUMNS", "EXIT_UNREADABLE", "register", "run"]

#: columns of the output; ``similarity``: percent of the query's chunks found in the document
#: (query -> doc), ``reverse_similarity``: percent of the document's chunks found in the query
COLUMNS = (
    "query",
    "key",
    "similarity",
    "reverse_similarity",
    "shared",
    "query_chunks",
    "doc_chunks",
)
#: the table's columns: one row per (query, document) pair, the larger percentage first,
#: with its plain wording (``in_words``)
TABLE_COLUMNS = ("query", "key", "similarity", "reverse_similarity", "shared", "in_words")


def register(subparsers) -> None:
    """Declare ``query``."""
    p = subparsers.add_parser(
        "query",
        help="compare files that are not in the index against it (read-only)",
        description="Compare documents that are not in the index against it, both directions: "
        "`similarity` is the percent of the query's chunks found in an indexed document, "
        "`reverse_similarity` the percent of that document's chunks found in the query. "
        f"FILEs are document files ({' '.join(TEXT_SUFFIXES)}, recognised by content or "
        "suffix), folders (their files of these formats, recursively; other files are "
        "reported) or .jsonl files (one document per line). Exit status 3 when some FILE "
        "could not be read (the others are still reported); a scanned PDF without text is a "
        "note.",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("files", metavar="FILE", nargs="+")
    p.add_argument(
        "--min",
        "--min-similarity",
        dest="min",
        type=float,
        default=1.0,
        metavar="PCT",
        help="least similarity either way, percent (default 1)",
    )
    add_format(p)


def run(args) -> int:
    """Run ``simdask query``; returns the exit status."""
    with Index.open(args.index) as idx:
        batch = query_files(idx, args.files, args.min)
    rows = [{"query": r.key, **m.to_dict()} for r in batch.results for m in r.matches]
    if args.format == "table":
        for row in rows:
            row["in_words"] = holds(
                row["query"], row["key"], row["similarity"], row["reverse_similarity"]
            )
        rows.sort(key=lambda r: -max(r["similarity"], r["reverse_similarity"]))
        write_rows(rows, TABLE_COLUMNS, "table", sys.stdout)
    else:
        write_rows(rows, COLUMNS, args.format, sys.stdout)
    for r in batch.results:
        if r.too_short:
            print(
                f"simdask: note: {r.key}: too few words to be compared (fewer than {batch.k})",
                file=sys.stderr,
            )
    errors = [e for e in batch.unreadable if e.kind not in NOTE_KINDS]
    for e in batch.unreadable:
        if e.kind in NOTE_KINDS:
            print(f"simdask: note: not compared: {e}", file=sys.stderr)
        else:
            print(f"simdask: error: cannot read {e}", file=sys.stderr)
    return EXIT_UNREADABLE if errors else EXIT_OK
