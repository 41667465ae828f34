"""The kernels of the directed quotation rule (issue 31 item 4, :mod:`simdask.kernels.quoted`)
on the essays of ``bench_quotes.py``, as a full build would call them: every document's U
and Q by batches (:func:`split_quoted`), the lookups of every list (all documents), the pairs
with E > 0 and their exact S (:func:`quoted_pairs`) and the rows by S + E
(:func:`add_quoted`); checked against the brute force of ``bench_quotes.py`` (S by set
intersection). CPU seconds of this process; no index is built.

    PYTHONPATH=. nice -n 19 python scripts/bench_quoted_kernels.py --docs 10000 --write
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from scripts._benchutil import load_average, machine, today, write_section
from scripts.bench_quotes import chunk_sets, corpus, e_join, sum_rows
from simdask import IndexConfig
from simdask.kernels.exclusions import Exclusions
from simdask.kernels.measures import containment
from simdask.kernels.quoted import Lookups, add_quoted, quote_map, quoted_pairs, split_quoted

#: documents a chunking task takes at once (the chunk stage's unit)
BATCH = 500


def split_all(texts: list[str], cfg: IndexConfig) -> tuple:
    """Every text's U and Q as ``(chunk, doc)`` pairs, by batches; and the CPU seconds."""
    t = time.process_time()
    uc, ud, qc, qd, n_u = [], [], [], [], []
    for lo in range(0, len(texts), BATCH):
        sp = split_quoted(texts[lo : lo + BATCH], cfg.k, cfg.hash_bits, cfg.seed, Exclusions(True))
        uc.append(sp.u.chunk_ids.astype(np.uint64))
        ud.append(sp.u.doc + lo)
        qc.append(sp.q_ids.astype(np.uint64))
        qd.append(sp.q_doc + lo)
        n_u.append(sp.u.n_chunks)
    out = tuple(np.concatenate(a) for a in (uc, ud, qc, qd, n_u))
    return out, time.process_time() - t


def full_lookups(uc, ud, qc, qd, n: int) -> Lookups:
    """The lookups of a full build: every document's lists, the whole U postings."""
    order = np.lexsort((ud, uc))
    hold = uc[order], ud[order]
    inq = np.isin(hold[0], qc)
    sets = np.split(qc, np.searchsorted(qd, np.arange(1, n)))
    qmap = quote_map(np.arange(n), sets)
    return Lookups(np.arange(n), uc, ud, qc, qd, hold, (hold[0][inq], hold[1][inq]), qmap)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--pool", type=int, default=1000)
    ap.add_argument("--copiers", type=float, default=0.05)
    ap.add_argument("--write", action="store_true", help="write the section of docs/benchmarks.md")
    args = ap.parse_args()
    texts, quoted, copied = corpus(args.docs, args.pool, args.copiers, seed=31)
    n = len(texts)
    cfg = IndexConfig()
    load_before = load_average()
    (uc, ud, qc, qd, n_u), t_split = split_all(texts, cfg)
    t = time.process_time()
    look = full_lookups(uc, ud, qc, qd, n)
    t_look = time.process_time() - t
    t = time.process_time()
    x, y, s, e = quoted_pairs(look, cfg.max_df)
    t_pairs = time.process_time() - t
    t = time.process_time()
    empty = tuple(np.zeros(0, dt) for dt in (np.int64, np.int64, np.int64, np.float64))
    rows = add_quoted(empty, (x, y, s, e), n_u, cfg.threshold, look.lists, cfg.stored_depth + 1)
    t_rows = time.process_time() - t
    load_after = load_average()
    got = set(zip(rows[0].tolist(), rows[1].tolist(), strict=True))
    passing = containment(s + e, n_u[x]) >= cfg.threshold
    sets = chunk_sets(texts, cfg)
    brute, _ = sum_rows(sets, e_join(sets), cfg.threshold)
    planted = {(i, q) for i, p in copied.items() for q in range(n) if p in quoted[q]}
    out = {
        "docs": n,
        "u_postings": len(uc),
        "q_postings": len(qc),
        "split_cpu": t_split,
        "lookups_cpu": t_look,
        "pairs_cpu": t_pairs,
        "rows_cpu": t_rows,
        "e_pairs": len(x),
        "at_threshold": int(passing.sum()),
        "rows": len(rows[0]),
        "same_as_brute_force": set(zip(x[passing].tolist(), y[passing].tolist(), strict=True))
        == brute,
        "planted": len(planted),
        "planted_found": len(planted & got),
    }
    for k, v in out.items():
        print(
            f"{k}: {v}"
            if isinstance(v, bool)
            else f"{k}: {v:,.3f}"
            if isinstance(v, float)
            else f"{k}: {v:,}"
        )
    body = section(out, args, f"load before {load_before}, after {load_after}")
    print(body)
    if args.write:
        write_section(DOCS, SECTION, body)


#: where :func:`main` writes its section (``--write``)
DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
SECTION = (
    "Quotations in the checked document only: the correction kernels (bench_quoted_kernels.py)"
)


def section(r: dict, args: argparse.Namespace, loads: str) -> str:
    """The benchmark's section of docs/benchmarks.md from the measured values ``r``."""
    return f"""`PYTHONPATH=. nice -n 19 python scripts/bench_quoted_kernels.py --docs {r["docs"]}
--pool {args.pool} --copiers {args.copiers}`: the essays of `bench_quotes.py`, the kernels of
`simdask/kernels/quoted.py` called as a full build's correction would call them (every list
recomputed, the whole U postings as the lookups); CPU seconds of one process, measured
{today()} on {machine()}, under `nice -n 19`, {loads}. No index built: the engine's rows by S
are left out (the rows below are those with E > 0 only).

| step | CPU (s) | size |
|---|---:|---:|
| U and Q of every essay, batches of {BATCH} (`split_quoted`) | {r["split_cpu"]:.2f} | {r["u_postings"]:,} U, {r["q_postings"]:,} Q postings |
| lookups (U postings by chunk, U holders of Q, the Q map) | {r["lookups_cpu"]:.2f} | |
| pairs with E > 0 and their exact S (`quoted_pairs`) | {r["pairs_cpu"]:.2f} | {r["e_pairs"]:,} pairs, {r["at_threshold"]:,} at the threshold |
| rows cut at depth (`add_quoted`) | {r["rows_cpu"]:.2f} | {r["rows"]:,} rows |

The pairs at the threshold equal the brute force of `bench_quotes.py` (S by set intersection):
{r["same_as_brute_force"]}; the rows find {r["planted_found"]:,} of the {r["planted"]:,}
planted (copier, quoter) rows.
"""


if __name__ == "__main__":
    main()
