"""Which Dask cluster a run uses: :class:`ClusterSpec`, and where its settings come from.

Settings are taken, for each one separately, from the first of: the command line, environment
variables (``SIMDASK_*``), the config file (a ``[cluster]`` table), Dask's own configuration
(only a scheduler address: ``DASK_SCHEDULER_ADDRESS`` or ``scheduler-address`` in Dask's YAML
files, :mod:`simdask.cluster.current`), the defaults. The config
file is ``$SIMDASK_CONFIG`` if that is set (empty: no file), else
``$XDG_CONFIG_HOME/simdask/cluster.toml`` (``~/.config/simdask/cluster.toml``) if it exists.

The kind of cluster comes from the first of those sources that names one: explicitly
(``--local``, ``SIMDASK_CLUSTER``, ``kind = "..."``) or by giving a scheduler address (kind
``scheduler``) or SSH hosts (kind ``ssh``); default ``local``. So ``--ssh`` on the command line
wins over a ``scheduler`` in the config file, and settings that do not apply to the kind chosen
are ignored (``simdask cluster`` shows them as unused).

The command-line options are declared from :data:`SETTINGS` by :mod:`simdask.cli._args`; this
module holds no argparse code and imports nothing of simdask's cluster connection
(:mod:`simdask.cluster.connect` imports it, not the other way round).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simdask.cluster.current import configured_scheduler
from simdask.cluster.values import BadValue as _Bad
from simdask.cluster.values import address_value as _address
from simdask.cluster.values import describe_value as _describe
from simdask.cluster.values import flag_value as _flag
from simdask.cluster.values import hosts_value as _hosts
from simdask.cluster.values import int_value as _int
from simdask.cluster.values import kind_value
from simdask.cluster.values import memory_value as _memory
from simdask.cluster.values import seconds_value as _seconds
from simdask.cluster.values import text_value as _text
from simdask.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "KINDS",
    "SETTINGS",
    "ClusterSpec",
    "ResolvedCluster",
    "Setting",
    "config_file_path",
    "default_workers",
    "env_values",
    "file_values",
    "parse_values",
    "resolve_cluster",
]

KINDS = ("local", "scheduler", "ssh")
_kind = kind_value(KINDS)


def default_workers() -> int:
    """Worker processes of a default LocalCluster (threads of the in-memory LSH searches):
    one per core this process may run on (``cpu_count`` where affinity is not known)."""
    get = getattr(os, "sched_getaffinity", None)
    return max(1, len(get(0)) if get else os.cpu_count() or 1)


@dataclass(frozen=True)
class Setting:
    """One cluster setting: its name, parser (raises ``_Bad``), help text, the kinds of
    cluster that use it, and its command-line option (``flag``, ``metavar``, ``cli_type``)."""

    name: str
    parse: Callable[[Any], Any]
    help: str
    kinds: tuple[str, ...]
    flag: str | None = None
    metavar: str | None = None
    cli_type: Callable[[str], Any] = str

    @property
    def env(self) -> str:
        """The environment variable that gives this setting."""
        return "SIMDASK_CLUSTER" if self.name == "kind" else f"SIMDASK_{self.name.upper()}"

    @property
    def option(self) -> str:
        """The command-line option that gives this setting."""
        return self.flag or "--" + self.name.replace("_", "-")


_SSH = ("ssh",)
SETTINGS: tuple[Setting, ...] = (
    Setting("kind", _kind, "local, scheduler or ssh (default: from the settings given)", KINDS),
    Setting(
        "scheduler",
        _address,
        "use an existing Dask cluster, e.g. tcp://host:8786",
        ("scheduler",),
        metavar="ADDR",
    ),
    Setting(
        "ssh_hosts",
        _hosts,
        "start a cluster over SSH: the first host runs the scheduler, each of the others "
        "runs workers (repeat the first host to run workers there too)",
        _SSH,
        flag="--ssh",
        metavar="HOST1,HOST2,...",
    ),
    Setting("ssh_user", _text, "SSH user name (default: yours)", _SSH, metavar="USER"),
    Setting(
        "ssh_key", _text, "SSH private key file (default: ssh's defaults)", _SSH, metavar="FILE"
    ),
    Setting("ssh_port", _int(1, 65535), "SSH port (22)", _SSH, metavar="N", cli_type=int),
    Setting(
        "ssh_known_hosts",
        _text,
        "known_hosts file the hosts' keys are checked against (default ~/.ssh/known_hosts); "
        "'none' skips the check (trusted lab networks only)",
        _SSH,
        metavar="FILE",
    ),
    Setting(
        "remote_python",
        _text,
        "Python on the SSH hosts (default: the path of this Python)",
        _SSH,
        metavar="PATH",
    ),
    Setting(
        "workers",
        _int(1),
        "LocalCluster worker processes (default: one per core)",
        ("local",),
        metavar="N",
        cli_type=int,
    ),
    Setting(
        "workers_per_host",
        _int(1),
        "worker processes on each SSH worker host (1)",
        _SSH,
        metavar="N",
        cli_type=int,
    ),
    Setting(
        "threads_per_worker",
        _int(1),
        "threads per worker process (1)",
        ("local", "ssh"),
        metavar="N",
        cli_type=int,
    ),
    Setting(
        "memory_limit",
        _memory,
        "memory limit of each worker process, e.g. 4GiB; 'auto': the machine's memory "
        "shared equally among its workers; 0: no limit (auto)",
        ("local", "ssh"),
        metavar="SIZE",
    ),
    Setting(
        "dashboard_address",
        _text,
        "where the scheduler serves the Dask dashboard (:8787; :0 for any free port; without "
        "a host: on --listen for a local cluster, only this machine by default)",
        ("local", "ssh"),
        metavar="ADDR",
    ),
    Setting(
        "listen",
        _text,
        "the address a local cluster's scheduler, workers and dashboards listen on (127.0.0.1: "
        "only this machine; this machine's address or 0.0.0.0 opens them to the network, "
        "without authentication)",
        ("local",),
        metavar="HOST",
    ),
    Setting(
        "interface",
        _text,
        "the network interface an SSH cluster's scheduler and workers listen on, e.g. eth1 "
        "(default: Dask's, every interface)",
        _SSH,
        metavar="IFACE",
    ),
    Setting(
        "tls",
        _flag,
        "yes: an SSH cluster's connections use TLS with the certificates of Dask's "
        "configuration (distributed.comm.tls.*, the same paths on every host)",
        _SSH,
        metavar="yes|no",
    ),
    Setting(
        "connect_timeout",
        _seconds,
        "seconds to wait for the scheduler or the SSH hosts (30)",
        ("scheduler", "ssh"),
        metavar="SECONDS",
        cli_type=float,
    ),
)
_BY_NAME = {s.name: s for s in SETTINGS}


@dataclass(frozen=True)
class ClusterSpec:
    """The Dask cluster a run uses (validated; settings that do not apply to ``kind`` are
    kept but ignored).

    ``kind``: ``local`` (a LocalCluster of ``workers`` processes started for the run),
    ``scheduler`` (connect to the running cluster at ``scheduler``) or ``ssh`` (start
    ``distributed``'s SSHCluster for the run: the scheduler on ``ssh_hosts[0]``,
    ``workers_per_host`` worker processes on each of ``ssh_hosts[1:]``, as Dask does).
    """

    kind: str = "local"
    scheduler: str | None = None
    ssh_hosts: tuple[str, ...] = ()
    ssh_user: str | None = None
    ssh_key: str | None = None
    ssh_port: int | None = None
    ssh_known_hosts: str | None = None
    remote_python: str | None = None
    workers: int | None = None
    workers_per_host: int = 1
    threads_per_worker: int = 1
    memory_limit: str = "auto"
    dashboard_address: str = ":8787"
    listen: str = "127.0.0.1"
    interface: str | None = None
    tls: bool = False
    connect_timeout: float = 30.0

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None or (f.name == "ssh_hosts" and value == ()):
                continue
            try:
                parsed = _BY_NAME[f.name].parse(value)
            except _Bad as e:
                raise ConfigError(
                    f"cluster setting {f.name}: expected {e.expected}, found {_describe(value)}"
                ) from None
            object.__setattr__(self, f.name, parsed)
        if self.kind == "scheduler" and not self.scheduler:
            raise ConfigError(
                "cluster kind 'scheduler' needs a scheduler address "
                "(--scheduler, SIMDASK_SCHEDULER or scheduler = ... in the config file)"
            )
        if self.kind == "ssh" and len(self.ssh_hosts) < 2:
            raise ConfigError(
                "cluster setting ssh_hosts: expected at least two hosts (the first runs the "
                "scheduler, each of the others runs workers; repeat the first host to run "
                f"workers on it too, e.g. --ssh a,a,b), found {list(self.ssh_hosts)!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        """JSON/TOML-ready form (``ssh_hosts`` as a list)."""
        d = dataclasses.asdict(self)
        d["ssh_hosts"] = list(self.ssh_hosts)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClusterSpec:
        """Build from :meth:`to_dict`'s form; unknown keys are an error."""
        unknown = sorted(set(data) - set(_BY_NAME))
        if unknown:
            raise ConfigError(
                f"unknown cluster settings {unknown}; expected a subset of {sorted(_BY_NAME)}"
            )
        d = dict(data)
        if isinstance(d.get("ssh_hosts"), list):
            d["ssh_hosts"] = tuple(d["ssh_hosts"])
        return cls(**d)

    def applies(self, name: str) -> bool:
        """Whether setting ``name`` is used by this kind of cluster."""
        return self.kind in _BY_NAME[name].kinds

    @property
    def outlives_run(self) -> bool:
        """Whether the cluster is there before and after a run: an existing scheduler
        (``scheduler``) is; a LocalCluster or SSHCluster (``local``, ``ssh``) is started for
        the run and closed after it."""
        return self.kind == "scheduler"

    @property
    def expected_workers(self) -> int:
        """Worker processes a cluster started from this spec will have (0: not known: an
        existing scheduler's, or a LocalCluster's of the default size)."""
        if self.kind == "ssh":
            return max(0, len(self.ssh_hosts) - 1) * self.workers_per_host
        if self.kind == "local":
            return self.workers or 0
        return 0

    def describe(self) -> str:
        """One line: what kind of cluster, where."""
        if self.kind == "scheduler":
            return f"the Dask scheduler at {self.scheduler}"
        if self.kind == "ssh":
            return (
                f"an SSH cluster: scheduler on {self.ssh_hosts[0]}, {self.workers_per_host} "
                f"worker(s) on each of {', '.join(self.ssh_hosts[1:])}"
            )
        return "a LocalCluster on this machine"


