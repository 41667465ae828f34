"""Cold query side by side: ``simdask query INDEX FILE`` in a new process, for two code trees
(e.g. main and a branch, by PYTHONPATH), alternating, several rounds, on several indexes.

Measures per run the wall time of the whole process (start-up and imports included, output
to /dev/null) and its peak resident set (``ru_maxrss`` of ``wait4``: anonymous and mapped
file pages). "Cold" is a new process; the page cache is left as it is (it is shared).

    python scripts/bench_cold_query.py --tree main=/work/main --tree branch=/work/wt/b \\
        --query /work/data/scale/query-20pages.txt IDX10K IDX30K IDX100K

Prints one JSON line per run and a Markdown table of medians (docs/scale.md, "Cold query").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from _benchutil import banner, load_average


def _vm_hwm_kib(pid: int) -> int:
    """The peak resident set of a live process so far (VmHWM, KiB; 0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            return next((int(x.split()[1]) for x in f if x.startswith("VmHWM:")), 0)
    except OSError:
        return 0


def run_once(tree: str, index: str, query: str, extra: list[str]) -> dict:
    """One cold query in a new process with ``PYTHONPATH=tree``: wall and CPU seconds (user +
    system), peak RSS (mapped file pages included), what it read from the disk
    (``ru_inblock``, not the page cache) and its page faults."""
    env = dict(os.environ, PYTHONPATH=tree)
    cmd = [sys.executable, "-m", "simdask.cli", "query", index, query, *extra]
    t = time.perf_counter()
    # cwd=tree: `python -m` puts the working directory first on sys.path, before PYTHONPATH
    proc = subprocess.Popen(
        cmd, env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    hwm = 0  # VmHWM read while the process lives (ru_maxrss can miss mapped file pages
    while True:  # unmapped before the exit), every 5 ms, as bench_scale.py samples it
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        hwm = max(hwm, _vm_hwm_kib(proc.pid))
        time.sleep(0.005)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_rss_mib": max(hwm, usage.ru_maxrss) / 1024,
        "disk_read_mib": usage.ru_inblock * 512 / 2**20,
        "page_faults": usage.ru_minflt + usage.ru_majflt,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("indexes", nargs="+")
    ap.add_argument("--tree", action="append", required=True, help="NAME=PATH")
    ap.add_argument("--query", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--args", default="", help="extra arguments of `simdask query`")
    a = ap.parse_args()
    print(banner(), flush=True)
    trees = dict(t.split("=", 1) for t in a.tree)
    res: dict[tuple[str, str], list[dict]] = {}
    print(f"load before: {load_average()}", flush=True)
    for r in range(a.rounds):
        for index in a.indexes:
            names = list(trees) if r % 2 == 0 else list(reversed(trees))  # alternate order
            for name in names:
                one = run_once(trees[name], index, a.query, a.args.split())
                res.setdefault((index, name), []).append(one)
                print(json.dumps({"round": r, "index": index, "tree": name, **one}), flush=True)
    print(f"load after: {load_average()}")
    cols = ("wall s", "CPU s", "peak MiB", "faults")
    print("| index | " + " | ".join(f"{n} {c}" for n in trees for c in cols) + " |")
    print("|" + "---|" * (1 + len(cols) * len(trees)))
    for index in a.indexes:
        cells = []
        for name in trees:
            runs = res[(index, name)]
            for key, fmt in (("wall", ".2f"), ("cpu", ".2f"), ("peak_rss_mib", ".0f")):
                cells.append(format(statistics.median(x[key] for x in runs), fmt))
            cells.append(f"{statistics.median(x['page_faults'] for x in runs):.0f}")
        print(f"| {os.path.basename(index.rstrip('/'))} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
