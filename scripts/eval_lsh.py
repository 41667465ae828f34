"""Evaluation of the MinHash LSH mode (issue 15), after paper 001 (and 003's use cases).

Part 1, precision/recall (paper 001, §4.2): an index of ``--pr-docs`` generated documents;
query documents are plagiarised variants of ``--originals`` of them, made the paper's three
ways (every x-th word replaced, words at uniformly random positions replaced, the first x words
replaced) plus paper 003's way (each line swapped, with probability p, for a random line of
another document). For each (r, b) of the papers, at Jaccard thresholds 0.8 and 0.9:
precision and recall of the candidates (paper 001's definition: a candidate pair is a true
positive when its exact Jaccard is >= t; recall = true positives / query-original pairs with
exact Jaccard >= t), the same after the ``--min t`` filter on the signature estimate, indexing
time (``update --lsh``), and, in the same run on the same corpus and queries, datasketch's
MinHashLSH and rensa's RMinHashLSH with the same (b, r) and Python word 5-gram shingling; beside
them the exact containment index's recall (``Index.query_many``, containment >= t).

Part 2, throughput on ``--docs`` documents (plus near-duplicates planted for recall):
``update`` vs ``update --lsh`` (fresh indexes, alternating), LSH build + all pairs for simdask,
rensa and datasketch; paper 003's use cases timed (all pairs, two groups, one query).

Writes two sections of docs/lsh.md ("Evaluation: ...") and the S-curve plot docs/lsh_scurve.png
(``--skip-part1``: only the throughput section; ``--skip-part2``: only precision/recall).

    python scripts/eval_lsh.py --docs 20000 --words 500
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simdask import Index, IndexConfig
from simdask.ingest.synth import generate_corpus
from simdask.kernels.hashing import chunk_batch
from simdask.kernels.lsh_bands import LshParams
from simdask.read.lsh_search import group_pairs, text_pairs

from _benchutil import machine, today, write_section

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = [(2, 4), (3, 8), (4, 12), (5, 18), (6, 24), (2, 50), (4, 25), (5, 20), (10, 10)]
THRESHOLDS = (0.8, 0.9)
WORD = re.compile(r"\w+")
CFG = IndexConfig()  # the defaults every simdask pipeline here uses (64-bit chunk IDs)


# --- corpora and variants ---------------------------------------------------------------
def make_variants(texts: list[str], originals: list[int], rng) -> list[tuple[int, str, str]]:
    """``(original, kind, text)``: the paper-001 variants and paper-003 line swaps."""
    out = []
    for o in originals:
        words = texts[o].split()
        n = len(words)

        def fake(m: int) -> list[str]:
            return ["".join(rng.choice(list("qxjzkvw"), 6)) for _ in range(m)]

        for x in (25, 50, 100, 200):  # every x-th word replaced
            w = list(words)
            for i in range(x - 1, n, x):
                w[i] = fake(1)[0]
            out.append((o, f"step/{x}", " ".join(w)))
        for f in (0.005, 0.01, 0.02, 0.04):  # words at uniform positions replaced
            w = list(words)
            for i in rng.choice(n, max(1, round(f * n)), replace=False):
                w[i] = fake(1)[0]
            out.append((o, f"uniform/{f}", " ".join(w)))
        for f in (0.02, 0.05, 0.1, 0.2):  # the first x words replaced
            m = max(1, round(f * n))
            out.append((o, f"range/{f}", " ".join(fake(m) + words[m:])))
        lines = texts[o].split("\n")
        for p in (0.02, 0.05, 0.1):  # lines swapped in from other documents (paper 003)
            ls = list(lines)
            for i in range(len(ls)):
                if rng.random() < p:
                    other = texts[int(rng.integers(len(texts)))].split("\n")
                    ls[i] = other[int(rng.integers(len(other)))]
            out.append((o, f"lines/{p}", "\n".join(ls)))
    return out


def chunk_sets(texts: list[str]) -> list[np.ndarray]:
    """simdask's chunk-ID sets (k=5, 28 bits), the ground truth's sets."""
    cb = chunk_batch(texts, CFG.k, CFG.hash_bits, CFG.seed)  # the index's chunk IDs
    order = np.argsort(cb.doc, kind="stable")
    ids, doc = cb.chunk_ids[order], cb.doc[order]
    cut = np.searchsorted(doc, np.arange(len(texts) + 1))
    return [ids[cut[i] : cut[i + 1]] for i in range(len(texts))]


def jac(a: np.ndarray, b: np.ndarray) -> float:
    u = len(np.union1d(a, b))
    return len(np.intersect1d(a, b, assume_unique=True)) / u if u else 0.0


def shingles(text: str) -> list[str]:
    """The usual Python shingling of the peers: lowercase word 5-grams."""
    w = WORD.findall(text.lower())
    return list({" ".join(w[i : i + 5]) for i in range(len(w) - 4)})


def write_jsonl(texts: list[str], keys: list[str], path: Path) -> Path:
    with open(path, "w") as f:
        for k, t in zip(keys, texts, strict=True):
            f.write(json.dumps({"id": k, "text": t}) + "\n")
    return path


# --- peers ---------------------------------------------------------------------------------
def peer_datasketch(sh_docs, sh_queries, b, r):
    """datasketch MinHash + MinHashLSH: (build s, query s, candidates per query, all-pairs)."""
    from datasketch import MinHash, MinHashLSH

    t = time.perf_counter()
    lsh = MinHashLSH(num_perm=b * r, params=(b, r))
    for i, s in enumerate(sh_docs):
        m = MinHash(num_perm=b * r)
        m.update_batch([x.encode() for x in s])
        lsh.insert(i, m)
    build = time.perf_counter() - t
    t = time.perf_counter()
    cands = []
    for s in sh_queries:
        m = MinHash(num_perm=b * r)
        m.update_batch([x.encode() for x in s])
        cands.append(set(lsh.query(m)))
    return build, time.perf_counter() - t, cands


def peer_rensa(sh_docs, sh_queries, b, r):
    """rensa digest matrix + RMinHashLSH: (build s, query s, candidates per query)."""
    from rensa import RMinHash, RMinHashLSH

    t = time.perf_counter()
    lsh = RMinHashLSH(threshold=0.8, num_perm=b * r, num_bands=b)
    lsh.insert_matrix(RMinHash.digest_matrix_from_token_sets(sh_docs, b * r, 42))
    build = time.perf_counter() - t
    t = time.perf_counter()
    cands = [set(c) for c in lsh.query_all(RMinHash.from_token_sets(sh_queries, b * r, 42))]
    return build, time.perf_counter() - t, cands


# --- part 1 -------------------------------------------------------------------------------
def pr(cands: list[set], truth: np.ndarray, orig: list[int], qsets, dsets, t: float):
    """Paper 001's precision and recall: candidates judged by their exact Jaccard."""
    tp = fp = 0
    for q, cs in enumerate(cands):
        for d in cs:
            j = truth[q] if d == orig[q] else jac(qsets[q], dsets[d])
            tp, fp = (tp + 1, fp) if j >= t else (tp, fp + 1)
    relevant = int((truth >= t).sum())
    return (tp / (tp + fp) if tp + fp else 1.0), (tp / relevant if relevant else 1.0)