@dataclass(frozen=True)
class ResolvedCluster:
    """A :class:`ClusterSpec` with, per setting, where its value came from
    (``cli``, ``env``, ``file`` or ``default``) and which config file was read."""

    spec: ClusterSpec
    sources: dict[str, str] = field(default_factory=dict)
    config_file: Path | None = None

    def rows(self) -> list[dict[str, Any]]:
        """One row per setting: name, value, source, used (by this kind of cluster)."""
        out = []
        for s in SETTINGS:
            value = getattr(self.spec, s.name)
            if s.name == "ssh_hosts":
                value = ",".join(value) or None
            if s.name == "workers" and value is None and self.spec.kind == "local":
                value = default_workers()
            out.append(
                {
                    "setting": s.name,
                    "value": value,
                    "source": self.sources.get(s.name, "default"),
                    "used": self.spec.applies(s.name),
                }
            )
        return out


def parse_values(values: Mapping[str, Any], where: Callable[[str], str]) -> dict[str, Any]:
    """Validate settings given by name (e.g. from the command line); ``where(name)`` labels
    a bad value's origin in the :class:`ConfigError` (e.g. the option ``--workers``)."""
    out = {}
    for name, value in values.items():
        try:
            out[name] = _BY_NAME[name].parse(value)
        except _Bad as e:
            raise ConfigError(
                f"{where(name)}: expected {e.expected}, found {_describe(value)}"
            ) from None
    return out


