"""Scale-out model (issue 32 item 3): projected wall time of a build on W workers from one
measured build (scripts/bench_serial.py's JSON lines), by Amdahl's law per stage.

Per stage ``s`` the build measured its work ``P_s`` (task-seconds: the summed compute time of
its tasks) and its serial seconds ``S_s`` (no worker computing: the client alone). On ``W``
single-threaded workers the stage takes ``S_s + P_s / min(W, U_s)``, where ``U_s`` is the
most tasks of the stage that can run at once: the chunking batches and similarity blocks
are sized to the cluster (4 a thread, engine/sizing, unless the corpus is too small:
``U = n_docs / 25`` batches, ``work / 2**18`` blocks), the merge and the per-range passes
have one task per range (``--ranges R``). The scan, the gaps between stages, the commit and
the rest are serial whatever W. Task-seconds on a loaded machine are inflated by the load;
``--calibrate`` scales work and serial seconds so that the work matches the build's measured
worker CPU seconds and the serial seconds the client's CPU seconds (a quiet machine's lower
bound), and both tables are printed.

    python scripts/scale_model.py RUNS/side.jsonl --ranges 16,512

Prints markdown tables (docs/scale.md quotes them).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

#: the run stage each task-name stage belongs to, and whether it runs one task per range
TASK_STAGES = {
    "chunk": ("chunk", False),
    "merge": ("merge", True),
    "info": ("similarity", True),
    "skip": ("similarity", True),
    "dfhist": ("similarity", True),
    "heavy": ("similarity", True),
    "work": ("similarity", True),
    "bydoc": ("similarity", True),
    "pairs": ("similarity", False),
    "rows": ("similarity", False),
}
WORKERS = (2, 8, 32, 128)
MIN_BATCH_DOCS = 25
MIN_BLOCK_PAIRS = 1 << 18


def project(res: dict, workers: int, ranges: int, scale_work=1.0, scale_serial=1.0) -> dict:
    """Projected seconds per stage on ``workers`` single-threaded workers."""
    prof = res["profile"]
    serial = {k: v * scale_serial for k, v in res["serial_seconds"].items()}
    n = res["n"]
    pair_work = res.get("candidate_pair_counts")
    if pair_work is None:  # older results: the block budget was work / (4 x threads) + 1
        sz = res["sizing"]
        pair_work = (sz["block_pairs"] - 1) * 4 * sz["threads"]
    blocks_max = max(1, pair_work // MIN_BLOCK_PAIRS)
    out = dict.fromkeys(("scan", "chunk", "merge", "similarity"), 0.0)
    for task, secs in prof["task_seconds"].items():
        stage, per_range = TASK_STAGES.get(task, ("similarity", False))
        if per_range:
            units = ranges
        elif task == "chunk":
            units = max(1, n // MIN_BATCH_DOCS)
        elif task in ("pairs", "rows"):
            units = blocks_max
        else:
            units = 1  # a single task (hsizes, hq, ...)
        out[stage] += secs * scale_work / min(workers, units)
    for k, v in serial.items():
        out[k] = out.get(k, 0.0) + v
    out["total"] = sum(out.values())
    out["serial"] = sum(serial.values())
    return out


def table(res: dict, ranges: list[int], calibrated: bool) -> str:
    """Markdown rows: projected total and serial share per worker count and range count."""
    work = sum(res["profile"]["task_seconds"].values())
    serial = sum(res["serial_seconds"].values())
    sw = ss = 1.0
    if calibrated:
        worker_cpu = res["cpu_s"] - res["client_cpu_s"]
        sw, ss = worker_cpu / work, min(1.0, res["client_cpu_s"] / serial)
    lines = [
        f"n = {res['n']:,} ({res['code']}): work {work * sw:,.0f} task-s, serial "
        f"{serial * ss:,.1f} s" + (" (calibrated to CPU seconds)" if calibrated else ""),
        "",
        "| ranges | " + " | ".join(f"{w} workers" for w in WORKERS) + " | limit (W → ∞) |",
        "|---|" + "---|" * (len(WORKERS) + 1),
    ]
    for r in ranges:
        cells = []
        for w in WORKERS:
            p = project(res, w, r, sw, ss)
            cells.append(f"{p['total']:,.0f} s ({100 * p['serial'] / p['total']:.0f} % serial)")
        inf = project(res, 10**9, r, sw, ss)
        cells.append(f"{inf['total']:,.0f} s")
        lines.append(f"| {r} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def amdahl(serial: float, work: float, per_range: float, ranges: list[int]) -> str:
    """Markdown rows for a build known only by its serial seconds, its work and the share of
    that work in per-range tasks (e.g. docs/scale.md's 1M figures)."""
    lines = [
        f"serial {serial:,.0f} s, work {work:,.0f} s ({100 * per_range:.0f} % per range)",
        "",
        "| ranges | " + " | ".join(f"{w} workers" for w in WORKERS) + " | limit (W → ∞) |",
        "|---|" + "---|" * (len(WORKERS) + 1),
    ]
    for r in ranges:
        cells = []
        for w in (*WORKERS, 10**9):
            t = serial + work * per_range / min(w, r) + work * (1 - per_range) / w
            cells.append(
                f"{t:,.0f} s" + (f" ({100 * serial / t:.0f} % serial)" if w < 10**9 else "")
            )
        lines.append(f"| {r} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="?", help="bench_serial.py JSON lines")
    ap.add_argument("--ranges", default="16,512", help="range counts to project")
    ap.add_argument("--code", default=None, help="only results whose code starts with this")
    ap.add_argument(
        "--amdahl",
        default=None,
        help="SERIAL,WORK,PER_RANGE_SHARE: project a build known by these numbers only",
    )
    args = ap.parse_args()
    ranges = [int(x) for x in args.ranges.split(",")]
    if args.amdahl:
        serial, work, share = (float(x) for x in args.amdahl.split(","))
        print(amdahl(serial, work, share, ranges))
        return
    for line in Path(args.results).read_text().splitlines():
        res = json.loads(line)
        if "profile" not in res or (args.code and not res["code"].startswith(args.code)):
            continue
        for calibrated in (False, True):
            print(table(res, ranges, calibrated), end="\n\n")


if __name__ == "__main__":
    main()
