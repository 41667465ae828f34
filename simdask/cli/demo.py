"""``simdask demo``: generate a small corpus, index it on a cluster, show the top pairs."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from simdask.cli._args import add_cluster_arguments
from simdask.cli._common import EXIT_OK, PAIR_TABLE_COLUMNS, print_summary, update_index
from simdask.cli.output import write_rows
from simdask.config import IndexConfig
from simdask.index import Index
from simdask.ingest.synth import generate_corpus, write_corpus

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``demo``."""
    p = subparsers.add_parser(
        "demo", help="generate a small corpus, index it on a LocalCluster, show the top pairs"
    )
    p.add_argument("--docs", type=int, default=2000, help="documents to generate (default 2000)")
    p.add_argument("--words", type=int, default=600, help="mean words per document (default 600)")
    p.add_argument("--out", help="keep corpus and index in this folder (default: a temporary one)")
    p.add_argument("--top", type=int, default=15, help="pairs to print (default 15)")
    p.add_argument("--quiet", action="store_true")
    add_cluster_arguments(p)


def run(args) -> int:
    """Generate, index, print the most similar pairs and the reuse the generator planted."""

    with tempfile.TemporaryDirectory(prefix="simdask-demo-") as tmp:
        base = Path(args.out) if args.out else Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        print(f"generating {args.docs} documents of ~{args.words} words ...", file=sys.stderr)
        corpus = generate_corpus(args.docs, mean_words=args.words, seed=1)
        src = write_corpus(corpus, base / "corpus.jsonl", fmt="jsonl")
        summary = update_index(args, base / "index", IndexConfig(), sources=[src], rebuild=True)
        print_summary(summary, getattr(args, "verbose", False))
        with Index.open(base / "index") as idx:
            rows = [p.table_row() for p in idx.pair_list()[: args.top]]
        print(f"\nthe {len(rows)} most similar pairs:")
        write_rows(rows, PAIR_TABLE_COLUMNS, "table", sys.stdout)
        kinds: dict[str, int] = {}
        for r in corpus.reuse:
            kinds[r.kind] = kinds.get(r.kind, 0) + 1
        print(f"\nthe generator planted {len(corpus.reuse)} reuse cases: {kinds}")
        if args.out:
            print(f"corpus and index kept in {base}")
    return EXIT_OK
