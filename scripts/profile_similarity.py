"""Where the similarity stage's time goes on a built index (issue 13 item 5), in one process.

Loads every shard of INDEX, chooses the heavy cutoff as a full build does, plans the blocks,
then times the parts of one typical block on one core: the emission of its pair keys
(:func:`~simdask.kernels.similarity.block_pair_keys`, all shards), of which the scan that
every block makes over every posting, the count (sort + run lengths), the heavy overlap and
the rows, in CPU seconds of this process. Prints the per-pair and per-posting costs and what they make at a larger size:

    python scripts/profile_similarity.py bench-data/scale/index-30000 --project 1000000
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from simdask import Index
from simdask.engine.context import RunOptions
from simdask.kernels.doc_postings import DocPostings, block_keys
from simdask.kernels.heavy import (
    WORK_PER_POSTING,
    HeavySets,
    add_heavy_overlap,
    choose_cutoff,
    df_histogram,
    heavy_postings,
    light_work,
    merge_histograms,
)
from simdask.kernels.similarity import (
    _posting_ends,
    block_pair_keys,
    count_block_keys,
    max_block_docs,
    need_counts,
    pair_work,
    plan_blocks,
)


def timed(fn, *args):
    """``(result, CPU seconds)`` of one call (process time: robust to other jobs' load; page
    faults of fresh memory included)."""
    t = time.process_time()
    out = fn(*args)
    return out, time.process_time() - t


def profile(path: str, block_no: int | None) -> dict:
    """The figures of one block of the index at ``path`` (see the module docstring)."""
    idx = Index.open(path)
    cfg = idx.config
    shards = [idx.shard(s) for s in range(cfg.shards)]
    n_chunks_map = idx.catalog.chunk_counts()
    n_docs = max(n_chunks_map) + 1
    n_chunks = np.zeros(n_docs, np.int64)
    n_chunks[list(n_chunks_map)] = list(n_chunks_map.values())
    postings = sum(s.n_postings for s in shards)
    values, counts = merge_histograms([df_histogram(s, cfg.max_df) for s in shards])
    cutoff = choose_cutoff(values, counts, postings, fixed=cfg.heavy_df, max_heavy=cfg.max_heavy)
    heavy_chunks = 0 if cutoff is None else int(counts[values > cutoff].sum())
    work = np.sum([pair_work(s, n_docs, cutoff) for s in shards], axis=0)
    budget = min(RunOptions().block_pairs, int(work.sum()) // 4 + 1)
    blocks = plan_blocks(work, budget, max_block_docs(n_docs))
    lo, hi = blocks[len(blocks) // 2 if block_no is None else block_no]
    bits = None
    if heavy_chunks:
        posts = [heavy_postings(s, cutoff, cfg.max_df) for s in shards]
        bits = HeavySets.build(posts, n_docs).bits()
    for s in shards:  # touch the memory-mapped arrays first: the timings are warm
        s.doc_ids.sum()
        s.offsets.sum()
    scan = sum(timed(_posting_ends, s, cutoff)[1] for s in shards)
    parts, emit = [], 0.0
    for s in shards:
        keys, t = timed(block_pair_keys, s, lo, hi, n_docs, cutoff)
        parts.append(keys)
        emit += t
    n_keys = sum(len(p) for p in parts)
    grouped, build = [], 0.0
    for s in shards:
        g, t = timed(DocPostings.build, s, n_docs, cutoff)
        grouped.append(g)
        build += t
    by_doc = sum(timed(block_keys, g, lo, hi, n_docs)[1] for g in grouped)
    (keys, shared), count = timed(count_block_keys, parts, n_docs)
    need, need_s = timed(need_counts, n_chunks, cfg.threshold)
    d = (keys // np.uint32(n_docs)).astype(np.int64) + lo
    o = (keys % np.uint32(n_docs)).astype(np.int64)
    s = shared.astype(np.int64)
    heavy_s = 0.0
    if bits is not None:
        (d, o, s), heavy_s = timed(add_heavy_overlap, d, o, s, need, bits)
    _, mask_s = timed(lambda: s >= np.minimum(need[d], need[o]))
    idx.close()
    return {
        "index": path,
        "documents": int(np.count_nonzero(n_chunks)),
        "postings": postings,
        "pair_work_all": light_work(values, counts, None),
        "cutoff": cutoff,
        "heavy_chunks": heavy_chunks,
        "heavy_bits_bytes": 0 if bits is None else bits.nbytes,
        "light_work": int(work.sum()),
        "blocks": len(blocks),
        "emitting_postings": sum(len(g.pos) for g in grouped),
        "block_docs": hi - lo,
        "block_pairs": n_keys,
        "distinct_pairs": len(keys),
        "seconds": {
            "scan_all_postings": scan,
            "emit_incl_scan": emit,
            "emit_by_doc": by_doc,
            "build_by_doc_once": build,
            "count_sort": count,
            "heavy_overlap": heavy_s,
            "need_counts": need_s,
            "candidate_mask": mask_s,
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("index")
    ap.add_argument("--block", type=int, default=None, help="block number (default: middle)")
    ap.add_argument("--project", type=int, default=1_000_000, help="documents to project to")
    args = ap.parse_args()
    r = profile(args.index, args.block)
    s = r["seconds"]
    per_pair = (s["emit_incl_scan"] - s["scan_all_postings"] + s["count_sort"]) / max(
        1, r["block_pairs"]
    )
    per_posting_scan = s["scan_all_postings"] / r["postings"]
    r["ns_per_pair"] = per_pair * 1e9
    r["ns_per_posting_scan_per_block"] = per_posting_scan * 1e9
    f = args.project / r["documents"]
    p_big = r["postings"] * f
    pairs_big = WORK_PER_POSTING * p_big  # the adaptive cutoff's light budget, reached
    blocks_big = max(
        pairs_big / RunOptions().block_pairs, args.project / max_block_docs(args.project)
    )
    r["projection"] = {
        "documents": args.project,
        "postings": p_big,
        "light_pairs_at_budget": pairs_big,
        "blocks": blocks_big,
        "cpu_s_pairs": pairs_big * per_pair,
        "cpu_s_scans": blocks_big * p_big * per_posting_scan,
    }
    print(json.dumps(r, indent=1))


if __name__ == "__main__":
    main()
