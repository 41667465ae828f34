"""The cost targets of the aligned totals (issue 29) on a built index of 100k+ documents.

Each step runs the CLI in a subprocess on a scratch copy of ``--index`` (never the index
itself, which stays as built), samples the peak RSS of the process tree (driver and Dask
workers) and takes the CPU seconds of the whole tree (``RUSAGE_CHILDREN``):

- ``--add FILE``: ``simdask update COPY FILE`` (default flags: the added documents get their
  aligned totals, their candidates aligned in the run), its stage seconds (commit included)
  and the run's totals counts (target: 1,000 documents added to 100k in <= 60 s);
- ``--compute``: ``simdask totals COPY --compute --top 5`` (target: every document of a 100k
  index in <= 15 min, <= 4 GiB a process), cut off after ``--limit`` seconds when given (the
  computation is resumable: the pairs aligned by then are committed and counted);
- ``--query FILE``: ``simdask query INDEX FILE --totals`` on the index itself (read only),
  the whole process's wall time (target at 1M: <= 1.5 s for a 20-page essay);
- ``--pair-sample N``: the aligner's CPU ms a pair in this process, on the required pairs
  (top 5 candidates) of N random documents, and the CPU seconds of choosing every
  document's candidates (what ``--compute`` does first);
- ``--slice START N``: the aligner's CPU ms a pair on N consecutive required pairs from
  START, batched as ``--compute`` batches them and aligned as one worker aligns them
  (``engine.totals.align_jobs`` in this process; run once with each version of the code on
  ``PYTHONPATH``, alternating, to compare two versions on the same pairs).

Prints one JSON object with machine, date and load before/after.

    python scripts/bench_totals_scale.py --index IDX --scratch DIR --add add-1000.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _benchutil import PeakRSS, load_average, machine, today

GIB = 1 << 30


def _cli(args: list[str], limit: float | None = None) -> dict:
    """Run ``python -m simdask.cli ARGS``: wall s, CPU s of the tree, peak RSS, exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    with PeakRSS(0.1) as rss:
        proc = subprocess.Popen(
            [sys.executable, "-m", "simdask.cli", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            out, _ = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            proc.terminate()  # SIGTERM: the CLI shuts its cluster down
            out, _ = proc.communicate()
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 1),
        "peak_single_gib": round(rss.peak_single / GIB, 2),
        "peak_total_gib": round(rss.peak_total / GIB, 2),
        "rc": proc.returncode,
        "tail": out.strip().splitlines()[-12:],
    }


def _copy(index: Path, scratch: Path, name: str) -> Path:
    dst = scratch / name
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(index, dst, ignore=shutil.ignore_patterns("writer.lock", "work"))
    return dst


def step_add(index: Path, scratch: Path, add: Path) -> dict:
    """One incremental run adding the documents of ``add`` to a copy of ``index``."""
    copy = _copy(index, scratch, "add")
    summary = scratch / "add-summary.json"
    got = _cli(["update", str(copy), str(add), "--quiet", "--summary-json", str(summary)])
    if summary.exists():
        s = json.loads(summary.read_text())
        got["seconds"] = {k: round(v, 2) for k, v in s.get("seconds", {}).items()}
        got["totals"] = s.get("totals")
    got["tracked"] = _count(copy, "SELECT COUNT(*) FROM doc_totals")
    got["aligned_pairs"] = _count(copy, "SELECT COUNT(*) FROM aligned_pairs")
    return got


def _count(index: Path, sql: str) -> int | None:
    import sqlite3

    try:
        with sqlite3.connect(index / "catalog.sqlite") as c:
            return int(c.execute(sql).fetchone()[0])
    except sqlite3.Error:
        return None


def step_compute(index: Path, scratch: Path, top: int, limit: float | None) -> dict:
    """``totals --compute --top`` on a copy of ``index``, cut off after ``limit`` s."""
    copy = _copy(index, scratch, "compute")
    got = _cli(["totals", str(copy), "--compute", "--top", str(top), "--quiet"], limit)
    got["aligned_pairs"] = _count(copy, "SELECT COUNT(*) FROM aligned_pairs")
    got["tracked"] = _count(copy, "SELECT COUNT(*) FROM doc_totals")
    return got


def step_query(index: Path, essay: Path) -> dict:
    """``query INDEX ESSAY --totals``, the whole process (read only: the index itself)."""
    return _cli(["query", str(index), str(essay), "--totals", "--format", "jsonl"])


