"""The cost of the candidate partners (issue 29, item 1): one full build with them and one
without, side by side, on the same generated corpus, at each size; docs/scale.md.

The corpus is scripts/bench_scale.py's (generated prose of a word-bigram model, ~1,500 words a
document, JSONL files of 10,000 documents; the model trained on ``--train`` JSONL files when
missing, e.g. the PAN training corpus written as JSONL). Each build is ``Index.update`` in
this process (its own LocalCluster) with ``candidates`` on or off, then an incremental run
adding 1,000 documents the build does not hold. Printed and written: wall seconds and seconds
per stage, the CPU seconds of every process (this one and the Dask workers, sampled), the
candidate stage's wall seconds, sorted-chunk and content n-gram postings, the bytes of the
content n-gram segments, and the peak RSS of all processes together and of the largest one.

    python scripts/bench_candidates.py --sizes 10000,100000 --train PAN.jsonl --data DIR
"""

from __future__ import annotations

import argparse
import json
import shutil
import threading
import time
from pathlib import Path

import psutil
from bench_scale import PER_FILE, corpus_files, get_model

from simdask import Index, IndexConfig
from simdask.storage.candidate_store import candidate_store, stored_segments

from _benchutil import PeakRSS, load_average, machine, today, write_section

REPO = Path(__file__).resolve().parent.parent


class CpuSeconds:
    """CPU seconds (user + system) of this process and all its children, the children's
    sampled in a thread (a worker's last sample counts once it is gone)."""

    def __init__(self, interval: float = 0.2):
        self.interval = interval
        self.seen: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._me = psutil.Process()
        self._start = 0.0

    def _sample(self) -> None:
        for p in self._me.children(recursive=True):
            try:
                t = p.cpu_times()
            except psutil.Error:
                continue
            self.seen[p.pid] = max(self.seen.get(p.pid, 0.0), t.user + t.system)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            time.sleep(self.interval)

    def _own(self) -> float:
        t = self._me.cpu_times()
        return t.user + t.system

    def __enter__(self) -> CpuSeconds:
        self._start = self._own()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.client = self._own() - self._start
        self.total = self.client + sum(self.seen.values())


def _timed(idx: Index, files: list[Path]) -> dict:
    """One ``update``: wall, CPU and peak RSS of all processes, its per-stage seconds."""
    load0 = load_average()
    with PeakRSS(0.2) as rss, CpuSeconds() as cpu:
        t = time.perf_counter()
        s = idx.update(files)
        wall = time.perf_counter() - t
    return {
        "documents": s.added,
        "wall": wall,
        "cpu": cpu.total,
        "cpu_client": cpu.client,
        "seconds": s.seconds,
        "peak_rss_gib": rss.peak_total / 2**30,
        "peak_rss_single_gib": rss.peak_single / 2**30,
        "load": f"{load0} before, {load_average()} after",
    }


def build(files: list[Path], path: Path, with_candidates: bool, extra: Path) -> dict:
    """One full build of ``files`` at ``path``, then an incremental run adding the documents
    of ``extra``; what they measured."""
    shutil.rmtree(path, ignore_errors=True)
    idx = Index.create(path, IndexConfig(candidates=with_candidates))
    out = {"with": with_candidates, **_timed(idx, files)}
    out["postings"] = idx.stats()["postings"]
    store = candidate_store(path)
    segs = stored_segments(idx.catalog) or {}
    out["candidate_postings"] = sum(store.counts(g, r)[1] for r, g in segs.items())
    out["candidate_bytes"] = sum(store.shard_nbytes(g, r) for r, g in segs.items())
    out["catalog_bytes"] = (path / "catalog.sqlite").stat().st_size
    add = _timed(idx, [extra])
    out.update({f"add_{k}": v for k, v in add.items() if k != "documents"})
    out["added"] = add["documents"]
    idx.close()
    shutil.rmtree(path, ignore_errors=True)
    return out


def table(results: list[dict]) -> str:
    """Markdown: one row per build."""
    head = (
        "| documents | candidates | wall s | CPU s (all processes) | chunk s | merge s "
        "| similarity s | candidates s | commit s | sorted-chunk postings M "
        "| content n-gram postings M | content n-gram MB | peak RSS all / largest GiB "
        "| add 1,000: wall s | add 1,000: CPU s | add 1,000: candidates s |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for r in results:
        sec = r["seconds"]
        merge = sec.get("merge", sec.get("merge+similarity", 0.0))
        rows.append(
            f"| {r['documents']:,} | {'with' if r['with'] else 'without'} | {r['wall']:.1f} | "
            f"{r['cpu']:.1f} | {sec.get('chunk', 0):.1f} | {merge:.1f} | "
            f"{sec.get('similarity', 0):.1f} | {sec.get('candidates', 0):.1f} | "
            f"{sec.get('commit', 0):.1f} | {r['postings'] / 1e6:.1f} | "
            f"{r['candidate_postings'] / 1e6:.1f} | {r['candidate_bytes'] / 1e6:.0f} | "
            f"{r['peak_rss_gib']:.2f} / {r['peak_rss_single_gib']:.2f} | "
            f"{r['add_wall']:.1f} | {r['add_cpu']:.1f} | "
            f"{r['add_seconds'].get('candidates', 0):.1f} |"
        )
    return head + "\n".join(rows) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000")
    ap.add_argument("--data", default=str(REPO / "bench-data/scale"))
    ap.add_argument("--train", default="", help="JSONL files to train the prose model on")
    ap.add_argument("--only", choices=["with", "without"], default=None)
    ap.add_argument("--train-words", type=int, default=5_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    data = Path(args.data)
    out = data / "bench-candidates.jsonl"
    model = get_model(data / "prose-model.npz", args.train.split(","), args.train_words)
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        files = corpus_files(model, data, n + PER_FILE, args.seed)
        extra = data / f"extra-{n}.jsonl"  # 1,000 documents the build does not hold
        with open(files[-1], encoding="utf-8") as src, open(extra, "w", encoding="utf-8") as f:
            f.writelines(line for _, line in zip(range(1000), src, strict=False))
        for with_candidates in (False, True):
            if args.only and args.only != ("with" if with_candidates else "without"):
                continue
            r = build(files[:-1], data / "bench-candidates-index", with_candidates, extra)
            results.append(r)
            print(json.dumps(r), flush=True)
            with open(out, "a", encoding="utf-8") as f:
                f.write(json.dumps({**r, "machine": machine(), "date": today()}) + "\n")
    text = table(results)
    print(text)
    if args.write_docs:
        stamp = f"Machine: {machine()}. Date: {today()}."
        write_section(
            REPO / "docs" / "scale.md",
            "Candidate partners: build cost with and without (bench_candidates.py)",
            text + "\n" + stamp,
        )


if __name__ == "__main__":
    main()
