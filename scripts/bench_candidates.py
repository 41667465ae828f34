"""The cost of the candidate partners (issue 29, item 1): one full build with them and one
without, side by side, on the same generated corpus, at each size; docs/scale.md.

The corpus is scripts/bench_scale.py's (generated prose of a word-bigram model, ~1,500 words a
document, JSONL files of 10,000 documents; the model trained on ``--train`` JSONL files when
missing, e.g. the PAN training corpus written as JSONL). Each build is ``Index.update`` in
this process with default settings (its own LocalCluster); "without" replaces the engine's
candidate stage by nothing for that build (this script only). Printed and written: wall
seconds and seconds per stage, the candidate stage's seconds, sorted-chunk and content
n-gram postings, catalog bytes, and this process's peak RSS after each build (the client
side, where the candidate stage runs).

    python scripts/bench_candidates.py --sizes 10000,100000 --train PAN.jsonl --data DIR
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import time
from pathlib import Path
from unittest import mock

from bench_scale import PER_FILE, corpus_files, get_model

import simdask.engine.run as engine_run
from simdask import Index, IndexConfig

from _benchutil import load_average, machine, today, write_section

REPO = Path(__file__).resolve().parent.parent


def _nothing(*args, **kwargs) -> None:
    """The candidate stage switched off (the "without" build)."""


def build(files: list[Path], path: Path, with_candidates: bool, extra: Path) -> dict:
    """One full build of ``files`` at ``path``, then an incremental run adding the documents
    of ``extra``; what they measured."""
    shutil.rmtree(path, ignore_errors=True)
    idx = Index.create(path, IndexConfig())
    load0 = load_average()
    t = time.perf_counter()
    if with_candidates:
        s = idx.update(files)
    else:
        with mock.patch.object(engine_run, "run_candidate_stage", _nothing):
            s = idx.update(files)
    wall = time.perf_counter() - t
    conn = idx.catalog.conn
    has = "SELECT count(*) FROM sqlite_master WHERE name = 'candidate_features'"
    q = "SELECT coalesce(sum(length(ids)), 0) FROM candidate_features"
    cand = conn.execute(q).fetchone()[0] // 4 if conn.execute(has).fetchone()[0] else 0
    out = {
        "with": with_candidates,
        "documents": s.added,
        "wall": wall,
        "seconds": s.seconds,
        "postings": idx.stats()["postings"],
        "candidate_postings": cand,
        "catalog_bytes": (path / "catalog.sqlite").stat().st_size,
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "load": f"{load0} before, {load_average()} after",
    }
    t = time.perf_counter()
    if with_candidates:
        s = idx.update([extra])
    else:
        with mock.patch.object(engine_run, "run_candidate_stage", _nothing):
            s = idx.update([extra])
    out["add_wall"] = time.perf_counter() - t
    out["add_seconds"] = s.seconds
    out["added"] = s.added
    idx.close()
    shutil.rmtree(path, ignore_errors=True)
    return out


def table(results: list[dict]) -> str:
    """Markdown: one row per build."""
    head = (
        "| documents | candidates | wall s | chunk s | merge s | similarity s | candidates s "
        "| commit s | sorted-chunk postings M | content n-gram postings M | catalog MB "
        "| peak RSS client GiB | add 1,000: wall s | add 1,000: candidates s |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for r in results:
        sec = r["seconds"]
        merge = sec.get("merge", sec.get("merge+similarity", 0.0))
        rows.append(
            f"| {r['documents']:,} | {'with' if r['with'] else 'without'} | {r['wall']:.1f} | "
            f"{sec.get('chunk', 0):.1f} | {merge:.1f} | {sec.get('similarity', 0):.1f} | "
            f"{sec.get('candidates', 0):.1f} | {sec.get('commit', 0):.1f} | "
            f"{r['postings'] / 1e6:.1f} | {r['candidate_postings'] / 1e6:.1f} | "
            f"{r['catalog_bytes'] / 1e6:.0f} | {r['peak_rss_gib']:.2f} | "
            f"{r['add_wall']:.1f} | {r['add_seconds'].get('candidates', 0):.1f} |"
        )
    return head + "\n".join(rows) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000")
    ap.add_argument("--data", default=str(REPO / "bench-data/scale"))
    ap.add_argument("--train", required=True, help="JSONL files to train the prose model on")
    ap.add_argument("--train-words", type=int, default=5_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    data = Path(args.data)
    model = get_model(data / "prose-model.npz", args.train.split(","), args.train_words)
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        files = corpus_files(model, data, n + PER_FILE, args.seed)
        extra = data / f"extra-{n}.jsonl"  # 1,000 documents the build does not hold
        with open(files[-1], encoding="utf-8") as src, open(extra, "w", encoding="utf-8") as f:
            f.writelines(line for _, line in zip(range(1000), src, strict=False))
        for with_candidates in (False, True):
            r = build(files[:-1], data / "bench-candidates-index", with_candidates, extra)
            results.append(r)
            print(json.dumps(r), flush=True)
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
