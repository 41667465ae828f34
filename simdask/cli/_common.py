"""What several commands share: exit statuses, progress on stderr, the run summary, a run.

Only printing and wiring: the decisions (settings, shard cache) are in
:mod:`simdask.write.settings`, the work in :class:`~simdask.index.Index` and
:mod:`simdask.cluster.connect`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from simdask.cli.output import table_cell
from simdask.cluster.placement import runs_in_process
from simdask.config import IndexConfig
from simdask.index import Index
from simdask.ingest.sources import require_sources
from simdask.progress import Callback, TqdmCallback
from simdask.queries import NOTE_KINDS
from simdask.storage.create import CATALOG_NAME, discard_uncommitted
from simdask.summary import RunSummary

__all__ = [
    "EXIT_CLUSTER",
    "EXIT_DAMAGED",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_STATUS_HELP",
    "EXIT_UNREADABLE",
    "EXIT_USAGE",
    "NOTE_KINDS",
    "PAIR_COLUMNS",
    "PAIR_TABLE_COLUMNS",
    "print_summary",
    "progress",
    "run_progress",
    "update_index",
    "write_summary_json",
]

#: success (a run committed, even if some files failed)
EXIT_OK = 0
#: a simdask error (the message says what was expected and found; also: the index is locked)
EXIT_ERROR = 1
#: bad usage: an option out of range (index settings, cluster settings, SIMDASK_* variables,
#: the config file)
EXIT_USAGE = 2
#: (``query``, ``compare``, ``align``) some input documents could not be read; the others are
#: printed
EXIT_UNREADABLE = 3
#: the Dask cluster could not be reached or started, or failed during the run
EXIT_CLUSTER = 4
#: the index is damaged (``simdask check INDEX`` lists what; restore or ``--rebuild``)
EXIT_DAMAGED = 5
#: interrupted (Ctrl-C)
EXIT_INTERRUPTED = 130

#: the exit statuses, as the epilog of ``simdask --help`` and ``simdask cluster --help``
EXIT_STATUS_HELP = """\
exit status: 0 success (a run committed, even if some files failed), 1 an error (the message
says what was expected and found; also: another update holds the index), 2 bad usage (an
option out of range, bad cluster settings), 3 (query, compare, align) some input documents
could not be read, 4 the Dask cluster could not be reached or started or failed during the run
(the index is unchanged), 5 the index is damaged (`simdask check INDEX` lists what), 130
interrupted.
"""


#: columns of ``similar`` and ``demo``: stored directed pairs
PAIR_COLUMNS = (
    "doc",
    "other",
    "similarity",
    "aligned",
    "total",
    "source_excluded",
    "decision",
    "note",
    "shared",
    "doc_chunks",
    "other_chunks",
)
#: columns of the tables of unordered pairs (``similar``, ``demo``): see
#: :mod:`simdask.read.undirected_pairs`
PAIR_TABLE_COLUMNS = ("a_key", "b_key", "a_in_b", "b_in_a", "shared", "in_words")


class _MessageOnly(Callback):
    """Progress as plain messages on stderr (none at all when ``quiet``), each said once: a
    command whose runs share a cluster (a change of the exclusions, then the sources) does
    not repeat its dashboard and data transfer lines."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.said: set[str] = set()

    def message(self, text: str) -> None:
        if not self.quiet and text not in self.said:
            self.said.add(text)
            print(text, file=sys.stderr)


class _Bars(TqdmCallback):
    """Progress bars, each message said once (as :class:`_MessageOnly`)."""

    def __init__(self) -> None:
        super().__init__()
        self.said: set[str] = set()

    def message(self, text: str) -> None:
        if text not in self.said:
            self.said.add(text)
            super().message(text)


def progress(args) -> Callback:
    """Progress bars on a terminal; else (or with ``--quiet``) messages only."""
    if getattr(args, "quiet", False) or not sys.stderr.isatty():
        return _MessageOnly()
    return _Bars()


def run_progress(args) -> Callback:
    """Progress for a command that runs the pipeline (``--quiet``: not even messages)."""
    return _MessageOnly(quiet=True) if getattr(args, "quiet", False) else progress(args)


