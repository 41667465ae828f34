"""What a run uses when its caller leaves a setting open: the index settings, the shard cache.

Both rules are defined here once, for the command line and for Python callers alike:

* :func:`update_config`: an update given only some index settings (``--shards 8``) keeps the
  others of the index it updates (or the defaults, for a new index).
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

from simdask.config import IndexConfig
from simdask.errors import ConfigError
from simdask.storage.catalog import Catalog
from simdask.storage.create import CATALOG_NAME

__all__ = ["INDEX_SETTINGS", "update_config", "use_worker_cache"]

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
