"""``simdask totals INDEX [KEY...]``: each document's total, the share of its words inside
passages found in any other document, with its sources (issue 29 item 2).

A document's candidates (its top partners by shared chunks) are aligned with the text
aligner; its total is the union of the passages found. ``--compute`` aligns every
document's candidates on the Dask cluster and stores every total (resumable: an interrupted
computation goes on where it stopped); incremental runs keep them up to date. Thin over
:meth:`simdask.index.Index.totals` and :meth:`~simdask.index.Index.compute_totals`.
"""

from __future__ import annotations

import sys

from simdask.cli._args import add_cluster_arguments, add_format
from simdask.cli._common import EXIT_OK, progress
from simdask.cli.output import write_rows
from simdask.index import Index
from simdask.read.total_reads import TOTAL_FIELDS, status
from simdask.write.compute_totals import totals_rule

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``totals``."""
    p = subparsers.add_parser(
        "totals",
        help="each document's total: how much of it lies in passages found elsewhere, and where",
        description=__doc__.split("\n\n", 1)[1],
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("keys", metavar="KEY", nargs="*", help="only these documents (default all)")
    p.add_argument(
        "--compute",
        action="store_true",
        help="align every document's top candidates on the cluster and store every total",
    )
    p.add_argument(
        "--top",
        type=int,
        default=None,
        metavar="N",
        help="with --compute: a fixed number of candidates aligned per document (default: "
        "as stored; at first those scoring >= 0.1 of the document's best, 5 to 10 of them)",
    )
    p.add_argument(
        "--floor",
        type=float,
        default=None,
        metavar="F",
        help="with --compute: align the candidates scoring at least F (0..1) times the "
        "document's best (with --cap; instead of --top)",
    )
    p.add_argument(
        "--cap",
        type=int,
        default=None,
        metavar="N",
        help="with --floor: at most N candidates a document (default 10)",
    )
    p.add_argument(
        "--min-total", type=float, default=0.0, metavar="PCT", help="least total, percent"
    )
    p.add_argument(
        "--wait", type=float, default=0.0, help="seconds to wait for another update (default 0)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_format(p)
    add_cluster_arguments(p)


def run(args) -> int:
    """Print the totals (after computing them with ``--compute``), largest first."""
    with Index.open(args.index) as idx:
        if args.compute:
            _compute(idx, args)
        with idx.snapshot():  # one committed state
            keys = [idx.resolve_key(k) for k in args.keys] or None
            got = [t for t in idx.totals(keys) if t.total >= args.min_total]
            st = status(idx.catalog)
    got.sort(key=lambda t: (-t.total, t.doc))
    if args.format == "jsonl":
        write_rows((t.to_dict() for t in got), TOTAL_FIELDS, "jsonl", sys.stdout)
    else:
        write_rows((t.table_row() for t in got), TOTAL_FIELDS, args.format, sys.stdout)
    if st["tracked"] < st["documents"]:
        print(
            f"simdask: {st['tracked']:,} of {st['documents']:,} documents have a total; "
            f"`simdask totals {args.index} --compute` computes the others",
            file=sys.stderr,
        )
    return EXIT_OK


def _compute(idx: Index, args) -> None:
    from simdask.cluster.connect import connect  # loads dask: only when a run needs it

    # the lock first: a second writer fails before a cluster is started
    with idx.writer(wait=args.wait), connect(args.cluster.spec) as client:
        rule = totals_rule(args.floor, args.cap)
        out = idx.compute_totals(
            top=args.top, rule=rule, client=client, callback=progress(args), lock=False
        )
    if not args.quiet:
        print(
            f"totals: {out['pairs']:,} candidate pairs, {out['aligned']:,} aligned now; "
            f"{out['documents']:,} documents have a total",
            file=sys.stderr,
        )
