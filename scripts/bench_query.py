"""Query latency: one ~10,000-word document (about 20 pages) against a 100k-document index.

Reuses the base index that ``scripts/bench_incremental.py`` builds under
``bench-data/incremental`` (same generator: ``generate_corpus(docs + 200, mean_words=1000,
seed=7)``, the first ``docs`` indexed, 16 shards), or builds it the same way if it is missing
(timed apart, not counted). The query document is made of generated documents that are not in
the index plus passages copied from indexed ones, so it has true matches.

Measured:

* cold, new process: ``simdask query INDEX FILE`` as a subprocess (interpreter start, imports,
  opening the index, reading the file, querying, printing), and the same in a fresh Python
  process that times only ``Index.open`` + the first ``Index.query`` (imports excluded);
* a second query in that process, the ``Index`` kept open (it again reads only the postings
  it needs);
* warm: queries after ``Index.preload()`` (all shards in memory, as a query server would).

Queries report documents at least 1 % similar either way (the CLI's default ``--min``).

Prints the numbers and writes the section "Query (bench_query.py)" of docs/benchmarks.md.

    python scripts/bench_query.py --docs 100000
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

from simdask import Index, IndexConfig
from simdask.cluster import connect
from simdask.synth import generate_corpus

from _benchutil import PeakRSS, machine, today, write_section

_EXTRA = 200  # documents bench_incremental.py generates beyond the indexed ones

#: run in a fresh interpreter: times open + first query (cold) and later queries (warm)
_PROBE = r"""
import json, sys, time
from simdask import Index
from simdask.sources import read_document
t0 = time.perf_counter()
idx = Index.open(sys.argv[1])
t1 = time.perf_counter()
key, text = read_document(sys.argv[2])
t2 = time.perf_counter()
first = idx.query(text, 1.0)
t3 = time.perf_counter()
second = idx.query(text, 1.0)
t4 = time.perf_counter()
nbytes = idx.preload()
t5 = time.perf_counter()
warm = []
for _ in range(int(sys.argv[3])):
    t = time.perf_counter()
    again = idx.query(text, 1.0)
    warm.append(time.perf_counter() - t)
assert [m.to_dict() for m in again] == [m.to_dict() for m in first] == [m.to_dict() for m in second]
every = idx.query(text, 0.0)
print(json.dumps({"open": t1 - t0, "read": t2 - t1, "query": t3 - t2, "cold": t3 - t0,
                  "second": t4 - t3, "preload": t5 - t4, "preload_bytes": nbytes,
                  "warm": warm, "matches": len(first), "sharing": len(every),
                  "top": [m.to_dict() for m in first[:3]]}))
