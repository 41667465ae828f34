"""``simdask remove INDEX KEY...``: delete documents by key (one run)."""

from __future__ import annotations

import sys
from pathlib import Path

from simdask.cli._args import add_cluster_arguments
from simdask.cli._common import EXIT_OK, print_summary, update_index
from simdask.index import Index

__all__ = ["register", "run", "still_in_source"]


def register(subparsers) -> None:
    """Declare ``remove``."""
    p = subparsers.add_parser(
        "remove",
        help="delete documents by key",
        description="Delete documents from the index. A KEY is a document's key, its path as "
        "given to update, or a unique end of a key. A document whose file is still in its "
        "source is added back by the next update of that source: move the file away, or "
        "leave that source out.",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("keys", metavar="KEY", nargs="+")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS")
    p.add_argument("--quiet", action="store_true")
    add_cluster_arguments(p)


def still_in_source(key: str, source: str) -> str | None:
    """A note when the document ``key`` of ``source`` (its resolved path) is still there, so
    that the next update of that source adds it back; None when it is gone."""
    src = Path(source)
    if src.is_dir():
        rel = key.split("/", 1)[1] if "/" in key else key
        where = src / rel
        if not where.is_file():
            return None
    elif src.is_file():
        where = src
        if src.suffix.lower() == ".jsonl":
            return (
                f"{key} comes from {src}: the next `simdask update` of it adds it back if "
                "its line is still there"
            )
    else:
        return None
    return (
        f"{where} is still there: the next `simdask update` of {src} adds {key} back "
        "(move the file away, or leave that source out)"
    )


def run(args) -> int:
    """Run ``simdask remove``: unknown keys fail before a cluster is started."""
    notes = []
    with Index.open(args.index) as idx:
        keys = [idx.resolve_key(k) for k in args.keys]
        for typed, key in zip(args.keys, keys, strict=True):
            if typed != key:
                print(f"simdask: {typed}: the document {key}", file=sys.stderr)
            note = still_in_source(key, idx.catalog.document(key).source)
            if note:
                notes.append(note)
    print_summary(
        update_index(args, args.index, None, remove=keys), getattr(args, "verbose", False)
    )
    for note in notes:
        print(f"simdask: note: {note}", file=sys.stderr)
    return EXIT_OK
