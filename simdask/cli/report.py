"""``simdask report INDEX A B``: how much a pair shares, and where: both chunk containments,
the aligned passages (copied, paraphrased, summarised) with the share of each text they cover
(``--exact-only``: the exact 5-word evidence). Thin over
:func:`simdask.evidence.pair_view.index_report`.

Each side is a document of the index (its key, its path as given to update, or a unique end
of its key) or a document file that is not in the index (compared as ``query`` reads it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from simdask.cli._args import add_exact_only, add_min_match, view_options
from simdask.cli._common import EXIT_OK
from simdask.errors import DocumentNotFoundError
from simdask.evidence.pair_view import index_report
from simdask.evidence.pdf import html_to_pdf
from simdask.evidence.report_html import render_pair_html
from simdask.evidence.summary_text import format_report
from simdask.index import Index
from simdask.ingest.sources import read_document

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``report``."""
    p = subparsers.add_parser(
        "report",
        help="how much two documents share, and where: both percentages and the passages",
        description="Compare two documents from their texts: both percentages of exact "
        "5-word chunks, the passages of A taken from B (copied word for word, paraphrased or "
        "summarised; --exact-only: only exact runs of shared chunks) with the share of each "
        "text they cover, a few words of each passage and where they are; --format json "
        "gives every passage with character offsets into each text, its kind and score "
        "(`simdask text INDEX KEY` prints that text) and the similarity the index holds "
        "(`hashed_similarity`: computed from hashed chunks, which may rarely collide). "
        "A and B: a document of the index (its key, its path as given to update, or a "
        "unique end of its key) or a document file that is not in the index.",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("key", metavar="A")
    p.add_argument("other", metavar="B")
    p.add_argument("--min-chunks", type=int, default=2, help="shortest passage, in chunks (2)")
    add_min_match(p)
    p.add_argument("--html", metavar="FILE", help="write the side-by-side HTML report to FILE")
    p.add_argument(
        "--pdf",
        metavar="FILE",
        help="write the evidence as a PDF to FILE: the two texts side by side with the numbered "
        "passages, both documents' dates, the decision, the settings and exclusions used and "
        "a legend (printed by a Chromium, Chrome or Edge browser found on the machine)",
    )
    p.add_argument(
        "--browser",
        metavar="PATH",
        help="the browser that prints --pdf (default: $SIMDASK_BROWSER, else chromium, "
        "google-chrome or msedge found on PATH or where they are usually installed)",
    )
    add_exact_only(p)
    p.add_argument(
        "--format",
        choices=("text", "json"),
        help="text: a short summary (the default without --html); json: the whole report",
    )


def _side(idx: Index, typed: str) -> tuple[str, str, bool]:
    """``(key, text, indexed)`` of what ``typed`` names: a document of the index (its key or
    its path as given to update), else a document file that is not in it, else the document
    whose key ends with it."""
    try:
        key = idx.resolve_key(typed, ends=False)
    except DocumentNotFoundError:
        if Path(typed).is_file():  # a file on disk before the end of some key
            _, text = read_document(typed)
            return typed, text, False
        key = idx.resolve_key(typed)
    return key, idx.text(key), True


def run(args) -> int:
    """Print the summary or the JSON report, and/or write it as an HTML page or a PDF."""
    options = view_options(args, min_chunks=args.min_chunks)
    with Index.open(args.index) as idx, idx.snapshot():  # one committed state
        ka, ta, a_in = _side(idx, args.key)
        kb, tb, b_in = _side(idx, args.other)
        k = idx.config.k
        rep = index_report(
            idx,
            ka,
            kb,
            text=None if a_in and b_in else ta,
            other_text=None if b_in else tb,
            options=options,
        )
    if args.html:
        Path(args.html).write_text(render_pair_html(rep, ta, tb), encoding="utf-8")
        print(f"wrote {args.html}", file=sys.stderr)
    if args.pdf:
        html_to_pdf(render_pair_html(rep, ta, tb, printing=True), args.pdf, args.browser)
        print(f"wrote {args.pdf}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(rep, ensure_ascii=False))
    elif args.format == "text" or not (args.html or args.pdf):
        print(format_report(rep, ta, tb, k))
    return EXIT_OK
