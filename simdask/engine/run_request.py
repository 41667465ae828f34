"""What one run is asked (:class:`RunRequest`, built by the writer,
:meth:`simdask.writer.Writer.update`) and what it returns (:class:`RunOutcome`, committed by
the writer): the interface of :func:`simdask.engine.run.run_update`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from simdask.config import IndexConfig
from simdask.engine.context import RunOptions
from simdask.ingest.sources import SourceItem
from simdask.kernels.changes import DocumentCounts
from simdask.kernels.exclusions import Exclusions
from simdask.progress import Callback
from simdask.storage.catalog import Catalog, RunChanges
from simdask.storage.digest_ahead import DigestsAhead
from simdask.storage.shards import ShardStore
from simdask.summary import RunStats

__all__ = ["RunOutcome", "RunRequest"]


@dataclass(frozen=True)
class RunRequest:
    """One run as the writer asks for it (:meth:`simdask.writer.Writer.update`): the index it
    writes to (``catalog``, shard ``store``, ``text_dir``; ``work_dir``: the run's buckets;
    ``config``), the ``items`` listed, the run's generation ``run_id``, its ``options`` and
    progress ``cb``. ``remove_keys``: documents deleted; ``delete_missing_from``: sources
    whose documents that are gone are deleted; ``replace_all``: a build from scratch;
    ``exclusions``: what every chunk set leaves out (the index's templates, quotations,
    reference lists); ``keep_hashes``: content hashes recorded for these keys instead of those
    of the items read (a run re-chunking the stored texts keeps the hashes of the original
    files); these keys are chunked again even if unchanged."""

    catalog: Catalog
    store: ShardStore
    text_dir: Path
    work_dir: Path
    config: IndexConfig
    items: Sequence[SourceItem]
    run_id: int
    options: RunOptions
    cb: Callback
    remove_keys: frozenset[str] = frozenset()
    delete_missing_from: frozenset[str] = frozenset()
    replace_all: bool = False
    exclusions: Exclusions | None = None
    keep_hashes: Mapping[str, str] | None = None


@dataclass
class RunOutcome:
    """The changes to commit, the counts for the summary, what was measured, ``digests``."""

    changes: RunChanges
    counts: DocumentCounts
    stats: RunStats
    digests: DigestsAhead = field(default_factory=DigestsAhead)
