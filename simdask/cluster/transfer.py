"""Moving large data between the client and the workers, and counting it.

Dask sends what a client scatters or gathers through the scheduler unless asked to connect to
the workers directly. For the large payloads of the ``dask`` placement (document bytes, old
shards, encoded new shards; :mod:`simdask.cluster.placement`) simdask connects directly, so the
scheduler only sees task messages; if a worker cannot be reached from the client (e.g. only
the scheduler's port is forwarded), it falls back to the scheduler for the rest of the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dask.sizeof import sizeof

__all__ = ["Traffic"]


@dataclass
class Traffic:
    """Bytes the client sent to and received from the cluster in one run (``dask.sizeof`` of
    the objects scattered, passed and gathered: document bytes, shards, results)."""

    client: object = field(default=None, repr=False)
    to_cluster: int = 0
    from_cluster: int = 0
    direct: bool = True

    def sent(self, obj, copies: int = 1) -> None:
        """Count an object sent to the cluster (``copies`` times: broadcast to that many
        workers)."""
        self.to_cluster += int(sizeof(obj)) * copies

    def received(self, obj) -> None:
        """Count an object received from the cluster."""
        self.from_cluster += int(sizeof(obj))

    def scatter(self, obj):
        """Send ``obj`` to one worker (directly if possible); returns its future."""
        self.sent(obj)
        if self.direct:
            try:
                return self.client.scatter([obj], hash=False, direct=True)[0]
            except OSError:
                self.direct = False
        return self.client.scatter([obj], hash=False)[0]

    def gather(self, future):
        """The result of ``future`` (fetched directly from its worker if possible)."""
        if self.direct:
            try:
                out = self.client.gather(future, direct=True)
            except OSError:
                self.direct = False
            else:
                self.received(out)
                return out
        out = self.client.gather(future)
        self.received(out)
        return out
