"""Iterating and exporting ~500k stored similarity rows (issue 32, item 9).

Builds an index whose catalog holds ``--docs`` documents with ``--per-doc`` similarity rows
each (synthetic rows written straight into a real catalog made by ``Index.create``: what is
measured reads only the ``similarity`` and ``documents`` tables), then measures, in one
process, side by side:

* before: ``Index.pairs()`` (the whole list), and ``similar_rows`` (what ``simdask similar
  --format jsonl`` computed: every row in memory, then its aligned/total lookups);
* after: ``Index.iter_pairs()`` (streamed, batches of 50,000) and ``iter_similar_rows``
  (the jsonl rows streamed), ``write_pairs_parquet`` and ``pairs_frame().compute()``.

CPU seconds (``time.process_time``) and peak RSS growth of each (a fresh child process per
measurement, so that one's memory does not hide another's). Prints the numbers and writes
the section "Pairs as data (bench_pairs_export.py)" of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from simdask import Index, IndexConfig
from simdask.read import result_export
from simdask.read.total_reads import similar_rows

from _benchutil import load_average, machine, today, write_section


def build(path: Path, docs: int, per_doc: int, seed: int = 1) -> int:
    """A catalog with ``docs`` documents and ``per_doc`` rows each; returns the row count."""
    Index.create(path, IndexConfig(shards=4)).close()
    rng = np.random.default_rng(seed)
    conn = sqlite3.connect(path / "catalog.sqlite")
    now = time.time()
    conn.executemany(
        "INSERT INTO documents (doc_id, key, source, content_hash, n_chunks, n_words, status,"
        " added_at, updated_at) VALUES (?, ?, 's', 'h', ?, ?, 'indexed', ?, ?)",
        [(i, f"corpus/doc-{i:07d}.txt", 1000, 1004, now, now) for i in range(docs)],
    )
    rows = []
    for d in range(docs):
        others = rng.choice(docs - 1, size=per_doc, replace=False)
        others[others >= d] += 1
        shared = rng.integers(1, 1000, size=per_doc)
        rows += [(d, int(o), int(s), s / 10.0) for o, s in zip(others, shared, strict=True)]
    conn.executemany(
        "INSERT INTO similarity (doc, other, shared, similarity) VALUES (?, ?, ?, ?)", rows
    )
    conn.commit()
    conn.close()
    return len(rows)


def _measure(path: str, what: str, out) -> None:
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0, w0 = time.process_time(), time.perf_counter()
    with Index.open(path) as idx, idx.snapshot():
        if what == "pairs() list":
            n = sum(1 for _ in idx.pairs())
        elif what == "similar_rows (jsonl, before)":
            n = len(similar_rows(idx))
        elif what == "iter_pairs()":
            n = sum(1 for _ in idx.iter_pairs())
        elif what == "iter_similar_rows (jsonl, after)":
            n = sum(len(b) for b in result_export.iter_similar_rows(idx))
        elif what == "write_pairs_parquet":
            n = result_export.write_pairs_parquet(idx, Path(path) / "pairs.parquet")
        else:
            n = len(idx.pairs_frame().compute(scheduler="sync"))
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0
    out.put({"what": what, "rows": n, "cpu": cpu, "wall": wall, "rss_mib": rss / 1024})


WHAT = (
    "pairs() list",
    "iter_pairs()",
    "similar_rows (jsonl, before)",
    "iter_similar_rows (jsonl, after)",
    "write_pairs_parquet",
    "pairs_frame().compute()",
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--per-doc", type=int, default=100)
    ap.add_argument(
        "--out", default=str(Path(__file__).resolve().parents[1] / "docs/benchmarks.md")
    )
    args = ap.parse_args()
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "idx"
        n_rows = build(path, args.docs, args.per_doc)
        results = []
        for what in WHAT:
            q = ctx.Queue()
            p = ctx.Process(target=_measure, args=(str(path), what, q))
            p.start()
            results.append(q.get())
            p.join()
    for r in results:
        print(json.dumps(r))
    table = "\n".join(
        f"| {r['what']} | {r['rows']:,} | {r['cpu']:.2f} | {r['wall']:.2f} | {r['rss_mib']:.0f} |"
        for r in results
    )
    body = f"""Machine: {machine()}. Date: {today()}. Load average at the end: {load_average()}.
A catalog of {args.docs:,} documents with {args.per_doc} stored rows each ({n_rows:,} rows;
synthetic rows in a real catalog), read whole, best first, in one committed state; each
measurement in a new process (CPU seconds of that process; peak RSS growth).

| reading | rows | CPU s | wall s | peak RSS growth (MiB) |
|---|---|---|---|---|
{table}

"before": what the API and `similar --format jsonl` did (every row in a list first);
"after": streamed in batches of {result_export.BATCH_ROWS:,} rows (`Index.iter_pairs`,
`simdask export`, `Index.pairs_frame`).
"""
    print(body)
    write_section(args.out, "Pairs as data (bench_pairs_export.py)", body)


if __name__ == "__main__":
    main()
