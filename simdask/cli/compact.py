"""``simdask compact INDEX``: merge the segments of the index's ranges (DESIGN §3).

Runs the merge policy now (``--force``: merge every range into one segment and drop every
posting a tombstone hides) as a run of its own: a new generation committed in one
transaction, so an interrupted compaction leaves the index as it was. Incremental runs also
compact on their own when the policy says so; this command is for doing it at a chosen time.
"""

from __future__ import annotations

import argparse
import sys

from simdask.cli._args import add_cluster_arguments, add_data_placement
from simdask.index import Index
from simdask.write.settings import use_worker_cache

__all__ = ["register", "run"]


_DESCRIPTION = (
    "Merge the segments of the index's ranges now, as the merge policy says (--force: every "
    "range into one segment, dropping every posting a tombstone hides). A run of its own: a "
    "new generation committed in one transaction, so an interrupted compaction leaves the "
    "index as it was. Incremental runs also compact on their own when the policy says so; "
    "this command is for doing it at a chosen time."
)


def register(subparsers) -> None:
    """Declare the ``compact`` subcommand."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "compact",
        help="merge the index's delta segments (as the merge policy says, or all with --force)",
        description=_DESCRIPTION,
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument(
        "--force",
        action="store_true",
        help="merge every range into a single segment without tombstoned postings",
    )
    p.add_argument(
        "--wait", type=float, default=0.0, help="seconds to wait for another update (default 0)"
    )
    p.add_argument("--quiet", action="store_true")
    add_cluster_arguments(p)
    add_data_placement(p)


def run(args) -> int:
    """Compact the index; prints what was merged to stderr. Exit status 0."""
    from simdask.cluster.connect import connect  # loads dask: only when a run needs it
    from simdask.engine.run import RunOptions  # loads dask: only when a run needs it

    spec = args.cluster.spec
    cache = use_worker_cache(args.worker_cache, cluster_outlives_run=spec.outlives_run)
    options = RunOptions(transfer=args.data_transfer, worker_cache=cache)
    # the lock first: a second writer fails before a cluster is started
    with Index.open(args.index) as idx, idx.writer(wait=args.wait) as writer:
        with connect(spec) as client:
            out = writer.compact(client=client, force=args.force, options=options)
        stats = idx.stats()
    if not args.quiet:
        if "run_id" in out:
            print(
                f"compaction run {out['run_id']}: {out['segments_merged']} segments of "
                f"{out['ranges']} ranges merged; {out['postings_read']} postings read, "
                f"{out['postings_written']} written in {out['seconds']:.2f}s; "
                f"{stats['segments']} segments in the index",
                file=sys.stderr,
            )
        else:
            print(f"nothing to compact ({stats['segments']} segments)", file=sys.stderr)
        if out.get("catalog_bytes_freed"):
            freed = out["catalog_bytes_freed"] / 2**20
            print(f"catalog: {freed:.1f} MiB of free pages given back", file=sys.stderr)
    return 0