def env_values(environ: Mapping[str, str]) -> dict[str, Any]:
    """The cluster settings given by ``SIMDASK_*`` environment variables (empty: not given)."""
    given = {s.name: environ[s.env] for s in SETTINGS if environ.get(s.env, "").strip()}
    return parse_values(given, lambda n: f"environment variable {_BY_NAME[n].env}")


def config_file_path(environ: Mapping[str, str]) -> tuple[Path | None, bool]:
    """The config file to read, and whether it was named explicitly (``$SIMDASK_CONFIG``)."""
    if "SIMDASK_CONFIG" in environ:
        named = environ["SIMDASK_CONFIG"].strip()
        return (Path(named).expanduser() if named else None), True
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "simdask" / "cluster.toml", False


def file_values(path: Path) -> dict[str, Any]:
    """The ``[cluster]`` table of a TOML config file, validated."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read the config file {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    extra = sorted(set(data) - {"cluster"})
    if extra:
        raise ConfigError(f"{path}: unknown table or key {extra[0]!r}; expected only [cluster]")
    table = data.get("cluster", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: 'cluster' must be a table ([cluster]), found {table!r}")
    unknown = sorted(set(table) - set(_BY_NAME))
    if unknown:
        raise ConfigError(
            f"{path}: [cluster] {unknown[0]}: unknown setting; expected one of "
            + ", ".join(sorted(_BY_NAME))
        )
    return parse_values(table, lambda n: f"{path}: [cluster] {n}")


def _claimed_kind(values: Mapping[str, Any], label: str) -> str | None:
    if "kind" in values:
        return values["kind"]
    if "scheduler" in values and "ssh_hosts" in values:
        raise ConfigError(
            f"{label} gives both a scheduler address and SSH hosts; "
            "keep one (or say which with kind)"
        )
    if "scheduler" in values:
        return "scheduler"
    if "ssh_hosts" in values:
        return "ssh"
    return None


def _dask_values(environ: Mapping[str, str]) -> dict[str, Any]:
    """The scheduler of Dask's own configuration (``DASK_SCHEDULER_ADDRESS``, the
    ``scheduler-address`` of Dask's YAML files), as Dask libraries honour it: a layer below
    simdask's own settings."""
    address = configured_scheduler(dict(environ))
    if address is None:
        return {}
    return parse_values({"scheduler": address}, lambda n: "Dask's setting scheduler-address")


