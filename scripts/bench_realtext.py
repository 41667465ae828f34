"""Real-text benchmark (issue 13): simdask defaults vs ``--max-df`` vs counting through every
chunk vs MinHash LSH pipelines, on real-text corpora, in the same run.

Corpora: JSONL files of ``{"id", "text"}`` built by ``scripts/build_corpora.py`` (man pages,
Debian copyright files, changelogs, Python docstrings, /usr/share/doc texts) in
``bench-data/corpora``. Per corpus, each method runs as its own process tree (simdask's CLI
with its LocalCluster workers; the LSH pipelines in a child of this script), sampled every
0.1 s for the RSS of its largest process:

* ``simdask`` defaults (``auto`` mode: ``exact`` when the heavy-only search fits its budget,
  else ``informative``; adaptive heavy cutoff);
* ``simdask --similarity-mode informative`` (heavy-only pairs not searched);
* ``simdask --max-df 1000``;
* ``simdask --similarity-mode exact`` (heavy-only pairs searched);
* ``simdask`` counting every pair through every chunk (the behaviour before issue 13:
  ``--heavy-df`` above the corpus size), killed after ``--cap`` seconds;
* ``rensa``: Python shingling (the same 5-word sorted chunks) + ``RMinHash(128)`` +
  ``RMinHashLSH(threshold 0.5, 16 bands)``, every document inserted and queried;
* ``datasketch``: ``MinHash(128)`` + ``MinHashLSH(threshold 0.5)``, likewise.

Quality: top-10 recall against exact counting over all true string chunks, for a sample of
documents: of each sampled document's exact top-10 partners (similarity >= 1 %; partners tied
with the 10th count as top-10), the share found in the method's top-10 (simdask: its stored
list; LSH: its candidates ranked by their exact similarity, i.e. the best any verification
could do). Also the largest error of simdask's stored values on those rows (hash collisions).

Writes the section "Real text (bench_realtext.py)" of docs/realtext.md.

    python scripts/build_corpora.py                 # once; see its docstring
    python scripts/bench_realtext.py --only manpages,copyright --cap 300 --sample 200
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import psutil

from _benchutil import load_average, machine, today, write_section

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ("manpages", "copyright", "changelogs", "pydocs", "docs")
TOP = 10
THRESHOLD = 1.0


def load(path: Path) -> list[tuple[str, str]]:
    """``(id, text)`` of every line of a JSONL corpus."""
    with open(path, encoding="utf-8") as f:
        return [(d["id"], d["text"]) for d in map(json.loads, f)]


def run_measured(cmd: list[str], cap: float, env: dict) -> dict:
    """Run ``cmd`` as a new process group; wall seconds (None past ``cap``), peak RSS of its
    largest process and of the whole tree (bytes)."""
    t = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    root = psutil.Process(proc.pid)
    single = total = 0
    while proc.poll() is None:
        if time.perf_counter() - t > cap:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return {"seconds": None, "peak_single": single, "peak_total": total, "out": ""}
        rss = []
        try:
            for p in [root, *root.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    rss.append(p.memory_info().rss)
        except psutil.Error:
            pass
        if rss:
            single, total = max(single, max(rss)), max(total, sum(rss))
        time.sleep(0.1)
    seconds = time.perf_counter() - t
    out = proc.stdout.read().decode(errors="replace")
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}:\n{out[-3000:]}")
    return {"seconds": seconds, "peak_single": single, "peak_total": total, "out": out}


# --------------------------------------------------------------------------------------------
# LSH pipelines (run in a child process: python bench_realtext.py --inner NAME CORPUS OUT)


def shingles(text: str) -> set[str]:
    """The document's chunks as strings (simdask's definition: 5 sorted words)."""
    from simdask.kernels.words import chunks

    return {" ".join(c) for c in chunks(text)}


def inner(name: str, corpus: Path, out: Path, sample: list[int]) -> None:
    """One LSH pipeline end to end; writes the sampled documents' candidates to ``out``."""
    docs = load(corpus)
    sets = [shingles(t) for _, t in docs]
    cands: dict[int, list[int]] = {}
    want = set(sample)
    if name == "rensa":
        from rensa import RMinHash, RMinHashLSH

        lsh = RMinHashLSH(threshold=0.5, num_perm=128, num_bands=16)
        mhs = []
        for i, s in enumerate(sets):
            m = RMinHash(num_perm=128, seed=42)
            m.update(list(s))
            mhs.append(m)
            lsh.insert(i, m)
        for i, m in enumerate(mhs):
            found = lsh.query(m)
            if i in want:
                cands[i] = [int(x) for x in found if x != i]
    else:
        from datasketch import MinHash, MinHashLSH

        lsh = MinHashLSH(threshold=0.5, num_perm=128)
        mhs = []
        for i, s in enumerate(sets):
            m = MinHash(num_perm=128)
            m.update_batch([c.encode() for c in s])
            mhs.append(m)
            lsh.insert(str(i), m)
        for i, m in enumerate(mhs):
            found = lsh.query(m)
            if i in want:
                cands[i] = [int(x) for x in found if int(x) != i]
    out.write_text(json.dumps({str(k): v for k, v in cands.items()}))


