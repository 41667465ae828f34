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
layout: it is chosen when the index is created and a rebuild can change it); the similarity
stage's pair emission runs one task per range and block, so it follows the block count.
:func:`range_note` says in the run summary when the ranges, not the cluster, bound a stage.

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
    "MIN_BATCH_DOCS",
    "MIN_BLOCK_PAIRS",
    "TASKS_PER_THREAD",
    "TaskSizing",
    "batch_docs",
    "block_budget",
    "memory_block_pairs",
    "range_note",
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
#: bytes a candidate pair count of a block holds while the block is in flight: its key in
#: the emitted part (uint32) and its copy gathered to the worker counting the block (the
#: counting itself goes by sub-blocks of a fixed size: kernels/heavy_bounded)
BLOCK_BYTES_PER_PAIR = 8


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


def range_note(ranges: int, threads: int) -> str | None:
    """A line for the run summary when the index's ``ranges`` give its per-range stages
    fewer than :data:`TASKS_PER_THREAD` tasks a thread (None otherwise)."""
    if ranges >= TASKS_PER_THREAD * threads:
        return None
    want = TASKS_PER_THREAD * threads
    return (
        f"the merge and the per-range passes run one task per range: {ranges} ranges for "
        f"{threads} worker threads (fewer than {TASKS_PER_THREAD} a thread; a rebuild with "
        f"--shards {min(4096, 1 << (want - 1).bit_length())} gives each thread {TASKS_PER_THREAD})"
    )


@dataclass
class TaskSizing:
    """What a run chose for its tasks (in the run summary): the cluster's ``workers`` and
    worker ``threads`` at the start of the run; ``batch_docs`` documents per chunking task
    (``batch_docs_set``: given by the caller, else the rule of this module) and the
    ``batches``; the index's ``ranges`` (one merge task each); the similarity stage's
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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (None fields left out)."""
        return {k: v for k, v in self.__dict__.items() if v is not None}

    def describe(self) -> str:
        """One line for the run summary, e.g. ``tasks: 4 workers, 8 threads; chunking 32
        batches of 125 documents (auto); 16 ranges; similarity 32 blocks of <= 2.1e+06
        pair counts``."""
        how = "given" if self.batch_docs_set else "auto"
        out = (
            f"tasks: {self.workers} workers, {self.threads} threads; chunking {self.batches} "
            f"batches of {self.batch_docs} documents ({how}); {self.ranges} ranges"
        )
        if self.blocks is not None:
            out += f"; similarity {self.blocks} blocks"
            if self.block_pairs is not None:
                out += f" of <= {self.block_pairs:.3g} pair counts"
        return out + (f"; {self.note}" if self.note else "")
