"""Where a worker's memory goes during a full build, stage by stage (docs/scale.md, "Worker
memory in the similarity stage (blockmem)").

Builds a new index from JSONL files on a LocalCluster of two worker processes started as the
command line starts them (simdask.cluster.connect, worker cache off), while a thread asks
every worker every ``--every`` seconds (``Client.run``): its RSS, the bytes Dask holds for it
by task stage (``simdask-<stage>-...`` keys; ``merge`` = the merged shards, ``bydoc`` = the
blocks' views, ``pairs`` = block parts), glibc's ``mallinfo2`` (heap in use, heap free but
kept, mmapped) and what task runs. Writes one JSON line per sample to ``--out``, then prints,
per phase (chunk, merge, similarity before the blocks, blocks), the peak RSS of the largest
worker and of both, the peak malloc'd bytes in use and of Dask-managed bytes. Samples are
taken between tasks' GIL releases: at 100k documents about one every 1.5-3 s, so short peaks
can be missed. The client and scheduler process is not sampled.

    PYTHONPATH=. python scripts/probe_worker_memory.py DOCS.jsonl[,MORE.jsonl] --index /tmp/i \
        --out probe.jsonl --heavy-df 86
    python scripts/probe_worker_memory.py --report probe.jsonl [more.jsonl ...]
"""

from __future__ import annotations

import argparse
import json
import shutil
import threading
import time
from pathlib import Path

from distributed import Client

from simdask.cluster.connect import connect
from simdask.config import IndexConfig
from simdask.engine.context import RunOptions
from simdask.index import Index

_PREP = {"skip", "dfhist", "heavy", "work", "bydoc", "info"}
_BLOCKS = {"pairs", "rows", "heavyonly"}


def probe(dask_worker=None) -> dict:
    """One worker's memory now (runs in the worker, through ``Client.run``)."""
    import ctypes
    from collections import Counter

    import psutil
    from dask.sizeof import sizeof

    class MallInfo2(ctypes.Structure):
        _fields_ = [
            (n, ctypes.c_size_t)
            for n in (
                *("arena", "ordblks", "smblks", "hblks", "hblkhd"),
                *("usmblks", "fsmblks", "uordblks", "fordblks", "keepcost"),
            )
        ]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = MallInfo2
    m = libc.mallinfo2()
    by: Counter = Counter()
    for k, v in list(dask_worker.data.items()):
        parts = str(k).split("-")
        by[parts[1] if len(parts) > 1 else "scattered"] += sizeof(v)
    running = [str(t) for t in list(getattr(dask_worker.state, "executing", []))][:4]
    return {
        "rss": psutil.Process().memory_info().rss,
        "managed": dict(by),
        "heap_used": m.uordblks,
        "heap_free": m.fordblks,
        "mmapped": m.hblkhd,
        "executing": running,
    }


def build(sources: list[str], index: Path, out: Path, heavy_df: int | None, every: float):
    """A full build of ``sources`` into a new ``index``, sampled into ``out``; its summary."""
    shutil.rmtree(index, ignore_errors=True)
    stop = threading.Event()
    with connect(workers=2) as client, open(out, "w") as f:
        address = client.scheduler.address

        def sample():
            c2 = Client(address, set_as_default=False)
            t0 = time.time()
            while not stop.is_set():
                try:
                    r = c2.run(probe)
                except Exception as e:  # a worker between tasks may not answer: note it
                    r = {"error": repr(e)}
                f.write(json.dumps({"t": round(time.time() - t0, 2), "w": r}) + "\n")
                f.flush()
                stop.wait(every)
            c2.close()

        th = threading.Thread(target=sample, daemon=True)
        th.start()
        idx = Index.create(index, IndexConfig(heavy_df=heavy_df))
        s = idx.update(sources, client=client, options=RunOptions(worker_cache=False))
        stop.set()
        th.join()
    return s


def report(path: str) -> None:
    """Peaks per phase of one sampled run."""
    phase, peak = "chunk", {}
    with open(path) as f:
        lines = f.readlines()
    for line in lines:
        w = json.loads(line)["w"]
        if "error" in w or not w:
            continue
        ex = {e.split("'")[1].split("-")[1] for v in w.values() for e in v["executing"]}
        if "merge" in ex and phase == "chunk":
            phase = "merge"
        if ex & _PREP and phase in ("chunk", "merge"):
            phase = "similarity, before the blocks"
        if ex & _BLOCKS:
            phase = "blocks"
        rss = [v["rss"] for v in w.values()]
        used = [v["heap_used"] + v["mmapped"] for v in w.values()]
        managed = [sum(v["managed"].values()) for v in w.values()]
        p = peak.setdefault(phase, [0, 0, 0, 0])
        for i, x in enumerate((max(rss), sum(rss), max(used), max(managed))):
            p[i] = max(p[i], x)
    print(path)
    for ph, (a, b, c, d) in peak.items():
        print(
            f"  {ph:30s} largest worker {a / 2**30:5.2f} GiB, both {b / 2**30:5.2f} GiB; "
            f"malloc'd in use {c / 2**30:5.2f} GiB; Dask-managed {d / 2**30:5.2f} GiB"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sources", nargs="?", help="JSONL files, comma-separated")
    ap.add_argument("--index", type=Path, help="a new index (removed first)")
    ap.add_argument("--out", type=Path, help="the samples, JSON lines")
    ap.add_argument("--heavy-df", type=int, default=None)
    ap.add_argument("--every", type=float, default=0.5, help="seconds between samples")
    ap.add_argument("--report", nargs="+", help="print the peaks of sampled runs and stop")
    args = ap.parse_args()
    if args.report:
        for path in args.report:
            report(path)
        return
    s = build(args.sources.split(","), args.index, args.out, args.heavy_df, args.every)
    print(json.dumps({"seconds": s.seconds, "similarity_rows": s.similarity_rows}))
    report(str(args.out))


if __name__ == "__main__":
    main()
