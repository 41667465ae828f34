"""Which cluster a run given no ``client`` uses (:class:`simdask.writer.Writer`).

The caller's own first, as Dask libraries do (:mod:`simdask.cluster.current`): the active
``distributed.Client``, then the scheduler address of Dask's configuration
(``DASK_SCHEDULER_ADDRESS``); else a cluster started for the run (:func:`default_connector`).
Imports no dask: a reader of an index never needs it.
"""

from __future__ import annotations

from typing import Any

from simdask.cluster.current import active_client, configured_scheduler
from simdask.cluster.placement import runs_in_process
from simdask.cluster.spec import ClusterSpec

__all__ = ["default_connector", "found_cluster"]


def found_cluster() -> tuple[Any, Any]:
    """The cluster a caller gave no client for: ``(client, None)`` for the active
    ``distributed.Client`` (:func:`~simdask.cluster.current.active_client`), ``(None,
    connector)`` for the scheduler address of Dask's configuration (``DASK_SCHEDULER_ADDRESS``;
    the connector connects to it for the run and leaves it running), ``(None, None)`` for
    neither (the run starts a cluster of its own)."""
    client = active_client()
    if client is not None:
        return client, None
    address = configured_scheduler()
    if address is None:
        return None, None
    spec = ClusterSpec(kind="scheduler", scheduler=address)

    def connector(n_items: int):
        from simdask.cluster.connect import connect  # loads dask: only when a run needs it

        return connect(spec)

    return None, connector


def default_connector(n_items: int):
    """The cluster of a run given neither a client nor a connector: a LocalCluster of worker
    processes, or of threads in this process for a small run (as the command line does,
    :func:`~simdask.cluster.placement.runs_in_process`: same tasks, same results, without
    the seconds of starting processes)."""
    from simdask.cluster.connect import connect  # loads dask: only when a run needs it

    return connect(processes=not runs_in_process(ClusterSpec(), n_items))