"""


def write_jsonl(docs, path: Path) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for key, text in docs:
            f.write(json.dumps({"id": key, "text": text}) + "\n")
    return path


def build_index(data: Path, docs, shards: int, workers: int) -> dict:
    """Index ``docs`` at ``data/index`` (as bench_incremental.py does); returns build facts."""
    base = write_jsonl(docs, data / "base.jsonl")
    index_path = data / "index"
    shutil.rmtree(index_path, ignore_errors=True)
    with connect(workers=workers, dashboard_address=":0") as client:
        idx = Index.create(index_path, IndexConfig(shards=shards))
        with PeakRSS() as rss:
            s = idx.update([base], client=client)
        idx.close()
    stages = ", ".join(f"{k} {v:.2f}" for k, v in s.seconds.items() if k != "total")
    row = (
        f"| build {len(docs)} documents | {s.seconds['total']:.2f} | {stages} | "
        f"{s.added}/{s.modified}/{s.deleted} | {s.similarity_rows} | "
        f"{s.extra.get('shards_rewritten', 0)} |"
    )
    info = {"row": row, "date": today(), "rss": rss.peak_total, "seconds": s.seconds}
    (data / "base-build.json").write_text(json.dumps(info))
    return info


def make_query(corpus, n: int, words: int) -> str:
    """About ``words`` words: documents beyond ``n`` (not indexed) and, between them, passages
    of 100-400 words copied from indexed documents."""
    parts, total, i = [], 0, 0
    while total < words:
        new = corpus.docs[n + i].text.split()
        src = corpus.docs[(i * 7919) % n].text.split()
        take = 100 + (i * 37) % 300
        passage = src[len(src) // 3 : len(src) // 3 + take]
        parts += [" ".join(new), " ".join(passage)]
        total += len(new) + len(passage)
        i += 1
    return "\n\n".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--query-words", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2, help="for a build only")
    ap.add_argument("--shards", type=int, default=16, help="for a build only")
    ap.add_argument("--repeat", type=int, default=3, help="cold runs (new processes)")
    ap.add_argument("--warm", type=int, default=10, help="warm queries per process")
    ap.add_argument("--data", default="bench-data/incremental", help="corpus and index folder")
    ap.add_argument("--out", default="docs/benchmarks.md")
    ap.add_argument("--fresh", action="store_true", help="rebuild the index even if present")
    ap.add_argument("--build-only", action="store_true")
    args = ap.parse_args()

    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    n = args.docs
    t = time.perf_counter()
    corpus = generate_corpus(n + _EXTRA, mean_words=1000, seed=7)
    print(f"generated {n + _EXTRA} documents in {time.perf_counter() - t:.1f} s")
    index_path = data / "index"
    if args.fresh or not (index_path / "catalog.sqlite").exists():
        info = build_index(data, [(d.key, d.text) for d in corpus.docs[:n]], args.shards, 2)
        print(f"built the index: {info['seconds']}")
        built = f"built by this script: {info['seconds']['total']:.0f} s (not counted)"
    else:
        info = json.loads((data / "base-build.json").read_text())
        built = f"reused, built {info['date']} in {info['seconds']['total']:.0f} s"
    if args.build_only:
        return
    with Index.open(index_path) as idx:
        st = idx.stats()
    if st["documents"] != n:
        sys.exit(f"the index at {index_path} has {st['documents']} documents, expected {n}")

    qtext = make_query(corpus, n, args.query_words)
    qfile = data / "query-20-pages.txt"
    qfile.write_text(qtext, encoding="utf-8")
    qwords = len(qtext.split())

    cli = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "simdask.cli", "query", str(index_path), str(qfile)],
            capture_output=True,
            text=True,
            check=True,
        )
        cli.append(time.perf_counter() - t)
    rows_out = len(proc.stdout.splitlines()) - 2
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import simdask.cli"], check=True)
    import_s = time.perf_counter() - t

    probes = []
    for _ in range(args.repeat):
        out = subprocess.run(
            [sys.executable, "-c", _PROBE, str(index_path), str(qfile), str(args.warm)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        probes.append(json.loads(out))
    med = statistics.median
    second = med(p["second"] for p in probes)
    preload = med(p["preload"] for p in probes)
    cold = med(p["cold"] for p in probes)
    open_s = med(p["open"] for p in probes)
    query_s = med(p["query"] for p in probes)
    warm_all = [w for p in probes for w in p["warm"]]
    warm = med(warm_all)
    print(f"query: {qwords} words; index: {n} documents, {st['postings']:,} postings")
    print(f"CLI subprocess (cold, everything): {', '.join(f'{x:.2f}' for x in cli)} s")
    print(f"  of which `python -c 'import simdask.cli'` alone: {import_s:.2f} s")
    print(f"in-process cold (open + first query): median {cold * 1000:.0f} ms")
    print(f"  open {open_s * 1000:.0f} ms, first query {query_s * 1000:.0f} ms")
    print(f"second query, Index kept open: median {second * 1000:.0f} ms")
    print(f"preload: {preload:.2f} s, {probes[0]['preload_bytes'] / 2**30:.2f} GiB")
    print(
        f"warm query (after preload): median {warm * 1000:.1f} ms, max {max(warm_all) * 1000:.1f} ms"
    )
    print(
        f"matches >= 1 %: {probes[0]['matches']} (sharing a chunk: {probes[0]['sharing']}); "
        f"rows printed {rows_out}"
    )
    for m in probes[0]["top"]:
        print(f"  {m}")

    ok = (
        f"cold {'met' if cold < 1 else 'NOT met'}, warm {'met' if warm < 0.1 else 'NOT met'}"
        f" (load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    body = f"""Machine: {machine()}. Date: {today()}.
Index: {n:,} generated documents (synth, seed 7, ~1,000 words each), {st["words"] / 1e6:.1f} M
words, {st["postings"]:,} postings, {st["distinct_chunks"]:,} distinct chunks, hash_bits
{st["config"]["hash_bits"]}, {st["shards"]} shards, {st["bytes_on_disk"] / 2**30:.2f} GiB on disk
({built}). Query: one document of {qwords:,} words (about 20 pages), new text with
copied passages; {probes[0]["sharing"]:,} indexed documents share a chunk with it,
{probes[0]["matches"]:,} are >= 1 % similar either way (reported, as by the CLI's default).
Medians of {args.repeat} new processes; warm: {len(warm_all)} queries.

| measurement | seconds |
|---|---|
| `simdask query INDEX FILE` as a new process, all included | {med(cli):.3f} |
| of it: interpreter start + `import simdask.cli` | {import_s:.3f} |
| cold, in a new process: `Index.open` + first `Index.query` | **{cold:.3f}** |
| of it: `Index.open` | {open_s:.3f} |
| of it: first query | {query_s:.3f} |
| second query, `Index` kept open (reads the needed postings again) | {second:.3f} |
| `Index.preload()`: all shards into memory ({probes[0]["preload_bytes"] / 2**30:.2f} GiB) | {preload:.3f} |
| warm: a query after `preload()` | **{warm:.4f}** (max {max(warm_all):.4f}) |

Side by side: before this change the first query read its shards whole, i.e. about
`preload()` + a warm query = {preload + warm:.2f} s; reading only the needed postings is
{(preload + warm) / query_s:.1f}x faster for a cold query and keeps ~1 GiB less in memory.

Targets cold < 1 s, warm < 100 ms: {ok}.

Why cold stays above 1 s here: the query's ~10,000 chunk IDs fall all over every shard, so every
zarr chunk (1 Mi elements) of `chunk_keys` and `offsets` is decoded (zstd + delta), ~1.5-2 s of
CPU for ~0.9 GB of decoded arrays, spread over 2 threads; zarr's own per-chunk overhead
(~0.2-1 ms measured) rules out small chunks. Getting under 1 s needs a layout change, not done
here: `offsets` as uint32 (halves the largest array), and/or random-access structures for
queries (e.g. a rank bitmap over the ID space in place of `chunk_keys`, ~2 MB per shard at 28
bits, and uncompressed, memory-mapped `offsets`/`doc_ids`).
"""
    write_section(args.out, "Query (bench_query.py)", body)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
