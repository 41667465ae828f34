"""Shared fixtures: a real Dask cluster (worker processes) and small generated corpora."""

from __future__ import annotations

import pytest
from distributed import Client, LocalCluster


@pytest.fixture(scope="session")
def client():
    """A LocalCluster with two real worker processes, shared by the session."""
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()
