"""``simdask export-html INDEX OUTDIR``: a static site to browse the index."""

from __future__ import annotations

import sys

from simdask.cli._args import add_exact_only, add_min_match, view_options
from simdask.cli._common import EXIT_OK, progress
from simdask.errors import ConfigError
from simdask.evidence.site import PER_DOCUMENT, SiteLimits, export_site
from simdask.index import Index
from simdask.read.undirected_pairs import counted

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``export-html``."""
    p = subparsers.add_parser(
        "export-html",
        help="write a static site to browse the index (documents, matches, pair reports)",
        description="Write a static site: a front page, one page per document with the "
        "passages of all its sources marked in its text, and side-by-side pages for each "
        f"document's {PER_DOCUMENT} most similar partners (--per-document N; --all-pairs: "
        "every stored pair). Every other pair links to a page giving the command that "
        "writes its side-by-side page.",
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
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--per-document",
        type=int,
        metavar="N",
        help="a pair report only for the N most similar pairs of each document "
        f"({PER_DOCUMENT}; with --pairs: every pair listed)",
    )
    which.add_argument(
        "--all-pairs",
        action="store_true",
        help="a pair report for every stored pair (no --max-pairs, no --per-document): "
        "large on a large index",
    )
    p.add_argument(
        "--pairs",
        metavar="FILE",
        help="pair reports only for the pairs listed in FILE, one per line: KEY_A<TAB>KEY_B",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="processes computing the pair reports (default: one per core; 1: this one)",
    )
    add_exact_only(p)
    add_min_match(p)
    p.add_argument("--quiet", action="store_true")


def run(args) -> int:
    """Write the site; say on stderr how many documents and pair reports it has."""
    pairs = _read_pairs(args.pairs) if args.pairs else None
    limits = SiteLimits.chosen(args.min, args.max_pairs, args.per_document, pairs, args.all_pairs)
    with Index.open(args.index) as idx, idx.snapshot():  # one committed state
        n = export_site(
            idx,
            args.outdir,
            callback=progress(args),
            limits=limits,
            options=view_options(args),
            workers=args.workers,
        )
    skipped = n["pairs_skipped"]
    print(
        f"wrote {args.outdir}/index.html: {counted(n['documents'], 'document')}, "
        f"{counted(n['pairs'], 'pair report')}"
        + (
            f" ({counted(skipped, 'more stored pair')} without one: "
            f"they open {args.outdir}/pair.html, which shows their exact passages in the "
            "browser; --all-pairs writes them all)"
            if skipped
            else ""
        ),
        file=sys.stderr,
    )
    return EXIT_OK


def _read_pairs(path: str) -> tuple[tuple[str, str], ...]:
    """Pairs of keys from a file of ``KEY_A<TAB>KEY_B`` lines (blank lines skipped)."""
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 2:
                raise ConfigError(
                    f"{path} line {n}: expected KEY_A<TAB>KEY_B, found {len(parts)} fields"
                )
            out.append((parts[0], parts[1]))
    return tuple(out)
