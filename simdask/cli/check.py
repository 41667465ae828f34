"""``simdask check INDEX``: verify the whole index (catalog, checksums of every recorded file,
text packs, the values of shards and similarity rows); exit status 0 clean, 5 damaged."""

from __future__ import annotations

import json
import sys

from simdask.cli._common import EXIT_DAMAGED, EXIT_OK
from simdask.errors import REPAIR_HINT
from simdask.storage.verify import check_index

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``check``."""
    p = subparsers.add_parser(
        "check",
        help="verify the whole index: checksums of all files, catalog, stored values",
        description="Read every file of the index once and compare it with the size and xxh3 "
        "recorded at its commit; check the catalog and the stored values. Exit status 0: "
        "clean; 5: damaged (each damaged file or table is listed).",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("--format", choices=("table", "json"), default="table")


def run(args) -> int:
    """Print what was checked and each damaged thing; 0 clean, 5 damaged."""
    rep = check_index(args.index)
    if args.format == "json":
        out = {
            "ok": rep.ok,
            "files_checked": rep.files_checked,
            "bytes_hashed": rep.bytes_hashed,
            "damage": [d.__dict__ for d in rep.damage],
            "notes": rep.notes,
        }
        print(json.dumps(out, indent=2))
    else:
        for note in rep.notes:
            print(f"note: {note}")
        for d in rep.damage:
            print(f"DAMAGED {d.kind}: {d.name}: {d.message}")
        mib = rep.bytes_hashed / 2**20
        verdict = "clean" if rep.ok else f"{len(rep.damage)} damaged"
        print(f"{args.index}: {verdict} ({rep.files_checked} files, {mib:.1f} MiB verified)")
    if rep.ok:
        return EXIT_OK
    print(f"simdask: the index is damaged: {REPAIR_HINT}", file=sys.stderr)
    return EXIT_DAMAGED
