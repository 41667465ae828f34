"""The cost of durability on power loss (issue 30 item 14): every file the catalog names and
its directory entries fsynced before the COMMIT, SQLite at ``synchronous=FULL``.

Times, with durability on (the code as it is) and off (``os.fsync`` a no-op and the catalog at
``synchronous=NORMAL``, what simdask did before), a first build of ``--docs`` generated
documents and then ``--runs`` runs adding ``--changes`` documents each, on a LocalCluster whose
workers are threads of this process (so that the switch reaches them), on the disk of
``--data``. Rounds alternate on/off ``--repeat`` times; the median is reported, with the number
of fsyncs. Prints the numbers and writes the section "Durability (bench_durability.py)" of
docs/benchmarks.md.

    python scripts/bench_durability.py --docs 5000 --changes 100 --runs 5 --data /var/tmp/dur
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import time
from pathlib import Path

from distributed import Client, LocalCluster

from simdask import Index, IndexConfig
from simdask.ingest.synth import generate_corpus
from simdask.storage.catalog import Catalog

from _benchutil import load_average, machine, today, write_section

_REAL_FSYNC = os.fsync
_REAL_INIT = Catalog.__init__
_CALLS = {"fsync": 0, "seconds": 0.0}


def _counting_fsync(fd: int) -> None:
    _CALLS["fsync"] += 1
    t = time.perf_counter()
    _REAL_FSYNC(fd)
    _CALLS["seconds"] += time.perf_counter() - t


def _no_fsync(fd: int) -> None:
    _CALLS["fsync"] += 1


def _normal_init(self, path, *, create=False):
    _REAL_INIT(self, path, create=create)
    self.conn.execute("PRAGMA synchronous=NORMAL")


def durability(on: bool) -> None:
    """Switch fsyncs and SQLite's synchronous level for this process."""
    os.fsync = _counting_fsync if on else _no_fsync
    Catalog.__init__ = _REAL_INIT if on else _normal_init


def write_jsonl(docs, path: Path) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for key, text in docs:
            f.write(json.dumps({"id": key, "text": text}) + "\n")
    return path


def one_round(data: Path, docs, args, client, on: bool) -> dict:
    """A build and ``args.runs`` incremental runs; seconds and fsyncs of each."""
    durability(on)
    shutil.rmtree(data / "index", ignore_errors=True)
    base = write_jsonl(docs[: args.docs], data / "base.jsonl")
    cfg = IndexConfig(shards=args.shards)
    out = {"build": 0.0, "runs": [], "fsync_build": 0, "fsync_runs": 0, "in_fsync": 0.0}
    with Index.create(data / "index", cfg) as idx:
        _CALLS["fsync"] = 0
        t = time.perf_counter()
        idx.update([base], client=client)
        out["build"] = time.perf_counter() - t
        out["fsync_build"] = _CALLS["fsync"]
        _CALLS["fsync"], _CALLS["seconds"] = 0, 0.0
        for r in range(args.runs):
            lo = args.docs + r * args.changes
            part = write_jsonl(docs[lo : lo + args.changes], data / f"add-{r}.jsonl")
            t = time.perf_counter()
            idx.update([part], client=client)
            out["runs"].append(time.perf_counter() - t)
        out["fsync_runs"] = _CALLS["fsync"] / max(1, args.runs)
        out["in_fsync"] = _CALLS["seconds"] / max(1, args.runs)
    durability(True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--changes", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--shards", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", default="/var/tmp/simdask-bench-durability")
    ap.add_argument("--out", default=str(Path(__file__).parent.parent / "docs/benchmarks.md"))
    args = ap.parse_args()
    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    corpus = generate_corpus(args.docs + args.runs * args.changes, mean_words=600, seed=3)
    docs = [(d.key, d.text) for d in corpus.docs]
    results: dict[bool, list[dict]] = {True: [], False: []}
    loads = []
    cluster = LocalCluster(n_workers=1, threads_per_worker=2, processes=False)
    with cluster, Client(cluster) as client:
        for i in range(args.repeat):
            for on in (False, True) if i % 2 == 0 else (True, False):
                r = one_round(data, docs, args, client, on)
                results[on].append(r)
                loads.append(os.getloadavg()[0])
                print(
                    f"durability {'on ' if on else 'off'}: build {r['build']:.2f} s, "
                    f"runs {' '.join(f'{s:.2f}' for s in r['runs'])} s, fsyncs "
                    f"{r['fsync_build']} / {r['fsync_runs']:.0f} per run",
                    flush=True,
                )
    shutil.rmtree(data, ignore_errors=True)

    def med(on: bool, f) -> float:
        return statistics.median(f(r) for r in results[on])

    build = {on: med(on, lambda r: r["build"]) for on in (True, False)}
    run = {on: med(on, lambda r: statistics.median(r["runs"])) for on in (True, False)}
    fs_b, fs_r = results[True][0]["fsync_build"], results[True][0]["fsync_runs"]
    in_fsync = med(True, lambda r: r["in_fsync"])
    body = f"""
`python scripts/bench_durability.py --docs {args.docs} --changes {args.changes} --runs {args.runs}
--shards {args.shards} --repeat {args.repeat}`; {machine()}; {today()}; ext4 on a virtual disk;
load {min(loads):.1f}-{max(loads):.1f} (1-minute average; the machine was shared).

Durability *on*: every file the catalog names and its directory entries fsynced before the
catalog's COMMIT, SQLite `synchronous=FULL` (docs/design.md, "Durability"). *Off*: `os.fsync` a
no-op and `synchronous=NORMAL` (the behaviour before). Median of {args.repeat} rounds each,
alternating; workers are threads of the benchmark process (a LocalCluster with
`processes=False`), ~600-word generated documents.

| | durability off | durability on | cost | fsyncs by simdask (on) |
|---|---|---|---|---|
| first build, {args.docs:,} documents | {build[False]:.2f} s | {build[True]:.2f} s | {build[True] - build[False]:+.2f} s ({100 * (build[True] / build[False] - 1):+.0f} %) | {fs_b} |
| a run adding {args.changes} documents | {run[False]:.2f} s | {run[True]:.2f} s | {run[True] - run[False]:+.2f} s ({100 * (run[True] / run[False] - 1):+.0f} %) | {fs_r:.0f} |

Time inside simdask's `os.fsync` calls in a run adding {args.changes} documents (median): {in_fsync:.3f} s
(the part of the cost that does not depend on the load; SQLite's own fsyncs of the WAL at
`synchronous=FULL` are not in it).
"""
    print(body)
    print("load now:", load_average())
    write_section(args.out, "Durability (bench_durability.py)", body)


if __name__ == "__main__":
    main()