def resolve_cluster(
    cli: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> ResolvedCluster:
    """Combine command line, environment, config file, Dask's configuration (a scheduler
    address: ``DASK_SCHEDULER_ADDRESS``, ``scheduler-address``) and defaults (in that
    precedence; each setting's source is ``cli``, ``env``, ``file``, ``dask`` or ``default``)."""
    environ = os.environ if environ is None else environ
    path, named = config_file_path(environ)
    if path is not None and not named and not path.exists():
        path = None
    layers = [
        ("cli", "the command line", dict(cli or {})),
        ("env", "the environment", env_values(environ)),
        ("file", str(path), file_values(path) if path is not None else {}),
        ("dask", "Dask's configuration", _dask_values(environ)),
    ]
    kind, kind_source = "local", "default"
    for source, label, values in layers:
        claimed = _claimed_kind(values, label)
        if claimed is not None:
            kind, kind_source = claimed, source
            break
    chosen: dict[str, Any] = {"kind": kind}
    sources = {"kind": kind_source}
    for s in SETTINGS[1:]:
        sources[s.name] = "default"
        for source, _, values in layers:
            if s.name in values:
                chosen[s.name] = values[s.name]
                sources[s.name] = source
                break
    return ResolvedCluster(ClusterSpec(**chosen), sources, path)
