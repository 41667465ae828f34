"""``simdask query INDEX FILE...``: documents that are not in the index, compared against it.

Read-only (no writer lock, no cluster). Thin over :func:`simdask.queries.query_files` (files,
folders, JSONL). Exit status: 0 when every query document was read, 3 when some could not be
(each is named on stderr; the others are still queried and printed), 1 for a simdask error
such as a missing index.
"""

from __future__ import annotations

import sys

from simdask.cli._args import (
    add_exact_only,
    add_format,
    add_min_match,
    add_total_sorting,
    view_options,
)
from simdask.cli._common import EXIT_OK, EXIT_UNREADABLE, NOTE_KINDS
from simdask.cli.output import write_rows
from simdask.evidence.results_html import query_page, write_page
from simdask.index import Index
from simdask.ingest.sources import TEXT_SUFFIXES, read_queries
from simdask.queries import query_documents
from simdask.read.query_sources import flag_rows, query_exclusions, rows_with_totals
from simdask.read.undirected_pairs import Pair, counted, holds, pct

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
    "reverse_shared",
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
    p.add_argument(
        "--top",
        type=int,
        default=None,
        metavar="N",
        help="per query document, list only the N documents with the largest similarity "
        "either way (default: as many as the index stores per document, its top_k, 100 "
        "unless set at creation; 0: every document passing --min). A note on stderr says "
        "when documents were left out",
    )
    add_format(p)
    p.add_argument(
        "--html",
        metavar="FILE",
        help="also write the results as an HTML page: one row per pair in words, with the "
        "passages of each (aligned: copied, paraphrased or summarised) and how much of each "
        "text they cover",
    )
    add_exact_only(p)
    p.add_argument(
        "--totals",
        action="store_true",
        help="align each query document with its top 5 candidates (--align-top): its total "
        "(percent of its words found in any of them) and, per row, aligned (percent of it "
        "inside passages taken from that document); implied by --sort and --min-total",
    )
    p.add_argument(
        "--align-top", type=int, default=5, metavar="N", help="with totals: candidates aligned"
    )
    add_total_sorting(p)
    add_min_match(p)
    p.add_argument(
        "--exclude-source",
        action="append",
        default=[],
        metavar="KEY",
        help="leave the indexed document KEY out of this check's total (its row stays, "
        "flagged source_excluded; repeatable). A checked file that is an indexed document "
        "(its key, or the end of it, and the same text) also leaves out the sources `simdask "
        "mark DOC SOURCE --exclude-source` left out of that document",
    )


def run(args) -> int:
    """Run ``simdask query``; returns the exit status."""
    with Index.open(args.index) as idx, idx.snapshot():  # one committed state
        docs = read_queries(args.files)
        batch = query_documents(idx, docs, args.min, args.top)
        excluded = query_exclusions(idx, docs, args.exclude_source)
        rows = [{"query": r.key, **m.to_dict()} for r in batch.results for m in r.matches]
        rows = flag_rows(rows, excluded)
        texts = {key: text for key, text in docs if isinstance(text, str)}
        totals = args.totals or args.sort != "similarity" or args.min_total is not None
        if totals:
            rows = rows_with_totals(idx, rows, texts, args.align_top, args.sort, args.min_total)
        if args.html:
            notes = _notes(batch)
            _write_html(args.html, idx, rows, texts, notes, view_options(args), excluded)
    extra = ("aligned", "total") if totals else ()
    flag = ("source_excluded",) if excluded else ()
    if args.format == "table":
        for row in rows:
            row["in_words"] = holds(
                row["query"], row["key"], row["similarity"], row["reverse_similarity"]
            )
        if not totals:
            rows.sort(key=lambda r: -max(r["similarity"], r["reverse_similarity"]))
        if rows:
            cols = (*TABLE_COLUMNS[:4], *extra, *flag, *TABLE_COLUMNS[4:])
            write_rows(rows, cols, "table", sys.stdout)
        elif batch.results:
            print(no_match(len(batch.results), args.min))
    else:
        write_rows(rows, (*COLUMNS, *extra, "source_excluded"), args.format, sys.stdout)
    for name, keys in excluded.items():
        print(f"simdask: note: left out of {name}: {', '.join(sorted(keys))}", file=sys.stderr)
    for level, msg in _notes(batch):
        print(f"simdask: {level}: {msg}", file=sys.stderr)
    errors = [e for e in batch.unreadable if e.kind not in NOTE_KINDS]
    return EXIT_UNREADABLE if errors else EXIT_OK


def no_match(n: int, least: float) -> str:
    """The table's line when no indexed document matched ``n`` checked documents (instead
    of a bare header)."""
    above = f" {pct(least)} or more either way" if least > 0 else ""
    checked = counted(n, "checked document")
    return f"no match: no indexed document shares text{above} with the {checked}"


def _notes(batch) -> list[tuple[str, str]]:
    """``(level, message)`` of the documents not compared: notes (too short, scanned PDF)
    and errors (could not be read)."""
    out = [
        ("note", f"{r.key}: too few words to be compared (fewer than {batch.k})")
        for r in batch.results
        if r.too_short
    ]
    out += [
        (
            "note",
            f"{r.key}: listed the {len(r.matches):,} most similar of the {r.passed:,} "
            "documents passing --min (--top 0 lists all)",
        )
        for r in batch.results
        if r.passed > len(r.matches)
    ]
    for e in batch.unreadable:
        if e.kind in NOTE_KINDS:
            out.append(("note", f"not compared: {e}"))
        else:
            out.append(("error", f"cannot read {e}"))
    return out


def _write_html(
    path: str, idx: Index, rows, texts: dict[str, str], notes, options, excluded
) -> None:
    """The results as one HTML page, each pair with its passages."""
    pairs = [
        Pair(
            r["query"],
            r["key"],
            r["similarity"],
            r["reverse_similarity"],
            r["shared"],
            r["query_chunks"],
            r["doc_chunks"],
        )
        for r in rows
    ]
    pairs.sort(key=lambda p: -p.larger)
    write_page(path, query_page(idx, pairs, texts, notes, options, excluded))
    print(f"wrote {path}", file=sys.stderr)
