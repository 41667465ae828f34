"""How many tasks a stage gets (issue 32 item 2): sized to the cluster's worker threads and
to the corpus, never to a fixed count.

The rule, for every stage whose task count is free (chunking batches, similarity blocks):
aim at :data:`TASKS_PER_THREAD` tasks per worker thread of the cluster (so that a slow task
or a late worker leaves the others busy, and the last wave of tasks is short), but never
make a task smaller than the stage's floor (:data:`MIN_BATCH_DOCS` documents a chunking
batch, :data:`MIN_BLOCK_PAIRS` candidate pair counts a similarity block: below these a
task's fixed cost, its scheduling, bucket files and result, outweighs its work), nor larger
than the stage's ceiling (:data:`MAX_BATCH_DOCS`; ``block_pairs``, the memory bound of a
block). A corpus too small for that many tasks of the floor's size gets fewer.

Stages with one task per stored range (the merge, and the per-range passes of the
similarity stage) get the index's range count (its ``shards`` setting, part of the stored
layout: it is fixed when the index is created and only a rebuild can change it); the
similarity stage's pair emission runs one task per range and block, so it follows the block
count. :func:`range_note` says in the run summary when the ranges, not the cluster, bound a
stage.

The range count of a new index whose creator did not give one (``IndexConfig.shards`` None,
no ``--shards``) is chosen by the run that creates it, for its cluster (:func:`new_ranges`):
the smallest power of two >= :data:`TASKS_PER_THREAD` x the worker threads, so that the
merge and the per-range passes give every thread that many tasks; at least
:data:`MIN_RANGES` (the fixed default before, so an index made on a laptop of up to four
threads keeps its layout) and at most :data:`MAX_RANGES` (the most an index allows). A power
of two, because the chunk-ID space then splits into equal ranges and a later ``--rebuild
--shards`` to twice the count splits every range in two. The corpus bounds it too: at most
one range per :data:`MIN_RANGE_DOCS` documents of that first run (rounded down to a power of
two, never below :data:`MIN_RANGES`). A range costs every run fixed work whatever it holds
(its merge task, six per-range passes of a build, one bucket file per chunking batch, a
segment's files and catalog rows), taken to be outweighed by the work of
:data:`MIN_BATCH_DOCS` documents as a chunking task's is (a judgement, not measured per
range); a first run of 200 documents on a cluster of 1,024 threads would
otherwise make 4,096 ranges of a few postings each. The first run is usually the corpus (an
index grows later by small adds); an index that grows much beyond it keeps its ranges, and
the run summary's :func:`range_note` names the ``--rebuild --shards N`` that fits.

Pure functions: the tests call them directly; :mod:`simdask.engine.run` and
:mod:`simdask.engine.similarity_stage` apply them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "BLOCK_BYTES_PER_PAIR",
    "BLOCK_MEMORY_SHARE",
    "MAX_BATCH_DOCS",
    "MAX_RANGES",
    "MIN_BATCH_DOCS",
    "MIN_BLOCK_PAIRS",
    "MIN_RANGES",
    "MIN_RANGE_DOCS",
    "TASKS_PER_THREAD",
    "TaskSizing",
    "batch_docs",
    "block_budget",
    "memory_block_pairs",
    "new_ranges",
    "range_note",
    "view_bytes",
    "view_windows",
]

#: tasks aimed at per worker thread, for the stages whose task count is free
TASKS_PER_THREAD = 4
#: fewest documents in a chunking batch (a task writes one bucket file per range and a text
#: pack: tens of milliseconds of fixed cost, against ~1-5 ms a document of chunking)
MIN_BATCH_DOCS = 25
#: most documents in a chunking batch (its result and pack stay small)
MAX_BATCH_DOCS = 5000
#: fewest candidate pair counts in a similarity block (its rows task and one emission task
#: per range cost milliseconds each; 2**18 counts take a few tens of milliseconds to count)
MIN_BLOCK_PAIRS = 1 << 18
#: share of a worker's memory limit that the similarity blocks in flight may hold
BLOCK_MEMORY_SHARE = 1 / 8
#: bytes a candidate pair count of a block holds while the block is in flight, measured: its
#: key in the emitted part (uint32), its copy gathered to the worker counting the block, the
#: sub-block counts and set-overlap slices, and the heap glibc keeps after them. At 1M
#: phrase-rich documents 4 blocks of ~22 M counts raised a worker by ~2.2 GiB (~27 bytes a
#: count, docs/scale.md "Worker heap between blocks"); 32 rounds that up
BLOCK_BYTES_PER_PAIR = 32
#: bytes of all-pairs views (:class:`~simdask.kernels.doc_postings.DocPostings`) a worker
#: should hold at once: above it the views are built one document window at a time
#: (:func:`view_windows`; docs/scale.md, "Views in document windows"). At 1M phrase-rich
#: documents the whole views were ~2.8 GiB a worker, most of a worker's peak
VIEW_BYTES_PER_WORKER = 1 << 30
#: most document windows the views are built in (each costs one more read of every range)
MAX_VIEW_WINDOWS = 4
#: fewest ranges of a new index sized to its cluster (the fixed default before)
MIN_RANGES = 16
#: most ranges of an index (``IndexConfig`` allows no more)
MAX_RANGES = 4096
#: fewest documents of its first run per range of a new index (the corpus bound of
#: :func:`new_ranges`): a chunking batch's floor, for the same reason
MIN_RANGE_DOCS = MIN_BATCH_DOCS


def batch_docs(n_items: int, threads: int) -> int:
    """Documents per chunking task for ``n_items`` items on ``threads`` worker threads:
    ``ceil(n_items / (TASKS_PER_THREAD * threads))``, within
    ``[MIN_BATCH_DOCS, MAX_BATCH_DOCS]``."""
    want = -(-max(1, n_items) // (TASKS_PER_THREAD * max(1, threads)))
    return min(MAX_BATCH_DOCS, max(MIN_BATCH_DOCS, want))


def block_budget(
    total_work: int, threads: int, block_pairs: int, memory_pairs: int | None = None
) -> int:
    """Candidate pair counts per similarity block for ``total_work`` counts on ``threads``
    worker threads: ``total_work / (TASKS_PER_THREAD * threads)``, at least
    :data:`MIN_BLOCK_PAIRS` and at most ``block_pairs`` (the configured bound) and
    ``memory_pairs`` (the workers' memory, :func:`memory_block_pairs`; None: no limit). The
    memory bound wins over the floor."""
    want = int(total_work) // (TASKS_PER_THREAD * max(1, threads)) + 1
    cap = block_pairs if memory_pairs is None else min(block_pairs, memory_pairs)
    return max(1, min(cap, max(MIN_BLOCK_PAIRS, want)))


def memory_block_pairs(memory_limit: int | None, blocks_in_flight: int) -> int | None:
    """Most candidate pair counts a similarity block may hold so that ``blocks_in_flight``
    blocks, all on one worker, fit in :data:`BLOCK_MEMORY_SHARE` of a worker's
    ``memory_limit`` (bytes; the smallest of the cluster's) at :data:`BLOCK_BYTES_PER_PAIR`
    a pair count; at least 1. None when the workers have no limit (None or 0)."""
    if not memory_limit or memory_limit <= 0:
        return None
    room = int(memory_limit * BLOCK_MEMORY_SHARE)
    return max(1, room // (BLOCK_BYTES_PER_PAIR * max(1, int(blocks_in_flight))))


def view_bytes(light_postings: int, light_lists: int, n_docs: int, ranges: int) -> int:
    """Bytes of the whole all-pairs views over every range: 4 a posting of the lists with
    ``2 <= df <= light`` (``light_postings`` in ``light_lists`` lists), 5 an emitting posting
    (all but the last of a list: position and later count), and 4 a document a range."""
    emitting = max(0, light_postings - light_lists)
    return 4 * light_postings + 5 * emitting + 4 * (n_docs + 1) * ranges


def view_windows(
    light_postings: int,
    light_lists: int,
    n_docs: int,
    ranges: int,
    per_worker: int = VIEW_BYTES_PER_WORKER,
) -> int:
    """Document windows to build the all-pairs views in: the fewest (at most
    :data:`MAX_VIEW_WINDOWS`) with which a window's views fit ``per_worker`` bytes. A worker
    may hold all of a window's views, not its share: Dask's work stealing moves pair emissions
    to the other worker and the view with them (measured at 200k phrase-rich documents: each
    of 2 workers held 561 MiB of views, the whole of them). A window's views hold its
    documents' positions (a share of the emitting postings) and the lists they emit into (at
    most all of them), so the lists bound what more windows can save; 1 when the whole views
    fit."""
    emitting = 5 * max(0, light_postings - light_lists)
    lists = view_bytes(light_postings, light_lists, n_docs, ranges) - emitting
    for w in range(1, MAX_VIEW_WINDOWS + 1):
        if lists + emitting / w <= per_worker:
            return w
    return MAX_VIEW_WINDOWS


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


def new_ranges(threads: int, n_docs: int | None = None) -> int:
    """The range count (``shards``) of a new index first built on ``threads`` worker threads
    from ``n_docs`` documents (None: not known): the smallest power of two >=
    ``TASKS_PER_THREAD * threads``, at most the largest power of two <= ``n_docs /
    MIN_RANGE_DOCS``, within ``[MIN_RANGES, MAX_RANGES]`` (module docstring: why). E.g. 16
    for 1 to 4 threads, 32 for 8, 64 for 16, 256 for 64, 4096 from 1024."""
    want = _pow2_at_least(TASKS_PER_THREAD * max(1, threads))
    if n_docs is not None:
        fits = max(1, int(n_docs) // MIN_RANGE_DOCS)
        want = min(want, 1 << (fits.bit_length() - 1))
    return min(MAX_RANGES, max(MIN_RANGES, want))


def range_note(ranges: int, threads: int) -> str | None:
    """A line for the run summary when the index's ``ranges`` give its per-range stages
    fewer than :data:`TASKS_PER_THREAD` tasks a thread (None otherwise)."""
    if ranges >= TASKS_PER_THREAD * threads:
        return None
    want = TASKS_PER_THREAD * threads
    return (
        f"the merge and the per-range passes run one task per range: {ranges} ranges for "
        f"{threads} worker threads (fewer than {TASKS_PER_THREAD} a thread; a rebuild with "
        f"--shards {min(MAX_RANGES, _pow2_at_least(want))} gives each thread {TASKS_PER_THREAD})"
    )


@dataclass
class TaskSizing:
    """What a run chose for its tasks (in the run summary): the cluster's ``workers`` and
    worker ``threads`` at the start of the run; ``batch_docs`` documents per chunking task
    (``batch_docs_set``: given by the caller, else the rule of this module) and the
    ``batches``; the index's ``ranges`` (one merge task each; ``ranges_chosen``: chosen for
    this cluster by this run, the index's first, :func:`new_ranges`); the similarity stage's
    ``block_pairs`` budget and ``blocks``; ``note``: :func:`range_note`."""

    workers: int
    threads: int
    batch_docs: int = 0
    batch_docs_set: bool = False
    batches: int = 0
    ranges: int = 0
    block_pairs: int | None = None
    blocks: int | None = None
    note: str | None = None
    ranges_chosen: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (None fields left out)."""
        return {k: v for k, v in self.__dict__.items() if v is not None}

    def describe(self) -> str:
        """One line for the run summary, e.g. ``tasks: 4 workers, 8 threads; chunking 32
        batches of 125 documents (auto); 32 ranges (chosen for the cluster); similarity 32
        blocks of <= 2.1e+06 pair counts``."""
        how = "given" if self.batch_docs_set else "auto"
        out = (
            f"tasks: {self.workers} workers, {self.threads} threads; chunking {self.batches} "
            f"batches of {self.batch_docs} documents ({how}); {self.ranges} ranges"
        )
        if self.ranges_chosen:
            out += " (chosen for the cluster)"
        if self.blocks is not None:
            out += f"; similarity {self.blocks} blocks"
            if self.block_pairs is not None:
                out += f" of <= {self.block_pairs:.3g} pair counts"
        return out + (f"; {self.note}" if self.note else "")
