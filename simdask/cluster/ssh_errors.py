"""The one-line error of an SSH cluster that cannot start (issue 30 item 11).

Distributed's ``SSHCluster`` wraps whatever failed in ``RuntimeError("Cluster failed to
start: ...")``. A host whose SSH host key does not verify (asyncssh's
``HostKeyNotVerifiable``, found in the exception's chain) gets a message of its own: which
host and port, whether the known_hosts file has no key for it or another one (a changed key:
the host was reinstalled, or another machine answers at its address), and the commands that
fix it after the user has checked the key's fingerprint. Any other failure names the ``ssh``
command to try by hand. Nothing here connects anywhere: the known_hosts file is only read.
"""

from __future__ import annotations

import os
import re
from typing import Any

from simdask.cluster.spec import ClusterSpec
from simdask.errors import ClusterError

__all__ = ["host_key_message", "ssh_start_error", "unverified_host"]

_HOST = re.compile(r"not trusted for host (\S+)")


def unverified_host(exc: BaseException) -> str | None:
    """The host whose SSH host key did not verify, if ``exc`` or an exception it was raised
    from (``__cause__``/``__context__``) is asyncssh's ``HostKeyNotVerifiable``; else None
    ("" when the host cannot be told)."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if type(e).__name__ == "HostKeyNotVerifiable":
            m = _HOST.search(str(e))
            return m.group(1) if m else ""
        e = e.__cause__ or e.__context__
    return None


def _recorded_keys(known_hosts: str, host: str, port: int) -> int | None:
    """How many keys ``known_hosts`` records for ``host`` at ``port`` (None: the file cannot
    be read)."""
    import asyncssh  # optional (ssh extra); only reached when an SSH cluster failed

    try:
        return len(asyncssh.match_known_hosts(known_hosts, host, host, port)[0])
    except (OSError, ValueError):
        return None


def host_key_message(host: str, port: int, known_hosts: str) -> str:
    """What is wrong with the SSH host key of ``host`` at ``port`` (not verified against the
    file ``known_hosts``) and what to do about it, in one line."""
    name = host if port == 22 else f"[{host}]:{port}"
    scan = f"ssh-keyscan -p {port} {host} >> {known_hosts}"
    n = _recorded_keys(known_hosts, host, port)
    if n is None:
        return (
            f"the SSH host key of {host} (port {port}) cannot be verified: the known_hosts "
            f"file {known_hosts} cannot be read. Give the right file with --ssh-known-hosts, "
            f"or record the host's key after checking its fingerprint: `{scan}`"
        )
    if n == 0:
        return (
            f"the SSH host key of {host} (port {port}) is unknown: the known_hosts file "
            f"{known_hosts} has no key for {name}. If {host} is the machine you mean, check "
            f"its key's fingerprint and record it: `{scan}`"
        )
    return (
        f"the SSH host key of {host} (port {port}) is not the one recorded for {name} in "
        f"the known_hosts file {known_hosts}: the host's key changed, or another machine "
        "answers at that address. If the change is expected, check the new key's fingerprint, "
        "remove the old entry "
        f"(`ssh-keygen -R '{name}' -f {known_hosts}`) and record the new one (`{scan}`)"
    )


def ssh_start_error(spec: ClusterSpec, kwargs: dict[str, Any], exc: BaseException) -> ClusterError:
    """The :class:`ClusterError` of an SSH cluster (``spec``, started with the
    ``SSHCluster`` arguments ``kwargs``) that failed to start with ``exc``."""
    opts = kwargs["connect_options"]
    host = unverified_host(exc)
    if host is not None:
        known = spec.ssh_known_hosts or "~/.ssh/known_hosts"
        where = host or spec.ssh_hosts[0]
        return ClusterError(
            f"cannot start {spec.describe()}: "
            + host_key_message(where, int(opts.get("port", 22)), os.path.expanduser(known))
        )
    ssh = "ssh" + "".join(
        f" {flag} {opts[k] if k != 'client_keys' else opts[k][0]}"
        for flag, k in (("-p", "port"), ("-i", "client_keys"), ("-l", "username"))
        if k in opts
    )
    return ClusterError(
        f"cannot start {spec.describe()}: {type(exc).__name__}: {exc}. Check that "
        f"`{ssh} HOST {kwargs['remote_python']} -c 'import simdask'` works on every host "
        "without a password prompt and that each host's key is in the known_hosts file "
        f"({spec.ssh_known_hosts or '~/.ssh/known_hosts'})"
    )
