"""What every stage of one run needs from the run: :class:`RunContext` (the client, the task
names, progress, traffic counting, data placement and limits), :class:`RunOptions` (how a run
is executed, chosen by the caller) and :func:`task_key` (deterministic task names).

Task names are ``simdask-<stage>-<tag>[-bNNNNNN][-sNNNN][-<suffix>]``: ``tag`` names the
index and the run (``<8 hex digits of the shard store's location>-r<run>``), ``b`` a batch of
items or a block of documents, ``s`` a shard. The dashboard groups tasks by that prefix and a
re-submitted task keeps its name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import xxhash
from dask.sizeof import sizeof
from distributed import Client, Future

from simdask.cluster.placement import TRANSFER_MODES
from simdask.cluster.transfer import Traffic
from simdask.cluster.workers import scheduler_workers
from simdask.engine.segment_ref import on_shard, on_stored_shard
from simdask.engine.sizing import VIEW_BYTES_PER_WORKER, TaskSizing
from simdask.engine.stage_clock import StageClock
from simdask.errors import ConfigError
from simdask.ingest.sources import DEFAULT_MAX_FILE_BYTES, KnownHashes
from simdask.kernels.merge_policy import MergePolicy
from simdask.kernels.postings import ShardData
from simdask.progress import Callback
from simdask.storage.shards import ShardStore

__all__ = ["TOTALS_MODES", "RunContext", "RunOptions", "run_tag", "task_key"]


@dataclass(frozen=True)
class RunOptions:
    """How a run is executed (not stored in the index).

    ``batch_docs``: documents per chunking task (None: about four tasks per worker thread,
    25 to 5,000 documents: :func:`~simdask.engine.sizing.batch_docs`). ``block_pairs``: most
    candidate pair counts per similarity block (bounds memory: ~16 bytes each).
    ``blocks_in_flight``: similarity blocks computed at once. ``view_bytes``: bytes of
    all-pairs views a worker should hold at once, above which they are built one document
    window at a time (:func:`~simdask.engine.sizing.view_windows`).
    ``fuse_members``: an incremental run recomputing at most this many documents writes delta
    segments and counts their pairs from the posting lists of their chunks only
    (:mod:`simdask.engine.delta_stage`).
    ``transfer``: ``auto``, ``shared`` or ``dask`` (:mod:`simdask.cluster.placement`).
    ``worker_cache``: keep shards cached on the workers for the next run
    (:mod:`simdask.cluster.worker_cache`); None: only on a cluster simdask did not start itself.
    ``max_file_bytes``: larger files are not read (error kind ``too_large``; None: no limit).
    ``merge_policy``: when the segments of a range are compacted
    (:mod:`simdask.kernels.merge_policy`; ``MergePolicy(enabled=False)``: never on its own).
    ``totals``: which documents get an aligned total
    (:mod:`simdask.storage.aligned_tables`): ``new``,
    those an incremental run adds or modifies; ``all``, every document (``update --align``);
    ``off``, no new ones (documents that have a total keep it correct in every mode).
    """

    batch_docs: int | None = None
    block_pairs: int = 32_000_000
    blocks_in_flight: int = 4
    view_bytes: int = VIEW_BYTES_PER_WORKER
    fuse_members: int = 1000
    max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES
    transfer: str = "auto"
    worker_cache: bool | None = None
    merge_policy: MergePolicy = field(default_factory=MergePolicy)
    totals: str = "new"

    def __post_init__(self) -> None:
        if self.transfer not in TRANSFER_MODES:
            raise ConfigError(
                f"transfer must be one of {', '.join(TRANSFER_MODES)}; got {self.transfer!r}"
            )
        if self.totals not in TOTALS_MODES:
            raise ConfigError(
                f"totals must be one of {', '.join(TOTALS_MODES)}; got {self.totals!r}"
            )


#: the values of :attr:`RunOptions.totals`
TOTALS_MODES = ("new", "all", "off")


def task_key(
    stage: str, tag: str, *, b: int | None = None, s: int | None = None, suffix: str = ""
) -> str:
    """The deterministic name of a task: ``simdask-<stage>-<tag>``, then ``-b<6 digits>`` for
    a batch or block ``b``, ``-s<4 digits>`` for a shard ``s`` and ``-<suffix>``."""
    key = f"simdask-{stage}-{tag}"
    if b is not None:
        key += f"-b{b:06d}"
    if s is not None:
        key += f"-s{s:04d}"
    return f"{key}-{suffix}" if suffix else key


def run_tag(store: ShardStore, run_id: int) -> str:
    """The ``tag`` of run ``run_id`` of the index whose shards ``store`` holds (every run
    of the writer: an update, a compaction): ``<8 hex digits of the store's location>-r<run>``."""
    location = store.url or str(Path(store.location).resolve())
    return f"{xxhash.xxh3_64_hexdigest(location.encode())[:8]}-r{run_id}"


