"""``simdask remove INDEX KEY...``: delete documents by key (one run)."""

from __future__ import annotations

from simdask.cli._args import add_cluster_arguments
from simdask.cli._common import EXIT_OK, print_summary, run_update
from simdask.errors import DocumentNotFoundError
from simdask.index import Index

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``remove``."""
    p = subparsers.add_parser("remove", help="delete documents by key")
    p.add_argument("index", metavar="INDEX")
    p.add_argument("keys", metavar="KEY", nargs="+")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS")
    p.add_argument("--quiet", action="store_true")
    add_cluster_arguments(p)


def run(args) -> int:
    """Run ``simdask remove``: unknown keys fail before a cluster is started."""
    with Index.open(args.index) as idx:
        known = idx.catalog.known_for(args.keys)
    missing = [k for k in args.keys if k not in known]
    if missing:
        raise DocumentNotFoundError(f"no document with key {missing[0]!r} in the index")
    print_summary(run_update(args, args.index, None, remove=args.keys))
    return EXIT_OK