def step_pairs(index: Path, docs: int, seed: int = 1) -> dict:
    """The aligner's CPU ms a pair on the top-5 pairs of ``docs`` random documents, and
    the CPU s of choosing every document's top 5 (as ``--compute`` does)."""
    from simdask import Index
    from simdask.engine.totals import AlignSettings, align_job_batch
    from simdask.kernels.partner_rule import PartnerRule
    from simdask.storage.aligned_tables import missing_jobs, required_pairs
    from simdask.storage.candidate_store import rule_partners

    idx = Index.open(index)
    c = idx.catalog.conn
    ids = [int(r[0]) for r in c.execute("SELECT doc_id FROM documents")]
    rule = PartnerRule(0.0, 5, 5)
    t = time.process_time()
    required = required_pairs(rule_partners(c, ids, rule))
    choose = time.process_time() - t
    some = random.Random(seed).sample(ids, min(docs, len(ids)))
    jobs = missing_jobs(c, required_pairs(rule_partners(c, some, rule)))
    settings = AlignSettings(str(idx.path / "texts"), k=idx.config.k)
    t = time.process_time()
    found = align_job_batch(jobs, settings)
    per = 1000 * (time.process_time() - t) / max(1, len(jobs))
    with_passages = sum(len(f.a_spans) > 0 for f in found)
    return {
        "required_pairs": len(required),
        "choose_cpu_s": round(choose, 1),
        "sample_pairs": len(jobs),
        "with_passages": with_passages,
        "align_cpu_ms_a_pair": round(per, 1),
        "projected_compute_cpu_s": round(per * len(required) / 1000),
    }


def step_slice(index: Path, start: int, n: int) -> dict:
    """The aligner's CPU ms a pair on ``n`` consecutive pairs of every document's top 5 from
    ``start``, in batches as ``--compute`` cuts them (``texts_prepared``: at most, counted
    once a batch; a worker keeps texts a later batch needs); run it with each version of the
    code on the path to compare them on the same pairs."""
    from simdask import Index
    from simdask.engine.totals import MAX_BATCH_JOBS, AlignSettings, align_jobs
    from simdask.kernels.partner_rule import PartnerRule
    from simdask.storage.aligned_tables import missing_jobs, required_pairs
    from simdask.storage.candidate_store import rule_partners

    idx = Index.open(index)
    c = idx.catalog.conn
    ids = [int(r[0]) for r in c.execute("SELECT doc_id FROM documents")]
    jobs = missing_jobs(c, required_pairs(rule_partners(c, ids, PartnerRule(0.0, 5, 5))))
    jobs = jobs[start : start + n]
    settings = AlignSettings(str(idx.path / "texts"), k=idx.config.k)
    batches = [jobs[i : i + MAX_BATCH_JOBS] for i in range(0, len(jobs), MAX_BATCH_JOBS)]
    t = time.process_time()
    # in this process, as one worker runs them (session 16: texts kept across batches)
    found = [r for b in align_jobs(jobs, settings, batch_jobs=MAX_BATCH_JOBS) for r in b]
    cpu = time.process_time() - t
    texts = sum(len({loc for j in b for loc in (j.a_text, j.b_text)}) for b in batches)
    words = sum(int(r.a_spans[:, 1].sum() - r.a_spans[:, 0].sum()) for r in found)
    return {
        "start": start,
        "pairs": len(jobs),
        "texts_prepared": texts,
        "align_cpu_s": round(cpu, 2),
        "align_cpu_ms_a_pair": round(1000 * cpu / max(1, len(jobs)), 1),
        "aligned_words_a": words,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--index", type=Path, required=True, help="a built index (not changed)")
    p.add_argument("--scratch", type=Path, help="where the copies go (--add, --compute)")
    p.add_argument("--add", type=Path, help="documents to add (JSONL or files)")
    p.add_argument("--compute", action="store_true")
    p.add_argument("--top", type=int, default=5)
    p.add_argument("--limit", type=float, help="cut --compute off after this many seconds")
    p.add_argument("--query", type=Path, help="an essay to query with --totals")
    p.add_argument("--pair-sample", type=int, default=0, help="documents whose pairs to time")
    p.add_argument("--slice", type=int, nargs=2, metavar=("START", "N"), help="pairs to time")
    p.add_argument("--out", type=Path, help="also append the JSON to this file")
    args = p.parse_args()
    if (args.add or args.compute) and args.scratch is None:
        p.error("--add and --compute need --scratch")
    res: dict = {"machine": machine(), "date": today(), "index": str(args.index)}
    res["load_before"] = load_average()
    res["nice"] = os.nice(0)
    if args.pair_sample:
        res["pairs"] = step_pairs(args.index, args.pair_sample)
    if args.slice:
        res["slice"] = step_slice(args.index, *args.slice)
    if args.add:
        res["add"] = step_add(args.index, args.scratch, args.add)
    if args.compute:
        res["compute"] = step_compute(args.index, args.scratch, args.top, args.limit)
    if args.query:
        res["query"] = step_query(args.index, args.query)
    res["load_after"] = load_average()
    text = json.dumps(res, indent=1)
    print(text, flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
