"""The driver's row fold alone, on synthetic block rows of a full build's shape: the fold
before session 8 (one concatenation and sort of all kept and waiting rows, int64 columns)
against :class:`simdask.kernels.top_rows.RowFold` (parts, bars, uint32 columns), each in its
own process, alternating; peak RSS (``ru_maxrss``), seconds and a digest of the rows'
values.

Rows: ``--rows`` directed rows over ``--docs`` documents in ``--blocks`` blocks of
consecutive doc IDs, as :func:`~simdask.engine.similarity_stage.block_rows_task` returns them
(pairs ``d < o`` of the block's ``d``, both directions, ranked and cut to ``--top-k``);
``similarity = containment(shared, |doc|)``. One pair in ten goes to one of the 1 % "hot"
documents, so that some lists are full and cut. Blocks are generated one at a time from a
seed (the same rows in every process) and handed to the fold in a lightly shuffled order (as
they complete on a cluster)::

    python scripts/bench_row_fold.py --docs 1000000 --rows 40000000 --rounds 2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import time

import numpy as np

from simdask.cluster.heap import trim_heap
from simdask.kernels.arrays import run_starts
from simdask.kernels.similarity import containment, split_lists
from simdask.kernels.top_rows import PART_DOCS, RowFold, _counted_order, top_k_rows
from simdask.storage.commit import _key_order

from _benchutil import banner, load_average


def old_top_k_rows(doc, other, shared, sim, k: int):
    """``top_k_rows`` of main at 4014abf: always sorts (no check for ranked rows)."""
    order = _counted_order(doc, other, shared, sim)
    if order is None:
        order = np.lexsort((other, -sim, doc))
    sdoc = doc[order]
    if len(sdoc) == 0:
        return doc[order], other[order], shared[order], sim[order]
    new = run_starts(sdoc)
    group_start = np.maximum.accumulate(np.where(new, np.arange(len(sdoc)), 0))
    keep = order[(np.arange(len(sdoc)) - group_start) < k]
    return doc[keep], other[keep], shared[keep], sim[keep]


def old_after(rows: tuple, top_k: int, depth: int) -> int:
    """What main's driver did with the folded rows of a full build: ``split_rows`` (a mask
    copy of every row, ``split_lists`` sorting them again, the shown rows concatenated with
    the rest) and ``_insert_rows``' order (a sorted copy, int64 copies of doc and other),
    the rows turned into Python objects 2**20 at a time (not inserted). Returns the rows."""
    whole = np.ones(len(rows[0]), bool)
    doc, other, shared, sim = old_top_k_rows(*(c[whole] for c in rows), depth + 1)
    idx = np.arange(len(doc))
    rank = idx - np.maximum.accumulate(np.where(run_starts(doc), idx, 0))
    cols = (doc, other, shared, sim)
    shown = tuple(c[rank < top_k] for c in cols)
    reserve = tuple(c[(rank >= top_k) & (rank < depth)] for c in cols)  # noqa: F841 (held)
    rest = ~whole
    cols = tuple(np.concatenate([a, c[rest]]) for a, c in zip(shown, rows, strict=True))
    del doc, other, shared, sim, idx, rank, shown
    key = cols[0].astype(np.int64) << 32 | cols[1].astype(np.int64)
    order = np.argsort(key, kind="stable")
    cols = tuple(a[order] for a in cols)
    d, o = cols[0].astype(np.int64), cols[1].astype(np.int64)
    bool(np.all((d[1:] != d[:-1]) | (o[1:] != o[:-1])))
    for i in range(0, len(d), 1 << 20):
        [a[i : i + (1 << 20)].tolist() for a in cols]
    return len(d)


def new_after(rows: tuple, top_k: int, depth: int) -> int:
    """The same with this branch's ``split_rows`` (a full build: no mask, no concatenation;
    ``split_lists`` cuts the ranked rows without sorting) and ``_insert_rows`` (the order
    and the key's distinctness, the rows gathered a slice at a time)."""
    shown, _reserve, _floors = split_lists(*rows, top_k, depth)  # all three held
    del rows
    order, _ = _key_order(shown[0], shown[1])
    for i in range(0, len(shown[0]), 1 << 20):
        at = slice(i, i + (1 << 20)) if order is None else order[i : i + (1 << 20)]
        [a[at].tolist() for a in shown]
    return len(shown[0])


class OldRowFold:
    """The fold of main before session 8 (simdask/engine/similarity_stage.py at 4014abf)."""

    def __init__(self, top_k: int, min_rows: int):
        self.top_k, self.min_rows = top_k, min_rows
        self.kept: tuple | None = None
        self.waiting: list = []
        self.n_waiting = 0
        self.folds = 0

    def add(self, rows: tuple) -> None:
        self.waiting.append(rows)
        self.n_waiting += len(rows[0])
        kept = 0 if self.kept is None else len(self.kept[0])
        if self.n_waiting >= max(self.min_rows, kept // 2):
            self._fold()

    def _fold(self) -> None:
        parts = ([self.kept] if self.kept is not None else []) + self.waiting
        cols = (np.concatenate([p[i] for p in parts]) for i in range(4))
        self.kept = old_top_k_rows(*cols, self.top_k)
        self.waiting, self.n_waiting = [], 0
        self.folds += 1

    def result(self) -> tuple | None:
        if self.waiting:
            self._fold()
        if self.kept is None:
            return None
        # all_pairs of main sorted the fold's output once more (top_k_rows of the one result)
        return old_top_k_rows(*self.kept, self.top_k)


def block_rows(b: int, args, sizes: np.ndarray) -> tuple:
    """The rows of block ``b``: int64 ``doc, other, shared`` and float64 similarity."""
    n, nb = args.docs, args.blocks
    lo, hi = b * n // nb, (b + 1) * n // nb
    rng = np.random.default_rng([args.seed, b])
    m = args.rows // 2 // nb
    d = rng.integers(lo, hi, m)
    r = rng.random(m)
    o = d + 1 + np.floor(r * (n - 1 - d)).astype(np.int64)
    hot = rng.random(m) < 0.1  # to a hot document (multiple of 100) above d
    top = (n - 1) // 100
    o[hot] = (d[hot] // 100 + 1 + np.floor(r[hot] * (top - d[hot] // 100)).astype(np.int64)) * 100
    ok = o < n
    key = np.unique(d[ok] * n + o[ok])
    d, o = key // n, key % n
    shared = rng.integers(1, 60, len(d))
    doc, other = np.concatenate([d, o]), np.concatenate([o, d])
    shared = np.concatenate([shared, shared])
    return top_k_rows(doc, other, shared, containment(shared, sizes[doc]), args.top_k)


def child(args) -> None:
    """One fold in this process; prints JSON."""
    sizes = np.random.default_rng(args.seed).integers(500, 3000, args.docs)
    order = np.arange(args.blocks)
    rng = np.random.default_rng(args.seed + 1)
    for i in range(0, args.blocks - 1, 2):  # neighbours swap now and then, as they complete
        if rng.random() < 0.5:
            order[i], order[i + 1] = order[i + 1], order[i]
    min_rows = max(1, args.docs * args.top_k // 4)
    if args.impl == "old":
        fold = OldRowFold(args.top_k, min_rows)
    elif args.impl == "new":
        part = min(args.docs, PART_DOCS)
        fold = RowFold(args.top_k, max(1, part * args.top_k // 4), PART_DOCS)
    else:
        fold = None
    t = time.perf_counter()
    fold_s = 0.0
    n_in = 0
    for b in order.tolist():
        rows = block_rows(b, args, sizes)
        n_in += len(rows[0])
        if fold is not None:
            f = time.perf_counter()
            fold.add(rows)
            fold_s += time.perf_counter() - f
        del rows
    f = time.perf_counter()
    if isinstance(fold, RowFold):
        out = fold.result(None if args.no_trim else trim_heap)
    else:
        out = fold.result() if fold is not None else None
    fold_s += time.perf_counter() - f
    fold_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    after_s, committed = 0.0, None
    if args.after and out is not None:
        f = time.perf_counter()
        after = old_after if args.impl == "old" else new_after
        committed = after(out, args.top_k - 17, args.top_k - 1)
        after_s = time.perf_counter() - f
    digest = hashlib.blake2b(digest_size=12)
    for c in out or ():  # the values (the new fold returns uint32 integer columns)
        digest.update(c.astype(np.int64 if c.dtype.kind in "iu" else np.float64).tobytes())
    print(
        json.dumps(
            {
                "impl": args.impl,
                "rows_in": n_in,
                "rows_out": 0 if out is None else len(out[0]),
                "folds": getattr(fold, "folds", 0),
                "dropped": getattr(fold, "dropped", None),
                "fold_s": round(fold_s, 2),
                "total_s": round(time.perf_counter() - t, 2),
                "fold_peak_gib": round(fold_peak, 3),
                "after_rows": committed,
                "after_s": round(after_s, 2),
                "peak_rss_gib": round(
                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 3
                ),
                "digest": digest.hexdigest() if out is not None else "",
            }
        ),
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--rows", type=int, default=40_000_000)
    ap.add_argument("--blocks", type=int, default=283)
    ap.add_argument("--top-k", type=int, default=117)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-trim", action="store_true", help="new fold: no trim_heap in result")
    ap.add_argument(
        "--after",
        action="store_true",
        help="then the driver's path to the commit (split into shown rows, reserve and floors;"
        " the commit's order; rows to Python 2**20 at a time, not inserted): top_k - 17 shown,"
        " top_k - 1 stored depth (117 = 100 + 16 + 1)",
    )
    ap.add_argument("--impl", choices=["old", "new", "none"], default=None, help="(child)")
    args = ap.parse_args()
    print(banner(), flush=True)
    if args.impl:
        child(args)
        return
    print(f"load {load_average()}", flush=True)
    base = [sys.executable, __file__, *sys.argv[1:]]
    for r in range(args.rounds):
        impls = ["none", "old", "new"] if r == 0 else ["new", "old"]
        for impl in impls:
            subprocess.run([*base, "--impl", impl], check=True)
    print(f"load {load_average()}", flush=True)


if __name__ == "__main__":
    main()
