"""Serial phases of a build (issue 32 item 1): per stage, the seconds no worker computed a
task (the client alone: the scan, planning, gathering, the commit) against the seconds the
workers were busy, and the work (task-seconds) per task-name stage; what the client's
serial seconds are made of (a cProfile of the client's main thread).

One build per size, each in a fresh process running the Python API against a LocalCluster
of ``--workers`` worker processes of ``--threads`` threads (the command line's default: one
single-threaded worker a core). The corpus: JSONL files of 10,000 documents each
(``--corpus DIR`` holding ``part-NNNNN.jsonl``, e.g. bench_scale.py's generated prose); a
size of n documents reads the first n / 10,000 files. ``--code CHECKOUT`` measures another
checkout (the ``before`` of a side-by-side comparison; the busy profile then needs that
checkout to record it, the commit profile does not).

    python scripts/bench_serial.py --corpus DATA/prose/corpus-seed1 --sizes 10000,100000 \\
        --results RUNS/serial.jsonl

Writes one JSON line per build to ``--results`` and prints it; docs/scale.md quotes them.

``--ssh``: the same build through the command line's ``--ssh`` against an sshd of its own on
127.0.0.1 (throwaway keys, tests/helpers/cluster.Sshd; needs root and openssh-server): the
scheduler and ``--workers`` workers each started over SSH, as on separate machines; the run
summary's lines (``time:``, ``tasks:``, ``serial (no worker busy):``) are recorded.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil

from _benchutil import banner

REPO = Path(__file__).resolve().parent.parent
PER_FILE = 10_000
#: client-side functions (``name`` or ``file.py:name``) whose cumulative seconds tell what the
#: serial phases are made of: the scan, the client's work between and inside the stages,
#: the commit and what follows it
CLIENT_PARTS = (
    "checked_items",
    "list_items",
    "jsonl_lines",
    "_known",
    "resolve_changes",
    "lsh_meta",
    "_n_chunks_after",
    "broadcast",
    "run_chunk_stage",
    "chunk_stage.py:collect",
    "top_rows.py:add",
    "top_rows.py:result",
    "heavy_bits",
    "split_rows",
    "finish_stats",
    "run_candidate_stage",
    "changed_keys",
    "check_rows",
    "run_totals_plan",
    "_checksums",
    "commit_run",
    "_insert_rows",
    "_similarity_index",
    "_insert_deep",
    "_upsert_documents",
    "_chunk_table",
    "_trim_rows",
    "_candidates",
    "_after_commit",
    "collect_garbage",
    "note_run",
    "disk_bytes",
)


def _cumulative(stats: pstats.Stats, names: tuple[str, ...]) -> dict[str, float]:
    """Cumulative seconds per function name (summed over functions of that name)."""
    out: dict[str, float] = {}
    for (path, _, fn), (_, _, _, ct, _) in stats.stats.items():  # type: ignore[attr-defined]
        for name in (fn, f"{Path(path).name}:{fn}"):
            if name in names:
                out[name] = round(out.get(name, 0.0) + ct, 3)
    return out


def one(args) -> dict:
    """One build in this process; its measurements."""
    from distributed import Client, LocalCluster

    from simdask import Index, IndexConfig

    files = sorted(Path(args.corpus).glob("part-*.jsonl"))[: -(-args.n // PER_FILE)]
    index = Path(args.index)
    shutil.rmtree(index, ignore_errors=True)
    load_before = os.getloadavg()
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=args.threads,
            processes=True,
            dashboard_address=None,
        ) as lc,
        Client(lc) as client,
    ):
        me = psutil.Process()
        kids = me.children(recursive=True)
        cpu0 = sum(p.cpu_times().user + p.cpu_times().system for p in [me, *kids])
        idx = Index.create(index, IndexConfig())
        prof = cProfile.Profile()
        t = time.perf_counter()
        prof.enable()
        s = idx.update([str(f) for f in files], client=client)
        prof.disable()
        wall = time.perf_counter() - t
        cpu1 = sum(
            p.cpu_times().user + p.cpu_times().system
            for p in [me, *me.children(recursive=True)]
            if p.is_running()
        )
    out = {
        "n": args.n,
        "code": args.code_name,
        "workers": args.workers,
        "threads": args.threads,
        "load_before": [round(x, 1) for x in load_before],
        "load_after": [round(x, 1) for x in os.getloadavg()],
        "wall": round(wall, 2),
        "cpu_s": round(cpu1 - cpu0, 1),
        "client_cpu_s": round(sum(me.cpu_times()[:2]), 1),
        "seconds": {k: round(v, 3) for k, v in s.seconds.items()},
        "similarity_rows": s.similarity_rows,
        "client_parts": _cumulative(pstats.Stats(prof), CLIENT_PARTS),
    }
    d = s.to_dict()
    if "serial_seconds" in d:
        out["serial_seconds"] = d["serial_seconds"]
    for k in ("profile", "sizing", "blocks", "candidate_pair_counts"):
        if k in d["extra"]:
            out[k] = d["extra"][k]
    if not args.keep:
        shutil.rmtree(index, ignore_errors=True)
    return out


def ssh_run(args, n: int) -> dict:
    """One build through ``simdask update --ssh`` against an sshd of its own on 127.0.0.1."""
    import tempfile

    sys.path.insert(0, str(REPO))
    from tests.helpers.cluster import Sshd

    files = sorted(Path(args.corpus).glob("part-*.jsonl"))[: -(-n // PER_FILE)]
    index = Path(args.data) / f"ssh-index-{n}"
    shutil.rmtree(index, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        sshd = Sshd(Path(tmp))
        try:
            hosts = ",".join(["127.0.0.1"] * (1 + args.workers))  # the scheduler, then workers
            cmd = [sys.executable, "-m", "simdask.cli", "update", str(index), *map(str, files)]
            cmd += ["--ssh", hosts, "--ssh-port", str(sshd.port), "--ssh-user", "root"]
            cmd += ["--ssh-key", str(sshd.client_key), "--ssh-known-hosts", str(sshd.known_hosts)]
            cmd += ["--remote-python", str(sshd.remote_python())]
            cmd += ["--threads-per-worker", str(args.threads), "--dashboard-address", ":0"]
            load_before = os.getloadavg()
            t = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            wall = time.perf_counter() - t
        finally:
            sshd.stop()
    if proc.returncode:
        print(proc.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"the build over SSH failed ({proc.returncode})")
    heads = ("time:", "tasks:", "serial (no worker busy):", "data transfer:", "run ")
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith(heads)]
    if not args.keep:
        shutil.rmtree(index, ignore_errors=True)
    return {
        "n": n,
        "code": args.code_name,
        "cluster": f"--ssh: scheduler and {args.workers} workers over sshd on 127.0.0.1",
        "load_before": [round(x, 1) for x in load_before],
        "load_after": [round(x, 1) for x in os.getloadavg()],
        "wall": round(wall, 2),
        "summary_lines": lines,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="folder of part-NNNNN.jsonl files")
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--data", default="/tmp/bench-serial", help="where the indexes go")
    ap.add_argument("--results", default=None, help="JSON lines to append to")
    ap.add_argument("--code", default=str(REPO), help="checkout whose simdask is measured")
    ap.add_argument("--code-name", default="this checkout")
    ap.add_argument("--keep", action="store_true", help="keep the indexes")
    ap.add_argument("--ssh", action="store_true", help="through --ssh on 127.0.0.1 (above)")
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--index", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:
        args.n = args.one
        print("RESULT " + json.dumps(one(args)), flush=True)
        return
    print(banner(), flush=True)
    for n in (int(x) for x in args.sizes.split(",")):
        if args.ssh:
            res = ssh_run(args, n)
            print(json.dumps(res), flush=True)
            if args.results:
                with open(args.results, "a", encoding="utf-8") as f:
                    f.write(json.dumps(res) + "\n")
            continue
        index = Path(args.data) / f"index-{n}"
        cmd = [sys.executable, __file__, *sys.argv[1:], "--one", str(n), "--index", str(index)]
        env = {**os.environ, "PYTHONPATH": args.code}
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        if proc.returncode or not lines:
            print(proc.stderr[-3000:], file=sys.stderr)
            raise SystemExit(f"the build of {n} documents failed ({proc.returncode})")
        res = json.loads(lines[-1][len("RESULT ") :])
        print(json.dumps(res), flush=True)
        if args.results:
            with open(args.results, "a", encoding="utf-8") as f:
                f.write(json.dumps(res) + "\n")


if __name__ == "__main__":
    main()
