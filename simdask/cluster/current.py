"""The cluster a caller already has, as Dask libraries find it (issue 32, item 5).

A run given no ``client`` uses, in order: the active ``distributed.Client`` of this process
(:func:`active_client`: ``distributed.default_client()``, the client a ``with Client(...)``
block or ``Client(...).as_current()`` made current, or the last one created), then the
scheduler address of Dask's configuration (:func:`configured_scheduler`: ``dask.config``'s
``scheduler-address``, which the environment variable ``DASK_SCHEDULER_ADDRESS`` and Dask's
YAML config files set), and only then a cluster of its own. That is what ``dask.compute``,
dask-ml and xarray do, so a Gateway, Kubernetes, SLURM (dask-jobqueue) or Coiled cluster the
caller opened is the one a run uses.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

__all__ = ["DASK_ADDRESS_ENV", "active_client", "configured_scheduler", "made_current"]

#: the environment variable Dask reads its ``scheduler-address`` setting from
DASK_ADDRESS_ENV = "DASK_SCHEDULER_ADDRESS"


def active_client() -> Any | None:
    """The ``distributed.Client`` Dask would use now (``default_client()``), or None when
    this process has none (or only closed ones)."""
    from distributed import default_client  # loads distributed: only when a run needs it

    try:
        client = default_client()
    except ValueError:  # "No clients found": distributed's way of saying there is none
        return None
    return client if getattr(client, "status", "running") == "running" else None


def configured_scheduler(environ: Mapping[str, str] | None = None) -> str | None:
    """The scheduler address of Dask's configuration, None when there is none.

    ``DASK_SCHEDULER_ADDRESS`` in ``environ`` (default ``os.environ``) is read now, so a value
    set after dask was imported counts too; otherwise ``dask.config.get("scheduler-address")``
    (Dask's YAML files, ``dask.config.set``)."""
    value = (os.environ if environ is None else environ).get(DASK_ADDRESS_ENV, "").strip()
    if value:
        return value
    import dask.config  # loads dask: only when no environment variable answers

    found = dask.config.get("scheduler-address", None)
    return (str(found).strip() or None) if found else None


def made_current(client: Any) -> AbstractContextManager[Any]:
    """``with made_current(client):`` ``client`` is the one ``distributed.default_client()``
    returns in the block (``Client.as_current()``), so that Dask calls that take the default
    client (``as_completed``) use it even when it was made with ``set_as_default=False``;
    a no-op for None."""
    as_current = getattr(client, "as_current", None)
    return as_current() if as_current is not None else nullcontext(client)
