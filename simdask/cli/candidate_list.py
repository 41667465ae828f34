"""``simdask candidates INDEX DOC [DOC...]``: each document's candidate partners, the
documents most likely to hold its source (issue 29: shared informative content words,
which survive paraphrase; the index keeps them with ``update --candidates``).

By default the stored lists, ranked among every document of the index. ``--among PREFIX``
ranks them among the documents whose key starts with PREFIX only (a folder such as
``sources/``: PAN's source collection, a teacher's archive of published texts), scored now
from the stored features: a document whose stored list is full of its classmates still gets
its best sources. Read only. Exit status 0, also when a document has no candidates; 1 when
the index keeps no candidates or a DOC is not in it. Thin over
:func:`simdask.read.candidates.candidate_rows`.
"""

from __future__ import annotations

import argparse
import sys

from simdask.cli._args import add_format
from simdask.cli._common import EXIT_OK
from simdask.cli.output import write_rows
from simdask.index import Index
from simdask.read.candidates import CANDIDATE_FIELDS, candidate_rows

__all__ = ["register", "run"]

_DESCRIPTION = (
    "Each document's candidate partners: the documents most likely to hold its source, ranked "
    "by the informative content words they share (which survive paraphrase). The index keeps "
    "them when built with `update --candidates`. By default the stored lists, ranked among "
    "every document of the index; --among PREFIX ranks them among the documents whose key "
    "starts with PREFIX only (a folder such as sources/ or an archive of last year's essays), "
    "scored now from the stored features, so a document whose stored list is full of its "
    "classmates still gets its best sources. Read only. Exit status 0, also when a document "
    "has no candidates; 1 when the index keeps no candidates or a DOC is not in it; 2 for "
    "bad usage."
)


def register(subparsers) -> None:
    """Declare ``candidates``."""
    p = subparsers.add_parser(
        "candidates",
        help="each document's candidate partners (likely sources), optionally among one folder",
        description=_DESCRIPTION,
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument(
        "docs", metavar="DOC", nargs="+", help="documents (a key, a path or a unique key end)"
    )
    p.add_argument(
        "--among",
        metavar="PREFIX",
        default=None,
        help="rank the candidates among the documents whose key starts with PREFIX only "
        "(e.g. a folder: sources/); default: the stored lists, among every document",
    )
    p.add_argument(
        "--top",
        type=_positive,
        default=10,
        metavar="N",
        help="candidates per document (default 10; without --among at most as many as stored)",
    )
    add_format(p)


def _positive(text: str) -> int:
    """A whole number >= 1 (argparse type: anything else is bad usage, exit 2)."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, found {text!r}")
    return n


def run(args) -> int:
    """Print the candidates, per document best first (``rank`` 1)."""
    with Index.open(args.index) as idx, idx.snapshot():  # one committed state
        rows = candidate_rows(idx, args.docs, args.among, args.top)
    write_rows((r.to_dict() for r in rows), CANDIDATE_FIELDS, args.format, sys.stdout)
    return EXIT_OK
