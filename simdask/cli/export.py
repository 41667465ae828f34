"""``simdask export INDEX FILE.parquet``: the stored similarity rows (or the totals) as Parquet."""

from __future__ import annotations

import sys

from simdask.cli._common import EXIT_OK
from simdask.errors import ConfigError
from simdask.index import Index
from simdask.read.result_export import write_pairs_parquet, write_totals_parquet

__all__ = ["register", "run"]

_DESCRIPTION = (
    "Write the index's stored directed similarity rows (the columns of `simdask similar "
    "--format jsonl`: doc, other, similarity, aligned, total, source_excluded, decision, "
    "note, shared, doc_chunks, other_chunks; the most similar first) or, with --totals, "
    "every document's total (the fields of `simdask totals --format jsonl`) to a Parquet "
    "file, from one committed state, in bounded memory. Needs pyarrow: pip install "
    "'simdask[parquet]'."
)


def register(subparsers) -> None:
    """Declare ``export``."""
    p = subparsers.add_parser(
        "export",
        help="write the similarity rows or the totals as Parquet",
        description=_DESCRIPTION,
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("out", metavar="FILE", help="the Parquet file to write (.parquet)")
    p.add_argument("--totals", action="store_true", help="the totals instead of the pairs")
    p.add_argument(
        "--min", type=float, default=0.0, metavar="PCT", help="only rows of at least PCT percent"
    )


def run(args) -> int:
    """Write the file; says how many rows on stderr."""
    if not args.out.endswith(".parquet"):
        raise ConfigError(f"expected FILE to end in .parquet, found {args.out!r}")
    with Index.open(args.index) as idx:
        if args.totals:
            n = write_totals_parquet(idx, args.out)
        else:
            n = write_pairs_parquet(idx, args.out, args.min)
    what = "totals" if args.totals else "similarity rows"
    print(f"simdask: {n} {what} written to {args.out}", file=sys.stderr)
    return EXIT_OK
