"""The clusters simdask starts listen on loopback only unless asked otherwise (issue 30 item
8): a default `update` (workers as threads, or worker processes) holds no listening socket
on any other address, dashboard included; `--listen` and the SSH options say where else."""

from __future__ import annotations

import ipaddress
import time
from pathlib import Path

import psutil
import pytest

from simdask.cluster.connect import ssh_cluster_kwargs
from simdask.cluster.listen import dashboard_link, local_network, ssh_network
from simdask.cluster.spec import ClusterSpec
from simdask.errors import ClusterError
from tests.helpers.cli import start
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.system


def _listening(pid: int) -> list[tuple[int, str, int]]:
    """``(pid, address, port)`` of every listening TCP socket of ``pid`` and its children."""
    root = psutil.Process(pid)
    out = []
    for p in [root, *root.children(recursive=True)]:
        try:
            conns = p.net_connections(kind="inet")
        except psutil.Error:
            continue
        out += [(p.pid, c.laddr.ip, c.laddr.port) for c in conns if c.status == psutil.CONN_LISTEN]
    return out


@pytest.mark.parametrize("workers", [(), ("--workers", "1")], ids=["threads", "processes"])
def test_a_default_run_listens_on_loopback_only(tmp_path, workers):
    src = write_txt(make_docs(8, seed=2), tmp_path / "src")
    gate = tmp_path / "release"
    reached = Path(str(gate) + ".reached")
    proc = start("update", tmp_path / "idx", src, *workers, failpoints=f"after_chunk:wait:{gate}")
    try:
        deadline = time.monotonic() + 120
        while not reached.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run never reached after_chunk"
            time.sleep(0.05)
        sockets = _listening(proc.pid)
    finally:
        gate.touch()
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert sockets, "the cluster's scheduler or dashboard should be listening"
    exposed = [s for s in sockets if not ipaddress.ip_address(s[1]).is_loopback]
    assert not exposed, f"listening beyond loopback: {exposed}"


def test_listen_and_ssh_network_settings():
    spec = ClusterSpec()
    assert local_network(spec, True) == {"dashboard_address": "127.0.0.1:8787", "host": "127.0.0.1"}
    assert local_network(spec, False) == {
        "dashboard_address": "127.0.0.1:8787",
        "worker_dashboard_address": "127.0.0.1:0",
    }
    assert dashboard_link(spec) == {
        "distributed.dashboard.link": "{scheme}://127.0.0.1:{port}/status"
    }
    lan = ClusterSpec(listen="0.0.0.0", dashboard_address="10.0.0.5:9000")  # asked for
    assert local_network(lan, True) == {"dashboard_address": "10.0.0.5:9000", "host": "0.0.0.0"}
    assert dashboard_link(ClusterSpec(listen="0.0.0.0")) == {}
    assert local_network(ClusterSpec(listen="::1"), True)["dashboard_address"] == "[::1]:8787"
    ssh = ClusterSpec(ssh_hosts=("a", "b"), interface="eth1")
    kw = ssh_cluster_kwargs(ssh)
    assert kw["network"] == {"interface": "eth1"} and "security" not in kw
    assert ssh_network(ClusterSpec(ssh_hosts=("a", "b"))) == {}
    tls = ClusterSpec(ssh_hosts=("a", "b"), tls="yes")
    with pytest.raises(ClusterError, match=r"distributed\.comm\.tls\.ca-file"):
        ssh_network(tls)