def _pr_setup(args, client, work: Path) -> SimpleNamespace:
    """Corpus, queries, ground truth, peers' shingles and the exact index's answers."""
    c = SimpleNamespace()
    rng = np.random.default_rng(1)
    corpus = generate_corpus(args.pr_docs, mean_words=args.pr_words, reuse_fraction=0, seed=3)
    c.texts = [d.text for d in corpus.docs]
    keys = [d.key for d in corpus.docs]
    c.key_ix = {k: i for i, k in enumerate(keys)}
    c.src = write_jsonl(c.texts, keys, work / "pr.jsonl")
    originals = sorted(rng.choice(len(c.texts), args.originals, replace=False).tolist())
    c.variants = make_variants(c.texts, originals, rng)
    c.qtexts = [v[2] for v in c.variants]
    c.orig = [v[0] for v in c.variants]
    c.dsets, c.qsets = chunk_sets(c.texts), chunk_sets(c.qtexts)
    c.truth = np.array([jac(c.qsets[q], c.dsets[c.orig[q]]) for q in range(len(c.qtexts))])
    t = time.perf_counter()
    c.sh_docs = [shingles(x) for x in c.texts]
    c.shingle_s = time.perf_counter() - t
    t = time.perf_counter()
    c.sh_q = [shingles(x) for x in c.qtexts]
    c.shingle_q = time.perf_counter() - t
    t = time.perf_counter()
    with Index.create(work / "pr-plain", IndexConfig()) as idx:
        idx.update([c.src], client=client)
        c.plain_s = time.perf_counter() - t
        exact = idx.query_many(c.qtexts, 0.0)
    c.exact_found = {
        th: np.array(
            [
                c.orig[q] in {c.key_ix[m.key] for m in ms if m.similarity >= 100 * th}
                for q, ms in enumerate(exact)
            ]
        )
        for th in THRESHOLDS
    }
    return c