# --------------------------------------------------------------------------------------------
# exact reference and recall


def exact_lists(docs, sample: list[int]) -> dict[int, list[tuple[int, float]]]:
    """Per sampled document: every partner with similarity >= THRESHOLD, as
    ``(other index, percent)``, best first (ties by index), over the true string chunks."""
    sets = [shingles(t) for _, t in docs]
    wanted = set().union(*(sets[i] for i in sample))
    holders: dict[str, list[int]] = {c: [] for c in wanted}
    for d, s in enumerate(sets):
        for c in s & wanted:
            holders[c].append(d)
    out = {}
    for i in sample:
        shared = Counter(d for c in sets[i] for d in holders[c] if d != i)
        n = len(sets[i])
        rows = [(d, 100.0 * k / n) for d, k in shared.items() if n and 100.0 * k / n >= THRESHOLD]
        rows.sort(key=lambda r: (-r[1], r[0]))
        out[i] = rows
    return out


def recall(exact: dict, found: dict[int, list[int]]) -> tuple[float, int]:
    """Mean top-10 recall over sampled documents with any exact partner, and their number."""
    scores = []
    for i, rows in exact.items():
        if not rows:
            continue
        k = min(TOP, len(rows))
        tenth = rows[k - 1][1]
        top = {d for d, sim in rows if sim >= tenth - 1e-9}
        got = found.get(i, [])[:TOP]
        scores.append(min(k, len(top.intersection(got))) / k)
    return (sum(scores) / len(scores) if scores else 1.0), len(scores)


def lsh_top(exact: dict, cands: dict[int, list[int]]) -> dict[int, list[int]]:
    """LSH candidates ranked by their exact similarity (best case of any verification)."""
    out = {}
    for i, rows in exact.items():
        sim = dict(rows)
        c = [d for d in cands.get(i, []) if d in sim]
        out[i] = sorted(c, key=lambda d: (-sim[d], d))
    return out


# --------------------------------------------------------------------------------------------
# simdask runs


SIMDASK = {
    "simdask defaults": [],
    "simdask --similarity-mode informative": ["--similarity-mode", "informative"],
    "simdask --max-df 1000": ["--max-df", "1000"],
    "simdask --similarity-mode exact": ["--similarity-mode", "exact"],
    "simdask, every chunk (before)": ["--heavy-df", str(2**31 - 1)],
}


def simdask_run(corpus: Path, opts: list[str], work: Path, cap: float, env: dict) -> dict:
    """``simdask update`` of a fresh index in its own process tree (2 local workers)."""
    idx = work / f"idx-{len(list(work.iterdir()))}"
    cmd = [sys.executable, "-m", "simdask.cli", "update", str(idx), str(corpus), "--quiet"]
    res = run_measured([*cmd, "--workers", "2", *opts], cap, env)
    res["index"] = idx
    return res


def simdask_found(idx: Path, docs, sample: list[int], exact: dict) -> tuple[dict, float, dict]:
    """Stored top-10 per sampled document (as indices), the largest error of stored values on
    them against exact (points), and the run's heavy-chunk statistics."""
    from simdask import Index

    index_of = {key: i for i, (key, _) in enumerate(docs)}
    found, err = {}, 0.0
    with Index.open(idx) as ix:
        for i in sample:
            rows = ix.similar(docs[i][0])[:TOP]
            found[i] = [index_of[r.other] for r in rows]
            sim = dict(exact[i])
            for r in rows:
                err = max(err, abs(sim.get(index_of[r.other], 0.0) - r.similarity))
        heavy = ix.stats().get("heavy") or {}
    return found, err, heavy


def gib(b: int) -> str:
    return f"{b / 2**30:.2f}"


