"""Full-run benchmark (issue 2): simdask vs the exact scipy baseline vs datasketch MinHash LSH.

On one generated corpus (default 20,000 documents x ~1,000 words), in the same run:

1. simdask end to end on a LocalCluster (worker processes): per stage seconds, docs/s, words/s,
   peak RSS (driver + workers), index bytes;
2. chunking (tokenize + hash) on one core in this process: words/s;
3. baseline (a): tokenize, 5-word sorted chunks as strings, a scipy.sparse binary
   document x chunk matrix and A @ A.T, pairs >= 1 % either way;
4. baseline (b): datasketch MinHash (128 permutations) over the same chunks + MinHashLSH
   (threshold 0.5): insert every document, query every document;
5. quality: of the directed pairs whose exact containment is >= 50 %, the share simdask and
   datasketch find, and simdask's largest error against the exact value.

Writes the section "Pipeline (bench_pipeline.py)" of docs/benchmarks.md.

    python scripts/bench_pipeline.py --docs 20000 --words 1000
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import time
from pathlib import Path

import numpy as np

from simdask import Index, IndexConfig
from simdask.cluster.connect import connect
from simdask.ingest.synth import generate_corpus, write_corpus
from simdask.kernels.hashing import chunk_batch

from _benchutil import PeakRSS, machine, today, write_section


def scipy_baseline(texts: list[str]):
    """Exact all-pairs with scipy.sparse; returns timings, {(i, j): percent >= 1}, the chunk
    sets and the shared-count matrix A @ A.T (CSR, for exact values below 1 %)."""
    import scipy.sparse as sp

    t = {}
    t0 = time.perf_counter()
    vocab: dict[str, int] = {}
    indptr, indices, sets = [0], [], []
    for text in texts:
        ws = re.findall(r"\w+", text.lower())
        chunks = {" ".join(sorted(ws[i : i + 5])) for i in range(len(ws) - 4)}
        sets.append(chunks)
        indices.extend(vocab.setdefault(c, len(vocab)) for c in chunks)
        indptr.append(len(indices))
    t["tokenize + chunk + ids"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    a = sp.csr_matrix(
        (np.ones(len(indices), np.int32), np.array(indices), np.array(indptr)),
        shape=(len(texts), len(vocab)),
    )
    shared = a @ a.T
    prod = shared.tocoo()
    t["A @ A.T"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    sizes = np.diff(a.indptr)
    off = prod.row != prod.col
    r, c, s = prod.row[off], prod.col[off], prod.data[off]
    pct = 100.0 * s / sizes[r]
    keep = pct >= 1.0
    rows = zip(r[keep].tolist(), c[keep].tolist(), strict=True)
    pairs = dict(zip(rows, pct[keep].tolist(), strict=True))
    t["pairs >= 1 %"] = time.perf_counter() - t2
    t["total"] = time.perf_counter() - t0
    return t, pairs, sets, shared.tocsr()


def datasketch_baseline(texts: list[str]) -> tuple[dict, set]:
    """Its own shingling (sorted 5-word chunks), MinHash (128 permutations) with
    ``update_batch``, MinHashLSH(threshold=0.5); returns timings and candidate pairs."""
    from datasketch import MinHash, MinHashLSH

    t = {}
    t0 = time.perf_counter()
    encoded = []
    for text in texts:
        ws = re.findall(r"\w+", text.lower())
        encoded.append(list({" ".join(sorted(ws[i : i + 5])).encode() for i in range(len(ws) - 4)}))
    t["shingling"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    hashes = []
    for enc in encoded:
        m = MinHash(num_perm=128)
        m.update_batch(enc)
        hashes.append(m)
    t["MinHash"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    for i, m in enumerate(hashes):
        lsh.insert(i, m)
    t["LSH insert"] = time.perf_counter() - t2
    t3 = time.perf_counter()
    cand = set()
    for i, m in enumerate(hashes):
        cand.update((i, j) for j in lsh.query(m) if j != i)
    t["query"] = time.perf_counter() - t3
    t["total"] = time.perf_counter() - t0
    return t, cand


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--docs", type=int, default=20_000)
    ap.add_argument("--words", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--shards", type=int, default=16)
    ap.add_argument("--data", default="bench-data/pipeline")
    ap.add_argument("--out", default="docs/benchmarks.md")
    ap.add_argument("--skip-datasketch", action="store_true")
    args = ap.parse_args()

    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    corpus = generate_corpus(args.docs, mean_words=args.words, seed=1)
    src = write_corpus(corpus, data / "corpus.jsonl", fmt="jsonl")
    texts = [d.text for d in corpus.docs]
    n_words = sum(len(t.split()) for t in texts)
    mb = src.stat().st_size / 1e6
    print(f"corpus: {len(texts)} documents, {n_words / 1e6:.1f} M words, {mb:.0f} MB")

    # 1. simdask end to end (the LocalCluster simdask itself starts), then at hash_bits=32
    t = time.perf_counter()
    with connect(workers=args.workers, dashboard_address=":0") as client:
        start_s = time.perf_counter() - t
        shutil.rmtree(data / "index", ignore_errors=True)
        idx = Index.create(data / "index", IndexConfig(shards=args.shards))
        with PeakRSS() as rss:
            s = idx.update([src], client=client)
        shutil.rmtree(data / "index32", ignore_errors=True)
        idx32 = Index.create(data / "index32", IndexConfig(shards=args.shards, hash_bits=32))
        s32 = idx32.update([src], client=client)
    key_id = {d.key: i for i, d in enumerate(corpus.docs)}
    ours = {(key_id[r.doc], key_id[r.other]): r.similarity for r in idx.pairs()}
    ours32 = {(key_id[r.doc], key_id[r.other]): r.similarity for r in idx32.pairs()}
    total = s.seconds["total"]
    print(
        f"simdask: {s.seconds} (cluster start {start_s:.1f} s), peak RSS {rss.peak_total / 2**30:.2f} GiB"
    )

    # 2. chunking on one core
    t = time.perf_counter()
    for i in range(0, len(texts), 2000):
        chunk_batch(texts[i : i + 2000])
    chunk_rate = n_words / (time.perf_counter() - t)
    print(f"chunking on one core: {chunk_rate / 1e6:.2f} M words/s")

    # 3. scipy
    with PeakRSS() as rss_scipy:
        ts, exact, sets, shared_matrix = scipy_baseline(texts)
    print(f"scipy: {ts}")

    # 4. datasketch
    td, cand = ({}, set()) if args.skip_datasketch else datasketch_baseline(texts)
    if td:
        print(f"datasketch: {td}")

    # 5. quality
    sizes = [len(x) for x in sets]
    strong = {p for p, v in exact.items() if v >= 50.0 and sizes[p[0]] > 0}
    found = sum(1 for p in strong if p in ours) / max(1, len(strong))
    lsh_found = sum(1 for p in strong if p in cand) / max(1, len(strong)) if td else float("nan")

    def error_stats(stored: dict) -> dict:
        """Differences between stored (hashed) and exact similarity, in percentage points."""
        err = {
            p: abs(v - 100.0 * shared_matrix[p[0], p[1]] / sizes[p[0]]) for p, v in stored.items()
        }
        vals = list(err.values()) or [0.0]
        return {
            "pairs": len(stored),
            "max": max(vals),
            "p99": float(np.percentile(vals, 99)),
            "max_long": max((e for p, e in err.items() if sizes[p[0]] >= 200), default=0.0),
            "over_1": sum(1 for e in vals if e > 1.0),
            "over_1_long": sum(1 for p, e in err.items() if e > 1.0 and sizes[p[0]] >= 200),
            "found": sum(1 for p in strong if p in stored) / max(1, len(strong)),
        }

    e28, e32 = error_stats(ours), error_stats(ours32)
    max_err = e28["max"]
    # exact pairs >= 2 % that are not stored: each must be cut by its document's full top-k
    lists: dict[int, list[float]] = {}
    for (d, _), v in ours.items():
        lists.setdefault(d, []).append(v)
    missing = [p for p, v in exact.items() if v >= 2.0 and p not in ours]
    k = idx.config.top_k
    unexplained = [
        p
        for p in missing
        if not (len(lists.get(p[0], [])) >= k and min(lists[p[0]]) >= exact[p] - 1.0)
    ]
    n_distinct = len(set().union(*sets))
    fill = n_distinct / 2**28
    print(
        f"pairs with containment >= 50 %: {len(strong)}; simdask found {found:.1%}, "
        f"datasketch {lsh_found:.1%}; error at 28 bits {e28}, at 32 bits {e32}; "
        f"exact >= 2 % not stored: {len(missing)}, not explained by top-k: {len(unexplained)}"
    )

    stage_rows = "\n".join(
        f"| {k} | {v:.2f} | {len(texts) / v:,.0f} | {n_words / v / 1e6:.2f} |"
        for k, v in s.seconds.items()
        if v > 0 and k != "total"
    )
    ds_line = (
        f"| datasketch MinHash + LSH | {td['total']:.1f} | "
        + ", ".join(f"{k} {v:.1f}" for k, v in td.items() if k != "total")
        + f" | {total / td['total']:.2f} |"
        if td
        else "| datasketch | skipped | | |"
    )
    body = f"""Machine: {machine()}. Date: {today()}.
