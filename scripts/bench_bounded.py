"""What a bounded build (issue 33, simdask/kernels/heavy_bounded.py) stores against the same
corpus built without the bound: rows kept and dropped, whether every kept value is the
unbounded build's, the similarity of the dropped rows, planted copies found, and the time of
both similarity stages.

The corpus is the phrase-rich generator's (simdask.ingest.phrases; ``--generator prose``: the
bigram model at ``--model``), ``--docs`` documents. Both builds use the defaults except
``light_floor`` and ``light_budget`` (0 and ``--light-budget`` for the bounded one, so that the
bound applies at this size: a 5,000-document corpus emits fewer than 4 pairs a posting) and,
for the reference, ``light_budget=None`` (the ``auto`` mode as before issue 33: ``exact`` on
such a small corpus, every pair counted over all chunks) or with ``--exact`` the ``exact`` mode
itself.

    python scripts/bench_bounded.py --docs 5000 --out bench-data/bounded-5000.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from simdask import Index, IndexConfig
from simdask.ingest.phrases import PhraseBank, iter_phrase_documents
from simdask.ingest.prose import ProseModel, iter_documents

from _benchutil import load_average, machine, today


def corpus(args, folder: Path) -> tuple[Path, set[tuple[str, str]]]:
    """The JSONL corpus and its planted (source, target) pairs."""
    truth: list = []
    if args.generator == "phrases":
        docs = iter_phrase_documents(PhraseBank.build(), args.docs, seed=args.seed, truth=truth)
    else:
        model = ProseModel.load(args.model)
        docs = iter_documents(model, args.docs, seed=args.seed, truth=truth)
    path = folder / "corpus.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({"id": d.key, "text": d.text}) + "\n")
    return path, {(r.source, r.target) for r in truth}


def build(folder: Path, name: str, files: list[Path], cfg: IndexConfig) -> dict:
    """One full build (``simdask update`` in its own process, its own LocalCluster, on an index
    created with ``cfg``); its rows ``{(doc key, other key): (shared, similarity)}`` and
    figures."""
    Index.create(folder / name, cfg).close()
    cmd = [sys.executable, "-m", "simdask.cli", "update", str(folder / name), *map(str, files)]
    t = time.perf_counter()
    subprocess.run([*cmd, "--quiet"], check=True)
    wall = time.perf_counter() - t
    idx = Index.open(folder / name)
    rows = {(r.doc, r.other): (r.shared, r.similarity) for r in idx.pairs()}
    heavy = idx.stats()["heavy"]
    seconds = idx.catalog.last_run()["summary"].get("seconds", {})
    idx.close()
    return {
        "rows": rows,
        "wall": wall,
        "similarity_s": seconds.get("similarity"),
        "heavy": {k: heavy.get(k) for k in ("mode", "cutoff", "bounded", "pair_work_light")},
    }


def compare(ref: dict, bounded: dict, planted: set) -> dict:
    """The figures of the comparison."""
    a, b = ref["rows"], bounded["rows"]
    common = set(a) & set(b)
    dropped = np.array(sorted(a[k][1] for k in set(a) - set(b)))
    pairs = {frozenset(k) for k in b}
    ref_pairs = {frozenset(k) for k in a}
    found = sum(frozenset(p) in pairs for p in planted)
    q = [50, 90, 99, 100]
    return {
        "rows_reference": len(a),
        "rows_bounded": len(b),
        "rows_common": len(common),
        "common_equal_values": sum(a[k] == b[k] for k in common),
        "rows_only_bounded": len(set(b) - set(a)),
        "dropped_similarity_percentiles": dict(
            zip(map(str, q), np.percentile(dropped, q).round(2).tolist(), strict=True)
        )
        if len(dropped)
        else {},
        "planted": len(planted),
        "planted_found_bounded": found,
        "planted_found_reference": sum(frozenset(p) in ref_pairs for p in planted),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--generator", choices=("phrases", "prose"), default="phrases")
    ap.add_argument("--model", default="bench-data/scale/prose-model.npz")
    ap.add_argument("--exact", action="store_true", help="reference in the exact mode")
    ap.add_argument(
        "--light-budget", type=int, default=1, help="of the bounded build (small corpora: < 4)"
    )
    ap.add_argument("--out", default=None, help="write the figures as JSON here")
    args = ap.parse_args()
    load = load_average()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path, planted = corpus(args, folder)
        base = (
            IndexConfig(similarity_mode="exact") if args.exact else IndexConfig(light_budget=None)
        )
        ref = build(folder, "reference", [path], base)
        bounded_cfg = IndexConfig(light_floor=0, light_budget=args.light_budget)
        bounded = build(folder, "bounded", [path], bounded_cfg)
    res = {
        "docs": args.docs,
        "generator": args.generator,
        "reference_mode": "exact" if args.exact else "auto, light_budget=None",
        "bounded_light_budget": args.light_budget,
        **compare(ref, bounded, planted),
        "reference": {k: v for k, v in ref.items() if k != "rows"},
        "bounded": {k: v for k, v in bounded.items() if k != "rows"},
        "machine": machine(),
        "date": today(),
        "load_before": load,
        "load_after": load_average(),
    }
    print(json.dumps(res, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
