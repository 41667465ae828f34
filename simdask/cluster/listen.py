"""Where the clusters simdask starts listen (issue 30 item 8): a local cluster's scheduler,
workers and dashboards on ``--listen`` (127.0.0.1 by default: nothing reachable from the
network, as ``serve`` binds); an SSH cluster on ``--interface`` and, with ``--tls yes``, over
TLS with the certificates of Dask's own configuration (``distributed.security.Security``)."""

from __future__ import annotations

import importlib.util
from typing import Any

from simdask.cluster.spec import ClusterSpec
from simdask.errors import ClusterError

__all__ = ["DASHBOARD_EXTRA", "dashboard_line", "dashboard_link", "local_network", "ssh_network"]


def _with_host(address: str, host: str) -> str:
    """``address`` (``[host]:port``) with ``host`` when it names none (``:8787``)."""
    if not address.startswith(":"):
        return address
    return f"[{host}]{address}" if ":" in host else host + address


def local_network(spec: ClusterSpec, processes: bool) -> dict[str, Any]:
    """Where a LocalCluster listens: scheduler and workers on ``spec.listen`` (127.0.0.1 by
    default: only this machine), the dashboard too unless its address names a host; with
    workers as threads (in-process transport), their HTTP servers on ``spec.listen``."""
    out: dict[str, Any] = {"dashboard_address": _with_host(spec.dashboard_address, spec.listen)}
    if processes:
        out["host"] = spec.listen
    else:  # an in-process scheduler takes no host; the workers' HTTP servers do
        out["worker_dashboard_address"] = _with_host(":0", spec.listen)
    return out


#: the extra that installs bokeh, which Dask's dashboard needs (without it the link shows only
#: "needs bokeh")
DASHBOARD_EXTRA = "simdask[dashboard]"


def dashboard_line(link: str | None) -> str | None:
    """The line a run prints about the Dask dashboard at ``link``: the link when bokeh is
    installed, else how to get it (None: the cluster has no dashboard)."""
    if not link:
        return None
    if importlib.util.find_spec("bokeh") is None:
        return f"Dask dashboard: not shown without bokeh (pip install '{DASHBOARD_EXTRA}')"
    return f"Dask dashboard: {link}"


def dashboard_link(spec: ClusterSpec) -> dict[str, str]:
    """The dashboard link printed for a local cluster: on the host it listens on (not the
    machine's external address when it listens on loopback only)."""
    if spec.kind != "local":
        return {}
    host = _with_host(spec.dashboard_address, spec.listen).rsplit(":", 1)[0]
    if host in ("", "0.0.0.0", "[::]"):
        return {}
    return {"distributed.dashboard.link": f"{{scheme}}://{host}:{{port}}/status"}


def ssh_network(spec: ClusterSpec) -> dict[str, Any]:
    """What an SSH cluster listens on and whether it speaks TLS: ``{"network": {"interface",
    "protocol"}}`` (merged into its scheduler and worker options when it starts) and
    ``security``, SSHCluster's keyword for its client side, from Dask's configuration (the
    remote processes read their certificates from their own Dask configuration)."""
    net: dict[str, Any] = {}
    if spec.interface:
        net["interface"] = spec.interface
    if not spec.tls:
        return {"network": net} if net else {}
    from distributed.security import Security  # only for --tls: not needed otherwise

    security = Security()
    if not getattr(security, "tls_ca_file", None):  # set from Dask's configuration
        raise ClusterError(
            "--tls yes: expected Dask's TLS settings (distributed.comm.tls.ca-file, "
            "...scheduler.cert/key, ...worker.cert/key, ...client.cert/key in a Dask config "
            "file such as ~/.config/dask/distributed.yaml, or DASK_DISTRIBUTED__COMM__TLS__* "
            "variables, the same on every host), found no CA file configured"
        )
    return {"network": {**net, "protocol": "tls"}, "security": security}