Corpus: {len(texts):,} generated documents (synth, seed 1, Zipf vocabulary of 200k words,
5 % with planted reuse), {n_words / 1e6:.1f} M words, {mb:.0f} MB of JSONL.
simdask: hash_bits {IndexConfig().hash_bits} (the default), {args.shards} shards, LocalCluster of {args.workers} worker processes
(1 thread each; cluster start {start_s:.1f} s, not counted).

### simdask, per stage

| stage | seconds | docs/s | M words/s |
|---|---|---|---|
{stage_rows}
| **total** | **{total:.2f}** | {len(texts) / total:,.0f} | {n_words / total / 1e6:.2f} |

Peak RSS, driver + workers: {rss.peak_total / 2**30:.2f} GiB (largest process
{rss.peak_single / 2**30:.2f} GiB). Index on disk: {s.index_bytes / 1e6:.0f} MB (shards, catalog,
compressed texts). Similarity rows stored: {s.similarity_rows:,}; candidate pair counts
emitted: {s.extra.get("candidate_pair_counts", 0):,} in {s.extra.get("blocks", 0)} block(s).

Chunking (read text -> words -> chunk IDs, distinct per document) on one core in-process:
**{chunk_rate / 1e6:.2f} M words/s** (target >= 3).

### Side by side (same corpus, same run)

