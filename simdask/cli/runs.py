"""``simdask runs INDEX``: the history of the index's runs (:mod:`simdask.read.run_history`)."""

from __future__ import annotations

import sys

from simdask.cli._args import add_format
from simdask.cli._common import EXIT_OK
from simdask.cli.output import write_rows
from simdask.index import Index
from simdask.read.run_history import RUN_COLUMNS, run_history

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``runs``."""
    p = subparsers.add_parser(
        "runs",
        help="the history of the index's runs: date, counts, seconds per stage, incidents",
        description="One row per run of the index (updates, compactions, failed runs), oldest "
        "first: its start (UTC), status, kind, wall seconds, documents added, modified, "
        "deleted and failed, similarity rows written, Dask workers that died during it and "
        "the tasks run again because of them, seconds per stage, and the error of a failed "
        "run. Read from the catalog: nothing to keep besides the index.",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("--last", type=int, metavar="N", help="only the last N runs")
    add_format(p)


def run(args) -> int:
    """Print the history."""
    with Index.open(args.index) as idx:
        rows = run_history(idx.catalog, args.last)
    columns = (*RUN_COLUMNS, "stage_seconds") if args.format == "jsonl" else RUN_COLUMNS
    write_rows(rows, columns, args.format, sys.stdout)
    return EXIT_OK
