"""`--ssh`: Dask's SSHCluster started through a real sshd on 127.0.0.1 (throwaway keys).

The scheduler runs on the first host and workers on the others, as in Dask; results equal a
LocalCluster run. Settings also come from a config file and the environment
(`simdask cluster --check`), and a host key that does not verify fails clearly.
"""

from __future__ import annotations

import json
import os
import sqlite3
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


def _files(root) -> dict[str, bytes]:
    """The bytes of every shard file and text pack under ``root``."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for sub in ("shards", "texts")
        for p in (root / sub).rglob("*")
        if p.is_file()
    }


def _catalog(root) -> list[str]:
    """The catalog's contents as SQL statements."""
    with sqlite3.connect(root / "catalog.sqlite") as c:
        return list(c.iterdump())


@pytest.mark.parametrize("known", ["changed", "unknown"])
def test_bad_host_key_names_the_host_and_writes_nothing(tmp_path, sshd, client, known):
    """`update --ssh` against a host whose key is not the recorded one (changed) or not
    recorded at all (unknown): exit 4 and one error line naming the host, its port, the
    known_hosts file and the command that fixes it; no index folder is created; in an
    existing index no shard file or text pack changes, and the catalog gains nothing but the
    record of the failed run (``runs``, status ``failed``, with that error)."""
    known_hosts = tmp_path / "known_hosts"
    if known == "changed":
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", tmp_path / "k"])
        known_hosts.write_text(f"[127.0.0.1]:{sshd.port} " + (tmp_path / "k.pub").read_text())
    else:
        known_hosts.write_text("")
    src = write_txt(make_docs(6, seed=31), tmp_path / "docs")
    existing = tmp_path / "existing"
    with Index.create(existing, IndexConfig(shards=2)) as idx:
        idx.update([write_txt(make_docs(4, seed=32), tmp_path / "old")], client=client)
    before, catalog_before = _files(existing), _catalog(existing)
    for index in (tmp_path / "new", existing):
        p = simdask(
            "update", index, src, "--ssh", "127.0.0.1,127.0.0.1", "--ssh-port", sshd.port,
            "--ssh-key", sshd.client_key, "--ssh-known-hosts", known_hosts,
            "--remote-python", sshd.remote_python(), "--connect-timeout", 10, timeout=180,
        )  # fmt: skip
        assert p.returncode == 4, p.stderr
        assert "Traceback" not in p.stderr and p.stdout == ""
        errors = [ln for ln in p.stderr.splitlines() if ln.startswith("simdask: error:")]
        others = [ln for ln in p.stderr.splitlines() if not ln.startswith("simdask: error:")]
        assert len(errors) == 1 and others == [
            "using an SSH cluster: scheduler on 127.0.0.1, 1 worker(s) on each of 127.0.0.1"
        ], p.stderr
        line = errors[0]
        assert f"the SSH host key of 127.0.0.1 (port {sshd.port})" in line, line
        assert f"the known_hosts file {known_hosts}" in line, line
        assert f"`ssh-keyscan -p {sshd.port} 127.0.0.1 >> {known_hosts}`" in line, line
        if known == "changed":
            assert "is not the one recorded for" in line, line
            assert f"ssh-keygen -R '[127.0.0.1]:{sshd.port}' -f {known_hosts}" in line, line
        else:
            assert "is unknown" in line and "ssh-keygen -R" not in line, line
    assert not (tmp_path / "new").exists()
    assert _files(existing) == before
    catalog = _catalog(existing)
    assert [ln for ln in catalog_before if ln not in catalog] == []
    added = [ln for ln in catalog if ln not in catalog_before]
    assert len(added) == 1 and added[0].startswith('INSERT INTO "runs"'), added
    assert "'failed'" in added[0] and "the SSH host key of 127.0.0.1" in added[0], added
