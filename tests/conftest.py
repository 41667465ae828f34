"""Shared fixtures (a real Dask cluster with worker processes), the hypothesis profiles, and
the check that a ``unit`` test keeps its tier's promise: no process, no cluster (its setup and
its call start none; docs/testing.md, Tiers)."""

from __future__ import annotations

import multiprocessing.process
import os
import signal
import subprocess
import sys
from contextlib import contextmanager

import pytest
from distributed import Client, LocalCluster
from distributed.deploy.spec import SpecCluster
from hypothesis import HealthCheck, settings

# Hypothesis: under CI=true a derandomised profile (the same examples every run, so a property
# that passed keeps passing and one that failed fails again) that prints the failing example
# and the blob to reproduce it; locally the default random draw. The data-guarding properties
# take their example counts from tests.helpers.properties.examples().
settings.register_profile(
    "ci",
    derandomize=True,
    print_blob=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", print_blob=True)
settings.load_profile(
    os.environ.get("SIMDASK_HYPOTHESIS_PROFILE")
    or ("ci" if os.environ.get("CI") == "true" else "dev")
)


# Bytecode kept outside the sources. Under PYTHONDONTWRITEBYTECODE (set in the CI image) every
# process a test starts (each `python -m simdask.cli`, each Dask worker, nanny and scheduler)
# compiled simdask from source again, and every pytest process (xdist's workers) rewrote and
# compiled every test module again: ~12 of the 17 CPU s a pytest process spends collecting the
# suite (docs/testing.md, "Tier timings"). The variable's intent, no bytecode beside the
# sources, is kept: bytecode goes to a cache folder of the user's (PYTHONPYCACHEPREFIX), which
# every process the session starts reads and fills, and which the next session finds. Python
# and pytest's assertion rewriter use a bytecode file only while its source's size and
# modification time match (as they do beside the sources), and the folder mirrors each
# source's absolute path, so two checkouts never share a file. Nothing the tests check
# depends on it; `rm -rf` the folder to start cold. The first pytest process (the xdist
# controller) sets it; its workers and every process started below them inherit it.
_BYTECODE_DIR = None
if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
    _cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    _BYTECODE_DIR = os.path.join(_cache, "simdask-tests", "bytecode")
    os.makedirs(_BYTECODE_DIR, exist_ok=True)
    os.environ.pop("PYTHONDONTWRITEBYTECODE")
    os.environ["PYTHONPYCACHEPREFIX"] = _BYTECODE_DIR
    sys.pycache_prefix = _BYTECODE_DIR
    sys.dont_write_bytecode = False


def pytest_configure(config):
    # A pytest started under `nohup` or as `cmd &` of a non-interactive shell inherits SIGINT
    # ignored, and every child inherits that in turn: the tests that interrupt a simdask
    # process with SIGINT would see it ignored. Python's own default handler is put back in
    # this process (not inherited across exec: children start with SIGINT at its default).
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def client():
    """A LocalCluster with two real worker processes, shared by the session."""
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    # not the active client (distributed.default_client()): a run given no client= takes the
    # active one (issue 32), and tests that pass none expect a cluster of the run's own
    c = Client(cluster, set_as_default=False)
    yield c
    c.close()
    cluster.close()


def _unit_only(item) -> bool:
    names = {m.name for m in item.iter_markers()}
    return "unit" in names and not names & {"integration", "system"}


def _forbidden(what: str):
    def refuse(*args, **kwargs):
        raise RuntimeError(
            f"a `unit` test started {what}: the unit tier runs no process and no cluster "
            "(mark the test or its module `integration` or `system`, docs/testing.md)"
        )

    return refuse


#: what a unit test may not start: (owner, attribute, what it starts)
_STARTERS = (
    (subprocess.Popen, "__init__", "a subprocess"),
    (multiprocessing.process.BaseProcess, "start", "a multiprocessing process"),
    (SpecCluster, "__init__", "a Dask cluster (LocalCluster, threads or processes)"),
)


@contextmanager
def _no_processes():
    """Starting a subprocess, a multiprocessing process or a Dask cluster raises."""
    saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in _STARTERS]
    for owner, name, what in _STARTERS:
        setattr(owner, name, _forbidden(what))
    try:
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    """A ``unit`` test's setup (its fixtures, module-scoped ones included) starts nothing."""
    if not _unit_only(item):
        yield
        return
    if "client" in getattr(item, "fixturenames", ()):
        raise RuntimeError(
            f"{item.nodeid} is a `unit` test using the `client` fixture (a LocalCluster with "
            "worker processes): mark it `integration`"
        )
    with _no_processes():
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Nor does the test itself."""
    if not _unit_only(item):
        yield
        return
    with _no_processes():
        yield