| method | seconds | parts | simdask / method |
|---|---|---|---|
| simdask (all stages) | {total:.1f} | {", ".join(f"{k} {v:.1f}" for k, v in s.seconds.items() if k != "total")} | 1.00 |
| scipy.sparse A·Aᵀ, exact | {ts["total"]:.1f} | {", ".join(f"{k} {v:.1f}" for k, v in ts.items() if k != "total")} | {total / ts["total"]:.2f} |
{ds_line}

scipy peak RSS (this process): {rss_scipy.peak_total / 2**30:.2f} GiB.

### Quality

Directed pairs whose exact containment (shared / |A| on string chunks) is >= 50 %:
{len(strong):,}. simdask stored **{found:.1%}** of them; datasketch's LSH returned
{lsh_found:.1%} as candidates.

Hashing error: difference between simdask's similarity and the exact one (string chunks),
in percentage points, over all stored directed pairs; "long" = documents of >= 200 chunks.

| hash_bits | seconds | stored pairs | max | 99th pct | max, long docs | pairs > 1 point (long docs) | >= 50 % pairs found |
|---|---|---|---|---|---|---|---|
| 28 | {total:.1f} | {e28["pairs"]:,} | {e28["max"]:.2f} | {e28["p99"]:.2f} | {e28["max_long"]:.2f} | {e28["over_1"]} ({e28["over_1_long"]}) | {e28["found"]:.1%} |
| 32 | {s32.seconds["total"]:.1f} | {e32["pairs"]:,} | {e32["max"]:.2f} | {e32["p99"]:.2f} | {e32["max_long"]:.2f} | {e32["over_1"]} ({e32["over_1_long"]}) | {e32["found"]:.1%} |

The error is spurious shared chunks: a chunk whose ID equals that of an unrelated chunk held
by another document, worth 100 / |A| points each. The corpus has {n_distinct:,} distinct chunks,
filling {fill:.1%} of the 2^28 ID space ({n_distinct / 2**32:.2%} of 2^32). For documents of
>= 200 chunks the largest error is {e28["max_long"]:.2f} points at 28 bits
({"within" if e28["max_long"] <= 1 else "beyond"} DESIGN's 1-point bound); errors above 1 point
occur only for short documents, where a single colliding chunk is worth more than 1 %.
32 bits makes a collision 2^4 = 16 times less likely per chunk but cannot rule them out.

Exact pairs >= 2 % not in simdask's table: {len(missing)}; all but {len(unexplained)} of them
belong to documents whose list is full (top_k = {k}) with better matches.
"""
    write_section(args.out, "Pipeline (bench_pipeline.py)", body)
    (data / "result.json").write_text(
        json.dumps(
            {
                "simdask": s.seconds,
                "scipy": ts,
                "datasketch": td,
                "chunk_words_per_s": chunk_rate,
                "found": found,
                "lsh_found": lsh_found,
                "max_err": max_err,
            },
            indent=1,
        )
    )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
