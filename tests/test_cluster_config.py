"""Cluster settings: ClusterSpec validation, precedence CLI > env > file > defaults, errors
that name the file, key, expected and found; the `simdask cluster` command and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from simdask import ClusterError, ClusterSpec, ConfigError
from simdask.cluster.connect import WORKER_MALLOC_ENV, connect, ssh_cluster_kwargs
from simdask.cluster.spec import resolve_cluster

pytestmark = pytest.mark.unit


def test_spec_validates_and_round_trips():
    spec = ClusterSpec(
        kind="ssh",
        ssh_hosts=("a", "a", "b"),
        ssh_port=2222,
        workers_per_host=2,
        memory_limit="4GiB",
    )
    assert ClusterSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    assert spec.to_dict()["ssh_hosts"] == ["a", "a", "b"]
    with pytest.raises(ConfigError, match="at least two hosts"):
        ClusterSpec(kind="ssh", ssh_hosts=("a",))
    with pytest.raises(ConfigError, match="needs a scheduler address"):
        ClusterSpec(kind="scheduler")
    with pytest.raises(ConfigError, match=r"workers: expected an integer >= 1, found 0"):
        ClusterSpec(workers=0)
    with pytest.raises(ConfigError, match="memory_limit: expected 'auto', a size"):
        ClusterSpec(memory_limit="lots")
    with pytest.raises(ConfigError, match="kind: expected one of 'local', 'scheduler', 'ssh'"):
        ClusterSpec(kind="yarn")
    with pytest.raises(ConfigError, match="unknown cluster settings"):
        ClusterSpec.from_dict({"nodes": 3})
    with pytest.raises(AttributeError):  # frozen
        spec.kind = "local"  # type: ignore[misc]
    for ok in ("auto", "0", "0.5", "500MB", "4GiB", 2**30):
        assert ClusterSpec(memory_limit=ok).memory_limit == str(ok)


def test_ssh_spec_maps_onto_dask_sshcluster():
    spec = ClusterSpec(
        kind="ssh",
        ssh_hosts=("s", "w1", "w2"),
        ssh_user="ann",
        ssh_key="/k",
        ssh_port=2200,
        ssh_known_hosts="none",
        remote_python="/opt/py",
        workers_per_host=3,
        threads_per_worker=2,
        memory_limit="2GiB",
    )
    kw = ssh_cluster_kwargs(spec)
    assert kw["hosts"] == ["s", "w1", "w2"] and kw["remote_python"] == "/opt/py"
    assert kw["connect_options"] == {
        "connect_timeout": 30.0,
        "username": "ann",
        "client_keys": ["/k"],
        "port": 2200,
        "known_hosts": None,
    }
    assert kw["worker_options"] == {"n_workers": 3, "nthreads": 2, "memory_limit": "2GiB"}
    # asyncssh's default known_hosts (~/.ssh/known_hosts) unless one is given
    assert (
        "known_hosts"
        not in ssh_cluster_kwargs(ClusterSpec(kind="ssh", ssh_hosts=("a", "b")))["connect_options"]
    )


def test_precedence_cli_env_file_default(tmp_path):
    conf = tmp_path / "cluster.toml"
    conf.write_text(
        '[cluster]\nscheduler = "tcp://filehost:8786"\nworkers = 5\nthreads_per_worker = 3\n'
        'memory_limit = "3GiB"\n'
    )
    env = {"SIMDASK_CONFIG": str(conf), "SIMDASK_THREADS_PER_WORKER": "2"}
    r = resolve_cluster({}, env)
    assert r.spec.kind == "scheduler" and r.spec.scheduler == "tcp://filehost:8786"
    assert r.config_file == conf
    assert r.sources["kind"] == "file" and r.sources["threads_per_worker"] == "env"
    assert r.spec.threads_per_worker == 2 and r.spec.memory_limit == "3GiB"
    assert r.sources["dashboard_address"] == "default"

    # the environment names SSH hosts: kind ssh wins over the file's scheduler
    r = resolve_cluster({}, {**env, "SIMDASK_SSH_HOSTS": "h1, h2,h3"})
    assert r.spec.kind == "ssh" and r.spec.ssh_hosts == ("h1", "h2", "h3")
    assert r.sources["kind"] == "env" and not r.spec.applies("scheduler")

    # the command line wins over both
    r = resolve_cluster({"kind": "local", "threads_per_worker": 4}, env)
    assert r.spec.kind == "local" and r.spec.workers == 5 and r.spec.threads_per_worker == 4
    assert r.sources["workers"] == "file" and r.sources["threads_per_worker"] == "cli"
    rows = {row["setting"]: row for row in r.rows()}
    assert rows["scheduler"]["used"] is False and rows["workers"]["used"] is True

    # no file, no env: the defaults; SIMDASK_CONFIG="" means no file at all
    r = resolve_cluster({}, {"SIMDASK_CONFIG": ""})
    assert r.spec == ClusterSpec() and set(r.sources.values()) == {"default"}
    assert r.config_file is None
    # the default file is ~/.config/simdask/cluster.toml (XDG_CONFIG_HOME if set)
    (tmp_path / "simdask").mkdir()
    (tmp_path / "simdask" / "cluster.toml").write_text("[cluster]\nworkers = 3\n")
    r = resolve_cluster({}, {"XDG_CONFIG_HOME": str(tmp_path)})
    assert r.spec.workers == 3 and r.sources["workers"] == "file"
    assert resolve_cluster({}, {"XDG_CONFIG_HOME": str(tmp_path / "none")}).config_file is None


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "[cluster]\nworkers = 'four'\n",
            "[cluster] workers: expected an integer >= 1, found 'four'",
        ),
        ("[cluster]\nssh_port = 70000\n", "[cluster] ssh_port: expected an integer in 1..65535"),
        ("[cluster]\nnodes = 3\n", "[cluster] nodes: unknown setting; expected one of"),
        ("[cluster]\nssh_hosts = 3\n", "[cluster] ssh_hosts: expected host names"),
        ("[clusters]\nworkers = 2\n", "unknown table or key 'clusters'"),
        ("[cluster\n", "not valid TOML"),
        (
            '[cluster]\nscheduler = "tcp://a:1"\nssh_hosts = ["a", "b"]\n',
            "both a scheduler address and SSH hosts",
        ),
    ],
)
def test_bad_config_file_names_file_key_expected_found(tmp_path, text, message):
    conf = tmp_path / "c.toml"
    conf.write_text(text)
    with pytest.raises(ConfigError) as e:
        resolve_cluster({}, {"SIMDASK_CONFIG": str(conf)})
    assert str(conf) in str(e.value) and message in str(e.value)


def test_bad_environment_and_missing_named_file(tmp_path):
    with pytest.raises(ConfigError, match="environment variable SIMDASK_WORKERS: expected an"):
        resolve_cluster({}, {"SIMDASK_CONFIG": "", "SIMDASK_WORKERS": "many"})
    with pytest.raises(ConfigError, match="SIMDASK_CLUSTER: expected one of"):
        resolve_cluster({}, {"SIMDASK_CONFIG": "", "SIMDASK_CLUSTER": "cloud"})
    with pytest.raises(ConfigError, match=f"cannot read the config file {tmp_path / 'no.toml'}"):
        resolve_cluster({}, {"SIMDASK_CONFIG": str(tmp_path / "no.toml")})


@pytest.mark.integration
def test_clusters_simdask_starts_keep_broadcast_copies():
    """A worker that dies must not take the only copy of scattered data with it."""
    with connect(ClusterSpec(workers=2, dashboard_address=":0")) as client:
        [f] = client.scatter([list(range(1000))], broadcast=True, hash=False)
        # the Active Memory Manager is what drops extra copies (every 2 s): it does not run
        assert client.amm.running() is False
        assert len(client.who_has([f])[f.key]) == 2


@pytest.mark.integration  # starts a cluster (the unit tier starts none)
def test_local_cluster_leaves_the_callers_environment_as_it_was(monkeypatch):
    """The workers' malloc settings reach the workers (set before they start), but not the
    processes the caller starts after the run (distributed's nannies set them in the caller's
    environment; connect puts the old values back)."""
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "12345")
    with connect(ClusterSpec(workers=1, dashboard_address=":0")) as client:
        seen = client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
        assert list(seen.values()) == [WORKER_MALLOC_ENV["MALLOC_TRIM_THRESHOLD_"]]
    assert "MALLOC_TRIM_THRESHOLD_" not in os.environ
    assert os.environ["MALLOC_MMAP_THRESHOLD_"] == "12345"


def test_cannot_connect_is_a_cluster_error():
    t = time.monotonic()
    spec = ClusterSpec(kind="scheduler", scheduler="tcp://127.0.0.1:1", connect_timeout=2)
    with (
        pytest.raises(ClusterError, match="cannot connect to the Dask scheduler at tcp://"),
        connect(spec),
    ):
        pass
    assert time.monotonic() - t < 30


def simdask(*args, env=None):
    e = {**os.environ, "SIMDASK_CONFIG": "", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "simdask.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env=e,
    )


@pytest.mark.system
def test_cluster_command_and_exit_codes(tmp_path):
    p = simdask("cluster", "-o", "json", "--workers", 3, env={"SIMDASK_MEMORY_LIMIT": "2GiB"})
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    rows = {r["setting"]: r for r in out["settings"]}
    assert out["kind"] == "local" and rows["workers"]["value"] == 3
    assert (rows["memory_limit"]["value"], rows["memory_limit"]["source"]) == ("2GiB", "env")
    p = simdask("cluster", "--scheduler", "tcp://h:1")
    assert p.returncode == 0 and "the Dask scheduler at tcp://h:1" in p.stdout
    assert "scheduler            tcp://h:1" in p.stdout
    # bad settings: exit 2 with the option / variable / file named
    p = simdask("update", tmp_path / "i", tmp_path, "--workers", 0)
    assert p.returncode == 2 and "--workers: expected an integer >= 1, found 0" in p.stderr
    assert not (tmp_path / "i").exists()  # nothing was started or created
    p = simdask("cluster", env={"SIMDASK_SSH_HOSTS": "onlyone"})
    assert p.returncode == 2 and "expected at least two hosts" in p.stderr
    p = simdask("cluster", "--local", "--scheduler", "tcp://h:1")
    assert p.returncode == 2 and "--local cannot be combined" in p.stderr
    # no cluster there: exit 4, a clear message, no traceback; the index is not touched
    p = simdask("cluster", "--check", "--scheduler", "tcp://127.0.0.1:1", "--connect-timeout", 2)
    assert p.returncode == 4 and "cannot connect to the Dask scheduler at tcp://127.0.0.1:1" in (
        p.stderr
    )
    assert "Traceback" not in p.stderr
    (tmp_path / "d.txt").write_text("one two three four five six seven")
    p = simdask("update", tmp_path / "idx", tmp_path / "d.txt", "--scheduler", "tcp://127.0.0.1:1",
                "--connect-timeout", 2)  # fmt: skip
    assert p.returncode == 4 and "Traceback" not in p.stderr, p.stderr
    help_text = simdask("--help").stdout
    assert "exit status" in help_text and "4 the Dask" in help_text
    help_text = simdask("update", "--help").stdout
    for opt in ("--ssh HOST1,HOST2", "--ssh-known-hosts", "--workers-per-host", "--remote-python"):
        assert opt in help_text


@pytest.mark.integration  # starts a cluster (the unit tier starts none)
def test_cluster_check_is_non_zero_on_any_problem():
    """Issue 30 item 11: a cluster without workers (and, started by hand, with the Active
    Memory Manager on) is reported as problems with exit status 4, not 0."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, dashboard_address="127.0.0.1:0", host="127.0.0.1") as c:
        p = simdask("cluster", "--check", "--scheduler", c.scheduler_address, "-o", "json")
    assert p.returncode == 4, (p.stdout, p.stderr)
    assert "simdask: problem: the cluster has no workers" in p.stderr
    assert "Traceback" not in p.stderr
    assert json.loads(p.stdout)["check"]["workers"] == []
