"""The workers a Dask scheduler has now, asked of the scheduler itself.

``Client.scheduler_info()`` is not safe for this: it stores the scheduler's answer in the
client's cache (``Client._scheduler_identity``) and returns the cache, which the client's
periodic update (``distributed.client.scheduler-info-interval``, 2 s) overwrites, from the
client's event-loop thread, with an identity *without* per-worker information. When that
update lands between the fetch and the read, ``scheduler_info()["workers"]`` is empty although
no worker left (distributed 2026.8; measured: 40 of 12,318 calls in a tight loop with a 20 ms
interval, none of the workers restarted; docs/testing.md, "The worker that never restarted").
:func:`scheduler_workers` asks the scheduler directly and shares no cache.
"""

from __future__ import annotations

from typing import Any

__all__ = ["scheduler_workers"]


def scheduler_workers(client: Any) -> dict[str, dict[str, Any]]:
    """The scheduler's workers at this moment: address -> the scheduler's record of it
    (``nthreads``, ``memory_limit`` in bytes, ``status``, ...), from one call to the
    scheduler (``Scheduler.identity``), not from the client's cache. ``client``: a
    synchronous :class:`distributed.Client`. Raises what the call raises (``OSError`` when
    the scheduler cannot be reached)."""
    info = client.sync(client.scheduler.identity, n_workers=-1)
    return dict(info.get("workers", {}))
