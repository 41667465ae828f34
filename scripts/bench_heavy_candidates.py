"""Member rows of an incremental run in the ``informative`` mode, side by side (issue 14).

On a kept index with a heavy cutoff (e.g. the scale benchmark's prose index of 100,000
documents), 100 documents' rows are computed in one process from their chunks' posting lists
(each range restricted to those chunks, as an incremental run probes them), alternately:

* ``today``: one pair key per (heavy chunk of a member, other holder) plus the light keys,
  counted (:func:`~simdask.kernels.heavy.member_keys`,
  :func:`~simdask.engine.similarity_stage.member_rows_task`);
* ``candidates``: the light keys only, then each range's heavy overlap of the candidates
  (:mod:`simdask.engine.heavy_candidates`, :mod:`simdask.kernels.heavy_overlap`).

The rows must be equal (checked every repetition). No Dask: the kernels alone, one core.

    python scripts/bench_heavy_candidates.py /work/data/x/index-100000 --reps 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from simdask import Index
from simdask.engine.heavy_candidates import (
    candidate_rows_task,
    candidates_task,
    held_emit,
    held_light,
    held_overlap,
)
from simdask.engine.similarity_stage import member_rows_task
from simdask.kernels.heavy import member_keys
from simdask.kernels.postings import doc_mask
from simdask.storage.segments import restrict_shard

from _benchutil import banner


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("index")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--members", type=int, default=100)
    args = ap.parse_args()
    print(banner(), flush=True)
    idx = Index.open(args.index)
    cfg = idx.config
    docs = idx.catalog.documents()
    n = max(d.doc_id for d in docs) + 1
    n_chunks = np.zeros(n, np.int64)
    for d in docs:
        n_chunks[d.doc_id] = d.n_chunks
    cutoff = idx.stats()["heavy"]["cutoff"]
    if cutoff is None:
        raise SystemExit(f"expected an index with a heavy cutoff, found none in {args.index}")
    rng = np.random.default_rng(1)
    ids = [d.doc_id for d in docs if d.n_chunks]
    members = np.sort(rng.choice(ids, args.members, replace=False)).astype(np.uint32)
    shards = []
    for s in range(cfg.shards):
        full = idx.shard(s)
        p = np.flatnonzero(doc_mask(members, full.doc_ids))
        ci = np.searchsorted(full.offsets, p.astype(full.offsets.dtype), side="right") - 1
        shards.append(restrict_shard(full, np.asarray(full.chunk_keys)[np.unique(ci)]))
    idx.close()
    probed = sum(s.n_postings for s in shards)
    print(f"{args.index}: {n:,} doc IDs, cutoff {cutoff}, probed postings {probed:,}")
    rows = (members, n_chunks, members, members, cfg.threshold, cfg.top_k)

    def today():
        parts = [member_keys(s, members, n, cfg.max_df, cutoff) for s in shards]
        return member_rows_task(parts, *rows, "informative"), sum(len(p[1]) for p in parts)

    def candidates():
        held = [held_emit(s, members, n, cfg.max_df, cutoff) for s in shards]
        cand = candidates_task([held_light(h) for h in held], len(members), n)
        ov = [held_overlap(h, cand, n) for h in held]
        return candidate_rows_task(cand, ov, *rows), len(cand[0])

    times: dict[str, list[float]] = {"today": [], "candidates": []}
    for _ in range(args.reps):
        out = {}
        for name, fn in (("today", today), ("candidates", candidates)):
            t = time.perf_counter()
            out[name] = fn()
            times[name].append(time.perf_counter() - t)
        (a, heavy_keys), (b, n_cand) = out["today"], out["candidates"]
        same = (
            np.array_equal(x, y)
            for p, q in zip(a, b, strict=True)
            for x, y in zip(p, q, strict=True)
        )
        if not all(same):
            raise SystemExit("the rows differ")
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"heavy keys today {heavy_keys:,}; candidates {n_cand:,}; rows equal")
    for k, v in times.items():
        print(f"{k}: {[round(x, 3) for x in v]} s, median {med[k]:.3f} s")
    ratio = med["today"] / med["candidates"]
    print(f"today / candidates: {ratio:.1f}x; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
