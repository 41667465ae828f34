"""``simdask similar INDEX [KEY]``: the stored similar pairs, all or of one document.

The table shows one row per unordered pair, both percentages and their plain wording
(:mod:`simdask.read.pairs`); JSONL and CSV print the stored directed rows (``doc -> other``), or
with ``--pairs`` the undirected rows (:data:`simdask.read.pairs.PAIR_FIELDS`).
"""

from __future__ import annotations

import sys

from simdask.cli._args import add_format
from simdask.cli._common import EXIT_OK, PAIR_COLUMNS, PAIR_TABLE_COLUMNS
from simdask.cli.output import write_rows
from simdask.index import Index
from simdask.read.pairs import PAIR_FIELDS
from simdask.read.review import DETAIL_FIELDS, pair_details

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``similar``."""
    p = subparsers.add_parser(
        "similar",
        help="stored similar pairs, all or of one document",
        description="The stored similar pairs, the most similar first. The table has one row "
        "per pair of documents: a_in_b is the percent of document A's chunks (5-word "
        "passages) found in B, b_in_a the reverse, A being the document of which more is "
        "found in the other. JSONL and CSV print the stored directed rows (doc, other, "
        "similarity = percent of doc found in other, shared, doc_chunks, other_chunks); "
        "--pairs prints the table's rows there too.",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument(
        "key",
        metavar="KEY",
        nargs="?",
        help="a document: its key, its path as given to update, or a unique end of a key "
        "(default: all pairs)",
    )
    p.add_argument(
        "--min", type=float, default=0.0, metavar="PCT", help="least similarity, percent"
    )
    p.add_argument(
        "--details",
        action="store_true",
        help="unordered pairs (as --pairs) with when each document was first indexed and its "
        "file last modified (who was first), and the decision kept on the pair (simdask mark)",
    )
    p.add_argument(
        "--pairs",
        action="store_true",
        help="JSONL/CSV: one row per unordered pair (a_key, b_key, a_in_b, b_in_a, shared, "
        "a_chunks, b_chunks) instead of the directed rows",
    )
    add_format(p)


def run(args) -> int:
    """Print the pairs, best first."""
    with Index.open(args.index) as idx, idx.snapshot():  # one committed state
        key = idx.resolve_key(args.key) if args.key else None
        if args.details:
            _details(idx, args, key)
            return EXIT_OK
        if args.format == "table" or args.pairs:
            pairs = idx.pair_list(args.min, key)
            if args.format == "table":
                rows = (p.table_row() for p in pairs)
                write_rows(rows, PAIR_TABLE_COLUMNS, "table", sys.stdout)
                if not pairs:
                    what = f"for {key}" if key else "in the index"
                    print(f"simdask: no similar documents {what}", file=sys.stderr)
            else:
                write_rows((p.to_dict() for p in pairs), PAIR_FIELDS, args.format, sys.stdout)
            return EXIT_OK
        stored = idx.similar(key, args.min) if key else idx.pairs(args.min)
        write_rows((r.to_dict() for r in stored), PAIR_COLUMNS, args.format, sys.stdout)
    return EXIT_OK


def _details(idx: Index, args, key: str | None) -> None:
    """``--details``: the unordered pairs with both documents' dates and the decision."""
    pairs = idx.pair_list(args.min, key)
    more = pair_details(idx.catalog, [(p.a_key, p.b_key) for p in pairs])
    rows = [{**p.table_row(), **d} for p, d in zip(pairs, more, strict=True)]
    cols = (*(PAIR_TABLE_COLUMNS if args.format == "table" else PAIR_FIELDS), *DETAIL_FIELDS)
    write_rows(rows, cols, args.format, sys.stdout)
