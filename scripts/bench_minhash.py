"""MinHash signature kernels side by side on the same chunk IDs (issue 15, docs/lsh.md).

One chunking task's batch of generated documents (64-bit chunk IDs, as ``update`` makes them):
simdask's numpy kernel (``signatures``: grouping by document included), the numpy kernel it
replaced (row blocks of 2**16 elements, grouping by an int64 argsort; kept here as the
reference), and rensa's ``RMinHash.digest_matrix_from_flat_token_hashes`` on the same grouped
chunk IDs, with and without turning its digest matrix into a numpy array (``to_rows``; the
matrix has no buffer interface). Rounds alternate the kernels; wall and CPU milliseconds per
10**6 chunk IDs x permutations, best round of each, with the load average.

    python scripts/bench_minhash.py --docs 2000 --words 500 --perms 100 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simdask import IndexConfig
from simdask.ingest.synth import generate_corpus
from simdask.kernels.hashing import chunk_batch
from simdask.kernels.minhash import EMPTY, _doc_order, perm_coeffs, signatures

from _benchutil import machine, today


def old_signatures(ids: np.ndarray, doc: np.ndarray, n_docs: int, n_perm: int, seed: int):
    """The kernel of 2026-11-23: (chunks x permutations) row blocks of 2**16 elements."""
    order = np.argsort(doc, kind="stable")
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(doc, minlength=n_docs), out=offsets[1:])
    x = ids[order].astype(np.uint64)
    a, b = perm_coeffs(n_perm, seed)
    out = np.full((n_docs, n_perm), np.uint64(2**64 - 1), dtype=np.uint64)
    rows = max(1, (1 << 16) // n_perm)
    buf = np.empty((min(rows, len(x)), n_perm), dtype=np.uint64)
    starts = offsets[:-1]
    nonempty = np.flatnonzero(offsets[1:] > starts)
    ne_starts = starts[nonempty]
    for lo in range(0, len(x), rows):
        hi = min(lo + rows, len(x))
        t = buf[: hi - lo]
        np.multiply(x[lo:hi, None], a[None, :], out=t)
        t += b
        i0 = int(np.searchsorted(ne_starts, lo, side="right")) - 1
        i1 = int(np.searchsorted(ne_starts, hi, side="left"))
        docs = nonempty[max(i0, 0) : i1]
        mins = np.minimum.reduceat(t, np.maximum(starts[docs], lo) - lo, axis=0)
        np.minimum(out[docs], mins, out=mins)
        out[docs] = mins
    sig = (out >> np.uint64(32)).astype(np.uint32)
    sig[sig == EMPTY] = EMPTY - np.uint32(1)
    sig[offsets[1:] == starts] = EMPTY
    return sig


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--words", type=int, default=500)
    ap.add_argument("--perms", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    from rensa import RMinHash

    cfg = IndexConfig()
    texts = [d.text for d in generate_corpus(args.docs, mean_words=args.words, seed=5).docs]
    cb = chunk_batch(texts, cfg.k, cfg.hash_bits, cfg.seed)
    ids, doc, n, p = cb.chunk_ids, cb.doc, len(texts), args.perms
    offsets = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum(np.bincount(doc, minlength=n), out=offsets[1:])

    def rensa(convert: bool):
        flat = np.ascontiguousarray(ids[_doc_order(doc, n)], dtype=np.uint64)
        m = RMinHash.digest_matrix_from_flat_token_hashes(flat, offsets, p, cfg.seed)
        return np.array(m.to_rows(), dtype=np.uint32) if convert else m

    kernels = {
        "simdask numpy `signatures` (grouping included)": lambda: signatures(ids, doc, n, p),
        "previous numpy kernel (grouping included)": lambda: old_signatures(ids, doc, n, p, 0),
        "rensa digest matrix + grouping + `to_rows` to numpy": lambda: rensa(True),
        "rensa digest matrix call alone (grouped IDs given)": lambda: rensa(False),
    }
    assert np.array_equal(signatures(ids, doc, n, p), old_signatures(ids, doc, n, p, 0))
    wall = {k: [] for k in kernels}
    cpu = {k: [] for k in kernels}
    loads = [os.getloadavg()[0]]
    for rnd in range(args.rounds):
        names = list(kernels)
        for name in names[rnd % len(names) :] + names[: rnd % len(names)]:
            t, c = time.perf_counter(), time.process_time()
            kernels[name]()
            wall[name].append(time.perf_counter() - t)
            cpu[name].append(time.process_time() - c)
        loads.append(os.getloadavg()[0])
    units = len(ids) * p / 1e6
    print(
        f"Machine: {machine()}. Date: {today()}. {n} generated documents of ~{args.words} words, "
        f"{len(ids)} distinct (chunk ID, document) pairs of {cfg.hash_bits}-bit chunk IDs, "
        f"{p} permutations; {args.rounds} alternating rounds, best of each; load average "
        f"(1 min) {min(loads):.1f}..{max(loads):.1f}.\n"
    )
    print("| kernel | wall ms | CPU ms | wall ms per 10^6 IDs x perms |")
    print("|---|---|---|---|")
    for name in kernels:
        w, c = min(wall[name]), min(cpu[name])
        print(f"| {name} | {w * 1e3:.0f} | {c * 1e3:.0f} | {w * 1e3 / units:.2f} |")


if __name__ == "__main__":
    main()
