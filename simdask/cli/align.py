"""``simdask align PAIRS_FILE``: the passages of each pair's first file taken from its second,
for many pairs on the Dask cluster. Thin over :mod:`simdask.engine.align_pairs`.

Exit status: 0 when every file was read, 3 when some could not be (each pair is named on
stderr and has a line with ``"error"``; the other pairs are aligned and written).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from simdask.cli._args import add_cluster_arguments
from simdask.cli._common import EXIT_OK, EXIT_UNREADABLE, run_progress

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``align``."""
    p = subparsers.add_parser(
        "align",
        help="passages of one file taken from another (copied, paraphrased, summarised), "
        "for many pairs of files",
        description="Align pairs of files on the Dask cluster: for each line of PAIRS_FILE "
        "(two file paths separated by a tab; relative paths are relative to PAIRS_FILE's "
        "folder), the passages of the first file taken from the second, each with its kind "
        "(verbatim, paraphrased, summarised) and score. Output JSONL, one line per pair: "
        '{"a": PATH, "b": PATH, "passages": [{"a_start", "a_end", "b_start", "b_end", '
        '"kind", "score"}, ...]}, in the order of PAIRS_FILE; offsets are code points into '
        "each file's text as read (a plain-text file: its decoded characters, unchanged; "
        "other formats: the extracted text, as `simdask text` prints it). A file that "
        'cannot be read gives its pair a line with "error" and exit status 3; the other '
        "pairs are aligned. The workers read the files at these paths (one machine or a "
        "shared filesystem).",
    )
    p.add_argument("pairs", metavar="PAIRS_FILE", help="one pair a line: PATH_A<TAB>PATH_B")
    p.add_argument("--out", metavar="FILE", help="write the JSONL to FILE (default: stdout)")
    p.add_argument(
        "--batch-pairs",
        type=int,
        metavar="N",
        help="pairs per task (default: about four tasks per worker thread, at most 64)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_cluster_arguments(p)


@contextlib.contextmanager
def _output(path: str | None):
    """stdout, or ``path`` written through a temporary file that replaces it at the end."""
    if path is None:
        yield sys.stdout
        return
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            yield f
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def run(args) -> int:
    """Run ``simdask align``; returns the exit status."""
    from simdask.cluster.connect import connect  # dask and distributed: only for runs
    from simdask.engine.align_pairs import (  # the engine imports dask: only for runs
        align_pairs,
        read_pairs_file,
        write_alignments,
    )

    pairs = read_pairs_file(args.pairs)
    callback = run_progress(args)
    with connect(args.cluster.spec) as client, _output(args.out) as out:
        results = align_pairs(pairs, client=client, batch_pairs=args.batch_pairs, callback=callback)
        summary = write_alignments(results, out)
    print(
        f"aligned {summary.pairs - len(summary.errors)} of {summary.pairs} pairs: "
        f"{summary.passages} passages" + (f"; written to {args.out}" if args.out else ""),
        file=sys.stderr,
    )
    for a, b, msg in summary.errors:
        print(f"simdask: error: pair {a} / {b}: {msg}", file=sys.stderr)
    return EXIT_UNREADABLE if summary.errors else EXIT_OK
