"""``simdask stats INDEX``: documents, chunks, pairs, shards, bytes on disk, config."""

from __future__ import annotations

import json

from simdask.cli._common import EXIT_OK
from simdask.index import Index

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``stats``."""
    p = subparsers.add_parser(
        "stats", help="documents, chunks, pairs, shards, bytes on disk, config"
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("--format", choices=("table", "json"), default="table")


def run(args) -> int:
    """Print the statistics as ``name value`` lines (config as ``config.NAME``, the heavy
    chunks of the last run as ``heavy.NAME``) or JSON."""
    with Index.open(args.index) as idx, idx.snapshot():  # one committed state
        st = idx.stats()
    if args.format == "json":
        print(json.dumps(st, indent=2))
        return EXIT_OK
    for k, v in st.items():
        if k in ("config", "heavy") and isinstance(v, dict):
            for ck, cv in v.items():
                print(f"{k}.{ck:<{23 - len(k)}} {cv}")
        else:
            print(f"{k:<24} {v}")
    return EXIT_OK
