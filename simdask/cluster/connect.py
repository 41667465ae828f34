"""Getting a Dask client: a LocalCluster, an existing scheduler, or an SSHCluster.

:func:`connect` takes a :class:`~simdask.cluster.spec.ClusterSpec`; failures to reach the
cluster, a lost scheduler and workers dying are turned into :class:`ClusterError` with a
message saying what to do (:func:`cluster_failure`). :func:`check_cluster` describes a
running cluster for ``simdask cluster --check``.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Iterator
from concurrent.futures import CancelledError
from contextlib import ExitStack, contextmanager, suppress
from typing import Any

import dask
from distributed import Client, LocalCluster

from simdask.cluster.children import worker_environ, worker_loop
from simdask.cluster.listen import dashboard_link, local_network, ssh_network
from simdask.cluster.spec import ClusterSpec, default_workers
from simdask.cluster.ssh_errors import ssh_start_error
from simdask.cluster.worker_check import require_workers, simdask_origin
from simdask.cluster.workers import scheduler_workers
from simdask.errors import ClusterError, SimdaskError

__all__ = [
    "CLUSTER_CONFIG",
    "WORKER_MALLOC_ENV",
    "check_cluster",
    "cluster_errors",
    "cluster_failure",
    "connect",
    "default_workers",
    "ssh_cluster_kwargs",
]

#: Set in the worker processes of simdask's own LocalCluster before they start: keep freed
#: memory in the heap instead of returning it to the OS at once (Dask's default trim threshold
#: is 64 KiB). simdask's tasks allocate large temporaries again and again; where the first
#: touch of fresh memory is slow (VMs) this makes them faster, at the price of workers keeping
#: their peak memory (both measured by scripts/bench_kernels.py; docs/benchmarks.md, "Kernels").
WORKER_MALLOC_ENV = {
    "MALLOC_TRIM_THRESHOLD_": str(4 * 2**30),
    "MALLOC_MMAP_THRESHOLD_": str(32 * 2**20),
}

#: Dask settings of the clusters simdask starts (LocalCluster, SSHCluster). The Active Memory
#: Manager's ReduceReplicas policy drops the extra copies of data scattered with
#: ``broadcast=True`` after ~2 s; a worker that dies afterwards can take the only copy with it
#: and the run fails ("lost dependencies") instead of retrying the task elsewhere.
CLUSTER_CONFIG = {"distributed.scheduler.active-memory-manager.start": False}


def _subprocess_logging() -> tuple[int, dict[str, str]]:
    """The log level of the scheduler and worker processes simdask starts, and the
    environment that sets it in a worker process before it imports distributed (its
    ``logging`` config, asyncio included): ERROR when simdask's own logger shows INFO
    (``simdask --verbose``), else nothing but CRITICAL (simdask reports failures itself; the
    workers' connection chatter and shutdown tracebacks are noise)."""
    if logging.getLogger("simdask").isEnabledFor(logging.INFO):  # explicit: not inherited
        return logging.INFO, {"DASK_LOGGING__DISTRIBUTED": "info"}
    quiet = {"DASK_LOGGING__DISTRIBUTED": "critical", "DASK_LOGGING__ASYNCIO": "critical"}
    return logging.CRITICAL, quiet


def _environ_of(names: dict[str, str]) -> dict[str, str | None]:
    """The current values (None: unset) of the environment variables ``names``.

    Distributed's nannies set their ``pre-spawn-environ`` in the environment of the process
    that starts them (glibc reads ``MALLOC_*`` only at process start), so a LocalCluster
    leaves the workers' settings in the caller's environment, and every process the caller
    starts later inherits them; :func:`connect` puts them back when its cluster is closed."""
    return {k: os.environ.get(k) for k in names}


def _restore_environ(saved: dict[str, str | None]) -> None:
    """Put back the environment variables of :func:`_environ_of`."""
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


_MEMORY_HINT = (
    "raise the memory limit per worker with --memory-limit (SIMDASK_MEMORY_LIMIT, "
    "memory_limit in the config file), or use fewer threads per worker"
)


def _spec_of(
    spec: ClusterSpec | str | None,
    workers: int | None,
    threads_per_worker: int,
    memory_limit: str | float | int | None,
    dashboard_address: str | None,
) -> ClusterSpec:
    if isinstance(spec, ClusterSpec):
        return spec
    common = {"threads_per_worker": threads_per_worker, "dashboard_address": dashboard_address}
    common = {k: v for k, v in common.items() if v is not None}
    if spec:  # the old form: connect("tcp://host:8786")
        return ClusterSpec(kind="scheduler", scheduler=spec, **common)
    return ClusterSpec(
        workers=workers,
        memory_limit="auto" if memory_limit is None else str(memory_limit),
        **common,
    )


def ssh_cluster_kwargs(spec: ClusterSpec) -> dict[str, Any]:
    """The arguments of ``distributed.deploy.ssh.SSHCluster`` for an ``ssh`` spec."""
    connect_options: dict[str, Any] = {"connect_timeout": spec.connect_timeout}
    if spec.ssh_user:
        connect_options["username"] = spec.ssh_user
    if spec.ssh_key:
        connect_options["client_keys"] = [os.path.expanduser(spec.ssh_key)]
    if spec.ssh_port:
        connect_options["port"] = spec.ssh_port
    if spec.ssh_known_hosts:
        kh = spec.ssh_known_hosts
        connect_options["known_hosts"] = None if kh.lower() == "none" else os.path.expanduser(kh)
    return {
        "hosts": list(spec.ssh_hosts),
        "connect_options": connect_options,
        "worker_options": {
            "n_workers": spec.workers_per_host,
            "nthreads": spec.threads_per_worker,
            "memory_limit": spec.memory_limit,
        },
        "scheduler_options": {"port": 0, "dashboard_address": spec.dashboard_address},
        "remote_python": spec.remote_python or sys.executable,
        **ssh_network(spec),
    }


def _start_ssh(spec: ClusterSpec):
    from distributed.deploy.ssh import SSHCluster  # optional (ssh extra)

    try:
        import asyncssh  # noqa: F401
    except ImportError:
        raise ClusterError("--ssh needs the asyncssh package: pip install 'simdask[ssh]'") from None
    kwargs = ssh_cluster_kwargs(spec)
    network = kwargs.pop("network", {})
    kwargs["scheduler_options"].update(network)
    kwargs["worker_options"].update(network)
    try:
        # the remote processes inherit dask's config; SSHCluster waits for their INFO lines
        # ("Scheduler at: ..."), so their distributed logging stays at INFO whatever this
        # process was given (e.g. DASK_LOGGING__DISTRIBUTED=critical in its environment)
        with dask.config.set({**CLUSTER_CONFIG, "logging.distributed": "info"}):
            return SSHCluster(**kwargs, silence_logs=_subprocess_logging()[0])
    except Exception as e:
        raise ssh_start_error(spec, kwargs, e) from None


def _connect_scheduler(spec: ClusterSpec) -> Client:
    try:
        return Client(spec.scheduler, timeout=spec.connect_timeout)
    except (OSError, TimeoutError) as e:
        raise ClusterError(
            f"cannot connect to the Dask scheduler at {spec.scheduler}: {e}. Is it running and "
            "reachable from here? (start one with `dask scheduler`, its workers with "
            "`dask worker ADDRESS`)"
        ) from None


@contextmanager
def connect(
    spec: ClusterSpec | str | None = None,
    *,
    workers: int | None = None,
    threads_per_worker: int | None = None,
    processes: bool = True,
    memory_limit: str | float | int | None = None,
    dashboard_address: str | None = None,
    check_workers: bool = True,
) -> Iterator[Client]:
    """A client for the duration of a ``with`` block.

    ``spec``: a :class:`ClusterSpec`; or, as before, a scheduler address (connect to that
    existing cluster and leave it running afterwards) or None (start a LocalCluster of
    ``workers`` worker processes, or threads with ``processes=False``, from the keywords).
    Clusters started here (local, ssh) are shut down at the end. Raises :class:`ClusterError`
    when the cluster cannot be reached or started, and (``check_workers``, for a cluster that
    is not a local one: :func:`~simdask.cluster.worker_check.require_workers`) when it has no
    workers or a worker cannot import simdask; warns when its dask or distributed differ.
    """
    spec = _spec_of(spec, workers, threads_per_worker, memory_limit, dashboard_address)
    cluster, saved, loops = None, None, ExitStack()
    if spec.kind == "scheduler":
        client = _connect_scheduler(spec)
    else:
        try:
            if spec.kind == "ssh":
                cluster = _start_ssh(spec)
            else:
                level, log_env = _subprocess_logging()
                # worker processes never take the terminal's Ctrl-C: this process decides
                worker_env = {**WORKER_MALLOC_ENV, **log_env, **worker_environ()}
                env = {f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in worker_env.items()}
                saved = _environ_of(worker_env)
                # a variable already in this process's environment overrides distributed's
                # pre-spawn-environ (nanny._get_env_variables): e.g. a PYTHONPATH set by the
                # user would drop the worker_site folder; so the values are put there too
                # (put back when the cluster is closed)
                os.environ.update(worker_env)
                # its worker processes are born with SIGINT blocked (cluster/children.py)
                loop = loops.enter_context(worker_loop()) if processes else None
                with dask.config.set({**env, **CLUSTER_CONFIG}):
                    cluster = LocalCluster(
                        loop=loop,
                        n_workers=spec.workers or default_workers(),
                        threads_per_worker=spec.threads_per_worker,
                        processes=processes,
                        memory_limit=spec.memory_limit,
                        silence_logs=level,
                        **local_network(spec, processes),
                    )
            client = Client(cluster)
        except BaseException:  # an interrupt too: a cluster started here is closed whole
            if cluster is not None:
                with suppress(Exception):
                    cluster.close(timeout=30)
            with suppress(Exception):
                loops.close()
            if saved is not None:
                _restore_environ(saved)
            raise
    try:
        if spec.kind != "local" and check_workers:  # not started here: other environments
            require_workers(client, _scheduler_address(client), spec.connect_timeout)
        with dask.config.set(dashboard_link(spec)):
            yield client
    finally:
        with suppress(Exception):  # a lost scheduler must not hide the error of the run
            client.close(timeout=10)
        if cluster is not None:
            with suppress(Exception):
                cluster.close(timeout=30)
        with suppress(Exception):
            loops.close()
        if saved is not None:
            _restore_environ(saved)


def _scheduler_address(client: Any) -> str:
    with suppress(Exception):
        return client.scheduler.address
    return "(unknown address)"


def _lost(client: Any) -> bool:
    """Whether ``client`` has lost its scheduler (is reconnecting or closed)."""
    return client is not None and getattr(client, "status", "running") != "running"


def _workers(client: Any) -> dict[str, int | None] | None:
    """The scheduler's workers now, with their memory limits (None if it cannot be asked).
    Asked of the scheduler (:func:`~simdask.cluster.workers.scheduler_workers`): the client's
    cached ``scheduler_info()`` can show none while all are there, which made a run's own error
    look like workers that died."""
    if _lost(client):
        return None
    try:
        workers = scheduler_workers(client)
    except Exception:
        return None
    return {a: w.get("memory_limit") for a, w in workers.items()}


def _memory_text(limits: Any) -> str:
    from dask.utils import format_bytes  # loads dask: only when a run needs it

    limits = sorted({m for m in limits if m})
    if not limits:
        return "memory limit per worker unknown or none"
    span = format_bytes(limits[0])
    if len(limits) > 1:
        span += f" to {format_bytes(limits[-1])}"
    return f"the memory limit per worker is {span}"


def _memory_restarts(client: Any, since: float | None) -> int | None:
    """Workers the nannies restarted for exceeding their memory budget since ``since`` (the
    scheduler's ``worker-restart-memory`` events); None when it cannot be told."""
    if since is None:
        return None
    try:
        events = client.get_events("worker-restart-memory")
    except Exception:
        return None
    return sum(1 for t, _ in events if t >= since)


def _cause(client: Any, since: float | None, limits: Any) -> str:
    """Why workers died, as far as the scheduler knows: memory restarts, else not memory."""
    n = _memory_restarts(client, since)
    if n == 0:
        return (
            "No worker was restarted for using too much memory, so a worker process was "
            "killed from outside or crashed: see the worker logs"
        )
    if n:
        return (
            f"Workers ran out of memory ({n} restarted by their nanny; "
            f"{_memory_text(limits)}): {_MEMORY_HINT}"
        )
    return (
        f"Most often a worker runs out of memory ({_memory_text(limits)}): {_MEMORY_HINT}; "
        "otherwise see the worker logs (killed from outside, crashed)"
    )


def cluster_failure(
    error: BaseException,
    client: Any,
    note: str = "",
    workers_before: dict[str, int | None] | None = None,
    since: float | None = None,
) -> ClusterError | None:
    """A :class:`ClusterError` for ``error`` if the cluster failed the run: workers died
    (:class:`~distributed.scheduler.KilledWorker`, or workers of ``workers_before`` gone), the
    scheduler went away; None if ``error`` is something else. ``note`` is appended. ``since``
    (the run's start, ``time.time()``): memory restarts after it name memory as the cause;
    none name a kill or crash instead."""
    from distributed.scheduler import KilledWorker  # loads dask: only when a run needs it

    tail = f"; {note}" if note else ""
    if isinstance(error, KilledWorker):
        last = error.last_worker
        mem = _memory_text([getattr(last, "memory_limit", None)])
        if _memory_restarts(client, since) == 0:
            why = _cause(client, since, [])
        else:
            why = (
                f"Most often a worker runs out of memory ({mem}): {_MEMORY_HINT}; otherwise "
                "see the worker logs (killed from outside, crashed)"
            )
        return ClusterError(
            f"Dask workers died while running task {error.task!r}: it was tried on "
            f"{error.allowed_failures + 1} workers and each died (the last was "
            f"{getattr(last, 'address', last)}). {why}{tail}"
        )
    lost = getattr(error, "reason", None) == "scheduler-connection-lost" or (
        isinstance(error, (OSError, TimeoutError, CancelledError)) and _lost(client)
    )
    if lost:
        return ClusterError(
            f"lost the connection to the Dask scheduler at {_scheduler_address(client)} during "
            f"the run ({type(error).__name__}); check that the scheduler is running and "
            f"reachable, then run again{tail}"
        )
    now = None if _lost(client) else _workers(client)
    if now is None:
        return None
    before = workers_before or {}
    gone = sorted(set(before) - set(now))
    from distributed.comm.core import CommClosedError  # loads dask: only when a run needs it

    changed = set(now) != set(before)  # a worker died and came back under a new address
    if not changed and now and not isinstance(error, CommClosedError):
        return None
    first = (str(error).strip().splitlines() or [""])[0][:200]
    if gone:
        what = (
            f"{len(gone)} of the {len(before)} Dask workers died during the run "
            f"({', '.join(gone[:3])}{', ...' if len(gone) > 3 else ''})"
        )
    elif not now and not before:  # none to begin with: nothing died
        return ClusterError(
            f"the Dask cluster at {_scheduler_address(client)} has no workers, so the run could "
            f"not go on ({type(error).__name__}: {first}): start workers (`dask worker "
            f"ADDRESS`) or run on this machine with --local{tail}"
        )
    else:  # a worker's connection closed, or workers came back under new addresses
        what = "Dask workers died and were restarted during the run"
    why = _cause(client, since, [*before.values(), *now.values()])
    if len(before) == 1 and (gone or "lost dependencies" in str(error)):
        why = (
            "With one worker, data the client scattered to it died with it and the run cannot "
            f"go on (with two or more, a worker's death is survived). {why}"
        )
    return ClusterError(f"{what} and the run failed ({type(error).__name__}: {first}). {why}{tail}")


@contextmanager
def cluster_errors(client: Any, note: str = "") -> Iterator[None]:
    """Inside the block, turn a cluster's failure (see :func:`cluster_failure`) into a
    :class:`ClusterError`; use it inside the block that owns ``client``, before it closes."""
    before = _workers(client)
    since = time.time()
    try:
        yield
    except Exception as e:
        if isinstance(e, SimdaskError):
            raise
        failure = cluster_failure(e, client, note, before, since)
        if failure is None:
            raise
        raise failure from e


_PACKAGES = ("python", "dask", "distributed", "numpy", "simdask")


def check_cluster(client: Client) -> dict[str, Any]:
    """What a connected cluster offers: dashboard, workers (threads, memory limit) and the
    versions of Python, dask, distributed, numpy and simdask on the client, the scheduler and
    each worker, with a list of human-readable ``warnings`` where they differ."""
    found = scheduler_workers(client)
    versions = client.get_versions(check=False, packages=["simdask"])

    def pick(v: dict) -> dict[str, str | None]:
        pk = v.get("packages", {})
        return {p: pk.get(p) for p in _PACKAGES}

    mine = pick(versions["client"])
    mine["simdask"] = simdask_origin()
    origins = client.run(simdask_origin, on_error="return")
    workers = []
    for addr, w in sorted(found.items()):
        v = pick(versions.get("workers", {}).get(addr, {}))
        origin = origins.get(addr)
        v["simdask"] = origin if isinstance(origin, str) else f"cannot import: {origin!r}"[:200]
        workers.append(
            {
                "address": addr,
                "host": w.get("host"),
                "threads": w.get("nthreads"),
                "memory_limit": w.get("memory_limit"),
                "versions": v,
            }
        )
    warnings = []
    sched = pick(versions.get("scheduler", {}))
    for name, theirs in [("scheduler", sched)] + [(w["address"], w["versions"]) for w in workers]:
        for p in _PACKAGES:
            if name == "scheduler" and p == "simdask":
                continue  # the scheduler never imports simdask
            if theirs.get(p) != mine.get(p):
                warnings.append(f"{p} differs: {theirs.get(p)} on {name}, {mine.get(p)} here")
    if not workers:
        warnings.append("the cluster has no workers: a run would wait for some to join")
    with suppress(Exception):
        if client.amm.running():
            warnings.append(
                "the scheduler's Active Memory Manager is on: a worker that dies can take the "
                "only copy of broadcast data with it and fail the run instead of a retry; start "
                "the scheduler with DASK_DISTRIBUTED__SCHEDULER__ACTIVE_MEMORY_MANAGER__START=False"
            )
    return {
        "scheduler": _scheduler_address(client),
        "dashboard": client.dashboard_link,
        "workers": workers,
        "threads": sum(w["threads"] or 0 for w in workers),
        "versions": mine,
        "warnings": warnings,
    }
