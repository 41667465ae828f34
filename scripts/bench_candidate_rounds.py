"""What the normalised candidate score costs an incremental run (issue 29): the documents
whose lists a run recomputes, summed score (round 1 only) against normalised (round 1 and
the neighbours of round 1, whose partners' masses changed), on an existing index.

``python scripts/bench_candidate_rounds.py --index DIR [--add 10 100 1000] [--seed 0]``:
for each size, that many documents of the index (random, seeded) play the run's added
documents: each range's segment without them is the "before", merging them back in
(:func:`~simdask.kernels.candidate_ranges.merge_range`) names the affected documents; round
1 is those and the added ones, round 2 the documents sharing a weighted feature with round 1
(:func:`~simdask.kernels.candidate_ranges.block_neighbours`) not in it. Prints the counts and
the CPU seconds of scoring each round in this process (kernels only, one process).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from simdask import Index
from simdask.kernels.candidate_ranges import (
    block_entries,
    block_neighbours,
    block_top,
    mass_vector,
    merge_range,
    range_mass,
)
from simdask.kernels.postings import ShardData
from simdask.read.candidates import BLOCK_TARGETS, committed_segments
from simdask.storage.candidate_store import stored_candidate_config

from _benchutil import load_average


def _pairs_of(seg: ShardData, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``(feature, doc)`` postings of ``docs`` in ``seg``, sorted by feature then doc."""
    df = np.diff(seg.offsets.astype(np.int64))
    feat = np.repeat(np.asarray(seg.chunk_keys), df)
    keep = np.isin(seg.doc_ids, docs)
    return feat[keep], np.asarray(seg.doc_ids, np.uint32)[keep]


def _score(ranges, targets: np.ndarray, max_df: int, mass, want_near: bool):
    """Score ``targets`` in blocks; CPU seconds and (``want_near``) their neighbours."""
    t = time.process_time()
    near = []
    for i in range(0, len(targets), BLOCK_TARGETS):
        blk = targets[i : i + BLOCK_TARGETS]
        parts = [block_entries(r, blk, max_df) for r in ranges]
        block_top(parts, blk, 50, mass)
        if want_near:
            near.append(block_neighbours(parts))
    got = np.unique(np.concatenate([np.zeros(0, np.int64), *near]))
    return time.process_time() - t, got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--add", type=int, nargs="+", default=[10, 100, 1000])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    idx = Index.open(args.index)
    cfg = stored_candidate_config(idx.catalog)
    segs = committed_segments(idx, idx.config.shards, cfg.hash_bits)
    ids = np.array(sorted(d.doc_id for d in idx.catalog.documents()), np.uint32)
    print(f"{len(ids):,} documents; load {load_average()}")
    print(
        "| added | round 1 (added + affected) | round 2 (their neighbours) | all documents "
        "| CPU s round 1 | CPU s round 2 |"
    )
    print("|---|---|---|---|---|---|")
    for n in args.add:
        new = np.sort(np.random.default_rng(args.seed).choice(ids, n, replace=False))
        after, affected = [], []
        for seg in segs:
            f, d = _pairs_of(seg, new)
            before = merge_range(seg, f[:0], d[:0], new, cfg.max_df).data
            m = merge_range(before, f, d, np.zeros(0, np.uint32), cfg.max_df)
            after.append(m.data)
            affected.append(m.affected)
        mass = mass_vector([range_mass(r, cfg.max_df) for r in after])
        r1 = np.union1d(new, np.concatenate(affected)).astype(np.uint32)
        cpu1, near = _score(after, r1, cfg.max_df, mass, True)
        r2 = np.setdiff1d(near, r1.astype(np.int64)).astype(np.uint32)
        cpu2, _ = _score(after, r2, cfg.max_df, mass, False)
        print(f"| {n:,} | {len(r1):,} | {len(r2):,} | {len(ids):,} | {cpu1:.1f} | {cpu2:.1f} |")


if __name__ == "__main__":
    main()
