"""`--ssh`: Dask's SSHCluster started through a real sshd on 127.0.0.1 (throwaway keys).

The scheduler runs on the first host and workers on the others, as in Dask; results equal a
LocalCluster run. Settings also come from a config file and the environment
(`simdask cluster --check`), and a host key that does not verify fails clearly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from simdask import Index, IndexConfig
from tests.helpers.cluster import Sshd, sshd_usable
from tests.helpers.compare import postings_by_key, table_by_doc
from tests.helpers.components import need
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.system


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    need(sshd_usable(), "/usr/sbin/sshd, ssh-keygen and root", ".ci/run installs openssh-server")
    d = Sshd(tmp_path_factory.mktemp("sshd"))
    yield d
    d.stop()


def simdask(*args, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e["SIMDASK_CONFIG"] = ""  # no user config file
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "simdask.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=e,
    )


def test_update_over_ssh_equals_local_run(tmp_path, sshd, client):
    src = write_txt(make_docs(30, seed=23), tmp_path / "docs")
    p = simdask(
        "update",
        tmp_path / "ssh",
        src,
        "--hash-bits",
        32,
        "--shards",
        4,
        "--ssh",
        "127.0.0.1,127.0.0.1,127.0.0.1",
        "--ssh-port",
        sshd.port,
        "--ssh-user",
        "root",
        "--ssh-key",
        sshd.client_key,
        "--ssh-known-hosts",
        sshd.known_hosts,
        "--remote-python",
        sshd.remote_python(),
        "--threads-per-worker",
        1,
        "--memory-limit",
        "2GiB",
        "--dashboard-address",
        ":0",
    )
    assert p.returncode == 0, p.stderr
    assert "using an SSH cluster: scheduler on 127.0.0.1" in p.stderr
    assert "Dask dashboard: http://" in p.stderr
    local = Index.create(tmp_path / "loc", IndexConfig(hash_bits=32, shards=4))
    local.update([src], client=client)
    ssh = Index.open(tmp_path / "ssh")
    assert table_by_doc(ssh) == table_by_doc(local) and table_by_doc(ssh)
    assert postings_by_key(ssh) == postings_by_key(local)


def test_cluster_check_from_config_file_and_env(tmp_path, sshd):
    conf = tmp_path / "cluster.toml"
    conf.write_text(
        "[cluster]\n"
        'ssh_hosts = ["127.0.0.1", "127.0.0.1"]\n'
        f"ssh_port = {sshd.port}\n"
        f'ssh_key = "{sshd.client_key}"\n'
        f'remote_python = "{sshd.remote_python()}"\n'
        "workers_per_host = 2\n"
        'memory_limit = "1GiB"\n'
        'dashboard_address = ":0"\n'
        "workers = 7\n"  # for a LocalCluster: not used here
    )
    env = {
        "SIMDASK_CONFIG": str(conf),
        "SIMDASK_SSH_KNOWN_HOSTS": str(sshd.known_hosts),
        "SIMDASK_THREADS_PER_WORKER": "2",
    }
    p = simdask("cluster", "--check", "-o", "json", "--memory-limit", "1.5GiB", env=env)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["kind"] == "ssh" and out["config_file"] == str(conf)
    rows = {r["setting"]: r for r in out["settings"]}
    assert rows["kind"]["source"] == "file" and rows["ssh_port"]["source"] == "file"
    assert rows["ssh_known_hosts"]["source"] == "env"
    assert rows["threads_per_worker"]["value"] == 2
    assert rows["memory_limit"] == {
        "setting": "memory_limit",
        "value": "1.5GiB",
        "source": "cli",
        "used": True,
    }
    assert rows["workers"]["used"] is False
    check = out["check"]
    assert check["dashboard"].startswith("http://")
    assert len(check["workers"]) == 2 and check["threads"] == 4
    assert {w["memory_limit"] for w in check["workers"]} == {int(1.5 * 2**30)}
    for w in check["workers"]:
        assert w["versions"] == check["versions"]  # same Python, dask, simdask everywhere
    assert check["warnings"] == [] and "warning" not in p.stderr

    # the table form says the same for people
    p = simdask("cluster", "--check", env=env)
    assert p.returncode == 0, p.stderr
    assert "dashboard: http://" in p.stdout and "workers: 2, threads: 4" in p.stdout
    assert "1.00 GiB" in p.stdout  # the file's memory_limit, not overridden here


def test_unverifiable_host_key_fails_clearly(tmp_path, sshd):
    wrong = tmp_path / "known_hosts"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", tmp_path / "k"])
    wrong.write_text(f"[127.0.0.1]:{sshd.port} " + (tmp_path / "k.pub").read_text())
    p = simdask(
        "cluster",
        "--check",
        "--ssh",
        "127.0.0.1,127.0.0.1",
        "--ssh-port",
        sshd.port,
        "--ssh-key",
        sshd.client_key,
        "--ssh-known-hosts",
        wrong,
        "--connect-timeout",
        10,
        timeout=120,
    )
    assert p.returncode == 4, p.stderr
    assert "cannot start an SSH cluster: scheduler on 127.0.0.1" in p.stderr
    assert "known_hosts" in p.stderr and "Traceback" not in p.stderr
