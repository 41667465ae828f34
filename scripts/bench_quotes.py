"""What "quotations excluded in the checked document only" (issue 31 item 4, docs/term.md)
costs and changes, on N generated essays with quotations: a build without and one with
``--exclude-quotes`` (its quote stage, engine/quote_stage.py) side by side.

Each essay is generated text (about 300 words, Zipf words) with two passages of a shared pool of 40-word passages
quoted correctly (``"..."``); ``--copiers`` of the essays (default 5 %) also copy one pool
passage *without* quotation marks, the case of the issue. Measured side by side in one
process (in-process Dask workers, so that ``time.process_time`` is every CPU second):

* the build of an index without and with ``exclude_quotes`` (CPU and wall seconds, the
  postings ``sum |A|``, the stored rows);
* the chunk sets of the design (docs/term.md): ``U(X)`` the chunks outside quotations, ``Q(X)``
  the chunks only inside them (``C(X) \\ U(X)``, ``C`` the chunks with quotations kept), the
  postings ``Q`` would add, and the CPU of the second chunking pass it needs;
* the join ``E(X, Y) = |U(X) ∩ Q(Y)|`` done by brute force here (numpy over the postings):
  its pair work ``sum_c |U holders of c| * |Q holders of c|``, the directed pairs with
  ``E > 0``, and the directed rows at the threshold by ``S + E`` (``S = |U(X) ∩ U(Y)|``,
  exact by set intersection) that the ``exclude_quotes`` index does not store;
* the planted unquoted copies: ``(copier, quoter)`` rows found by each index and by ``S + E``.

    PYTHONPATH=. nice -n 19 python scripts/bench_quotes.py --docs 10000
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import numpy as np
from distributed import Client, LocalCluster

from scripts._benchutil import load_average, machine, today, write_section
from simdask import Index, IndexConfig
from simdask.ingest.synth import generate_corpus
from simdask.kernels.exclusions import Exclusions
from simdask.kernels.features import SORTED_CHUNK
from simdask.kernels.measures import containment


def corpus(n: int, pool: int, copiers: float, seed: int) -> tuple[list[str], list, dict]:
    """``n`` essays; per essay the pool passages it quotes, and ``{essay: passage}`` for the
    essays that also copy one passage unquoted. Words: :func:`~simdask.ingest.synth.
    generate_corpus` (a Zipf law over 200,000 pseudo-words), no reuse planted by it."""
    rng = random.Random(seed)
    gen = generate_corpus(n + pool, mean_words=300, reuse_fraction=0.0, seed=seed).docs
    words = [d.text.split() for d in gen]
    passages = [" ".join(ws[:40]) for ws in words[n:]]
    texts, quoted, copied = [], [], {}
    for i in range(n):
        body = words[i]
        cut = sorted(rng.sample(range(1, len(body)), 2))
        qs = rng.sample(range(pool), 2)
        parts = [" ".join(body[: cut[0]]), f'"{passages[qs[0]]}"']
        parts += [" ".join(body[cut[0] : cut[1]]), f'"{passages[qs[1]]}"']
        parts.append(" ".join(body[cut[1] :]))
        if rng.random() < copiers:
            p = rng.choice([x for x in range(pool) if x not in qs])
            parts.insert(1, passages[p])
            copied[i] = p
        texts.append(" ".join(parts))
        quoted.append(qs)
    return texts, quoted, copied


def build(root: Path, src: Path, quotes: bool, client: Client) -> dict:
    """Build an index of ``src``; its CPU and wall seconds, postings and rows by key pair,
    and with ``quotes`` the quote stage's seconds (wall; CPU of this process, whose in-process
    workers run its tasks too) and the quoted chunks stored (rows, blob bytes)."""
    path = root / f"idx-{int(quotes)}"
    with Index.create(path, IndexConfig(shards=4, exclude_quotes=quotes)) as idx:
        cpu, wall = time.process_time(), time.perf_counter()
        summary = idx.update([src], client=client)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        c = idx.catalog.conn
        keys = dict(c.execute("SELECT doc_id, key FROM documents"))
        postings = c.execute("SELECT SUM(n_chunks) FROM documents").fetchone()[0]
        rows = {(keys[d], keys[o]) for d, o in c.execute("SELECT doc, other FROM similarity")}
        q_rows, q_bytes = (0, 0)
        if quotes:
            q = "SELECT COUNT(*), COALESCE(SUM(length(ids)), 0) FROM quoted_chunks"
            q_rows, q_bytes = c.execute(q).fetchone()
    return {
        "cpu": cpu,
        "wall": wall,
        "postings": int(postings),
        "rows": rows,
        "stage_wall": summary.seconds.get("quotes", 0.0),
        "stage_cpu": summary.seconds.get("quotes_cpu", 0.0),
        "q_rows": int(q_rows),
        "q_bytes": int(q_bytes),
    }


#: documents a chunking task takes at once (the chunk stage's unit)
BATCH = 500


def batch_q(texts: list[str], args: tuple) -> tuple:
    """One batch: its U and C chunk sets and Q = C minus U as ``(chunk IDs, doc)``, with the
    CPU seconds of U, of the second chunking pass (C) and of the set difference."""
    t0 = time.process_time()
    u = SORTED_CHUNK.chunk(texts, *args, Exclusions(quotes=True))
    t1 = time.process_time()
    c = SORTED_CHUNK.chunk(texts, *args, None)
    t2 = time.process_time()
    ids, inv = np.unique(c.chunk_ids, return_inverse=True)
    key_c = inv.astype(np.int64) * len(texts) + c.doc
    key_u = np.searchsorted(ids, u.chunk_ids).astype(np.int64) * len(texts) + u.doc
    q = ~np.isin(key_c, key_u, assume_unique=True)
    t3 = time.process_time()
    return u, (c.chunk_ids[q], c.doc[q]), (t1 - t0, t2 - t1, t3 - t2)


def chunk_sets(texts: list[str], cfg: IndexConfig) -> dict:
    """U and Q postings as ``(dense chunk, doc)`` int64 keys (sorted), computed by batches of
    :data:`BATCH` documents as chunk tasks would, and the CPU seconds of each step."""
    args = (cfg.k, cfg.hash_bits, cfg.seed)
    us, qs, secs = [], [], np.zeros(3)
    for lo in range(0, len(texts), BATCH):
        u, (qc, qd), t = batch_q(texts[lo : lo + BATCH], args)
        us.append((u.chunk_ids, u.doc + lo, u.n_chunks))
        qs.append((qc, qd + lo))
        secs += t
    uc, ud, n_u = (np.concatenate([x[i] for x in us]) for i in range(3))
    qc, qd = (np.concatenate([x[i] for x in qs]) for i in range(2))
    ids = np.unique(np.concatenate([uc, qc]))
    n = len(texts)
    key_u = np.sort(np.searchsorted(ids, uc).astype(np.int64) * n + ud)
    key_q = np.sort(np.searchsorted(ids, qc).astype(np.int64) * n + qd)
    t_u, t_c, t_diff = secs.tolist()
    return {"u": key_u, "q": key_q, "n": n, "t_u": t_u, "t_c": t_c, "t_diff": t_diff, "n_u": n_u}


def e_join(s: dict) -> dict:
    """``E(X, Y) = |U(X) ∩ Q(Y)|`` for every directed pair with ``E > 0``, by brute force."""
    t = time.process_time()
    n = s["n"]
    uc, ud = np.divmod(s["u"], n)  # sorted by chunk then doc
    qc, qd = np.divmod(np.sort(s["q"]), n)
    lo, hi = np.searchsorted(uc, qc, "left"), np.searchsorted(uc, qc, "right")
    holders = hi - lo
    work = int(holders.sum())
    rep = np.repeat(np.arange(len(qc)), holders)
    idx = np.arange(work) - np.repeat(np.cumsum(holders) - holders, holders) + lo[rep]
    x, y = ud[idx], qd[rep]
    pairs, e = np.unique(x * n + y, return_counts=True)
    return {"pairs": pairs, "e": e, "work": work, "cpu": time.process_time() - t}


def sum_rows(s: dict, j: dict, threshold: float) -> tuple[set, float]:
    """Directed rows ``x -> y`` with ``100 (S + E) / |U(x)|`` at least ``threshold``, S by
    set intersection of the U sets; and the CPU seconds it took."""
    t = time.process_time()
    n = s["n"]
    uc, ud = np.divmod(s["u"], n)
    order = np.argsort(ud, kind="stable")
    starts = np.searchsorted(ud[order], np.arange(n + 1))
    sets = [uc[order[starts[i] : starts[i + 1]]] for i in range(n)]
    x, y = np.divmod(j["pairs"], n)
    out = set()
    for a, b, e in zip(x.tolist(), y.tolist(), j["e"].tolist(), strict=True):
        shared = len(np.intersect1d(sets[a], sets[b], assume_unique=True)) + e
        if containment(shared, int(s["n_u"][a])) >= threshold:
            out.add((a, b))
    return out, time.process_time() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--pool", type=int, default=1000)
    ap.add_argument("--copiers", type=float, default=0.05)
    ap.add_argument("--write", action="store_true", help="write the section of docs/term.md")
    args = ap.parse_args()
    texts, quoted, copied = corpus(args.docs, args.pool, args.copiers, seed=31)
    key = [f"essays/e{i:06d}.txt" for i in range(len(texts))]
    load_before = load_average()
    print("load before:", load_before, flush=True)
    with (
        tempfile.TemporaryDirectory() as d,
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):
        root = Path(d)
        src = root / "essays"
        src.mkdir()
        for k, t in zip(key, texts, strict=True):
            (root / k).write_text(t + "\n")
        plain = build(root, src, False, client)
        excl = build(root, src, True, client)
    load_after = load_average()
    cfg = IndexConfig()
    s = chunk_sets(texts, cfg)
    j = e_join(s)
    rows, t_rows = sum_rows(s, j, cfg.threshold)
    named = {(key[a], key[b]) for a, b in rows}
    planted = {
        (key[i], key[y]) for i, p in copied.items() for y in range(len(texts)) if p in quoted[y]
    }
    out = {
        "docs": len(texts),
        "copiers": len(copied),
        "build_cpu_plain": plain["cpu"],
        "build_cpu_quotes": excl["cpu"],
        "build_wall_plain": plain["wall"],
        "build_wall_quotes": excl["wall"],
        "postings_plain": plain["postings"],
        "postings_U": excl["postings"],
        "postings_Q": len(s["q"]),
        "rows_plain": len(plain["rows"]),
        "rows_quotes": len(excl["rows"]),
        "stage_wall": excl["stage_wall"],
        "stage_cpu": excl["stage_cpu"],
        "quoted_rows": excl["q_rows"],
        "quoted_bytes": excl["q_bytes"],
        "sum_rows_stored": len(named & excl["rows"]),
        "chunk_cpu_U": s["t_u"],
        "chunk_cpu_C": s["t_c"],
        "chunk_cpu_diff": s["t_diff"],
        "join_work": j["work"],
        "join_cpu": j["cpu"],
        "e_pairs": len(j["pairs"]),
        "sum_rows": len(rows),
        "sum_rows_not_stored": len(named - excl["rows"]),
        "sum_rows_cpu": t_rows,
        "planted": len(planted),
        "planted_found_plain": len(planted & plain["rows"]),
        "planted_found_quotes": len(planted & excl["rows"]),
        "planted_found_sum": len(planted & named),
    }
    for k, v in out.items():
        print(f"{k}: {v:,.3f}" if isinstance(v, float) else f"{k}: {v:,}")
    loads = f"load before {load_before}, after {load_after}"
    body = section(out, args, loads)
    print(body)
    if args.write:
        write_section(DOCS, SECTION, body)


#: where :func:`main` writes its section (``--write``)
DOCS = Path(__file__).resolve().parent.parent / "docs" / "term.md"
SECTION = "Quotations in the checked document only: the quote stage measured (bench_quotes.py)"


def section(r: dict, args: argparse.Namespace, loads: str) -> str:
    """The benchmark's section of docs/benchmarks.md from the measured values ``r``."""
    pct = 100 * r["postings_Q"] / r["postings_U"]
    ratio = r["build_cpu_quotes"] / r["build_cpu_plain"]
    return f"""`PYTHONPATH=. nice -n 19 python scripts/bench_quotes.py --docs {r["docs"]}
--pool {args.pool} --copiers {args.copiers} --write`: {r["docs"]:,} generated essays of 300
words, each quoting 2 passages of a pool of {args.pool} 40-word passages; {r["copiers"]:,} of
them also copy one pool passage without quotation marks. Both indexes built in one process
(in-process Dask workers, 2 threads: CPU seconds are every thread's); measured {today()} on
{machine()}, under `nice -n 19`, {loads} (wall seconds are upper bounds on a shared machine).

| | without `--exclude-quotes` | `--exclude-quotes` (quote stage on) |
|---|---:|---:|
| build CPU (s) | {r["build_cpu_plain"]:.2f} | {r["build_cpu_quotes"]:.2f} ({ratio:.2f}x) |
| build wall (s) | {r["build_wall_plain"]:.1f} | {r["build_wall_quotes"]:.1f} |
| of which the quote stage: CPU / wall (s) | - | {r["stage_cpu"]:.2f} / {r["stage_wall"]:.1f} |
| postings (chunks of every document) | {r["postings_plain"]:,} | {r["postings_U"]:,} (U) |
| quoted chunks stored (Q; documents, blob bytes) | - | {r["postings_Q"]:,} ({pct:.1f} % of U; {r["quoted_rows"]:,} rows, {r["quoted_bytes"]:,} B) |
| stored rows | {r["rows_plain"]:,} | {r["rows_quotes"]:,} |
| planted (copier, quoter) rows found, of {r["planted"]:,} | {r["planted_found_plain"]:,} | {r["planted_found_quotes"]:,} |

Brute force on the same texts (numpy sets, no top-k cut): {r["e_pairs"]:,} directed pairs with
E > 0 ({r["join_work"]:,} pair emissions, {r["join_cpu"]:.2f} s CPU); {r["sum_rows"]:,} directed
rows reach the threshold by S + E ({r["sum_rows_cpu"]:.2f} s CPU), {r["sum_rows_stored"]:,} of
them stored by the index (the others fall below a list's top-k cut), and they hold
{r["planted_found_sum"]:,} of the {r["planted"]:,} planted rows. Chunking by batches of {BATCH}:
U {r["chunk_cpu_U"]:.2f} s CPU, the pass with quotations kept (C) {r["chunk_cpu_C"]:.2f} s, Q = C
minus U {r["chunk_cpu_diff"]:.2f} s.
"""


if __name__ == "__main__":
    main()