def _pr_setting(c: SimpleNamespace, client, work: Path, r: int, b: int):
    """Rows of one (r, b) for both thresholds, and its measured candidate rate."""
    path = work / f"pr-{b}x{r}"
    shutil.rmtree(path, ignore_errors=True)
    t = time.perf_counter()
    with Index.create(path, IndexConfig(lsh=f"{b}x{r}")) as idx:
        idx.update([c.src], client=client)
        ours_build = time.perf_counter() - t
        t = time.perf_counter()
        res = idx.lsh_query(c.qtexts)
        ours_q = time.perf_counter() - t
    ours = [{c.key_ix[m.key] for m in ms} for ms in res]
    est = [{c.key_ix[m.key]: m.jaccard for m in ms} for ms in res]
    hit = np.array([c.orig[q] in ours[q] for q in range(len(c.qtexts))])
    ds = peer_datasketch(c.sh_docs, c.sh_q, b, r)
    rs = peer_rensa(c.sh_docs, c.sh_q, b, r)
    rows = []
    for th in THRESHOLDS:
        filt = [{d for d, j in e.items() if j >= th} for e in est]
        rel = c.truth >= th
        exact_recall = c.exact_found[th][rel].mean() if rel.any() else 1.0

        def pr_of(cands, th=th):
            return pr(cands, c.truth, c.orig, c.qsets, c.dsets, th)

        mine = (r, b, th, pr_of(ours), pr_of(filt), ours_build, ours_q)
        theirs = (pr_of(ds[2]), ds[0] + c.shingle_s, ds[1] + c.shingle_q)
        theirs += (pr_of(rs[2]), rs[0] + c.shingle_s, rs[1] + c.shingle_q, exact_recall)
        rows.append((*mine, *theirs))
    return rows, (c.truth, hit)


