"""CPU split of one chunking task (issue 13, docs/scale.md "Chunk stage throughput").

Runs the steps of :func:`simdask.engine.chunk_stage.chunk_task` in this process on one batch
(the first ``--docs`` lines of a JSONL file), each timed in CPU seconds (``time.process_time``,
best of ``--repeat``: the machine is shared): reading and parsing the lines, words + chunk IDs +
the sorted distinct (chunk, doc) pairs, pair keys split by shard, the bucket files, the text
pack. Prints one line per checkout; with ``--checkouts A,B`` each checkout runs in its own
interpreter (``PYTHONPATH``), alternating, ``--rounds`` times:

    python scripts/bench_chunk_task.py /work/data/chunkfast/prose2k.jsonl \\
        --checkouts /work/wt/chunkfast,/work/main --rounds 2
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

from _benchutil import banner


def measure(path: str, docs: int, repeat: int) -> str:
    """One line: documents, words and the best CPU seconds of each step."""
    import numpy as np

    from simdask.config import IndexConfig
    from simdask.engine import chunk_stage as cs
    from simdask.ingest.sources import KnownHashes, list_items
    from simdask.kernels.exclusions import chunk_excluding
    from simdask.kernels.postings import pack_pairs, split_sorted_by_shard
    from simdask.storage.text_packs import TextStore

    items = list_items([path])[:docs]
    cfg, known = IndexConfig(shards=16), KnownHashes({})
    tmp = tempfile.mkdtemp()
    best: dict[str, float] = {}
    try:
        for r in range(repeat):
            t: dict[str, float] = {}
            c = time.process_time()
            res, texts = cs._read_batch(items, 0, known, None, None)
            t["read+parse"] = time.process_time() - c
            c = time.process_time()
            cb = chunk_excluding(texts, cfg.k, cfg.hash_bits, cfg.seed, None)
            t["words+IDs+sort"] = time.process_time() - c
            c = time.process_time()
            ids = np.asarray(res.prov_ids, dtype=np.uint32)
            keys = pack_pairs(cb.chunk_ids, ids[cb.doc])
            parts = split_sorted_by_shard(keys, cfg.shard_width, cfg.shards)
            t["pairs+split"] = time.process_time() - c
            c = time.process_time()
            for s, part in enumerate(parts):
                cs._save_atomic(cs.bucket_path(tmp, s, r), part)
            t["bucket files"] = time.process_time() - c
            c = time.process_time()
            TextStore(os.path.join(tmp, "texts")).write_pack(f"r{r:06d}-b000000.pack", texts)
            t["text pack"] = time.process_time() - c
            for k, v in t.items():
                best[k] = min(best.get(k, float("inf")), v)
    finally:
        shutil.rmtree(tmp)
    words = int(cb.n_words.sum())
    total = sum(best.values())
    steps = ", ".join(f"{k} {v:.3f}" for k, v in best.items())
    return (
        f"{len(items)} docs, {words / 1e6:.2f} M words: {steps}; total {total:.3f} CPU s = "
        f"{words / total / 1e6:.2f} M words/s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("jsonl")
    ap.add_argument("--docs", type=int, default=2000, help="lines of the file in the batch")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (best kept)")
    ap.add_argument("--checkouts", help="comma-separated checkouts to compare (PYTHONPATH)")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    print(banner(), flush=True)
    if not a.checkouts:
        print(measure(a.jsonl, a.docs, a.repeat), flush=True)
        return
    for rnd in range(a.rounds):
        for co in a.checkouts.split(","):
            cmd = [sys.executable, __file__, a.jsonl, "--docs", str(a.docs)]
            cmd += ["--repeat", str(a.repeat)]
            env = {**os.environ, "PYTHONPATH": co}
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            load = os.getloadavg()[0]
            print(f"round {rnd + 1} {co} (load {load:.1f}): {out.stdout.strip()}", flush=True)


if __name__ == "__main__":
    main()
