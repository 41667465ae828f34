"""What a run uses when its caller leaves a setting open: the index settings, the shard cache.

These rules are defined here once, for the command line and for Python callers alike:

* :func:`update_config`: an update given only some index settings (``--shards 8``) keeps the
  others of the index it updates (or the defaults, for a new index).
* :func:`run_config`: the settings a run uses, given an :class:`IndexConfig` or none; a
  ``shards`` of None (not given) keeps the index's range count, and
  :func:`cluster_ranges`: the first run of an index created without one (``Index.create``
  given no ``shards``, ``simdask update`` without ``--shards``) chooses it for the cluster it
  runs on (:func:`simdask.engine.sizing.new_ranges`) before it writes anything. ``--rebuild``
  without ``--shards`` keeps an index's range count.
* :func:`use_worker_cache`: the workers' shard cache (:mod:`simdask.cluster.worker_cache`) is
  on, unless the caller says otherwise, exactly when the cluster outlives the run: an existing
  scheduler (``--scheduler``), or a client the caller passed in and keeps. A cluster started
  for the run and closed after it (a LocalCluster or SSHCluster of ``simdask update``, the
  LocalCluster ``Index.update`` starts when given no client) is off: no later run would find
  the cached shards, and caching costs worker memory.

Neither imports dask, distributed or zarr.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simdask.cluster.workers import scheduler_workers
from simdask.config import IndexConfig
from simdask.engine.sizing import new_ranges
from simdask.errors import ConfigError
from simdask.storage.catalog import Catalog
from simdask.storage.create import CATALOG_NAME, ranges_open
from simdask.write.rechunk import only_exclusions_differ

__all__ = [
    "INDEX_SETTINGS",
    "cluster_ranges",
    "run_config",
    "update_config",
    "use_worker_cache",
]

#: the index settings an update may be given (``simdask update --hash-bits ... --slack --max-df
#: --similarity-mode --auto-budget --heavy-df --lsh --exclude-quotes --exclude-bibliography``);
#: the others
#: (``k``, ``seed``, ``max_heavy``, ``light_budget``, ``light_floor``) keep their defaults
INDEX_SETTINGS = (
    "hash_bits",
    "shards",
    "threshold",
    "top_k",
    "slack",
    "max_df",
    "similarity_mode",
    "auto_budget",
    "heavy_df",
    "lsh",
    "exclude_quotes",
    "exclude_bibliography",
    "candidates",
)


def update_config(path: str | os.PathLike, given: Mapping[str, Any]) -> IndexConfig | None:
    """The :class:`IndexConfig` an update of the index at ``path`` runs with, given some settings.

    ``given``: settings by name (those of :class:`IndexConfig`); a ``None`` value counts as not
    given. Nothing given: ``None`` (the index keeps its stored settings; a new index gets the
    defaults). Otherwise the stored settings of the index at ``path`` (the defaults when there
    is no index there yet) with the given ones replaced, validated (:class:`ConfigError` names
    a bad value). The index is opened only to read its settings, and closed again.
    """
    names = {f.name for f in dataclasses.fields(IndexConfig)}
    unknown = sorted(set(given) - names)
    if unknown:
        raise ConfigError(f"unknown index settings {unknown}; expected a subset of {sorted(names)}")
    changes = {k: v for k, v in given.items() if v is not None}
    if not changes:
        return None
    base = IndexConfig()
    catalog_path = Path(path) / CATALOG_NAME
    if catalog_path.exists():
        catalog = Catalog(catalog_path)
        try:
            base = catalog.check_format()
        finally:
            catalog.close()
    return base.replace(**changes)


def use_worker_cache(choice: bool | None, *, cluster_outlives_run: bool) -> bool:
    """Whether the workers keep shards cached for the next run (``RunOptions.worker_cache``).

    ``choice``: what the caller asked for (``--worker-cache`` / ``--no-worker-cache``); None:
    the default, which is on exactly when the cluster outlives the run
    (``cluster_outlives_run``: :attr:`ClusterSpec.outlives_run
    <simdask.cluster.spec.ClusterSpec.outlives_run>` for a cluster named by settings; True for a
    ``distributed.Client`` the caller passes in and keeps; False for a cluster started for this
    run alone).
    """
    return cluster_outlives_run if choice is None else bool(choice)


def run_config(index, config: IndexConfig | None, rebuild: bool) -> tuple[IndexConfig, bool]:
    """The settings a run of the open ``index`` uses, given ``config`` (None: the index's),
    and whether the run chooses the index's range count for its cluster
    (:func:`cluster_ranges`: ``config`` gives no ``shards`` and the index is new,
    :func:`~simdask.storage.create.ranges_open`). A ``config.shards`` of None keeps the
    index's. Settings other than the index's (the exclusion settings aside) need ``rebuild``
    on an index holding documents (:class:`ConfigError` otherwise)."""
    current = index.config
    choose = (config is None or config.shards is None) and ranges_open(index.catalog)
    if config is None:
        return current, choose
    if config.shards is None:
        config = config.replace(shards=current.shards)
    if config == current:
        return current, choose
    allowed = rebuild or only_exclusions_differ(current, config)
    if index.catalog.n_documents(limit=1) and not allowed:
        raise ConfigError(
            f"index at {index.path} was built with other settings"
            f" ({current.differences(config)}): "
            "pass rebuild=True (CLI: --rebuild) to rebuild it with the new settings"
        )
    return config, choose


def cluster_ranges(index, client, n_docs: int, choose: bool) -> IndexConfig | None:
    """The settings of ``index`` for a run on ``client`` listing ``n_docs`` documents when
    the run chooses its range count: with ``choose`` (:func:`run_config`) and while no run
    has committed, ``index.config`` with the range count for the client's worker threads and
    those documents (:func:`~simdask.engine.sizing.new_ranges`); else None (the index's)."""
    if not (choose and ranges_open(index.catalog)):
        return None
    workers = scheduler_workers(client)
    threads = max(1, len(workers), sum(int(w.get("nthreads", 1)) for w in workers.values()))
    return index.config.replace(shards=new_ranges(threads, n_docs))
