"""``simdask report INDEX KEY_A KEY_B``: exact similarity of a pair and its matching passages."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from simdask.cli._common import EXIT_OK
from simdask.index import Index

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``report``."""
    p = subparsers.add_parser(
        "report",
        help="exact similarity of a pair and its matching passages (JSON)",
        description="Recompute a pair exactly from the stored texts (true chunks, no hashing) "
        "and list the matching passages with character offsets into each text "
        "(`simdask text INDEX KEY` prints that text).",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("key", metavar="KEY_A")
    p.add_argument("other", metavar="KEY_B")
    p.add_argument("--min-chunks", type=int, default=2, help="shortest passage, in chunks (2)")
    p.add_argument(
        "--min-match",
        type=int,
        default=0,
        metavar="WORDS",
        help="do not show passages shorter than WORDS words (similarities unchanged)",
    )
    p.add_argument("--html", metavar="FILE", help="write the side-by-side HTML report to FILE")
    p.add_argument(
        "--format",
        choices=("json",),
        help="print the report as one JSON object (default unless --html is given)",
    )


def run(args) -> int:
    """Print the report as JSON and/or write it as an HTML page."""
    with Index.open(args.index) as idx:
        rep = idx.report(args.key, args.other, args.min_chunks, args.min_match)
        if args.html:
            from simdask.evidence.report_html import render_pair_html

            page = render_pair_html(rep, idx.text(args.key), idx.text(args.other))
            Path(args.html).write_text(page, encoding="utf-8")
            print(f"wrote {args.html}", file=sys.stderr)
    if args.format == "json" or not args.html:
        print(json.dumps(rep, ensure_ascii=False))
    return EXIT_OK
