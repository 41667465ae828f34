"""``simdask query INDEX FILE...``: documents that are not in the index, compared against it.

Read-only (no writer lock, no cluster). Every FILE is read through
:func:`simdask.ingest.sources.read_queries` (files via :func:`simdask.ingest.sources.read_document`,
folders, JSONL). Exit status: 0 when every query document was read, 3 when some could not be
(each is named on stderr; the others are still queried and printed), 1 for a simdask error
such as a missing index.
"""

from __future__ import annotations

import argparse
import sys

from simdask.cli.output import FORMATS, write_rows
from simdask.index import Index
from simdask.ingest.sources import read_queries
from simdask.kernels.text import words

__all__ = ["COLUMNS", "EXIT_UNREADABLE", "add_parser", "run"]

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

#: exit status when some query documents could not be read
EXIT_UNREADABLE = 3


def add_parser(sub, cluster_args=None) -> argparse.ArgumentParser:
    """Declare the ``query`` subcommand."""
    p = sub.add_parser(
        "query",
        help="compare files that are not in the index against it (read-only)",
        description="Compare documents that are not in the index against it, both directions: "
        "`similarity` is the percent of the query's chunks found in an indexed document, "
        "`reverse_similarity` the percent of that document's chunks found in the query. "
        "FILEs are document files, folders (their .txt/.md files) or .jsonl files "
        "(one document per line). Exit status 3 when some FILE could not be read "
        "(the others are still reported).",
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
    p.add_argument(
        "-o", "--format", choices=FORMATS, default="table", help="output format (default table)"
    )
    return p


def run(args, callback=None) -> int:
    """Run ``simdask query``; returns the exit status."""
    docs = read_queries(args.files)
    good = [(k, t) for k, t in docs if isinstance(t, str)]
    with Index.open(args.index) as idx:
        results = idx.query_many([t for _, t in good], args.min)
        k = idx.config.k
    rows = (
        {"query": key, **m.to_dict()}
        for (key, _), matches in zip(good, results, strict=True)
        for m in matches
    )
    write_rows(rows, COLUMNS, args.format, sys.stdout)
    for key, text in good:
        if len(words(text)) < k:
            print(f"simdask: note: {key}: fewer than {k} words, no chunks", file=sys.stderr)
    bad = [t for _, t in docs if not isinstance(t, str)]
    for e in bad:
        print(f"simdask: error: cannot read {e}", file=sys.stderr)
    return EXIT_UNREADABLE if bad else 0
