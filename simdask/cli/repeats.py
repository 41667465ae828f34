"""``simdask repeats SOURCE_OR_INDEX... --n N --min-count M --out FILE``: repeated n-grams.

Thin over :func:`simdask.engine.repeats_run.find_repeats`.
"""

from __future__ import annotations

import sys

from simdask.cli._args import add_cluster_arguments
from simdask.cli._common import EXIT_OK, EXIT_UNREADABLE, run_progress
from simdask.engine.repeats_config import METHODS, RepeatsConfig

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``repeats``."""

    d = RepeatsConfig()
    p = subparsers.add_parser(
        "repeats",
        help="every word n-gram occurring at least M times, with its locations",
        description="Find every run of N consecutive words (in text order, inside one "
        "document) that occurs at least M times in the sources, with its locations "
        "(document key, word offset). A source is a file, a folder, a .jsonl file or an "
        "index (its stored texts). Output: FILE.jsonl (one row a line: ngram, count, "
        "documents, locations) or FILE.parquet (needs pyarrow). The two-pass method "
        "(paper 004) keeps temporary disk small: only hashes and locations are written "
        "first, texts only for the n-grams that may repeat; results are exact.",
    )
    p.add_argument("sources", nargs="+", metavar="SOURCE_OR_INDEX")
    p.add_argument("--n", type=int, default=d.n, help=f"words per n-gram (default {d.n})")
    p.add_argument(
        "--min-count", type=int, default=d.min_count, help="least occurrences (default 2)"
    )
    p.add_argument("--out", required=True, metavar="FILE", help="FILE.jsonl or FILE.parquet")
    p.add_argument("--tmp", metavar="DIR", help="folder for temporary files (default: system)")
    p.add_argument("--method", choices=METHODS, default=d.method, help="default two-pass")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_cluster_arguments(p)


def run(args) -> int:
    """Run ``simdask repeats``; returns the exit status (3 if some documents were unreadable)."""
    from simdask.cluster.connect import connect  # loads dask: only when a run needs it
    from simdask.engine.repeats_run import find_repeats  # loads dask, as above

    config = RepeatsConfig(n=args.n, min_count=args.min_count, method=args.method)
    callback = run_progress(args)
    with connect(args.cluster.spec) as client:
        res = find_repeats(
            args.sources, args.out, config, client=client, tmp=args.tmp, callback=callback
        )
    print(
        f"{res.rows} repeated {args.n}-grams (at least {args.min_count} times) in "
        f"{res.documents} documents written to {args.out}; "
        f"peak temporary disk {res.peak_temp_bytes} bytes",
        file=sys.stderr,
    )
    for key, kind, msg in res.errors:
        print(f"simdask: error: {key}: {kind}: {msg}", file=sys.stderr)
    return EXIT_UNREADABLE if res.errors else EXIT_OK