def _pr_markdown(args, c: SimpleNamespace, rows: list) -> str:
    truth = c.truth
    n_rel = {th: int((truth >= th).sum()) for th in THRESHOLDS}
    kinds = sorted({v[1].split("/")[0] for v in c.variants})
    nq = len(c.qtexts)
    head = (
        f"Corpus: {args.pr_docs} generated documents of ~{args.pr_words} words (`generate_corpus`, "
        f"no planted reuse); {nq} query documents = {args.originals} originals x "
        f"{nq // args.originals} variants ({', '.join(kinds)}); exact Jaccard of the "
        f"query-original chunk sets: min {truth.min():.2f}, median {np.median(truth):.2f}, "
        f"max {truth.max():.2f}; {n_rel[0.8]} pairs >= 0.8, {n_rel[0.9]} >= 0.9. "
        f"Plain `update` of this corpus: {c.plain_s:.1f} s. Python 5-gram shingling for the "
        f"peers: {c.shingle_s:.1f} s for the {len(c.texts)} indexed texts (in the peers' build "
        f"time), {c.shingle_q:.1f} s for the queries (in their query time).\n\n"
        "P/R cand.: precision/recall of the candidates (paper 001); P/R est.: after keeping "
        "estimates >= t (`lsh query --min t`); build: whole `update --lsh` (chunking, exact "
        "index and LSH) vs the peers' shingling + MinHash + LSH insert; query: all "
        f"{nq} queries. Exact index recall: `Index.query_many`, containment >= t.\n\n"
        "| r | b | t | simdask P/R cand. | P/R est. | build s | query s | datasketch P/R | build s | "
        "query s | rensa P/R | build s | query s | exact index recall |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    body = "".join(
        f"| {r} | {b} | {th} | {a[0]:.0%} / {a[1]:.0%} | {f[0]:.0%} / {f[1]:.0%} | {ob:.1f} | "
        f"{oq:.2f} | {d[0]:.0%} / {d[1]:.0%} | {db:.1f} | {dq:.2f} | {x[0]:.0%} / {x[1]:.0%} | "
        f"{rb:.1f} | {rq:.2f} | {e:.0%} |\n"
        for r, b, th, a, f, ob, oq, d, db, dq, x, rb, rq, e in rows
    )
    return head + body


def part1(args, client, work: Path) -> tuple[str, dict]:
    """Paper 001's evaluation: markdown and ``{(b, r): (exact Jaccard, candidate?)}``."""
    c = _pr_setup(args, client, work)
    rows, curve = [], {}
    for r, b in SETTINGS:
        more, curve[(b, r)] = _pr_setting(c, client, work, r, b)
        rows += more
        print(f"part 1: r={r} b={b} done", file=sys.stderr)
    return _pr_markdown(args, c, rows), curve


# --- part 2 -------------------------------------------------------------------------------
def _tp_setup(args, work: Path) -> SimpleNamespace:
    """The big corpus with planted near-duplicates and the pairs to find."""
    c = SimpleNamespace(out={})
    c.rng = np.random.default_rng(2)
    corpus = generate_corpus(args.docs, mean_words=args.words, reuse_fraction=0, seed=5)
    c.texts = [d.text for d in corpus.docs]
    originals = sorted(c.rng.choice(len(c.texts), args.dups, replace=False).tolist())
    kinds = ("uniform/0.005", "step/100")
    c.var = [v for v in make_variants(c.texts, originals, c.rng) if v[1] in kinds]
    c.texts += [v[2] for v in c.var]
    keys = [f"d{i:06d}" for i in range(len(c.texts))]
    sets = chunk_sets(c.texts)
    base = args.docs
    c.truth = {
        (v[0], base + i) for i, v in enumerate(c.var) if jac(sets[v[0]], sets[base + i]) >= 0.8
    }
    c.src = write_jsonl(c.texts, keys, work / "big.jsonl")
    c.p = LshParams.parse(args.lsh)
    c.ix = {k: i for i, k in enumerate(keys)}
    c.work = work
    return c


def _tp_update(c: SimpleNamespace, client, mode: str) -> float:
    """A fresh index by one `update` (plain or --lsh); with --lsh, all pairs timed apart."""
    path = c.work / f"big-{mode}"
    shutil.rmtree(path, ignore_errors=True)
    t = time.perf_counter()
    with Index.create(path, IndexConfig(lsh=str(c.p) if mode == "lsh" else None)) as idx:
        idx.update([c.src], client=client)
        took = time.perf_counter() - t
        if mode == "lsh":
            t = time.perf_counter()
            c.out["pairs"] = idx.lsh_pairs()
            c.out.setdefault("pairs_s", []).append(time.perf_counter() - t)
    return took


