"""``simdask similar INDEX [KEY]``: the stored similar pairs, all or of one document.

The table shows one row per unordered pair, both percentages and their plain wording
(:mod:`simdask.read.undirected_pairs`); JSONL and CSV print the stored directed rows
(``doc -> other``), or with ``--pairs`` the undirected rows
(:data:`simdask.read.undirected_pairs.PAIR_FIELDS`).
"""

from __future__ import annotations

import sys

from simdask.cli._args import add_format, add_total_sorting
from simdask.cli._common import EXIT_OK, PAIR_COLUMNS, PAIR_TABLE_COLUMNS
from simdask.cli.output import write_rows
from simdask.index import Index
from simdask.read.batch import BATCH_FIELDS, GROUP_LEVEL, batch_overview
from simdask.read.review import DETAIL_FIELDS, pair_details, with_decisions
from simdask.read.total_reads import similar_rows
from simdask.read.undirected_pairs import PAIR_FIELDS

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
        "similarity = percent of doc found in other, aligned = percent of doc's words inside "
        "passages the text aligner found taken from other, total = percent of doc's words "
        "found in any other document (null: not aligned; `simdask totals`), source_excluded "
        "(the teacher left other out of doc's total), decision and note (kept on the pair by "
        "`simdask mark`; null: none), shared, doc_chunks, other_chunks); --pairs prints the "
        "table's rows there too. The table shows the decisions when any pair has one.",
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
    b = p.add_argument_group(
        "batch overview",
        "--batch lists the documents of a run (default: the last one), a folder or a date "
        "range, the most found in other documents first (their total), with their best "
        "source, its folder and date; then the groups of documents that share text.",
    )
    b.add_argument("--batch", action="store_true", help="the batch overview instead of pairs")
    b.add_argument("--run", type=int, metavar="N", help="the documents run N added or modified")
    b.add_argument("--folder", metavar="PREFIX", help="the documents under this folder of keys")
    b.add_argument("--since", metavar="YYYY-MM-DD", help="first indexed on or after this date")
    b.add_argument("--until", metavar="YYYY-MM-DD", help="first indexed on or before this date")
    b.add_argument(
        "--level",
        type=float,
        default=GROUP_LEVEL,
        metavar="PCT",
        help=f"two documents are in one group when at least PCT %% of one is found in the "
        f"other (default {GROUP_LEVEL:g})",
    )
    b.add_argument("--groups", action="store_true", help="print the groups (one row each) instead")
    add_format(p)
    add_total_sorting(p)


def _batch(idx, args) -> int:
    """Print the batch overview (or its groups)."""
    batch = batch_overview(
        idx.catalog,
        run=args.run,
        prefix=args.folder,
        since=args.since,
        until=args.until,
        level=args.level,
    )
    if args.groups:
        rows = (
            {"group": i + 1, "size": len(g), "documents": ", ".join(g)}
            for i, g in enumerate(batch.groups)
        )
        write_rows(rows, ("group", "size", "documents"), args.format, sys.stdout)
        return EXIT_OK
    table = args.format == "table"
    rows = (r.table_row() if table else r.to_dict() for r in batch.rows)
    write_rows(rows, BATCH_FIELDS, args.format, sys.stdout)
    if table:
        print(f"simdask: {len(batch.rows)} documents ({batch.what})", file=sys.stderr)
        for i, g in enumerate(batch.groups):
            print(f"group {i + 1} ({len(g)} documents): {', '.join(g)}", file=sys.stderr)
    return EXIT_OK


def run(args) -> int:
    """Print the pairs, best first (or the batch overview)."""
    with Index.open(args.index) as idx, idx.snapshot():  # one committed state
        if args.batch or args.groups:
            return _batch(idx, args)
        key = idx.resolve_key(args.key) if args.key else None
        if args.details:
            _details(idx, args, key)
            return EXIT_OK
        by_totals = args.sort != "similarity" or args.min_total is not None
        if (args.format == "table" and not by_totals) or args.pairs:
            pairs = idx.pair_list(args.min, key)
            if args.format == "table":
                rows, decided = with_decisions(idx.catalog, [p.table_row() for p in pairs])
                cols = (*PAIR_TABLE_COLUMNS, "decision") if decided else PAIR_TABLE_COLUMNS
                write_rows(rows, cols, "table", sys.stdout)
                if not pairs:
                    what = f"for {key}" if key else "in the index"
                    print(f"simdask: no similar documents {what}", file=sys.stderr)
            else:
                write_rows((p.to_dict() for p in pairs), PAIR_FIELDS, args.format, sys.stdout)
            return EXIT_OK
        rows = similar_rows(idx, key, args.min, args.sort, args.min_total)
        write_rows(rows, PAIR_COLUMNS, args.format, sys.stdout)
    return EXIT_OK


def _details(idx: Index, args, key: str | None) -> None:
    """``--details``: the unordered pairs with both documents' dates and the decision."""
    pairs = idx.pair_list(args.min, key)
    more = pair_details(idx.catalog, [(p.a_key, p.b_key) for p in pairs])
    rows = [{**p.table_row(), **d} for p, d in zip(pairs, more, strict=True)]
    cols = (*(PAIR_TABLE_COLUMNS if args.format == "table" else PAIR_FIELDS), *DETAIL_FIELDS)
    write_rows(rows, cols, args.format, sys.stdout)
