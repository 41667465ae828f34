"""What a query with the page cache dropped costs on this disk, and what no exact lookup can
go below (issue 13 item 5: "query of one 20-page document against the 1M index <= 1 s cold").

Three measurements in one run, each after ``sync; echo 3 > /proc/sys/vm/drop_caches`` (root
only), repeated ``--rounds`` times and alternated so that the disk's bursts fall on all of them:

* **the device**: ``--reads`` random 4 KiB reads (``O_DIRECT``: the page cache is not asked,
  no read-ahead) at page-aligned places of the index's largest files, with 1 and with
  ``--threads`` threads; gives the device's random reads per second at queue depth 1 and at
  depth ``--threads`` (a cloud disk caps them);
* **Python alone**: a new interpreter that exits at once, one that imports numpy (any
  implementation on the chosen dependencies needs it), and one that imports what
  ``simdask query`` imports;
* **the query**: ``python -m simdask.cli query INDEX QUERY`` in a new process, its wall time,
  and the read requests the device completed meanwhile (``/proc/diskstats``; the machine
  should be otherwise quiet);
* **the query in a running process** (a server such as ``simdask serve``): simdask imported
  first, then the page cache dropped, then the index opened and queried, timed inside.

It also counts what the query must look up (the query's distinct chunk IDs, and how many the
index holds): an exact lookup of a chunk ID the index does not hold must still read the place
where it would be, one random read each, unless a structure in memory excludes it; with the
page cache dropped nothing is in memory. So ``distinct IDs / reads per second`` (at the
device's best depth) plus starting Python with numpy is a floor for any exact query on this
disk written on the project's dependencies.

    sudo python scripts/bench_query_floor.py /work/data/d16/index-1000000 \\
        /work/data/d16/query-20pages.txt --rounds 3

Prints JSON lines and a Markdown summary (docs/scale.md, "Cold query floor").
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _benchutil import banner, load_average

PAGE = 4096
#: what the query path imports (simdask/cli/query.py and what it reads the index with)
IMPORTS = "import simdask.cli.main, simdask.cli.query, simdask.index, simdask.queries"


def drop_caches() -> None:
    """Write dirty pages and drop the page cache, dentries and inodes (needs root)."""
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def device_reads(path: Path) -> int:
    """Read requests completed so far by the block device holding ``path`` (or its whole
    disk when the partition has no line), from ``/proc/diskstats``."""
    dev = os.stat(path).st_dev
    major, minor = os.major(dev), os.minor(dev)
    with open("/proc/diskstats") as f:
        for line in f:
            p = line.split()
            if int(p[0]) == major and int(p[1]) == minor:
                return int(p[3])
    raise SystemExit(f"no /proc/diskstats line for device {major}:{minor} of {path}")


def largest_files(index: Path, n: int = 64) -> list[Path]:
    """The ``n`` largest files under the index's ``shards`` folder (posting lists, keys)."""
    files = [p for p in (index / "shards").rglob("*") if p.is_file()]
    files.sort(key=lambda p: p.stat().st_size, reverse=True)
    return [p for p in files[:n] if p.stat().st_size >= 64 * PAGE]


