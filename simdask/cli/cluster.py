"""The ``simdask cluster`` command: which Dask cluster a run would use, and ``--check``."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from simdask.cli._args import add_cluster_arguments
from simdask.cli._common import EXIT_CLUSTER, EXIT_OK, EXIT_STATUS_HELP

__all__ = ["register", "run"]

_CLUSTER_DESCRIPTION = """\
Show the Dask cluster that `update`, `remove` and `demo` would use with the same options, and
where each setting comes from; with --check, connect to it (or start it) and report its
dashboard, workers, threads, memory and versions.

Each setting is taken from the first of: the command line; an environment variable
(SIMDASK_SCHEDULER, SIMDASK_SSH_HOSTS, SIMDASK_WORKERS, ... as shown in brackets below;
SIMDASK_CLUSTER=local|scheduler|ssh chooses the kind); the [cluster] table of the config file
($SIMDASK_CONFIG, else ~/.config/simdask/cluster.toml; the same names as the options, with
underscores: scheduler, ssh_hosts, ssh_user, ssh_key, ssh_port, ssh_known_hosts,
remote_python, workers, workers_per_host, threads_per_worker, memory_limit, dashboard_address,
connect_timeout, kind); Dask's own configuration (only a scheduler address:
DASK_SCHEDULER_ADDRESS, or scheduler-address in Dask's YAML files); the defaults. The kind
of cluster comes from the first of those that names one (a scheduler address, SSH hosts, or
kind / --local); default: a LocalCluster.
"""


def register(subparsers) -> None:
    """Declare ``cluster``."""
    p = subparsers.add_parser(
        "cluster",
        help="show the Dask cluster settings in effect; --check connects and reports",
        description=_CLUSTER_DESCRIPTION,
        epilog=EXIT_STATUS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="connect (or start the cluster) and report workers, memory and versions; exit "
        "status 4 on any problem (no workers, simdask missing or of another version on a "
        "worker, other dask/distributed/numpy/Python versions, Active Memory Manager on)",
    )
    p.add_argument("-o", "--output", choices=("table", "json"), default="table")
    add_cluster_arguments(p)


def run(args) -> int:
    """Print the settings in effect (and, with --check, what the cluster offers)."""
    resolved = args.cluster
    spec = resolved.spec
    rows = resolved.rows()
    out: dict = {
        "kind": spec.kind,
        "cluster": spec.describe(),
        "config_file": str(resolved.config_file) if resolved.config_file else None,
        "settings": rows,
    }
    if args.check:
        from simdask.cluster.connect import (  # distributed: only when connecting
            check_cluster,
            connect,
        )

        with connect(spec, check_workers=False) as client:  # it reports problems itself
            expected = spec.expected_workers
            if expected:  # a cluster started here: report it once all its workers joined
                with contextlib.suppress(TimeoutError):
                    client.wait_for_workers(expected, timeout=spec.connect_timeout)
            out["check"] = check_cluster(client)
    if args.output == "json":
        print(json.dumps(out, indent=2))
    else:
        _print_cluster(out)
    problems = out.get("check", {}).get("warnings", [])
    for w in problems:
        print(f"simdask: problem: {w}", file=sys.stderr)
    return EXIT_CLUSTER if problems else EXIT_OK


def _print_cluster(out: dict) -> None:
    from dask.utils import format_bytes  # loads dask: only when a run needs it

    print(f"cluster: {out['cluster']}")
    print(f"config file: {out['config_file'] or '(none)'}")
    print(f"\n{'setting':<20} {'value':<32} {'from':<8} used")
    for r in out["settings"]:
        value = "-" if r["value"] is None else str(r["value"])
        print(f"{r['setting']:<20} {value:<32} {r['source']:<8} {'yes' if r['used'] else 'no'}")
    check = out.get("check")
    if not check:
        return
    ws = check["workers"]
    print(f"\nscheduler: {check['scheduler']}")
    print(f"dashboard: {check['dashboard']}")
    print(f"workers: {len(ws)}, threads: {check['threads']}")
    print(f"\n{'worker':<28} {'threads':>7} {'memory':>10}  versions")
    for w in ws:
        mem = format_bytes(w["memory_limit"]) if w["memory_limit"] else "no limit"
        vs = ", ".join(f"{k} {v}" for k, v in w["versions"].items())
        print(f"{w['address']:<28} {w['threads']:>7} {mem:>10}  {vs}")
    vs = ", ".join(f"{k} {v}" for k, v in check["versions"].items())
    print(f"{'(this client)':<28} {'':>7} {'':>10}  {vs}")
