"""``simdask lsh pairs|query|dedup|tune``: the MinHash LSH mode (and ``compare --lsh``).

``pairs`` and ``query`` are read-only (no lock, no cluster) over an index built with
``simdask update INDEX SOURCE... --lsh BANDSxROWS``; ``dedup`` (all pairs of files, in memory)
and ``tune`` need no index. Exit status as for ``query``: 3 when some documents could not be
read.
"""

from __future__ import annotations

import argparse
import sys

from simdask.cli._args import add_format, config_of
from simdask.cli._common import EXIT_OK, EXIT_UNREADABLE
from simdask.cli.output import write_rows
from simdask.config import IndexConfig
from simdask.errors import ConfigError
from simdask.index import Index
from simdask.ingest.sources import read_queries
from simdask.kernels.lsh_bands import LshParams, s_curve, tune
from simdask.lsh_plot import plot_curves
from simdask.write.exclude import index_exclusions, read_templates

__all__ = ["EXIT_UNREADABLE", "register", "run", "run_compare"]

PAIR_COLUMNS = ("doc", "other", "jaccard")
QUERY_COLUMNS = ("query", "key", "jaccard")
GROUP_COLUMNS = ("a_key", "b_key", "jaccard")


def _fraction(text: str) -> float:
    v = float(text)
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a fraction in 0..1, got {text}")
    return v


def _positive(text: str) -> int:
    v = int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text}")
    return v


def register(subparsers) -> None:
    """Declare ``simdask lsh`` and its subcommands."""
    p = subparsers.add_parser(
        "lsh",
        help="MinHash LSH near-duplicates by estimated Jaccard similarity (pairs, query, tune)",
        description="Near-duplicate search by estimated Jaccard similarity of chunk sets "
        "(fractions 0..1), with b bands of r rows: a pair of Jaccard s becomes a candidate with "
        "probability 1-(1-s^r)^b. Build the LSH data with `simdask update INDEX SOURCE... "
        "--lsh BANDSxROWS`.",
    )
    sub = p.add_subparsers(dest="lsh_command", required=True, metavar="SUBCOMMAND")
    q = sub.add_parser("pairs", help="all candidate pairs of the index, each unordered pair once")
    q.add_argument("index", metavar="INDEX")
    q.add_argument("--min", type=_fraction, default=0.0, metavar="J", help="least Jaccard (0)")
    q.add_argument("--exact", action="store_true", help="add the exact Jaccard of the chunk sets")
    add_format(q)
    q = sub.add_parser("query", help="indexed documents near the given files (read-only)")
    q.add_argument("index", metavar="INDEX")
    q.add_argument("files", metavar="FILE", nargs="+", help="file, folder or .jsonl file")
    q.add_argument("--min", type=_fraction, default=0.0, metavar="J", help="least Jaccard (0)")
    add_format(q)
    q = sub.add_parser(
        "dedup",
        help="near-duplicate pairs among the given documents, in memory (no index)",
        description="Chunk the documents, compute their MinHash signatures and band keys and "
        "print every candidate pair once with its estimated Jaccard (one process, nothing "
        "stored; for repeated searches build an index with `update --lsh`).",
    )
    q.add_argument("files", metavar="SOURCE", nargs="+", help="file, folder or .jsonl file")
    q.add_argument("--lsh", default="20x5", metavar="BxR", help="B bands of R rows (20x5)")
    q.add_argument("--min", type=_fraction, default=0.0, metavar="J", help="least Jaccard (0)")
    q.add_argument("--hash-bits", type=int, help="bits of a chunk ID (default: the index's)")
    q.add_argument(
        "--threads",
        type=_positive,
        metavar="N",
        help="threads chunking and signing the documents (default: one per CPU; same output)",
    )
    add_format(q)
    q = sub.add_parser("tune", help="bands x rows for a Jaccard threshold (S-curve)")
    q.add_argument("--threshold", type=_fraction, required=True, metavar="T")
    q.add_argument("--perms", type=int, default=128, help="most permutations (128)")
    q.add_argument("--max-fp", type=float, metavar="F", help="largest false-positive area")
    q.add_argument("--max-fn", type=float, metavar="F", help="largest false-negative area")
    q.add_argument("--plot", metavar="FILE.png", help="draw the S-curves (needs matplotlib)")


def run(args) -> int:
    """Run ``simdask lsh ...``; returns the exit status."""
    run_of = {"pairs": _pairs, "query": _query, "dedup": _dedup, "tune": _tune}
    return run_of[args.lsh_command](args)


