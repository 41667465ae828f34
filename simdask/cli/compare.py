"""``simdask compare GROUP_A GROUP_B``: which documents of group A share text with which of B.

Thin over :func:`simdask.compare_groups`. Exit status: 0 when every document was read, 3 when
some could not be (named on stderr; the pairs of the others are printed), 1 for a simdask
error (e.g. an empty group).
"""

from __future__ import annotations

import sys

from simdask.cli._args import (
    add_cluster_arguments,
    add_exact_only,
    add_format,
    add_min_match,
    config_of,
    view_options,
)
from simdask.cli._common import EXIT_OK, EXIT_UNREADABLE, NOTE_KINDS, run_progress
from simdask.cli.lsh import run_compare
from simdask.cli.output import write_rows
from simdask.config import IndexConfig
from simdask.evidence.results_html import compare_page, write_page
from simdask.ingest.sources import TEXT_SUFFIXES
from simdask.read.undirected_pairs import Pair, holds

__all__ = ["COLUMNS", "EXIT_UNREADABLE", "register", "run"]

#: output columns: ``a_in_b`` percent of the A document's chunks found in the B document,
#: ``b_in_a`` the reverse; ``a_key``/``b_key`` are each group's own keys
COLUMNS = ("a_key", "b_key", "a_in_b", "b_in_a", "shared", "a_chunks", "b_chunks")
#: the table's columns: the plain wording of each pair last (``in_words``)
TABLE_COLUMNS = ("a_key", "b_key", "a_in_b", "b_in_a", "shared", "in_words")


def register(subparsers) -> None:
    """Declare ``compare``."""
    p = subparsers.add_parser(
        "compare",
        help="which documents of group A are similar to which of group B",
        description="Index both groups in a temporary index and print the pairs with one document "
        "in each group (pairs inside a group are not reported): `a_in_b` is the percent of the A "
        "document's chunks found in the B document, `b_in_a` the reverse. A group is one "
        f"SOURCE: a document file ({' '.join(TEXT_SUFFIXES)}), a folder (its files of these "
        "formats, recursively; other files are reported) or a .jsonl file; the same key may occur "
        "in both groups. Exit status 3 when some documents could not be read (the pairs of the "
        "others are still printed); too-short documents and scanned PDFs without text are notes. "
        "--min-match WORDS: only matches of >= WORDS words count (recounted without --max-df).",
    )
    p.add_argument("group_a", metavar="GROUP_A", help="file, folder or .jsonl file")
    p.add_argument("group_b", metavar="GROUP_B", help="file, folder or .jsonl file")
    p.add_argument(
        "--threshold",
        type=float,
        default=1.0,
        metavar="PCT",
        help="least similarity either way for a pair to be computed, percent (default 1)",
    )
    p.add_argument(
        "--min",
        "--min-similarity",
        dest="min",
        type=float,
        default=0.0,
        metavar="PCT",
        help="print only pairs at least this similar either way, percent (default 0)",
    )
    add_format(p)
    p.add_argument(
        "--html",
        metavar="FILE",
        help="also write the pairs as an HTML page: one row per pair in words, with the "
        "passages of each (aligned: copied, paraphrased or summarised)",
    )
    add_exact_only(p)
    add_min_match(p)
    p.add_argument(
        "--keep-index",
        metavar="DIR",
        help="build the index in DIR (new or empty) and keep it; keys there carry A/ and B/",
    )
    d = IndexConfig()
    p.add_argument("--hash-bits", type=int, default=d.hash_bits, help="bits of a chunk ID")
    p.add_argument(
        "--shards", type=int, help="shard ranges (default: chosen for the cluster, as update's)"
    )
    p.add_argument("--max-df", type=int, help="leave out chunks held by more than N documents")
    p.add_argument("--batch-docs", type=int, help="documents per chunking task (default: auto)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument(
        "--lsh",
        metavar="BxR",
        help="MinHash LSH instead (B bands of R rows): pairs by estimated Jaccard, in memory; "
        "--min is then a fraction 0..1",
    )
    g = p.add_argument_group("boilerplate (as update's options of the same names)")
    g.add_argument(
        "--exclude",
        nargs="+",
        action="extend",
        metavar="FILE",
        help="leave the chunks of these texts (a template, a licence, an assignment sheet; any "
        "format the groups may have) out of every count",
    )
    g.add_argument(
        "--exclude-quotes",
        action="store_true",
        help="leave text inside quotation marks and block quotes out of every count",
    )
    g.add_argument(
        "--exclude-bibliography",
        action="store_true",
        help="leave the reference list (References, Bibliography, Literatura, ...) out",
    )
    add_cluster_arguments(p)


def run(args) -> int:
    """Run ``simdask compare``; returns the exit status."""
    if args.lsh:
        return run_compare(args)
    from simdask.cluster.connect import (
        connect,  # dask and distributed: imported by the commands that run
    )
    from simdask.comparison import compare_groups  # builds an index with dask: only for runs
    from simdask.engine.run import RunOptions  # the engine imports dask: only for runs

    callback = run_progress(args)
    config = config_of(args)
    with connect(args.cluster.spec) as client:
        res = compare_groups(
            [args.group_a],
            [args.group_b],
            threshold=args.threshold,
            min_similarity=args.min,
            config=config,
            client=client,
            options=RunOptions(batch_docs=args.batch_docs),
            callback=callback,
            keep_index=args.keep_index,
            exclude=args.exclude,
            min_match=args.min_match,
        )
        callback.end_stage()
    if args.format == "table":
        rows = (
            {**p.to_dict(), "in_words": holds(p.a_key, p.b_key, p.a_in_b, p.b_in_a)}
            for p in res.pairs
        )
        write_rows(rows, TABLE_COLUMNS, "table", sys.stdout)
    else:
        write_rows((p.to_dict() for p in res.pairs), COLUMNS, args.format, sys.stdout)
    print(
        f"compared {res.documents['A']} documents of A with {res.documents['B']} of B: "
        f"{len(res.pairs)} cross-group pairs"
        + (f"; index kept in {res.index_path}" if res.index_path else ""),
        file=sys.stderr,
    )
    notes = [
        ("note" if kind in NOTE_KINDS else "error", f"group {group}: {key}: {kind}: {msg}")
        for group, key, kind, msg in res.errors
    ]
    if args.html:
        _write_html(args, res, notes, config.k)
    for level, msg in notes:
        print(f"simdask: {level}: {msg}", file=sys.stderr)
    errors = [e for e in res.unreadable if e[2] not in NOTE_KINDS]
    return EXIT_UNREADABLE if errors else EXIT_OK


def _write_html(args, res, notes, k: int) -> None:
    """The pairs as one HTML page (both groups are read again for the passages; the
    comparison's exclusions apply to them)."""
    pairs = [
        Pair(p.a_key, p.b_key, p.a_in_b, p.b_in_a, p.shared, p.a_chunks, p.b_chunks)
        for p in res.pairs
    ]
    options = view_options(args)
    page = compare_page((args.group_a, args.group_b), pairs, notes, k, res.exclusions, options)
    write_page(args.html, page)
    print(f"wrote {args.html}", file=sys.stderr)
