"""Cluster benchmark (issue 4): worker scaling, bytes through the scheduler, worker shard cache.

1. Full-run speedup: the same first build on a LocalCluster of 1 and of 2 worker processes,
   alternated, ``--rounds`` times each (medians).
2. On an external cluster (a `dask scheduler` and two `dask worker` processes started here),
   for each data transfer mode (``shared``: workers read and write files; ``dask``: documents,
   pairs and shards travel through Dask): a first build, then incremental runs adding
   ``--changes`` documents to two identical indexes, one with the worker-side shard cache and
   one without, alternated. Per run: seconds, bytes through the scheduler (the frames of all
   messages it read or wrote, counted in the scheduler process by ``_schedcount.py``), bytes
   the client sent and received, bytes moved between workers.

Prints the numbers and writes the section "Cluster (bench_cluster.py)" of docs/benchmarks.md.

    python scripts/bench_cluster.py --docs 40000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from distributed import Client

from simdask import Index, IndexConfig
from simdask.cluster.connect import connect
from simdask.engine.run import RunOptions
from simdask.ingest.synth import generate_corpus

import _schedcount
from _benchutil import machine, today, write_section

_HERE = Path(__file__).resolve().parent


def write_jsonl(docs, path: Path) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for key, text in docs:
            f.write(json.dumps({"id": key, "text": text}) + "\n")
    return path


def _outgoing(dask_worker) -> int:
    return int(dask_worker.transfer_outgoing_bytes_total)


class ExternalCluster:
    """A `dask scheduler` and ``n`` `dask worker` processes on 127.0.0.1."""

    def __init__(self, tmp: Path, n: int):
        sched_file = tmp / "scheduler.json"
        sched_file.unlink(missing_ok=True)
        py = [sys.executable, "-m"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_HERE), *sys.path[1:]])}
        self.scheduler = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import _schedcount; _schedcount.main()",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--dashboard-address",
                ":0",
                "--scheduler-file",
                str(sched_file),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        while not sched_file.exists():
            time.sleep(0.1)
        time.sleep(0.2)
        self.address = json.loads(sched_file.read_text())["address"]
        self.workers = [
            subprocess.Popen(
                [
                    *py,
                    "distributed.cli.dask_worker",
                    self.address,
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                    "--memory-limit",
                    "8GiB",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for _ in range(n)
        ]
        with Client(self.address) as c:
            c.wait_for_workers(n, timeout=120)

    def close(self) -> None:
        for p in [*self.workers, self.scheduler]:
            p.terminate()
        for p in [*self.workers, self.scheduler]:
            p.wait(timeout=60)


def measured_run(client, idx, sources, options):
    io0 = client.run_on_scheduler(_schedcount.total)
    w0 = sum(client.run(_outgoing).values())
    t = time.perf_counter()
    s = idx.update(sources, client=client, options=options)
    secs = time.perf_counter() - t
    return {
        "seconds": secs,
        "scheduler_bytes": client.run_on_scheduler(_schedcount.total) - io0,
        "to_cluster": s.extra.get("bytes_to_cluster", 0),
        "from_cluster": s.extra.get("bytes_from_cluster", 0),
        "worker_to_worker": sum(client.run(_outgoing).values()) - w0,
        "cache": s.extra.get("worker_cache", {}),
        "transfer": s.extra.get("transfer"),
        "stages": {k: round(v, 2) for k, v in s.seconds.items()},
    }


def mib(n: float) -> str:
    return f"{n / 2**20:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--docs", type=int, default=40_000, help="documents of the base index")
    ap.add_argument("--speedup-docs", type=int, default=20_000, help="documents, step 1")
    ap.add_argument("--words", type=int, default=1000)
    ap.add_argument("--changes", type=int, default=100, help="documents added per run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shards", type=int, default=16)
    ap.add_argument("--data", default=str(_HERE.parent / "bench-data" / "cluster"))
    ap.add_argument("--out", default=str(_HERE.parent / "docs" / "benchmarks.md"))
    args = ap.parse_args()

    data = Path(args.data)
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    n, c, rounds = args.docs, args.changes, args.rounds
    corpus = generate_corpus(n + c * rounds, mean_words=args.words, seed=11)
    docs = [(d.key, d.text) for d in corpus.docs]
    base = write_jsonl(docs[:n], data / "base.jsonl")
    small = write_jsonl(docs[: args.speedup_docs], data / "speedup.jsonl")
    adds = [
        write_jsonl(docs[n + i * c : n + (i + 1) * c], data / f"add-{i}.jsonl")
        for i in range(rounds)
    ]
    words = sum(len(t.split()) for _, t in docs[:n])
    print(f"corpus: {n} documents, {words / 1e6:.1f} M words", flush=True)
    config = IndexConfig(shards=args.shards)
    no_cache = RunOptions(worker_cache=False)

    # 1. speedup with 1 vs 2 workers (LocalCluster started before timing)
    times: dict[int, list[float]] = {1: [], 2: []}
    for r in range(rounds):
        for w in (1, 2):
            with connect(workers=w, dashboard_address=":0") as client:
                path = data / f"speedup-{w}-{r}"
                t = time.perf_counter()
                Index.create(path, config).update([small], client=client, options=no_cache)
                times[w].append(time.perf_counter() - t)
                shutil.rmtree(path)
            print(f"speedup round {r}: {w} worker(s) {times[w][-1]:.1f} s", flush=True)
    t1, t2 = statistics.median(times[1]), statistics.median(times[2])

    # 2. external cluster: bytes and the shard cache, per transfer mode
    cluster = ExternalCluster(data, 2)
    results: dict[str, dict] = {}
    try:
        with Client(cluster.address) as client:
            for mode in ("shared", "dask"):
                on = RunOptions(transfer=mode, worker_cache=True)
                off = RunOptions(transfer=mode, worker_cache=False)
                x = Index.create(data / f"{mode}-cache", config)
                y = Index.create(data / f"{mode}-nocache", config)
                build = measured_run(client, x, [base], on)
                measured_run(client, y, [base], off)
                print(f"{mode}: first build {build['seconds']:.1f} s", flush=True)
                runs: dict[str, list] = {"on": [], "off": []}
                for i in range(rounds):
                    runs["on"].append(measured_run(client, x, [base, adds[i]], on))
                    runs["off"].append(measured_run(client, y, [base, adds[i]], off))
                    print(
                        f"{mode} round {i}: cache {runs['on'][-1]['seconds']:.2f} s "
                        f"(hits {runs['on'][-1]['cache'].get('hits')}), "
                        f"no cache {runs['off'][-1]['seconds']:.2f} s",
                        flush=True,
                    )
                results[mode] = {"build": build, **runs}
                x.close()
                y.close()
    finally:
        cluster.close()

    def med(rs, k):
        return statistics.median(r[k] for r in rs)

    lines = [
        f"Measured {today()} on {machine()}.",
        "",
        f"Corpus: `synth.generate_corpus(seed=11)`, {n:,} documents of ~{args.words} words "
        f"({words / 1e6:.1f} M words) for the base index; {c} new documents per incremental "
        f"run; {args.shards} shards; medians of {rounds} alternated runs.",
        "",
        f"**Full-run speedup** ({args.speedup_docs:,} documents, first build on a LocalCluster, "
        f"cluster start not counted): 1 worker {t1:.1f} s, 2 workers {t2:.1f} s: "
        f"**{t1 / t2:.2f}x** on this 2-core machine.",
        "",
        "**External cluster** (`dask scheduler` + 2 `dask worker` processes on 127.0.0.1). "
        "Scheduler bytes: the frames of every message the scheduler read or wrote (a byte relayed by it counts twice; counted "
        "inside it by `scripts/_schedcount.py`); client bytes: `dask.sizeof` of what the client "
        "scattered/sent and gathered; worker↔worker: the workers' "
        "`transfer_outgoing_bytes_total` (what workers sent to other workers and, for the direct "
        "transfers of the `dask` placement, to the client).",
        "",
        "| transfer | run | seconds | scheduler MiB | client→cluster MiB | cluster→client MiB "
        "| worker↔worker MiB | cache hits |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for mode, res in results.items():
        b = res["build"]
        lines.append(
            f"| {mode} | first build | {b['seconds']:.1f} | {mib(b['scheduler_bytes'])} | "
            f"{mib(b['to_cluster'])} | {mib(b['from_cluster'])} | {mib(b['worker_to_worker'])} "
            "| - |"
        )
        for label, key in (("+100 docs, cache", "on"), ("+100 docs, no cache", "off")):
            rs = res[key]
            hits = rs[-1]["cache"].get("hits", "-")
            lines.append(
                f"| {mode} | {label.replace('100', str(c))} | {med(rs, 'seconds'):.2f} | "
                f"{mib(med(rs, 'scheduler_bytes'))} | {mib(med(rs, 'to_cluster'))} | "
                f"{mib(med(rs, 'from_cluster'))} | {mib(med(rs, 'worker_to_worker'))} | {hits} |"
            )
    lines.append("")
    for mode, res in results.items():
        on, off = med(res["on"], "seconds"), med(res["off"], "seconds")
        lines.append(
            f"- {mode}: the worker shard cache saves **{off - on:.2f} s** per incremental run "
            f"({on:.2f} s vs {off:.2f} s, {on / off:.2f}x); stages with cache "
            f"{res['on'][-1]['stages']}, without {res['off'][-1]['stages']}."
        )
    body = "\n".join(lines)
    print(body)
    (data / "results.json").write_text(json.dumps({"t1": times[1], "t2": times[2], **results}))
    write_section(args.out, "Cluster (bench_cluster.py)", body)


if __name__ == "__main__":
    main()