def _pairs(args) -> int:

    with Index.open(args.index) as idx, idx.snapshot():  # one committed state
        pairs = idx.lsh_pairs(args.min, exact=args.exact)
    cols = (*PAIR_COLUMNS, "exact_jaccard") if args.exact else PAIR_COLUMNS
    write_rows((p.to_dict() for p in pairs), cols, args.format, sys.stdout)
    return EXIT_OK


def _query(args) -> int:

    docs = read_queries(args.files)
    good = [(k, t) for k, t in docs if isinstance(t, str)]
    with Index.open(args.index) as idx, idx.snapshot():  # one committed state
        results = idx.lsh_query([t for _, t in good], args.min)
    rows = (
        {"query": key, **m.to_dict()}
        for (key, _), matches in zip(good, results, strict=True)
        for m in matches
    )
    write_rows(rows, QUERY_COLUMNS, args.format, sys.stdout)
    bad = [t for _, t in docs if not isinstance(t, str)]
    for e in bad:
        print(f"simdask: error: cannot read {e}", file=sys.stderr)
    return EXIT_UNREADABLE if bad else EXIT_OK


def _dedup(args) -> int:

    params = LshParams.parse(args.lsh)
    docs = read_queries(args.files)
    good = [(k, t) for k, t in docs if isinstance(t, str)]
    config = IndexConfig() if args.hash_bits is None else IndexConfig(hash_bits=args.hash_bits)
    from simdask.read.lsh_search import text_pairs  # the LSH mode only: a query's cold start

    pairs = text_pairs([t for _, t in good], params, config, args.min, threads=args.threads)
    rows = ({"doc": good[i][0], "other": good[j][0], "jaccard": s} for i, j, s in pairs)
    write_rows(rows, PAIR_COLUMNS, args.format, sys.stdout)
    print(f"{len(good)} documents (LSH {params}): {len(pairs)} pairs", file=sys.stderr)
    bad = [t for _, t in docs if not isinstance(t, str)]
    for e in bad:
        print(f"simdask: error: cannot read {e}", file=sys.stderr)
    return EXIT_UNREADABLE if bad else EXIT_OK


def _tune(args) -> int:

    params, fp, fn = tune(args.threshold, args.perms, args.max_fp, args.max_fn)
    b, r = params.bands, params.rows
    print(f"--lsh {params}   ({b} bands x {r} rows = {params.perms} permutations)")
    print(f"threshold {args.threshold}: false-positive area {fp:.4f}, false-negative area {fn:.4f}")
    print(f"S-curve midpoint (1/b)^(1/r) = {(1 / b) ** (1 / r):.3f}")
    points = sorted({0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, round(args.threshold, 4)})
    rows = [
        {"jaccard": f"{s:.3f}", "candidate_probability": f"{float(s_curve(s, b, r)):.4f}"}
        for s in points
    ]
    write_rows(rows, ("jaccard", "candidate_probability"), "table", sys.stdout)
    if args.plot:
        plot_curves(args.plot, [params], args.threshold)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return EXIT_OK


def run_compare(args) -> int:
    """``simdask compare A B --lsh BxR``: cross-group pairs by estimated Jaccard, in memory
    (no index, no cluster); ``--min`` is then a fraction."""

    params = LshParams.parse(args.lsh)
    if not 0.0 <= args.min <= 1.0:
        raise ConfigError(f"with --lsh, --min is a Jaccard fraction in 0..1, got {args.min}")
    groups = [read_queries([args.group_a]), read_queries([args.group_b])]
    good = [[(k, t) for k, t in g if isinstance(t, str)] for g in groups]
    config = config_of(args)
    excl = index_exclusions(config, read_templates(args.exclude or ()))
    texts = [t for _, t in good[0]], [t for _, t in good[1]]
    from simdask.read.lsh_search import group_pairs  # the LSH mode only: a query's cold start

    pairs = group_pairs(*texts, params, config, args.min, excl=excl)
    rows = ({"a_key": good[0][i][0], "b_key": good[1][j][0], "jaccard": s} for i, j, s in pairs)
    write_rows(rows, GROUP_COLUMNS, args.format, sys.stdout)
    print(
        f"compared {len(good[0])} documents of A with {len(good[1])} of B (LSH {params}): "
        f"{len(pairs)} cross-group pairs",
        file=sys.stderr,
    )
    bad = [t for g in groups for _, t in g if not isinstance(t, str)]
    for e in bad:
        print(f"simdask: error: cannot read {e}", file=sys.stderr)
    return EXIT_UNREADABLE if bad else EXIT_OK