#: a run started from the command line that lists at most this many documents on a local
#: cluster (no ``--workers`` or ``--memory-limit`` given) runs its Dask workers as threads of
#: this process: starting worker processes costs
#: seconds, more than such a run computes (docs/benchmarks.md, "Incremental runs")
def update_index(
    args, index_path: str | os.PathLike, config: IndexConfig | None, **update_kwargs
) -> RunSummary:
    """One update of the index at ``index_path`` on the cluster ``args.cluster`` names.

    Opens (or creates) the index, takes the writer lock before the cluster is started (so a
    second update fails at once, not after starting workers), connects and runs
    :meth:`Index.update <simdask.index.Index.update>` with ``update_kwargs``. A small run on
    a default local cluster has its workers in this process (threads; same tasks, same
    results): :func:`~simdask.cluster.placement.runs_in_process` decides; other runs start
    worker processes.
    """
    from simdask.cluster.connect import connect  # dask and distributed: only for runs

    place = Path(index_path)
    if not place.exists() or (place.is_dir() and not any(place.iterdir())):
        require_sources(update_kwargs.get("sources") or ())  # before an index is created
    cb = run_progress(args)
    spec = args.cluster.spec
    fresh = not (place / CATALOG_NAME).exists()
    made_folder = not place.exists()

    def connector(n_items: int):
        if runs_in_process(spec, n_items):
            cb.message(f"using in-process Dask workers (threads) for {n_items} documents")
            return connect(spec, processes=False)
        cb.message(f"using {spec.describe()}")
        return connect(spec)

    try:
        # inside the try: an interrupt just after a first run created its catalog still
        # leaves no empty index behind
        idx = Index.open_or_create(index_path, config, getattr(args, "shard_store", None))
        with idx, idx.writer(wait=getattr(args, "wait", 0.0)) as writer:
            summary = writer.update(
                callback=cb, config=config, connector=connector, **update_kwargs
            )
            cb.end_stage()
    except BaseException:
        if fresh:  # e.g. the cluster could not be reached: no empty index left behind
            discard_uncommitted(place, made_folder)
        raise
    return summary


def write_summary_json(path: str | os.PathLike, s: RunSummary) -> None:
    """Write the run summary ``s`` to ``path`` as JSON (``--summary-json``): what
    :meth:`RunSummary.to_dict` holds (counts, ``seconds`` per stage, ``extra``: the engine's
    statistics), with ``changed`` (the keys added, modified and deleted)."""
    data = {**s.to_dict(), "changed": s.changed, "identical": [list(p) for p in s.identical]}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")


#: names listed per kind of change in a run summary (all of them with ``--verbose``)
SHOWN_NAMES = 5


def _names(what: str, keys: list[str], verbose: bool) -> None:
    """``added (12): a, b, c, d, e and 7 more`` on stderr (nothing when ``keys`` is empty)."""
    if not keys:
        return
    shown = keys if verbose else keys[:SHOWN_NAMES]
    more = len(keys) - len(shown)
    tail = f" and {more} more (simdask -v ... lists all)" if more else ""
    names = ", ".join(table_cell(k) for k in shown)
    print(f"{what} ({len(keys)}): {names}{tail}", file=sys.stderr)


def print_summary(s: RunSummary, verbose: bool = False) -> None:
    """What a run did: the counts, the documents added, modified, deleted and failed (the
    first :data:`SHOWN_NAMES` of each and how many more; all when ``verbose``), its seconds
    per stage, the data moved, the similarity mode used and why."""
    secs = ", ".join(f"{k} {v:.2f}s" for k, v in s.seconds.items())
    if s.exclusion_change is not None:
        print(s.exclusion_change.describe(), file=sys.stderr)
    print(
        f"run {s.run_id} committed generation {s.generation}: {s.added} added, "
        f"{s.modified} modified, {s.deleted} deleted, {s.unchanged} unchanged, {s.failed} failed "
        f"({s.too_short} too short); {s.documents} documents in the index; "
        f"{s.similarity_rows} similarity rows written; {s.skipped_chunks} chunks skipped by max_df",
        file=sys.stderr,
    )
    print(f"time: {secs}", file=sys.stderr)
    st = s.stats
    if st.transfer:
        data = (
            f"data transfer: {st.transfer}; "
            f"{st.bytes_to_cluster / 2**20:.1f} MiB to the cluster, "
            f"{st.bytes_from_cluster / 2**20:.1f} MiB back"
        )
        wc = st.worker_cache
        if wc is not None and (wc.hits or wc.misses):  # only a run that read old shards
            data += f"; worker shard cache: {wc.hits} hits, {wc.misses} misses"
        print(data, file=sys.stderr)
    if st.heavy is not None:
        print(st.heavy.describe(), file=sys.stderr)
    if st.sizing is not None:
        print(st.sizing.describe(), file=sys.stderr)
    if (serial := s.describe_serial()) is not None:
        print(serial, file=sys.stderr)
    if st.compaction:
        c = st.compaction
        print(
            f"compacted: {c['segments_merged']} segments of {c['ranges']} ranges merged",
            file=sys.stderr,
        )
    for what in ("added", "modified", "deleted"):
        _names(what, s.changed.get(what, []), verbose)
    if s.identical:
        same = [f"{k} = {o}" for k, o in s.identical]
        _names(
            "identical copies of indexed documents (the same content; paired at 100 %)",
            same,
            verbose,
        )
    if s.errors:
        print(f"failed or too short ({len(s.errors)}):", file=sys.stderr)
    shown = s.errors if verbose else s.errors[:SHOWN_NAMES]
    for key, kind, msg in shown:
        print(
            f"  {kind}: {msg}" if msg.startswith(key) else f"  {kind}: {key}: {msg}",
            file=sys.stderr,
        )
    if len(s.errors) > len(shown):
        print(
            f"  ... and {len(s.errors) - len(shown)} more (`simdask errors INDEX` lists the "
            "documents not indexed; simdask -v ... prints all)",
            file=sys.stderr,
        )