def random_reads(files: list[Path], reads: int, threads: int, seed: int) -> float:
    """Seconds for ``reads`` random page-aligned 4 KiB ``O_DIRECT`` reads spread over
    ``files``, issued by ``threads`` threads (each with its own aligned buffer)."""
    rng = random.Random(seed)
    fds = [os.open(p, os.O_RDONLY | os.O_DIRECT) for p in files]
    pages = [os.fstat(fd).st_size // PAGE for fd in fds]
    plan = [(i, rng.randrange(pages[i]) * PAGE) for i in rng.choices(range(len(fds)), k=reads)]
    local = threading.local()

    def one(at: tuple[int, int]) -> int:
        buf = getattr(local, "buf", None)
        if buf is None:
            buf = local.buf = mmap.mmap(-1, PAGE)  # page-aligned, as O_DIRECT wants
        return os.preadv(fds[at[0]], [buf], at[1])

    t = time.perf_counter()
    try:
        if threads == 1:
            for at in plan:
                one(at)
        else:
            with ThreadPoolExecutor(threads) as ex:
                list(ex.map(one, plan, chunksize=max(1, reads // threads // 8)))
        return time.perf_counter() - t
    finally:
        for fd in fds:
            os.close(fd)


def timed_process(cmd: list[str], probe: Path, cwd: str, env: dict) -> dict:
    """Run ``cmd`` (output discarded): wall seconds and the device's read requests meanwhile."""
    r0 = device_reads(probe)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()}")
    return {"wall": wall, "requests": device_reads(probe) - r0}


#: a query in a process that has imported simdask already (a server, ``simdask serve``): the
#: page cache is dropped after the imports, then the index is opened and queried
SERVER = """
import json, sys, time
from pathlib import Path
from simdask.index import Index
from simdask.queries import query_files
sys.path.insert(0, {scripts!r})
import bench_query_floor as b
index = Path({index!r})
b.drop_caches()
r0 = b.device_reads(index)
t = time.perf_counter()
with Index.open(index) as ix:
    batch = query_files(ix, [{query!r}])
wall = time.perf_counter() - t
rows = len(batch.results[0].matches)
print(json.dumps({{"wall": wall, "requests": b.device_reads(index) - r0, "rows": rows}}))
"""


def server_query(cmd: list[str], cwd: str, env: dict) -> dict:
    """Run :data:`SERVER` (``cmd``): its own timing of opening the index and querying it."""
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"the in-process query failed ({proc.returncode}): {proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def lookups(index: Path, query: Path) -> dict:
    """The query's distinct chunk IDs, how many of them the index holds, and their postings
    (read warm, as :meth:`~simdask.index.Index.query_top` reads them; not timed)."""
    import numpy as np

    from simdask.index import Index
    from simdask.kernels.exclusions import chunk_excluding
    from simdask.kernels.postings import shard_of

    with Index.open(index) as ix:
        cfg = ix.config
        cb = chunk_excluding([query.read_text()], cfg.k, cfg.hash_bits, cfg.seed, ix.exclusions())
        reads = ix.reads  # a benchmark looks inside
        sid = shard_of(cb.chunk_ids, cfg.shard_width)
        ids = {s: np.unique(cb.chunk_ids[sid == s]) for s in np.unique(sid).tolist()}
        shards = reads.query_shards(reads.manifest(), reads.tombstones(), ids, merge=False)
    parts = [p for ps in shards.values() for p in ps]
    return {
        "distinct_ids": int(sum(len(v) for v in ids.values())),
        "present_ids": int(sum(len(p.chunk_keys) for p in parts)),
        "postings": int(sum(p.n_postings for p in parts)),
        "segments": len(parts),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("index", type=Path)
    ap.add_argument("query", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reads", type=int, default=10_000, help="random reads per device run")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--code", default=str(Path(__file__).resolve().parent.parent))
    ap.add_argument(
        "--no-bytecode",
        action="store_true",
        help="compile simdask from source in every process (as PYTHONDONTWRITEBYTECODE=1 "
        "makes an editable install do); default: compiled once first, as an installed "
        "package is",
    )
    a = ap.parse_args()
    print(banner(), flush=True)
    if os.geteuid() != 0:
        raise SystemExit("needs root: it drops the page cache before each measurement")
    index, query = a.index.resolve(), a.query.resolve()
    files = largest_files(index)
    py = sys.executable
    env = dict(os.environ, PYTHONPATH=a.code)
    if a.no_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run([py, "-m", "compileall", "-q", str(Path(a.code) / "simdask")], check=True)
    runs = {
        "python": [py, "-c", "pass"],
        "numpy": [py, "-c", "import numpy"],
        "imports": [py, "-c", IMPORTS],
        "query": [py, "-m", "simdask.cli", "query", str(index), str(query), "--format", "jsonl"],
        "server": [
            py,
            "-c",
            SERVER.format(
                scripts=str(Path(__file__).resolve().parent), index=str(index), query=str(query)
            ),
        ],
    }
    out: dict[str, list[dict]] = {}
    print(f"load before: {load_average()}", flush=True)
    for r in range(a.rounds):
        for name in [*runs, "device-1", f"device-{a.threads}"]:
            drop_caches()
            if name.startswith("device"):
                threads = int(name.split("-")[1])
                r0 = device_reads(index)
                secs = random_reads(files, a.reads, threads, seed=r)
                one = {"wall": secs, "requests": device_reads(index) - r0}
                one["reads_per_s"] = a.reads / secs
            elif name == "server":
                one = server_query(runs[name], a.code, env)
            else:
                one = timed_process(runs[name], index, a.code, env)
            out.setdefault(name, []).append(one)
            print(json.dumps({"round": r, "run": name, **one}), flush=True)
    print(f"load after: {load_average()}")
    need = lookups(index, query)
    print(json.dumps(need))
    med = {k: statistics.median(x["wall"] for x in v) for k, v in out.items()}
    best = max(statistics.median(x["reads_per_s"] for x in out[k]) for k in out if "device" in k)
    floor = need["distinct_ids"] / best + med["numpy"]
    print("| measured (page cache dropped before each), median of rounds | seconds | reads |")
    print("|---|---|---|")
    for k, v in out.items():
        reqs = statistics.median(x["requests"] for x in v)
        extra = (
            f" ({statistics.median(x['reads_per_s'] for x in v):,.0f} reads/s)"
            if "device" in k
            else ""
        )
        print(f"| {k}{extra} | {med[k]:.2f} | {reqs:,.0f} |")
    print(
        f"floor: {need['distinct_ids']:,} distinct chunk IDs / {best:,.0f} reads/s "
        f"+ Python start with numpy {med['numpy']:.2f} s = {floor:.2f} s"
    )


if __name__ == "__main__":
    main()
