"""Scale benchmark (issue 13 item 5): full `simdask update` on generated prose with real phrase
statistics at growing corpus sizes; per-stage time, docs/s, peak RSS, bytes per posting,
stored partners per document; a cold query of a 20-page document; docs/scale.md + a log-log
plot.

The corpus comes from :mod:`simdask.ingest.prose`: a word-bigram model trained on real text of
this machine (default: the `docs` and `pydocs` corpora of scripts/build_corpora.py), ~1,500
words a document, 5 % with a copied passage; or, with `--generator phrases`, from the
phrase-rich bank of :mod:`simdask.ingest.phrases` (issue 33), the same lengths and reuse.
Each result records how many planted pairs have a stored row (`planted`). It is written once, streamed, as JSONL files of
10,000 documents; a corpus of n documents is the first n / 10,000 files (documents are
deterministic by seed and number, so every size is a prefix of the largest).

Each size is one `python -m simdask.cli update INDEX FILES... --quiet` process with default
settings (a LocalCluster of one worker per core); the RSS of that process and of all its
children is sampled every 0.2 s. Results are appended to RESULTS (JSON lines), so that sizes
run in the background across sittings can be collected later:

    python scripts/bench_scale.py --sizes 10000,30000,100000          # measure, write the doc
    nohup python scripts/bench_scale.py --sizes 300000,1000000 --data /work/scale-runs \\
        --no-doc > /work/scale-runs/bench.log 2>&1 &                  # background
    python scripts/bench_scale.py --report-only \\
        --results bench-data/scale/results.jsonl,/work/scale-runs/results.jsonl
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from simdask.ingest.phrases import PhraseBank, iter_phrase_documents
from simdask.ingest.prose import (
    ProseModel,
    ProseParams,
    iter_documents,
    jsonl_texts,
    train_model,
)

from _benchutil import load_average, machine, today

REPO = Path(__file__).resolve().parent.parent
CORPORA = Path("/work/main/bench-data/corpora")
PER_FILE = 10_000
STAGES = ("chunk", "merge", "similarity", "commit")


def get_model(path: Path, train: list[str], max_words: int) -> ProseModel:
    """The bigram model at ``path``, trained from the JSONL files ``train`` if missing."""
    if path.exists():
        return ProseModel.load(path)
    t = time.perf_counter()
    model = train_model(jsonl_texts(train, max_words))
    path.parent.mkdir(parents=True, exist_ok=True)
    model.save(path)
    print(
        f"trained {path}: {len(model.vocab)} words, {model.edges} bigrams, "
        f"{time.perf_counter() - t:.1f} s",
        flush=True,
    )
    return model


def corpus_files(model: ProseModel | PhraseBank, data: Path, n: int, seed: int) -> list[Path]:
    """The first ``ceil(n / PER_FILE)`` files of the corpus, generated where missing (each
    file apart, so that a larger size extends a smaller one), each with the reuse planted in
    it (``truth-NNNNN.jsonl``). ``model``: the bigram model (``corpus-seed*``) or the phrase
    bank (``phrases-seed*``, :mod:`simdask.ingest.phrases`)."""
    phrases = isinstance(model, PhraseBank)
    out = data / f"{'phrases' if phrases else 'corpus'}-seed{seed}"
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for part in range((n + PER_FILE - 1) // PER_FILE):
        path = out / f"part-{part:05d}.jsonl"
        if not path.exists():
            t = time.perf_counter()
            tmp = path.with_name(path.name + ".tmp")
            truth: list = []
            docs = (iter_phrase_documents if phrases else iter_documents)(
                model, PER_FILE, seed=seed, start=part * PER_FILE, truth=truth
            )
            with open(tmp, "w", encoding="utf-8") as f:
                for d in docs:
                    f.write(json.dumps({"id": d.key, "text": d.text}) + "\n")
            (out / f"truth-{part:05d}.jsonl").write_text(
                "".join(json.dumps(r.__dict__) + "\n" for r in truth)
            )
            os.replace(tmp, path)
            print(f"wrote {path} in {time.perf_counter() - t:.1f} s", flush=True)
        files.append(path)
    return files


def planted_found(index: Path, files: list[Path]) -> dict:
    """Planted (source, target) pairs of ``files`` (their ``truth-*.jsonl``) with a stored row
    in either direction: ``{"planted", "found"}``."""
    import sqlite3

    pairs = set()
    for f in files:
        t = f.with_name(f.name.replace("part-", "truth-"))
        if t.exists():
            pairs |= {(r["source"], r["target"]) for r in map(json.loads, t.open())}
    con = sqlite3.connect(f"file:{index / 'catalog.sqlite'}?mode=ro", uri=True)
    ids = dict(con.execute("SELECT key, doc_id FROM documents"))
    rows = set(con.execute("SELECT doc, other FROM similarity"))
    con.close()
    found = sum(
        1 for a, b in pairs if (ids.get(a), ids.get(b)) in rows or (ids.get(b), ids.get(a)) in rows
    )
    return {"planted": len(pairs), "found": found}


def _hwm(pid: int) -> int:
    """The peak RSS a process has had so far (VmHWM of /proc/PID/status), bytes; 0 if gone."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def run_sampled(
    cmd: list[str],
    log: Path,
    interval: float = 0.5,
    trace: Path | None = None,
    max_rss: int | None = None,
    code: Path = REPO,
) -> dict:
    """Run ``cmd``; wall seconds, the peak RSS of its process tree (largest process and sum),
    bytes, and the CPU seconds (user + system) of all of them. The largest process's peak is
    its VmHWM (exact up to the last sample before it ended), the sum is sampled. The tree is
    listed again every 10 samples (listing costs more than reading a known process). When the
    sum passes ``max_rss`` bytes the whole process group is killed and ``aborted`` says so (on
    a shared machine, before the kernel's OOM killer picks someone else's process).
    ``peak_driver``: the VmHWM of the command's own process (the Dask client: the row fold,
    the commit), also the trace's fifth column (its RSS). ``code``: the checkout whose simdask
    runs (PYTHONPATH)."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    t = time.perf_counter()
    single = total = driver = 0
    cpu: dict[int, float] = {}  # last CPU seconds seen per process
    aborted = ""
    tf = open(trace, "w") if trace else None  # noqa: SIM115 (closed below)
    with open(log, "ab") as lf:
        proc = subprocess.Popen(
            cmd,
            stdout=lf,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=code,  # `python -m` puts the working directory first on sys.path
            start_new_session=True,
        )
        root = psutil.Process(proc.pid)
        tree: list[psutil.Process] = [root]
        for i in itertools.count():
            if proc.poll() is not None:
                break
            if i % 10 == 0:
                with contextlib.suppress(psutil.Error):
                    tree = [root, *root.children(recursive=True)]
            rss = []
            for p in tree:
                with contextlib.suppress(psutil.Error):
                    rss.append(p.memory_info().rss)
                    c = p.cpu_times()
                    cpu[p.pid] = c.user + c.system
                single = max(single, _hwm(p.pid))
            total = max(total, sum(rss))
            driver = max(driver, _hwm(root.pid))
            if tf:
                tf.write(
                    f"{time.perf_counter() - t:.2f} {max(rss, default=0)} {sum(rss)} "
                    f"{sum(cpu.values()):.1f} {rss[0] if rss else 0}\n"
                )
                tf.flush()
            if max_rss and sum(rss) > max_rss:
                aborted = f"killed at {time.perf_counter() - t:.0f} s: RSS sum {sum(rss)} bytes"
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                break
            time.sleep(interval if i > 20 else 0.05)
    if tf:
        tf.close()
    if proc.returncode != 0 and not aborted:
        aborted = f"exited with {proc.returncode}; see {log}"
    return {
        "wall": time.perf_counter() - t,
        "peak_single": single,
        "peak_total": total,
        "peak_driver": driver,
        "cpu": sum(cpu.values()),
        "aborted": aborted,
    }


def query_doc(model: ProseModel | PhraseBank, files: list[Path], path: Path) -> Path:
    """A 20-page document (~10,000 words): new prose with two passages of an indexed one."""
    params = ProseParams(mean_words=10_000, sigma=0.0, min_words=10_000, reuse_fraction=0.0)
    gen = iter_phrase_documents if isinstance(model, PhraseBank) else iter_documents
    text = next(gen(model, 1, seed=987_654, params=params)).text
    with open(files[0], encoding="utf-8") as f:
        src = json.loads(f.readline())["text"]
    cut = len(text) // 3
    path.write_text(text[:cut] + "\n\n" + src[:3000] + "\n\n" + text[cut:], encoding="utf-8")
    return path


def measure(args, model: ProseModel | PhraseBank, n: int) -> dict:
    """One size: the update, the index's figures, a cold query."""
    data = Path(args.data).resolve()
    files = corpus_files(model, data, n, args.seed)
    index = data / f"index-{n}"
    shutil.rmtree(index, ignore_errors=True)
    log = data / f"update-{n}.log"
    cmd = [sys.executable, "-m", "simdask.cli", "update", str(index), *map(str, files), "--quiet"]
    cmd += args.update_args.split()
    print(f"{n:,} documents: {' '.join(cmd[:6])} ... ({len(files)} files)", flush=True)
    load = load_average()
    run = run_sampled(
        cmd,
        log,
        trace=data / f"rss-{n}.txt",
        max_rss=args.max_rss_gb * 2**30,
        code=Path(args.code),
    )
    if run["aborted"]:
        res = {"requested": n, "date": today(), "load_before": load, **run}
        res["update_args"] = args.update_args
        with open(Path(args.results), "a") as f:
            f.write(json.dumps(res) + "\n")
        print(json.dumps(res), flush=True)
        shutil.rmtree(index, ignore_errors=True)
        raise SystemExit(f"{n:,} documents: {run['aborted']}")
    from simdask import Index

    idx = Index.open(index)
    st = idx.stats()
    summary = idx.catalog.last_run()["summary"]
    shard_bytes = sum(
        idx.store.shard_nbytes(g, s)
        for s, segs in idx.catalog.segments().items()
        for g, _, _ in segs
    )
    idx.close()
    qdoc = query_doc(model, files, data / "query-20pages.txt")
    qcmd = [sys.executable, "-m", "simdask.cli", "query", str(index), str(qdoc)]
    q = run_sampled(qcmd, data / f"query-{n}.log", interval=0.05)
    res = {
        "n": st["documents"],
        "requested": n,
        "date": today(),
        "load_before": load,
        "load_after": load_average(),
        "wall": run["wall"],
        "peak_single": run["peak_single"],
        "peak_total": run["peak_total"],
        "peak_driver": run["peak_driver"],
        "cpu_s": run["cpu"],
        "seconds": summary.get("seconds", {}),
        "heavy": st["heavy"],
        "words": st["words"],
        "postings": st["postings"],
        "distinct_chunks": st["distinct_chunks"],
        "similarity_rows": st["similarity_rows"],
        "bytes_on_disk": st["bytes_on_disk"],
        "shard_bytes": shard_bytes,
        "extra": {k: v for k, v in summary.get("extra", {}).items() if k != "heavy"},
        "planted": planted_found(index, files),
        "generator": args.generator,
        "query_cold_s": q["wall"],
        "query_peak": q["peak_single"],
        "query_words": len(qdoc.read_text().split()),
        "query_error": q["aborted"],
        "update_args": args.update_args,
        "log": str(log),
        "trace": str(data / f"rss-{n}.txt"),
    }
    with open(Path(args.results), "a") as f:
        f.write(json.dumps(res) + "\n")
    print(json.dumps(res), flush=True)
    if not args.keep:
        shutil.rmtree(index, ignore_errors=True)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", default="10000,30000,100000")
    ap.add_argument("--data", default=str(REPO / "bench-data/scale"))
    ap.add_argument("--results", default=None, help="JSON lines (default DATA/results.jsonl)")
    ap.add_argument("--model", default=None, help="bigram model (default DATA/prose-model.npz)")
    ap.add_argument(
        "--train",
        default=f"{CORPORA}/docs.jsonl,{CORPORA}/pydocs.jsonl",
        help="JSONL files to train the model on when it is missing",
    )
    ap.add_argument("--train-words", type=int, default=20_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--generator",
        choices=("prose", "phrases"),
        default="prose",
        help="prose: the bigram model; phrases: the phrase-rich bank (simdask.ingest.phrases)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the indexes")
    ap.add_argument(
        "--update-args", default="", help="more `simdask update` options, e.g. '--memory-limit 0'"
    )
    ap.add_argument(
        "--max-rss-gb", type=float, default=20.0, help="kill a run whose processes hold more"
    )
    ap.add_argument("--no-doc", action="store_true", help="do not write docs/scale.md")
    ap.add_argument(
        "--code", default=str(REPO), help="checkout whose simdask runs (side by side with main)"
    )
    ap.add_argument("--report-only", action="store_true", help="only write the doc")
    ap.add_argument("--out", default=str(REPO / "docs/scale.md"))
    args = ap.parse_args()
    data = Path(args.data).resolve()
    data.mkdir(parents=True, exist_ok=True)
    args.results = args.results or str(data / "results.jsonl")
    if not args.report_only:
        if args.generator == "phrases":
            model = PhraseBank.build()
        else:
            model = get_model(
                Path(args.model or data / "prose-model.npz"),
                args.train.split(","),
                args.train_words,
            )
        sizes = [int(s) for s in args.sizes.split(",")]
        if any(n % PER_FILE for n in sizes):
            raise SystemExit(f"sizes must be multiples of {PER_FILE:,} (whole corpus files)")
        for n in sizes:
            measure(args, model, n)
    if not args.no_doc:
        from _scale_report import write_report

        write_report(args.results.split(","), args.out, machine(), load_average())


if __name__ == "__main__":
    main()
