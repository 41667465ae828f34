"""Incremental runs on a large index: add, modify and delete 100 documents (issue 3).

Builds (or reuses) an index of ``--docs`` generated documents, then times, on a running
LocalCluster, a run that adds ``--changes`` documents, one that modifies as many and one that
deletes as many, each until their similarities are queryable; then the same add through the
CLI in a fresh process (cluster start included). Prints the numbers and writes the section
"Incremental runs (bench_incremental.py)" of docs/benchmarks.md.

    python scripts/bench_incremental.py --docs 100000
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from simdask import Index, IndexConfig
from simdask.cluster.connect import connect
from simdask.ingest.synth import generate_corpus

from _benchutil import PeakRSS, machine, today, write_section


def write_jsonl(docs, path: Path) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for key, text in docs:
            f.write(json.dumps({"id": key, "text": text}) + "\n")
    return path


def stage_line(name: str, s) -> str:
    stages = ", ".join(f"{k} {v:.2f}" for k, v in s.seconds.items() if k != "total")
    return (
        f"| {name} | {s.seconds['total']:.2f} | {stages} | {s.added}/{s.modified}/{s.deleted} | "
        f"{s.similarity_rows} | {s.extra.get('shards_rewritten', 0)} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--words", type=int, default=1000)
    ap.add_argument("--changes", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--shards", type=int, default=16)
    ap.add_argument("--data", default="bench-data/incremental", help="corpus and index folder")
    ap.add_argument("--out", default="docs/benchmarks.md")
    ap.add_argument("--fresh", action="store_true", help="rebuild the base index even if present")
    args = ap.parse_args()

    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    n, c = args.docs, args.changes
    t = time.perf_counter()
    corpus = generate_corpus(n + 2 * c, mean_words=args.words, seed=7)
    docs = [(d.key, d.text) for d in corpus.docs]
    gen_s = time.perf_counter() - t
    base = write_jsonl(docs[:n], data / "base.jsonl")
    added = write_jsonl(docs[n : n + c], data / "added.jsonl")
    added_cli = write_jsonl(docs[n + c : n + 2 * c], data / "added-cli.jsonl")
    step = max(1, n // c)
    victims = [docs[i] for i in range(0, n, step)][:c]
    modified = write_jsonl(
        [
            (k, t[: len(t) // 2] + " " + docs[(i * 7919) % n][1][:2000])
            for i, (k, t) in enumerate(victims)
        ],
        data / "modified.jsonl",
    )
    removed = [docs[i][0] for i in range(step // 2, n, step)][:c]
    words = sum(len(t.split()) for _, t in docs[:n])
    print(f"corpus: {n} documents, {words / 1e6:.1f} M words, generated in {gen_s:.1f} s")

    cluster = connect(workers=args.workers, dashboard_address=":0")  # as simdask starts it
    client = cluster.__enter__()
    index_path = data / "index"
    rows = []
    try:
        if args.fresh or not (index_path / "catalog.sqlite").exists():
            shutil.rmtree(index_path, ignore_errors=True)
            idx = Index.create(index_path, IndexConfig(shards=args.shards))
            with PeakRSS() as rss:
                s = idx.update([base], client=client)
            print(f"base build: {s.seconds}  peak RSS {rss.peak_total / 2**30:.1f} GiB")
            rows.append(stage_line(f"build {n} documents", s))
            (data / "base-build.json").write_text(
                json.dumps(
                    {"row": rows[-1], "date": today(), "rss": rss.peak_total, "seconds": s.seconds}
                )
            )
            idx.close()
        elif (data / "base-build.json").exists():
            base_info = json.loads((data / "base-build.json").read_text())
            rows.append(
                base_info["row"].replace("| build", f"| (reused, built {base_info['date']})", 1)
            )
        work = data / "work-index"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(index_path, work)
        idx = Index.open(work)
        for name, kwargs in (
            (f"add {c}", {"sources": [added]}),
            (f"modify {c}", {"sources": [modified]}),
            (f"delete {c}", {"remove": removed}),
        ):
            t = time.perf_counter()
            s = idx.update(client=client, **kwargs)
            probe = docs[n][0] if name.startswith("add") else victims[0][0]
            if not name.startswith("delete"):
                idx.similar(probe)  # queryable
            print(f"{name}: {time.perf_counter() - t:.2f} s  {s.seconds}")
            rows.append(stage_line(name, s))
        idx.close()
    finally:
        cluster.__exit__(None, None, None)

    t = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "simdask.cli",
            "update",
            str(work),
            str(added_cli),
            "--quiet",
            "--workers",
            str(args.workers),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    cli_s = time.perf_counter() - t
    print(f"CLI add {c} (new process, LocalCluster start included): {cli_s:.2f} s")
    print(proc.stderr.strip().splitlines()[-1])

    body = f"""Machine: {machine()}. Date: {today()}.
Corpus: {n:,} generated documents (synth, seed 7), {words / 1e6:.1f} M words, hash_bits 28,
{args.shards} shards (raw layout: an index directory), {args.workers} worker processes. Seconds;
stages from the run summary.

| run | total s | stages (s) | added/modified/deleted | similarity rows written | shards rewritten |
|---|---|---|---|---|---|
{chr(10).join(rows)}

The same add of {c} documents through `simdask update` in a new process, LocalCluster start
and shutdown included: **{cli_s:.2f} s**.
"""
    write_section(args.out, "Incremental runs (bench_incremental.py)", body)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
