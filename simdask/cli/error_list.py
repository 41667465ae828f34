"""``simdask errors INDEX``: the documents currently not indexed and why (key, kind, message).

The current failures (:meth:`Index.failures <simdask.index.Index.failures>`): each file whose
latest run still failed to read it, and the too-short documents; ``--last-run``: only the
errors the last run met.
"""

from __future__ import annotations

import sys

from simdask.cli._args import add_format
from simdask.cli._common import EXIT_OK
from simdask.cli.output import write_rows
from simdask.index import Index

__all__ = ["register", "run"]

#: columns: ``kept`` says whether an earlier version of the document is still indexed (for a
#: warning such as ``control_bytes``: the document itself is indexed)
COLUMNS = ("key", "kind", "message", "run", "kept")
_KEPT = {True: "earlier version", False: "no"}


def register(subparsers) -> None:
    """Declare ``errors``."""
    p = subparsers.add_parser(
        "errors",
        help="documents currently not indexed, and why",
        description="The documents currently not indexed, and why: every file whose last "
        "reading failed (unsupported format, scanned PDF, damaged, ...) and has not been "
        "indexed or removed from its source since, and the documents too short to be "
        "compared, and warnings about indexed documents (kind control_bytes: stray NUL or "
        "other control bytes dropped from its text). `run` is the run that last reported "
        "it; `kept` says whether an earlier version of the document is still indexed (and "
        "compared).",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument(
        "--last-run", action="store_true", help="only the per-file errors of the last run"
    )
    add_format(p)


def run(args) -> int:
    """Print the failures (none: a table says so on stderr)."""
    with Index.open(args.index) as idx, idx.snapshot():  # one committed state
        if args.last_run:
            last = idx.catalog.last_run()
            errs = idx.catalog.errors_of_run(last["run_id"]) if last else []
            rows = [{"key": k, "kind": kind, "message": m} for k, kind, m in errs]
            columns: tuple[str, ...] = ("key", "kind", "message")
        else:
            failures = idx.failures()
            rows = [f.to_dict() for f in failures]
            columns = COLUMNS
            if args.format == "table":
                for r, f in zip(rows, failures, strict=True):
                    r["kept"] = "indexed (warning)" if f.warning else _KEPT[bool(r["kept"])]
    write_rows(rows, columns, args.format, sys.stdout)
    if not rows and args.format == "table":
        print("simdask: every document is indexed", file=sys.stderr)
    return EXIT_OK