@dataclass(frozen=True)
class RunContext:
    """One run on one cluster, as the stages see it.

    ``tag``: the run's part of every task name (:func:`task_key`); ``cb``: progress;
    ``traffic``: bytes between client and cluster; ``transfer``: ``shared`` (workers read and
    write the index's files) or ``dask`` (data moves through Dask); ``n_workers`` at the start;
    ``in_flight``: chunking and merge tasks submitted at once when the client feeds them;
    ``n_threads``: the workers' threads at the start (0: one a worker); ``clock``: the stage
    windows (:mod:`.stage_clock`); ``sizing``: what the stages chose (:mod:`.sizing`).
    """

    client: Client
    run_id: int
    tag: str
    cb: Callback
    traffic: Traffic
    transfer: str
    n_workers: int
    in_flight: int
    options: RunOptions = field(default_factory=RunOptions)
    n_threads: int = 0
    clock: StageClock = field(default_factory=StageClock)
    sizing: TaskSizing | None = None

    @classmethod
    def start(
        cls, client: Client, run_id: int, tag: str, cb: Callback, transfer: str, options: RunOptions
    ) -> RunContext:
        """A context for ``client`` with the worker count and limits it has now."""
        workers = scheduler_workers(client)
        n_workers = max(1, len(workers))
        n_threads = max(n_workers, sum(int(w.get("nthreads", 1)) for w in workers.values()))
        in_flight = max(4, 2 * n_workers)
        traffic = Traffic(client)
        sizing = TaskSizing(n_workers, n_threads)
        return cls(
            client,
            run_id,
            tag,
            cb,
            traffic,
            transfer,
            n_workers,
            in_flight,
            options,
            n_threads,
            sizing=sizing,
        )

    @property
    def shared(self) -> bool:
        """True when the workers read and write the index's files themselves."""
        return self.transfer == "shared"

    def key(self, stage: str, *, b: int | None = None, s: int | None = None, suffix: str = ""):
        """:func:`task_key` of this run."""
        return task_key(stage, self.tag, b=b, s=s, suffix=suffix)

    def workers_now(self) -> int:
        """The number of workers the scheduler knows at this moment (at least 1)."""
        return max(1, len(scheduler_workers(self.client)))

    def threads_now(self) -> int:
        """The worker threads the scheduler knows at this moment (at least one a worker)."""
        workers = scheduler_workers(self.client)
        return max(1, len(workers), sum(int(w.get("nthreads", 1)) for w in workers.values()))

    def broadcast(self, *values) -> list[Future]:
        """Send each value to every worker (counted once per worker); their futures."""
        for v in values:
            self.traffic.sent(v, copies=self.n_workers)
        return self.client.scatter(list(values), broadcast=True, hash=False)

    def map_shards(
        self,
        stage: str,
        fn: Callable,
        shards: Sequence,
        *args,
        b: int | None = None,
        refs: bool = False,
        stored: bool = False,
    ) -> list[Future]:
        """``fn(shard, *args)`` for every shard future, each where its shard is; task names
        ``simdask-<stage>-<tag>[-b<b>]-s<shard>``. A merged range held as a
        :class:`~simdask.engine.segment_ref.SegmentRef` is opened memory-mapped for each
        call (:func:`~simdask.engine.segment_ref.on_shard`; with ``stored``, its offsets as
        stored: :func:`~simdask.engine.segment_ref.on_stored_shard`), unless ``refs``
        (``fn`` takes the reference itself)."""
        opener = on_stored_shard if stored else on_shard
        return [
            self.client.submit(fn, f, *args, key=self.key(stage, b=b, s=s))
            if refs
            else self.client.submit(opener, fn, f, *args, key=self.key(stage, b=b, s=s))
            for s, f in enumerate(shards)
        ]

    def gather_shards(
        self,
        stage: str,
        fn: Callable,
        shards: Sequence,
        *args,
        refs: bool = False,
        stored: bool = False,
    ) -> list:
        """The results of :meth:`map_shards` (small values: counts, sizes)."""
        return self.client.gather(
            self.map_shards(stage, fn, shards, *args, refs=refs, stored=stored)
        )


@sizeof.register(ShardData)
def _sizeof_shard(data: ShardData) -> int:
    """Dask's size estimate of a shard (for its memory accounting and spilling): its arrays.
    Registered here, in the module every stage imports (so every worker running a simdask
    task), so that reading shards (e.g. for a query) does not import dask."""
    return data.nbytes + 200


@sizeof.register(KnownHashes)
def _sizeof_known(known: KnownHashes) -> int:
    """Dask's size estimate of the known content hashes: their three arrays."""
    return sizeof([known.keys, known.hi, known.lo])
