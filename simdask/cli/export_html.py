"""``simdask export-html INDEX OUTDIR``: a static site to browse the index."""

from __future__ import annotations

import sys

from simdask.cli._common import EXIT_OK, progress
from simdask.index import Index

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``export-html``."""
    p = subparsers.add_parser(
        "export-html",
        help="write a static site to browse the index (documents, matches, pair reports)",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("outdir", metavar="OUTDIR")
    p.add_argument(
        "--min",
        type=float,
        default=0.0,
        metavar="PCT",
        help="pair reports only for pairs at least this similar either way",
    )
    p.add_argument("--max-pairs", type=int, default=20_000, help="most pair reports (20000)")
    p.add_argument("--quiet", action="store_true")


def run(args) -> int:
    """Write the site; say on stderr how many documents and pair reports it has."""
    from simdask.evidence.site import export_site

    with Index.open(args.index) as idx:
        n = export_site(idx, args.outdir, args.min, args.max_pairs, callback=progress(args))
    skipped = n["pairs_skipped"]
    print(
        f"wrote {args.outdir}/index.html: {n['documents']} documents, {n['pairs']} pair reports"
        + (f" ({skipped} more pairs not written, see --max-pairs)" if skipped else ""),
        file=sys.stderr,
    )
    return EXIT_OK
