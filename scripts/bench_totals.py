"""The cost of the aligned totals (issue 29 item 2) on generated indexes.

Per size N: a generated corpus (:func:`simdask.ingest.synth.generate_corpus`, 10 % of the
documents with planted reuse) of N + ``--add`` documents; the first N are built into an index
without totals (the default build: alignment is not part of it); then

- ``totals --compute`` (:meth:`Index.compute_totals`, top ``--top`` candidates each) on a
  LocalCluster of ``--workers`` worker processes, its seconds and the peak RSS of the
  largest process (driver or worker) and of all together;
- adding the last ``--add`` documents in one incremental run: every document is tracked
  after ``--compute``, so the run aligns the new documents' candidate pairs (and those of
  the old documents whose candidates they change) inside its commit; its seconds by stage;
- the aligner's cost per pair, in this process, on ``--pair-sample`` candidate pairs of the
  index and as many random pairs (which share nothing but common words).

Writes the section "Aligned totals" of docs/scale.md (machine and date) with ``--write``.

    python scripts/bench_totals.py --data /tmp/totals-bench --sizes 10000 --write
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path

from distributed import Client, LocalCluster

from simdask import Index, RunOptions
from simdask.alignment import align
from simdask.ingest.synth import generate_corpus

from _benchutil import PeakRSS, load_average, machine, today, write_section

REPO = Path(__file__).resolve().parent.parent
PER_FILE = 10_000


def write_jsonl(docs, folder: Path, name: str) -> list[Path]:
    """Documents as JSONL files of at most ``PER_FILE`` lines each."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(0, len(docs), PER_FILE):
        p = folder / f"{name}-{i // PER_FILE:03d}.jsonl"
        with open(p, "w", encoding="utf-8") as f:
            for d in docs[i : i + PER_FILE]:
                f.write(json.dumps({"id": d.key, "text": d.text}) + "\n")
        paths.append(p)
    return paths


def pair_costs(idx: Index, sample: int, seed: int = 1) -> dict[str, float]:
    """Mean ms per pair of ``align`` on stored candidate pairs and on random pairs."""
    conn = idx.catalog.conn
    rows = conn.execute("SELECT a, b FROM aligned_pairs").fetchall()
    keys = dict(conn.execute("SELECT doc_id, key FROM documents"))
    rng = random.Random(seed)
    cand = rng.sample(rows, min(sample, len(rows)))
    ids = list(keys)
    rand = [tuple(rng.sample(ids, 2)) for _ in range(sample)]
    out = {}
    for name, pairs in (("candidate", cand), ("random", rand)):
        texts = [(idx.text(keys[a]), idx.text(keys[b])) for a, b in pairs]
        t = time.perf_counter()
        found = sum(len(align(x, y)) > 0 for x, y in texts)
        out[f"{name}_ms"] = 1000 * (time.perf_counter() - t) / max(1, len(texts))
        out[f"{name}_with_passages"] = found / max(1, len(texts))
    return out


def measure(n: int, add: int, top: int, workers: int, data: Path, sample: int) -> dict:
    """One size: build, ``--compute``, an incremental run of ``add`` documents, pair costs."""
    corpus = generate_corpus(n + add, mean_words=800, reuse_fraction=0.1, seed=29)
    base = write_jsonl(corpus.docs[:n], data / f"src-{n}", "base")
    new = write_jsonl(corpus.docs[n:], data / f"new-{n}", "new")
    path = data / f"index-{n}"
    shutil.rmtree(path, ignore_errors=True)
    out: dict = {"n": n, "add": add, "top": top, "load_before": load_average()}
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True)
    with cluster as cl, Client(cl) as client:
        idx = Index.create(path)
        t = time.perf_counter()
        idx.update(base, client=client, options=RunOptions(totals="off"))
        out["build_s"] = time.perf_counter() - t
        with PeakRSS() as rss:
            t = time.perf_counter()
            got = idx.compute_totals(client=client, top=top)
            out["compute_s"] = time.perf_counter() - t
        out.update(
            compute=got, compute_peak_single=rss.peak_single, compute_peak_total=rss.peak_total
        )
        with PeakRSS() as rss:
            t = time.perf_counter()
            s = idx.update(new, client=client)
            out["add_s"] = time.perf_counter() - t
        out["add_stages"] = {k: round(v, 2) for k, v in s.seconds.items()}
        out["add_peak_single"] = rss.peak_single
        out["tracked"] = len(idx.totals())
        out["documents"] = idx.stats()["documents"]
    out.update(pair_costs(idx, sample))
    out["load_after"] = load_average()
    return out


def _section(results: list[dict], workers: int) -> str:
    gib = 1 << 30
    lines = [
        f"`scripts/bench_totals.py`, {machine()}, {today()}; {workers} worker processes of "
        "one thread; generated text (`synth.generate_corpus`, ~800 words a document, 10 % "
        "with planted reuse). The build itself is without totals (alignment is not part of "
        "it); `totals --compute` aligns every document's top candidates; then one run adds "
        "new documents, every document being tracked, so the run aligns their candidate "
        "pairs inside its commit.",
        "",
        "| documents | `totals --compute`: pairs aligned | seconds | peak RSS, largest process"
        " / all | + new documents: seconds (commit incl. alignment) | aligner ms/pair "
        "(candidate / random) | load before → after |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['n']:,} | {r['compute']['aligned']:,} of {r['compute']['pairs']:,} | "
            f"{r['compute_s']:.0f} | {r['compute_peak_single'] / gib:.2f} / "
            f"{r['compute_peak_total'] / gib:.2f} GiB | +{r['add']:,}: {r['add_s']:.1f} s "
            f"({r['add_stages'].get('commit', 0):.1f}) | {r['candidate_ms']:.1f} / "
            f"{r['random_ms']:.1f} | {r['load_before']} → {r['load_after']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--sizes", default="10000")
    p.add_argument("--add", type=int, default=1000)
    p.add_argument("--top", type=int, default=5)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--pair-sample", type=int, default=200)
    p.add_argument("--write", action="store_true", help="write the section of docs/scale.md")
    args = p.parse_args()
    results = []
    for n in (int(x) for x in args.sizes.split(",")):
        r = measure(n, args.add, args.top, args.workers, args.data, args.pair_sample)
        print(json.dumps(r, indent=1), flush=True)
        results.append(r)
    if args.write:
        write_section(REPO / "docs/scale.md", "Aligned totals", _section(results, args.workers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
