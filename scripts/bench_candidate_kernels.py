"""CPU seconds of the candidate partners' kernels in one process, stage by stage (issue 29;
docs/scale.md, "Candidate partners per range"): the first ``--docs`` documents of a JSONL
file (e.g. a part of scripts/bench_scale.py's corpus) featurised in batches of 1,000 and split
by range (``cfeat``), each range merged from nothing (``cmerge``), every document scored in
blocks of 2**24 partner entries over all ranges (``cscore``, normalised by the weight masses
when the default config normalises; ``rows_sha256``: a digest of every row, to check that two
checkouts give the same lists: run it with ``PYTHONPATH`` set to each). CPU seconds (process
time) do not depend on the machine's load; also printed: postings, partner entries, CPU ns an
entry, CPU ms a document featurised. Also prints the work volume at ``max_df`` 50, 20 and 10.

    python scripts/bench_candidate_kernels.py --corpus part-00000.jsonl --docs 2500
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time

import numpy as np

from simdask.kernels.candidate_ranges import (
    block_entries,
    block_top,
    mass_vector,
    merge_range,
    range_mass,
    split_by_range,
)
from simdask.kernels.candidate_scores import CandidateConfig
from simdask.kernels.content_ngrams import CONTENT_NGRAM
from simdask.kernels.postings import ShardData, shard_ranges

from _benchutil import banner

RANGES = 16
BLOCK = 1 << 24


def texts_of(path: str, n: int) -> list[str]:
    """The first ``n`` texts of a JSONL file of ``{"id", "text"}`` lines."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if len(out) >= n:
                break
            out.append(json.loads(line)["text"])
    return out


def measure(texts: list[str], cfg: CandidateConfig) -> dict:
    """CPU seconds of each kernel stage over ``texts`` and the work they did."""
    n, cpu = len(texts), time.process_time
    t = cpu()
    parts = []
    for i in range(0, n, 1000):
        cb = CONTENT_NGRAM.chunk(texts[i : i + 1000], cfg.ngram, cfg.hash_bits, cfg.seed)
        docs = (cb.doc + i).astype(np.uint32)
        parts.append(split_by_range(cb.chunk_ids, docs, cfg.hash_bits, RANGES))
    feat = cpu() - t
    t = cpu()
    ranges, masses = [], []
    none = np.zeros(0, np.uint32)
    for r, (lo, hi) in enumerate(shard_ranges(cfg.hash_bits, RANGES)):
        ids = np.concatenate([p[r][0] for p in parts])
        d = np.concatenate([p[r][1] for p in parts])
        ranges.append(merge_range(ShardData.empty(lo, hi), ids, d, none, cfg.max_df))
        masses.append(range_mass(ranges[-1].data, cfg.max_df))
    merge = cpu() - t
    entries = sum(m.entries for m in ranges)
    t = cpu()
    mass = mass_vector(masses) if cfg.normalise else None
    rows, digest = 0, hashlib.sha256()
    targets = np.arange(n, dtype=np.uint32)
    for blk in np.array_split(targets, max(1, int(np.ceil(entries / BLOCK)))):
        parts = [block_entries(m.data, blk, cfg.max_df) for m in ranges]
        got = block_top(parts, blk, cfg.depth, mass)
        rows += len(got[0])
        for col in got:
            digest.update(np.ascontiguousarray(col, np.int64).tobytes())
    score = cpu() - t
    df = np.concatenate([np.diff(m.data.offsets.astype(np.int64)) for m in ranges])
    volume = {
        f"entries_max_df_{x}": int(
            np.sum(df[(df >= 2) & (df <= x)] * (df[(df >= 2) & (df <= x)] - 1))
        )
        for x in (50, 20, 10)
    }
    return {
        "docs": n,
        "featurise_cpu_s": round(feat, 2),
        "merge_cpu_s": round(merge, 2),
        "score_cpu_s": round(score, 2),
        "postings": int(sum(m.data.n_postings for m in ranges)),
        "entries": entries,
        "rows": rows,
        "rows_sha256": digest.hexdigest()[:16],
        "score_ns_per_entry": round(score / max(entries, 1) * 1e9, 1),
        "featurise_ms_per_doc": round(feat / n * 1e3, 3),
        **volume,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="a JSONL file of {id, text} lines")
    ap.add_argument("--docs", default="2500", help="comma-separated sizes")
    args = ap.parse_args()
    print(banner(), flush=True)
    for n in (int(x) for x in args.docs.split(",")):
        print(json.dumps(measure(texts_of(args.corpus, n), CandidateConfig())), flush=True)


if __name__ == "__main__":
    main()