def _tp_dedup(c: SimpleNamespace, threads: int | None = None) -> float:
    """simdask's LSH-only path as users call it, `lsh_search.text_pairs` (what `simdask lsh
    dedup` runs): chunk IDs, signatures, band keys, all pairs, estimates; one process, texts in
    memory as the peers have them."""
    t = time.perf_counter()
    c.out["dedup" if threads is None else f"dedup_{threads}t"] = text_pairs(
        c.texts, c.p, CFG, threads=threads
    )
    return time.perf_counter() - t


def _tp_dedup_cli(c: SimpleNamespace) -> float:
    """`simdask lsh dedup big.jsonl` as a subprocess: interpreter start, imports, reading and
    parsing the JSONL and writing the pairs as JSONL included."""
    cmd = [sys.executable, "-m", "simdask.cli", "lsh", "dedup", str(c.src), "--lsh", f"{c.p}"]
    # as from a user's shell: not the MALLOC_TRIM_THRESHOLD_=65536 that starting the Dask
    # LocalCluster put into this process's environment (it makes glibc mmap every large numpy
    # array: measured 6.8 s instead of 2.6 s for this command, 3.8 s of it system time)
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_TRIM_THRESHOLD_"}
    t = time.perf_counter()
    p = subprocess.run(
        [*cmd, "-o", "jsonl"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    took = time.perf_counter() - t
    c.out["dedup_cli"] = [json.loads(x) for x in p.stdout.splitlines()]
    return took


def _tp_peer(c: SimpleNamespace, name: str) -> float:
    """A peer's pipeline: Python shingling, MinHash, LSH insert, candidates of every text."""
    t = time.perf_counter()
    sh = [shingles(x) for x in c.texts]
    sh_s = time.perf_counter() - t
    fn = peer_rensa if name == "rensa" else peer_datasketch
    build, query, cands = fn(sh, sh, c.p.bands, c.p.rows)
    found = {(min(i, j), max(i, j)) for i, cs in enumerate(cands) for j in cs if i != j}
    c.out[name] = (sh_s, build, query, len(c.truth & found) / len(c.truth), len(found))
    return sh_s + build + query


def _cpu(client) -> float:
    """CPU seconds so far of this process (all its threads: rensa's Rayon threads too), of
    the Dask workers and of finished subprocesses."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    workers = sum(client.run(time.process_time).values())
    return time.process_time() + workers + kids.ru_utime + kids.ru_stime


def _tp_rounds(args, c: SimpleNamespace, client) -> tuple[dict, dict, dict]:
    """Every pipeline once a round, the order rotated; per-round wall and CPU seconds, the
    peers' best rounds."""
    runs = {
        "plain": lambda: _tp_update(c, client, "plain"),
        "lsh": lambda: _tp_update(c, client, "lsh"),
        "dedup": lambda: _tp_dedup(c),
        "dedup_1t": lambda: _tp_dedup(c, threads=1),
        "dedup_cli": lambda: _tp_dedup_cli(c),
        "rensa": lambda: _tp_peer(c, "rensa"),
        "datasketch": lambda: _tp_peer(c, "datasketch"),
    }
    times: dict[str, list[float]] = {k: [] for k in runs}
    cpu: dict[str, list[float]] = {k: [] for k in runs}
    best: dict[str, tuple] = {}
    if args.lsh_only:  # only the LSH-only pipelines beside the peers
        runs = {k: v for k, v in runs.items() if k not in ("plain", "lsh")}
        times = {k: times[k] for k in runs}
        cpu = {k: cpu[k] for k in runs}
    names = list(runs)
    for rnd in range(args.rounds):  # interleaved, order rotated: load changes hit all alike
        for name in names[rnd % len(names) :] + names[: rnd % len(names)]:
            c0 = _cpu(client)
            times[name].append(runs[name]())
            cpu[name].append(_cpu(client) - c0)
            if times[name][-1] == min(times[name]) and name in ("rensa", "datasketch"):
                best[name] = c.out[name]
            print(
                f"part 2: round {rnd} {name} {times[name][-1]:.1f} s, cpu {cpu[name][-1]:.1f} s, "
                f"load {os.getloadavg()[0]:.1f}",
                file=sys.stderr,
            )
    return times, cpu, best


def _tp_use_cases(args, c: SimpleNamespace) -> dict:
    """Paper 003's one-query and two-group use cases (all pairs: timed with the update)."""
    with Index.open(c.work / "big-lsh") as idx:
        one = []
        for q in c.rng.choice(args.docs, 21, replace=False).tolist():
            t = time.perf_counter()
            idx.lsh_query([c.texts[q]])
            one.append(time.perf_counter() - t)
    half = len(c.texts) // 2
    t = time.perf_counter()
    gp = group_pairs(c.texts[:half], c.texts[half:], c.p)
    return {"one": one, "half": half, "groups_s": time.perf_counter() - t, "groups": len(gp)}


def _recall(c: SimpleNamespace, pairs) -> float:
    """Share of the planted pairs (exact Jaccard >= 0.8) among ``pairs`` (index pairs)."""
    return len(c.truth & {(min(a, b), max(a, b)) for a, b in pairs}) / len(c.truth)


def part2_lsh_only(args, c: SimpleNamespace, times, cpu, peers, loads) -> str:
    """``--lsh-only``: `text_pairs` (one per CPU and 1 thread) and `lsh dedup` beside rensa
    and datasketch, markdown (nothing written to the docs page)."""
    w = {k: min(v) for k, v in times.items()}
    u = {k: v[times[k].index(w[k])] for k, v in cpu.items()}
    peer_s = {k: sum(v[:3]) for k, v in peers.items()}
    rs, dk = peer_s["rensa"], peer_s["datasketch"]
    rec = {k: _recall(c, [(i, j) for i, j, _ in c.out[k]]) for k in ("dedup", "dedup_1t")}
    rec["dedup_cli"] = _recall(c, [(c.ix[r["doc"]], c.ix[r["other"]]) for r in c.out["dedup_cli"]])
    rec.update({k: v[3] for k, v in peers.items()})
    lines = [
        f"{len(c.texts)} texts, LSH {c.p}, {args.rounds} rounds interleaved, best wall of each; "
        f"load average (1 min) {loads[0]:.1f} at the start, {loads[1]:.1f} at the end; "
        "per-round wall seconds: "
        + "; ".join(f"{k} " + "/".join(f"{x:.1f}" for x in v) for k, v in times.items()),
        "",
        "| pipeline | wall s | CPU s | vs rensa (wall) | vs datasketch (wall) | recall |",
        "|---|---|---|---|---|---|",
    ]
    for k in times:
        sec = peer_s.get(k, w[k])
        lines.append(
            f"| {k} | {sec:.1f} | {u[k]:.1f} | {rs / sec:.2f}x | {dk / sec:.1f}x | {rec[k]:.1%} |"
        )
    return "\n".join(lines)


def part2(args, client, work: Path) -> str:
    """Throughput and use cases: markdown."""
    c = _tp_setup(args, work)
    load0 = os.getloadavg()
    times, cpu, peers = _tp_rounds(args, c, client)
    load1 = os.getloadavg()
    if args.lsh_only:
        return part2_lsh_only(args, c, times, cpu, peers, (load0[0], load1[0]))
    uc = _tp_use_cases(args, c)
    w = {k: min(v) for k, v in times.items()}  # best wall seconds of each pipeline
    u = {k: v[times[k].index(w[k])] for k, v in cpu.items()}  # CPU seconds of that round
    pairs, pairs_s = c.out["pairs"], min(c.out["pairs_s"])
    rec = {
        "index": _recall(c, [(c.ix[x.doc], c.ix[x.other]) for x in pairs]),
        "dedup": _recall(c, [(i, j) for i, j, _ in c.out["dedup"]]),
        "cli": _recall(c, [(c.ix[r["doc"]], c.ix[r["other"]]) for r in c.out["dedup_cli"]]),
    }
    n, p = len(c.texts), c.p
    ours_total = w["lsh"] + pairs_s
    peer_s = {k: sum(v[:3]) for k, v in peers.items()}

    def row(what, sec, cpu_s, recall="", npairs=""):
        r = f"{recall:.1%}" if recall != "" else ""
        return f"| {what} | {sec:.1f} | {cpu_s:.1f} | {n / sec:.0f} | {r} | {npairs} |"

    lines = [
        f"Corpus: {args.docs} generated documents of ~{args.words} words plus {len(c.var)} "
        f"near-duplicates of {args.dups} of them ({n} in all); {len(c.truth)} pairs of exact "
        f"Jaccard >= 0.8 to find; LSH {p} ({p.perms} permutations); chunk IDs of "
        f"{CFG.hash_bits} bits, k = {CFG.k}; {args.rounds} rounds, the pipelines interleaved "
        "(order rotated each round), best wall time of each (CPU: the same round's CPU seconds "
        "of every process involved: this one with its threads, the Dask workers, "
        "subprocesses); load average (1 min) "
        f"{load0[0]:.1f} at the start, {load1[0]:.1f} at the end; per-round wall seconds: "
        + "; ".join(f"{k} " + "/".join(f"{x:.1f}" for x in v) for k, v in times.items())
        + ".\n",
        "| pipeline | wall s | CPU s | docs/s | recall (J >= 0.8) | pairs |",
        "|---|---|---|---|---|---|",
        row(
            "simdask `update` (exact index only; Dask, 2 worker processes)", w["plain"], u["plain"]
        ),
        row(
            f"simdask `update --lsh {p}` (exact index + LSH, on disk; CPU with `lsh pairs`)",
            w["lsh"],
            u["lsh"],
        ),
        row(
            f"simdask `update --lsh {p}` + `lsh pairs` (all pairs {pairs_s:.2f} s)",
            ours_total,
            u["lsh"],
            rec["index"],
            len(pairs),
        ),
        row(
            "simdask `text_pairs` (what `lsh dedup` runs; one process, texts in memory: "
            "chunk IDs, signatures, band keys, all pairs, estimates)",
            w["dedup"],
            u["dedup"],
            rec["dedup"],
            len(c.out["dedup"]),
        ),
        row(
            "simdask `lsh dedup big.jsonl -o jsonl` (CLI subprocess: start, reading the JSONL, "
            "output included)",
            w["dedup_cli"],
            u["dedup_cli"],
            rec["cli"],
            len(c.out["dedup_cli"]),
        ),
    ]
    for name, (sh_s, build, query, rc, npairs) in peers.items():
        lines.append(
            row(
                f"{name}: Python shingling {sh_s:.1f} s + MinHash/LSH build {build:.1f} s + "
                f"query all {query:.1f} s (one process, texts in memory)",
                peer_s[name],
                u[name],
                rc,
                npairs,
            )
        )
    rs, dk = peer_s["rensa"], peer_s["datasketch"]
    one = uc["one"]
    lines += [
        "",
        "Who does what: the peers shingle the texts in Python (lowercase word 5-grams), "
        "compute MinHash signatures, insert them into an in-memory LSH and query every text "
        "(rensa's Rust code may use both cores). `text_pairs`/`lsh dedup` do the same work "
        "from texts to scored pairs (simdask's chunk IDs instead of Python shingles; nothing "
        "stored). `update --lsh` additionally builds the exact containment index and writes "
        "texts, shards and LSH data to disk, on a Dask cluster of 2 worker processes.",
        "",
        f"- `update --lsh` / `update`: **{w['lsh'] / w['plain']:.2f}x** wall, "
        f"{u['lsh'] / u['plain']:.2f}x CPU (target <= 1.2x).",
        f"- LSH build + all pairs, like for like (`text_pairs`): **{rs / w['dedup']:.2f}x** "
        f"rensa's throughput, **{dk / w['dedup']:.1f}x** datasketch's (targets >= 1x, >= 10x); "
        f"as the CLI `lsh dedup` with start-up and JSON I/O: {rs / w['dedup_cli']:.2f}x and "
        f"{dk / w['dedup_cli']:.1f}x.",
        f"- The whole persistent pipeline (`update --lsh` + `lsh pairs`, exact index included): "
        f"{rs / ours_total:.2f}x rensa's throughput, {dk / ours_total:.1f}x datasketch's.",
        "",
        f"Paper 003's use cases on this corpus (LSH {p}):",
        "",
        "| use case | seconds |",
        "|---|---|",
        f"| all pairs (`lsh pairs`, index built) | {pairs_s:.2f} |",
        f"| two groups ({uc['half']} x {n - uc['half']} texts, in memory, chunking included) | "
        f"{uc['groups_s']:.2f} ({uc['groups']} pairs) |",
        f"| one query (`Index.lsh_query`, median of 20 after a first of {one[0] * 1000:.0f} ms) | "
        f"{statistics.median(one[1:]) * 1000:.1f} ms |",
    ]
    return "\n".join(lines)


def plot(curve: dict, path: Path) -> None:
    """S-curves of the settings with the empirical candidate rates of part 1 as points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = np.linspace(0, 1, 501)
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    bins = np.linspace(0.3, 1.0, 15)
    for (b, r), (truth, hit) in curve.items():
        (line,) = ax.plot(s, 1 - (1 - s**r) ** b, label=f"r={r}, b={b}")
        which = np.digitize(truth, bins)
        full = [i for i in np.unique(which) if (which == i).sum() >= 20]  # 20+ queries a bin
        xs = [truth[which == i].mean() for i in full]
        ys = [hit[which == i].mean() for i in full]
        ax.plot(xs, ys, "o", color=line.get_color(), markersize=3)
    ax.set_xlabel("exact Jaccard similarity s of query and original")
    ax.set_ylabel("P(candidate) = 1-(1-s^r)^b   (points: measured, bins of 20+ queries)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--words", type=int, default=500)
    ap.add_argument("--dups", type=int, default=500, help="originals given near-duplicates")
    ap.add_argument("--pr-docs", type=int, default=5000)
    ap.add_argument("--pr-words", type=int, default=400)
    ap.add_argument("--originals", type=int, default=100)
    ap.add_argument("--lsh", default="20x5")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--work", default=str(ROOT / "bench-data" / "eval_lsh"))
    ap.add_argument("--out", default=str(ROOT / "docs" / "lsh.md"))
    ap.add_argument("--skip-part1", action="store_true")
    ap.add_argument("--skip-part2", action="store_true")
    ap.add_argument(
        "--lsh-only",
        action="store_true",
        help="part 2 without the index updates: text_pairs (one thread per CPU and one), "
        "lsh dedup, rensa, datasketch; printed, not written to the docs page",
    )
    args = ap.parse_args()
    from distributed import Client, LocalCluster

    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0") as cl,
        Client(cl) as client,
    ):
        sec1, curve = ("", {}) if args.skip_part1 else part1(args, client, work)
        print(sec1)
        sec2 = "" if args.skip_part2 else part2(args, client, work)
        print(sec2)
    where = (
        f"Machine: {machine()}. Date: {today()}. Dask LocalCluster of 2 worker processes; the "
        "machine is shared, so compare within a table (same run), not across runs.\n\n"
    )
    if curve:
        plot(curve, Path(args.out).parent / "lsh_scurve.png")
        write_section(
            args.out,
            "Evaluation: precision and recall, after paper 001 (eval_lsh.py)",
            where + sec1 + "\n\n![S-curves and measured candidate rates](lsh_scurve.png)\n",
        )
    if sec2 and not args.lsh_only:
        write_section(args.out, "Evaluation: throughput and use cases (eval_lsh.py)", where + sec2)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