def bench_corpus(name: str, path: Path, args, env: dict) -> tuple[list[str], str]:
    """All methods on one corpus; markdown table lines and a note on the heavy chunks."""
    docs = load(path)
    words = sum(len(t.split()) for _, t in docs)
    sample = sorted(random.Random(0).sample(range(len(docs)), min(args.sample, len(docs))))
    t = time.perf_counter()
    exact = exact_lists(docs, sample)
    print(
        f"{name}: {len(docs)} docs, {words} words; exact reference {time.perf_counter() - t:.1f} s"
    )
    lines, note = [], ""
    work = Path(tempfile.mkdtemp(prefix=f"bench-realtext-{name}-"))
    chosen = [m.strip() for m in args.methods.split(",") if m.strip()]

    def wanted(label: str) -> bool:
        return not chosen or any(m in label for m in chosen)

    try:
        for label, opts in SIMDASK.items():
            if not wanted(label):
                continue
            res = simdask_run(path, opts, work, args.cap, env)
            if res["seconds"] is None:
                lines.append(
                    f"| {name} | {label} | > {args.cap:.0f} | > {gib(res['peak_single'])} | – |"
                )
                print(lines[-1], flush=True)
                continue
            found, err, heavy = simdask_found(res["index"], docs, sample, exact)
            rec, n = recall(exact, found)
            lines.append(
                f"| {name} | {label} | {res['seconds']:.1f} | {gib(res['peak_single'])} "
                f"| {rec:.3f} (max error {err:.2f} points) |"
            )
            print(lines[-1], flush=True)
            print(f"  {label}: {heavy.get('mode')} {heavy.get('auto')} {heavy.get('seconds')}")
            if label == "simdask defaults":
                note = _heavy_note(name, heavy, len(docs))
            shutil.rmtree(res["index"], ignore_errors=True)
        for label in ("rensa", "datasketch"):
            if not wanted(label):
                continue
            out = work / f"{label}.json"
            cmd = [sys.executable, __file__, "--inner", label, str(path), str(out)]
            res = run_measured([*cmd, "--sample-ids", ",".join(map(str, sample))], args.cap, env)
            if res["seconds"] is None:
                lines.append(f"| {name} | {label} pipeline | > {args.cap:.0f} | – | – |")
                continue
            cands = {int(k): v for k, v in json.loads(out.read_text()).items()}
            rec, n = recall(exact, lsh_top(exact, cands))
            lines.append(
                f"| {name} | {label} pipeline | {res['seconds']:.1f} | {gib(res['peak_single'])} "
                f"| {rec:.3f} |"
            )
            print(lines[-1], flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    head = f"{name}: {len(docs):,} documents, {words / 1e6:.1f} M words; recall over {n} sampled documents with a partner ≥ 1 %"
    return lines, head + ("; " + note if note else "")


def _heavy_note(name: str, h: dict, n_docs: int) -> str:
    if not h or h.get("cutoff") is None:
        return "no heavy chunks (all-pairs counting fits the budget)"
    share = 1 - h["pair_work_light"] / max(1, h["pair_work_all"])
    return (
        f"heavy cutoff df > {h['cutoff']}: {h['heavy_chunks']:,} heavy chunks held by "
        f"{h.get('heavy_docs', 0):,} documents, {share:.2%} of the all-pairs work "
        f"({h['pair_work_all']:.2e} pair counts, {h['pair_work_light']:.2e} left); "
        f"{h.get('heavy_only_docs', 0):,} documents could reach 1 % through heavy chunks alone"
        + _auto_note(h)
    )


def _auto_note(h: dict) -> str:
    a = h.get("auto")
    if not a:
        return f" ({'searched' if h.get('heavy_only_searched') else 'not searched'})"
    op = "<=" if a["pairs"] <= a["budget"] else ">"
    return (
        f"; the default `auto` mode chose `{h['mode']}`: {a['open_docs']:,} of them still open "
        f"after the light pass x {a['heavy_docs']:,} documents holding heavy chunks = "
        f"{a['pairs']:.3g} pairs {op} budget {a['budget']:.3g}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=str(ROOT / "bench-data" / "corpora"))
    ap.add_argument("--only", default=",".join(CORPORA))
    ap.add_argument("--cap", type=float, default=300.0, help="seconds before a run is killed")
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument(
        "--methods", default="", help="run only the methods whose label contains one of these"
    )
    ap.add_argument("--section", default="Real text (bench_realtext.py)", help="doc section")
    ap.add_argument("--out", default=str(ROOT / "docs" / "realtext.md"))
    ap.add_argument("--inner", nargs=3, metavar=("NAME", "CORPUS", "OUT"), help=argparse.SUPPRESS)
    ap.add_argument("--sample-ids", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inner:
        name, corpus, out = args.inner
        inner(name, Path(corpus), Path(out), [int(x) for x in args.sample_ids.split(",") if x])
        return
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    load_before = load_average()
    tables, notes = [], []
    for name in args.only.split(","):
        path = Path(args.corpora) / f"{name}.jsonl"
        if not path.exists():
            print(f"{path} not found; skipped (build it with scripts/build_corpora.py)")
            continue
        lines, note = bench_corpus(name, path, args, env)
        tables += lines
        notes.append(f"- {note}")
    body = (
        f"Machine: {machine()}. Date: {today()}. Run: `python scripts/bench_realtext.py "
        f"--only {args.only} --cap {args.cap:.0f} --sample {args.sample}"
        + (f" --methods {args.methods}" if args.methods else "")
        + f"`. Load average {load_before} at the start, {load_average()} at the end: the "
        "machine was shared with other jobs, read the ratios within one corpus, not absolute "
        "seconds.\n\n"
        "| corpus | method | wall s (whole process) | peak RSS, largest process (GiB) "
        "| top-10 recall vs exact |\n|---|---|---|---|---|\n"
        + "\n".join(tables)
        + "\n\n"
        + "\n".join(notes)
    )
    write_section(args.out, args.section, body)
    print(body)


if __name__ == "__main__":
    main()
