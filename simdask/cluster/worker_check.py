"""What a run checks of the workers of a cluster it did not start (an existing scheduler, an
SSH cluster) before it sends them any work (issue 30 item 11): that there are workers at all,
that each can import simdask, and that they run the client's dask and distributed.

Without these checks a worker without simdask failed the run with a 62-line traceback of the
first task that reached it, a worker of another dask or distributed version was silent until
something broke, and a scheduler without workers ended in "a worker was killed from outside".
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any

import simdask
from simdask.cluster.workers import scheduler_workers
from simdask.errors import ClusterError

__all__ = ["PACKAGES_THAT_MUST_MATCH", "require_workers", "simdask_origin"]

_log = logging.getLogger(__name__)

#: packages whose versions must be the same on the client and every worker (pickled tasks and
#: the wire protocol depend on them)
PACKAGES_THAT_MUST_MATCH = ("dask", "distributed")


def simdask_origin() -> str:
    """simdask's version and folder in this process (run on each worker: importing this module
    there is the check that simdask is installed)."""
    return f"{simdask.__version__} ({os.path.dirname(simdask.__file__)})"


def _wait_for_a_worker(client: Any, address: str, timeout: float) -> None:
    if scheduler_workers(client):
        return
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        raise ClusterError(
            f"the Dask scheduler at {address} has no workers (none joined within {timeout:g} "
            f"s), so nothing can run: start some with `dask worker {address}`, or run on this "
            "machine with --local"
        ) from None


def _without_simdask(client: Any) -> None:
    """:class:`ClusterError` naming the workers that cannot import simdask."""
    origins = client.run(simdask_origin, on_error="return")
    bad = {a: o for a, o in sorted(origins.items()) if not isinstance(o, str)}
    if not bad:
        return
    addr, error = next(iter(bad.items()))
    more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
    raise ClusterError(
        f"the Dask worker {addr}{more} cannot import simdask ({_error_name(error)}): install "
        f"simdask {simdask.__version__} in the Python environment the workers run (`simdask "
        "cluster --check` lists every worker)"
    )


def _error_name(error: BaseException) -> str:
    """The name of a worker's exception: distributed returns one it cannot send back whole as
    ``Exception('ModuleNotFoundError("No modul...")')``, cut short; its name is what says."""
    m = re.match(r"(\w+)\(", str(error)) if type(error) is Exception else None
    return m.group(1) if m else type(error).__name__


def version_differences(client: Any) -> list[str]:
    """One line per package of :data:`PACKAGES_THAT_MUST_MATCH` whose version differs between
    this process and a worker (or the scheduler): ``dask 2024.1.0 on tcp://..., 2026.8.0
    here``; empty when all match."""
    versions = client.get_versions(check=False)
    mine = versions["client"]["packages"]
    theirs = [("the scheduler", versions.get("scheduler", {}))]
    theirs += sorted(versions.get("workers", {}).items())
    out = []
    for package in PACKAGES_THAT_MUST_MATCH:
        other = {
            name: v.get("packages", {}).get(package)
            for name, v in theirs
            if v.get("packages", {}).get(package) != mine.get(package)
        }
        if other:
            (name, version), *rest = other.items()
            more = f" and {len(rest)} more" if rest else ""
            out.append(f"{package} {version} on {name}{more}, {mine.get(package)} here")
    return out


def require_workers(client: Any, address: str, timeout: float) -> None:
    """Before a run on a cluster simdask did not start: raises :class:`ClusterError` (one line)
    when no worker joins within ``timeout`` s or a worker cannot import simdask; warns (one
    line on stderr) when dask or distributed differ between this process and the cluster."""
    _wait_for_a_worker(client, address, timeout)
    _without_simdask(client)
    differ = version_differences(client)
    if differ:
        _log.warning(
            "the Dask cluster runs other versions than this process (%s): install the same "
            "dask and distributed on both sides if the run fails",
            "; ".join(differ),
        )
