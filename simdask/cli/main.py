"""The ``simdask`` command: builds the parser from the command modules, configures logging,
dispatches, and turns exceptions into exit statuses. The commands are in
``simdask/cli/<command>.py`` (``error_list.py`` for ``errors`` and ``doc_totals.py`` for
``totals``, so that no two modules share a file name; ``register(subparsers)``,
``run(args) -> int``); the work is in
the Python API.

Exit status: 0 success (a run committed, even if some files failed), 1 a simdask error (the
message says what was expected and found; also: the index is locked by another update), 2 bad
usage: an option out of range (index settings such as ``--hash-bits``, cluster settings,
SIMDASK_* variables, the config file), 3 (``query``, ``compare``) some input documents could not
be read — they are named on stderr and the results of the others are printed, 4 the Dask
cluster could not be reached or started, or failed during the run (the index is unchanged), 5
the index is damaged (``simdask check INDEX``: 0 clean, 5 damaged, listing each damaged file or
table; restore from a backup or ``--rebuild``), 130
interrupted.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from simdask import __version__
from simdask.cli import (
    align,
    backup,
    boilerplate,
    candidate_list,
    check,
    cluster,
    compact,
    compare,
    demo,
    doc_totals,
    error_list,
    export,
    export_html,
    lsh,
    mark,
    query,
    remove,
    repeats,
    report,
    runs,
    serve,
    similar,
    stats,
    text,
    update,
)
from simdask.cli import list as list_keys
from simdask.cli._args import cluster_of, has_cluster_arguments
from simdask.cli._common import (
    EXIT_CLUSTER,
    EXIT_DAMAGED,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_STATUS_HELP,
    EXIT_USAGE,
)
from simdask.cli._logging import configure_logging, restore_stderr
from simdask.config import IndexConfig
from simdask.errors import ClusterError, ConfigError, IndexDamagedError, SimdaskError
from simdask.storage.diskspace import catalog_error
from simdask.storage.remote import index_folder, require_lasting
from simdask.write.settings import INDEX_SETTINGS

__all__ = ["COMMAND_MODULES", "EXIT_CLUSTER", "build_parser", "main"]

#: the command modules, in the order ``simdask --help`` lists their commands
COMMAND_MODULES = (
    update,
    remove,
    text,
    report,
    export_html,
    error_list,
    list_keys,
    cluster,
    similar,
    export,
    doc_totals,
    candidate_list,
    mark,
    query,
    compare,
    align,
    lsh,
    stats,
    runs,
    compact,
    backup,
    repeats,
    boilerplate,
    check,
    demo,
    serve,
)

_DESCRIPTION = """\
Find similar documents (text reuse, plagiarism) in a growing document base.

A document's text is cut into overlapping 5-word chunks (words sorted inside each chunk),
chunks are hashed, and similarity of A to B is the percent of A's chunks also found in B
(asymmetric: a short text wholly inside a long one is 100 % similar to it).

Start with `simdask demo`, then `simdask update INDEX SOURCE...` and `simdask similar INDEX`.
"""


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command; a parsed command's ``args.handler`` is its module's ``run``."""
    parser = argparse.ArgumentParser(
        prog="simdask",
        description=_DESCRIPTION,
        epilog=EXIT_STATUS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"simdask {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log details (also Dask's) to stderr"
    )
    parser.add_argument(
        "--log-file",
        metavar="PATH",
        help="append here simdask's own lines (messages, the run summary, errors, also of "
        "a run that fails) and Dask's logs",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        before = set(sub.choices)
        module.register(sub)
        for name in set(sub.choices) - before:
            sub.choices[name].set_defaults(handler=module.run)
    return parser


def _error(message: object, status: int) -> int:
    print(f"simdask: error: {message}", file=sys.stderr)
    return status


def _bad_settings(args) -> str | None:
    """Index settings given as options that are out of range (bad usage, exit 2), or None."""
    given = {k: getattr(args, k) for k in INDEX_SETTINGS if getattr(args, k, None) is not None}
    try:
        IndexConfig(**given)
    except ConfigError as e:
        return str(e)
    return None


def _locations(args) -> None:
    """INDEX as a local folder (a ``file://`` URL taken as its path) and a ``--shard-store``
    that outlives the command; :class:`ConfigError` (bad usage) otherwise."""
    if isinstance(getattr(args, "index", None), str):
        args.index = str(index_folder(args.index))
    if getattr(args, "shard_store", None):
        require_lasting(args.shard_store)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``simdask`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, args.log_file)
    try:
        return _command(args)
    finally:
        restore_stderr()  # --log-file: this process's stderr is the terminal's again


def _command(args) -> int:
    """Run the parsed command; its exit status (errors as one line on stderr)."""
    try:
        _locations(args)
    except ConfigError as e:
        return _error(e, EXIT_USAGE)
    if has_cluster_arguments(args):
        try:
            args.cluster = cluster_of(args)
        except ConfigError as e:
            return _error(e, EXIT_USAGE)
    bad = _bad_settings(args)
    if bad:
        return _error(bad, EXIT_USAGE)
    try:
        return args.handler(args)
    except ClusterError as e:
        return _error(e, EXIT_CLUSTER)
    except IndexDamagedError as e:
        return _error(e, EXIT_DAMAGED)
    except sqlite3.DatabaseError as e:  # a catalog damaged beyond what opening it reads
        error = catalog_error(Path(getattr(args, "index", ".")) / "catalog.sqlite", e)
        return _error(error, EXIT_DAMAGED if isinstance(error, IndexDamagedError) else EXIT_ERROR)
    except SimdaskError as e:
        return _error(e, EXIT_ERROR)
    except KeyboardInterrupt:
        print("simdask: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
