"""The cost of verifying what is read (issue 30 item 3): a query before and after readers hash
each segment file the first time a process opens it.

Uses the index ``scripts/bench_query.py`` builds (``--data``, default
``bench-data/incremental``; same generator and query document). "Before" runs a checkout of
simdask from before the change (``--before``: a folder holding its ``simdask`` package, e.g.
made by ``git archive a308726 simdask | tar -x -C /tmp/before``), "after" this one; new
processes alternate between the two. Measured in each process, the shard files in the OS page
cache: ``Index.open`` + the first query (cold: every segment's files hashed once after the
change), a second query (the files remembered: one ``stat`` each), ``Index.stats()`` in a new
process (metadata files only), and ``simdask query INDEX FILE`` as a whole process.

    python scripts/bench_verify.py --data bench-data/incremental --docs 100000 --before /tmp/b
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_query import _EXTRA, make_query  # the same query document as bench_query.py

from simdask.ingest.synth import generate_corpus

from _benchutil import load_average, machine, today, write_section

_PROBE = r"""
import json, sys, time
from simdask import Index
from simdask.ingest.sources import read_document
t0 = time.perf_counter()
idx = Index.open(sys.argv[1])
key, text = read_document(sys.argv[2])
first = idx.query(text, 1.0)
t1 = time.perf_counter()
second = idx.query(text, 1.0)
t2 = time.perf_counter()
assert [m.to_dict() for m in first] == [m.to_dict() for m in second]
print(json.dumps({"cold": t1 - t0, "second": t2 - t1, "result": [m.to_dict() for m in first]}))
"""

_STATS = r"""
import json, sys, time
from simdask import Index
t0 = time.perf_counter()
with Index.open(sys.argv[1]) as idx:
    st = idx.stats()
print(json.dumps({"stats": time.perf_counter() - t0, "postings": st["postings"]}))
"""


def _run(code: str, root: Path, *args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(root))
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True, env=env
    )
    return json.loads(out.stdout)


def _cli(root: Path, index: Path, qfile: Path) -> tuple[float, str]:
    env = dict(os.environ, PYTHONPATH=str(root))
    t = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "simdask.cli", "query", str(index), str(qfile)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return time.perf_counter() - t, p.stdout


def _shard_bytes(index: Path) -> int:
    return sum(f.stat().st_size for f in (index / "shards").rglob("*") if f.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default="bench-data/incremental")
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--query-words", type=int, default=10_000)
    ap.add_argument("--before", required=True, help="folder holding the old simdask package")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default="docs/benchmarks.md")
    args = ap.parse_args()
    data = Path(args.data)
    index = data / "index"
    corpus = generate_corpus(args.docs + _EXTRA, mean_words=1000, seed=7)
    qfile = data / "query-20-pages.txt"
    qfile.write_text(make_query(corpus, args.docs, args.query_words), encoding="utf-8")
    roots = {"before": Path(args.before).resolve(), "after": Path(__file__).resolve().parents[1]}
    _cli(roots["after"], index, qfile)  # the shard files into the page cache
    runs: dict[str, dict[str, list]] = {
        k: {"cold": [], "second": [], "stats": [], "cli": []} for k in roots
    }
    outs = {}
    for rep in range(args.repeat):
        for name, root in roots.items():
            p = _run(_PROBE, root, str(index), str(qfile))
            runs[name]["cold"].append(p["cold"])
            runs[name]["second"].append(p["second"])
            outs.setdefault(name, p["result"])
            runs[name]["stats"].append(_run(_STATS, root, str(index))["stats"])
            secs, _ = _cli(root, index, qfile)
            runs[name]["cli"].append(secs)
            print(f"[{rep + 1}/{args.repeat}] {name}: cold {p['cold']:.3f} s, CLI {secs:.3f} s")
    if outs["before"] != outs["after"]:
        sys.exit("before and after gave different query results")
    med = {k: {m: statistics.median(v) for m, v in r.items()} for k, r in runs.items()}
    rows = [
        ("new process, shards in the page cache: `Index.open` + first query", "cold"),
        ("second query, `Index` kept open", "second"),
        ("`Index.stats()` in a new process (open included)", "stats"),
        ("`simdask query INDEX FILE` as a new process, all included", "cli"),
    ]
    table = "\n".join(
        f"| {label} | {med['before'][m]:.3f} | {med['after'][m]:.3f} | "
        f"{med['after'][m] / med['before'][m]:.2f} |"
        for label, m in rows
    )
    body = f"""Machine: {machine()}. Date: {today()}. Load average at the end: {load_average()}.
Index: {args.docs:,} generated documents (bench_query.py's corpus, seed 7), raw shards,
{_shard_bytes(index) / 2**20:.0f} MiB of shard files, all hashed by the first query of a
process after the change. Query: the ~{args.query_words:,}-word document of bench_query.py;
both gave the same results. Medians of {args.repeat} new processes each, alternating.

| measurement (seconds) | before (sizes checked) | after (contents verified) | ratio |
|---|---|---|---|
{table}

Readers now hash each segment file (xxh3-64 over a memory map) the first time a process opens
it and compare it with the checksum recorded at its commit; a file unchanged since (device,
inode, size, modification and change time) is not hashed again in that process, so a
long-running process (`serve`, a notebook) pays once and its warm queries not at all.
`stats` verifies only the segments' metadata files. The cold-disk case is not in this table:
there the first query reads every shard file whole from the disk (the query alone reads
only the pages it needs), so its cost is the shard bytes at the disk's read speed.
"""
    print(body)
    write_section(args.out, "Verifying what is read (bench_verify.py)", body)


if __name__ == "__main__":
    main()
