"""Getting a Dask client: a LocalCluster (processes by default) or an existing scheduler."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

import dask
from distributed import Client, LocalCluster

__all__ = ["WORKER_MALLOC_ENV", "connect", "default_workers"]

#: Set in the worker processes of simdask's own LocalCluster before they start: keep freed
#: memory in the heap instead of returning it to the OS at once (Dask's default trim threshold
#: is 64 KiB). simdask's tasks allocate large temporaries again and again; on machines where
#: the first touch of fresh memory is slow (VMs, measured here at ~2 s/GiB) this makes them
#: about twice as fast, at the price of workers keeping their peak memory.
WORKER_MALLOC_ENV = {
    "MALLOC_TRIM_THRESHOLD_": str(4 * 2**30),
    "MALLOC_MMAP_THRESHOLD_": str(32 * 2**20),
}


def default_workers() -> int:
    """Workers of a default LocalCluster: one per core."""
    return max(1, os.cpu_count() or 1)


@contextmanager
def connect(
    scheduler: str | None = None,
    *,
    workers: int | None = None,
    threads_per_worker: int = 1,
    processes: bool = True,
    memory_limit: str | float | int | None = "auto",
    dashboard_address: str | None = ":8787",
) -> Iterator[Client]:
    """A client for the duration of a ``with`` block.

    With ``scheduler`` (``tcp://host:port``) connect to that existing cluster and leave it
    running afterwards; otherwise start a LocalCluster of ``workers`` worker processes (or
    threads with ``processes=False``) and shut it down at the end.
    """
    if scheduler:
        client = Client(scheduler)
        try:
            yield client
        finally:
            client.close()
        return
    env = {f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in WORKER_MALLOC_ENV.items()}
    with dask.config.set(env):
        cluster = LocalCluster(
            n_workers=workers or default_workers(),
            threads_per_worker=threads_per_worker,
            processes=processes,
            memory_limit=memory_limit,
            dashboard_address=dashboard_address,
            silence_logs=logging.ERROR,
        )
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
