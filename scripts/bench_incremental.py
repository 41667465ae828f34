"""Incremental runs with delta segments (issues 3 and 14): add, modify and delete 100 documents
on indexes of several sizes, a full compaction, and queries after many unmerged runs.

For each ``--docs`` size it builds (or reuses) an index of generated documents, copies it and
times, on a running LocalCluster, a run that adds ``--changes`` documents, one that modifies
as many and one that deletes as many, each until their similarities are queryable; then the
same add through the CLI in a fresh process (cluster start included), and a forced
compaction of the result. With ``--unmerged-runs R`` it also adds R runs of ``--changes``
documents to a copy of the base with compaction off, times queries against it, compacts it
and times the same queries again. Prints the numbers and writes the section "Incremental runs
(bench_incremental.py)" of docs/benchmarks.md.

    python scripts/bench_incremental.py --docs 10000 100000 --unmerged-runs 50
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from simdask import Index, IndexConfig, RunOptions
from simdask.cluster.connect import connect
from simdask.ingest.sources import list_items, source_id
from simdask.ingest.synth import generate_corpus
from simdask.kernels.merge_policy import MergePolicy

from _benchutil import PeakRSS, machine, today, write_section

NEVER = RunOptions(merge_policy=MergePolicy(enabled=False))


def write_jsonl(docs, path: Path) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for key, text in docs:
            f.write(json.dumps({"id": key, "text": text}) + "\n")
    return path


def stage_line(n: int, name: str, s, total: float, load: float) -> str:
    stages = ", ".join(f"{k} {v:.2f}" for k, v in s.seconds.items() if k != "total")
    return (
        f"| {n:,} | {name} | {total:.2f} | {stages} | {s.added}/{s.modified}/{s.deleted} | "
        f"{s.similarity_rows} | {s.extra.get('segments_written', 0)} | "
        f"{s.extra.get('shards_rewritten', 0)} | {load:.1f} |"
    )


def build_base(
    data: Path, docs, n: int, shards: int, client, fresh: bool, hash_bits: int = 28
) -> dict:
    """The base index of ``n`` documents at ``data/index`` (built once, then reused; an index
    of another chunk-ID width is rebuilt)."""
    index_path = data / "index"
    info_file = data / "base-build.json"
    stale = fresh or not (index_path / "catalog.sqlite").exists() or not info_file.exists()
    if not stale:
        with Index.open(index_path) as old:
            stale = old.config.hash_bits != hash_bits
    if stale:
        shutil.rmtree(index_path, ignore_errors=True)
        idx = Index.create(index_path, IndexConfig(shards=shards, hash_bits=hash_bits))
        base = write_jsonl(docs[:n], data / "base.jsonl")
        with PeakRSS() as rss:
            s = idx.update([base], client=client)
        idx.close()
        info = {"seconds": s.seconds, "date": today(), "rss": rss.peak_total}
        info_file.write_text(json.dumps(info))
        print(f"base build {n}: {s.seconds}  peak RSS {rss.peak_total / 2**30:.1f} GiB")
    return json.loads(info_file.read_text())


def time_changes(work: Path, docs, n: int, c: int, client, rows: list) -> dict:
    """Add, modify, delete ``c`` documents in process; returns their seconds."""
    step = max(1, n // c)
    victims = [docs[i] for i in range(0, n, step)][:c]
    modified = [
        (k, t[: len(t) // 2] + " " + docs[(i * 7919) % n][1][:2000])
        for i, (k, t) in enumerate(victims)
    ]
    removed = [docs[i][0] for i in range(step // 2, n, step)][:c]
    added = write_jsonl(docs[n : n + c], work.parent / "added.jsonl")
    mod_file = write_jsonl(modified, work.parent / "modified.jsonl")
    # the modified documents as items of their own source (a key held by another source is
    # a duplicate_key error, never a replacement), as the web uploads or an API caller give
    base = source_id(work.parent / "base.jsonl")
    mod_items = [dataclasses.replace(i, source=base) for i in list_items([mod_file])]
    out = {}
    with Index.open(work) as idx:
        for name, kwargs, want in (
            (f"add {c}", {"sources": [added]}, (c, 0, 0)),
            (f"modify {c}", {"items": mod_items}, (0, c, 0)),
            (f"delete {c}", {"remove": removed}, (0, 0, c)),
        ):
            load = os.getloadavg()[0]
            t = time.perf_counter()
            s = idx.update(client=client, **kwargs)
            if not name.startswith("delete"):
                idx.similar(docs[n][0] if name.startswith("add") else victims[0][0])
            total = time.perf_counter() - t
            out[name.split()[0]] = total
            print(f"{n}: {name}: {total:.2f} s  {s.seconds}")
            if (s.added, s.modified, s.deleted) != want:
                raise RuntimeError(f"{name}: expected {want} added/modified/deleted, got {s}")
            rows.append(stage_line(n, name, s, total, load))
    return out


def cli_add(work: Path, docs, n: int, c: int, workers: int) -> dict:
    """Adds of ``c`` other documents through ``simdask update`` in a new process: as it runs
    by default (a small run: in-process workers) and with ``--workers`` (worker processes
    started), alternating, twice each; the median seconds of each and the load average."""
    out: dict[str, list[float]] = {"default": [], "processes": []}
    loads = []
    for r in range(4):
        kind = ("default", "processes")[r % 2]
        added = write_jsonl(docs[n + (r + 1) * c : n + (r + 2) * c], work.parent / "cli.jsonl")
        cmd = [sys.executable, "-m", "simdask.cli", "update", str(work), str(added), "--quiet"]
        if kind == "processes":
            cmd += ["--workers", str(workers)]
        loads.append(os.getloadavg()[0])
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
        out[kind].append(time.perf_counter() - t)
        print(f"{n}: CLI add {c} ({kind}): {out[kind][-1]:.2f} s; {proc.stderr.strip()[-80:]}")
    res = {k: statistics.median(v) for k, v in out.items()}
    return {**res, "load": statistics.median(loads)}


def time_queries(path: Path, texts: list[str], repeat: int = 3) -> float:
    """Median seconds of one query (warm: each text queried once before timing)."""
    with Index.open(path) as idx:
        for t in texts:
            idx.query(t)
        times = []
        for _ in range(repeat):
            for t in texts:
                t0 = time.perf_counter()
                idx.query(t)
                times.append(time.perf_counter() - t0)
    return statistics.median(times)


def unmerged_queries(data: Path, docs, n: int, c: int, runs: int, client) -> dict:
    """``runs`` adds of ``c`` documents with compaction off; queries before and after a
    forced compaction."""
    unmerged = data / f"unmerged-{runs}-index"
    first = n + 2 * c
    texts = [t[: len(t) // 2] + " " + docs[i][1][:3000] for i, (_, t) in enumerate(docs[:20])]
    info_file = data / f"unmerged-{runs}.json"
    if not info_file.exists():  # built once, then reused
        shutil.rmtree(unmerged, ignore_errors=True)
        shutil.copytree(data / "index", unmerged)
        with Index.open(unmerged) as idx:
            t = time.perf_counter()
            for r in range(runs):
                batch = write_jsonl(docs[first + r * c : first + (r + 1) * c], data / "b.jsonl")
                idx.update(sources=[batch], client=client, options=NEVER)
            info_file.write_text(json.dumps({"runs_s": time.perf_counter() - t}))
    runs_s = json.loads(info_file.read_text())["runs_s"]
    with Index.open(unmerged) as idx:
        segments = idx.stats()["segments"]
    work = data / "compacted-index"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(unmerged, work)
    with Index.open(work) as idx:
        out = idx.compact(client=client, force=True)
    times: dict[Path, list[float]] = {unmerged: [], work: []}
    load = os.getloadavg()[0]
    for _ in range(2):  # alternately: the same machine load for both
        for path in times:
            times[path].append(time_queries(path, texts))
    q_unmerged, q_compacted = (statistics.median(v) for v in times.values())
    print(
        f"{n}: {runs} unmerged runs ({runs_s:.1f} s, {segments} segments): query "
        f"{q_unmerged * 1e3:.1f} ms; compacted ({out['seconds']:.1f} s): {q_compacted * 1e3:.1f} ms"
    )
    return {
        "runs_s": runs_s,
        "segments": segments,
        "unmerged_ms": q_unmerged * 1e3,
        "compacted_ms": q_compacted * 1e3,
        "compact_s": out["seconds"],
        "load": load,
    }


def _sbs_batches(docs: list, n: int, c: int, rounds: int, unmerged: int) -> list:
    """Per round: the documents to add (past those of the other measurements), the base
    documents to modify (their first half and another document's start) and to delete."""
    added = [(f"sbs-{k}", t) for k, t in docs[n + (2 + unmerged) * c :]]
    step = max(1, n // (2 * c * rounds))  # distinct victims in every round, spread over the base
    victims = list(range(1, n, step))[: 2 * c * rounds]
    out = []
    for r in range(rounds):
        mod = victims[2 * r * c : (2 * r + 1) * c]
        out.append(
            {
                "add": added[r * c : (r + 1) * c],
                "modify": [
                    (
                        docs[i][0],
                        docs[i][1][: len(docs[i][1]) // 2] + " " + docs[(i * 7919) % n][1][:2000],
                    )
                    for i in mod
                ],
                "delete": [docs[i][0] for i in victims[(2 * r + 1) * c : (2 * r + 2) * c]],
            }
        )
    return out


def _sbs_run(work: Path, op: str, batch, client) -> tuple[float, object]:
    """One timed in-process run of ``op`` (add, modify, delete) on the index ``work``."""
    jsonl = write_jsonl(batch if op != "delete" else [], work.parent / f"sbs-{op}.jsonl")
    with Index.open(work) as idx:
        if op == "add":
            kwargs = {"sources": [jsonl]}
        elif op == "modify":
            base = source_id(work.parent / "base.jsonl")
            items = [dataclasses.replace(i, source=base) for i in list_items([jsonl])]
            kwargs = {"items": items}
        else:
            kwargs = {"remove": batch}
        t = time.perf_counter()
        s = idx.update(client=client, **kwargs)
        return time.perf_counter() - t, s


def side_by_side(sizes: list[int], c: int, rounds: int, args, client, docs: dict) -> dict:
    """Add, modify and delete ``c`` documents in process, and add ``c`` documents with
    ``simdask update`` in a new process, alternating between copies of the base indexes of
    ``sizes`` every round (the same machine load for all); medians per size and operation."""
    batches, works = {}, {}
    for n in sizes:
        data = Path(args.data) / f"n{n}"
        batches[n] = _sbs_batches(docs[n], n, c, rounds, args.unmerged_runs)
        works[n] = data / "sbs-index"
        shutil.rmtree(works[n], ignore_errors=True)
        shutil.copytree(data / "index", works[n])
    ops = ("add", "modify", "delete")
    times: dict[tuple[int, str], list] = {(n, op): [] for n in sizes for op in (*ops, "cli")}
    for r in range(rounds):
        for op in ops:
            for n in sizes:
                load = os.getloadavg()[0]
                total, s = _sbs_run(works[n], op, batches[n][r][op], client)
                want = {"add": (c, 0, 0), "modify": (0, c, 0), "delete": (0, 0, c)}[op]
                if (s.added, s.modified, s.deleted) != want:
                    raise RuntimeError(f"{op}: expected {want} added/modified/deleted, got {s}")
                extra = {**s.extra, "seconds": s.seconds}
                times[(n, op)].append((total, extra, load))
                print(f"side by side {n}: {op} {c}: {total:.2f} s {s.extra.get('delta_seconds')}")
        for n in sizes:  # a whole process: its own documents
            docs = [(f"cli{r}-{k}", t) for k, t in batches[n][r]["add"]]
            jsonl = write_jsonl(docs, works[n].parent / "sbs-cli.jsonl")
            cmd = [
                sys.executable,
                "-m",
                "simdask.cli",
                "update",
                str(works[n]),
                str(jsonl),
                "--quiet",
            ]
            load = os.getloadavg()[0]
            t = time.perf_counter()
            subprocess.run(cmd, capture_output=True, text=True, check=True)
            times[(n, "cli")].append((time.perf_counter() - t, {}, load))
            print(f"side by side {n}: simdask update +{c}: {times[(n, 'cli')][-1][0]:.2f} s")
    out: dict[int, dict] = {n: {} for n in sizes}
    for (n, op), xs in times.items():

        def med(f, xs=xs):
            return statistics.median(f(x) for x in xs)

        stages = {}
        if op != "cli":
            stages = {
                k: med(lambda x, k=k: x[1]["seconds"].get(k, 0.0)) for k in xs[0][1]["seconds"]
            }
            delta = xs[0][1].get("delta_seconds") or {}
            stages.update(
                {
                    f"delta.{k}": med(lambda x, k=k: (x[1].get("delta_seconds") or {}).get(k, 0.0))
                    for k in delta
                }
            )
        out[n][op] = {
            "median_s": med(lambda x: x[0]),
            "all_s": [round(x[0], 3) for x in xs],
            "stages": stages,
            "pairs": med(lambda x: x[1].get("candidate_pair_counts") or 0),
            "load": med(lambda x: x[2]),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--docs", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--words", type=int, default=1000)
    ap.add_argument("--changes", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--shards", type=int, default=16)
    ap.add_argument(
        "--hash-bits",
        type=int,
        default=IndexConfig().hash_bits,
        help="chunk-ID width of the base indexes (default: the index default; 28 was used "
        "before 64-bit chunk IDs became the default)",
    )
    ap.add_argument("--unmerged-runs", type=int, default=50)
    ap.add_argument("--data", default="bench-data/incremental", help="corpus and index folder")
    ap.add_argument("--out", default="docs/benchmarks.md")
    ap.add_argument("--fresh", action="store_true", help="rebuild the base index even if present")
    ap.add_argument("--previous", help="JSON results of an earlier run (--save) to report too")
    ap.add_argument("--save", default=None, help="write this run's results here (JSON)")
    ap.add_argument("--queries-only", action="store_true", help="time only the queries")
    ap.add_argument(
        "--build-only", action="store_true", help="build (or reuse) the base indexes, then stop"
    )
    ap.add_argument(
        "--side-by-side", type=int, default=0, help="rounds of adds alternating between sizes"
    )
    args = ap.parse_args()

    c, rows, results, all_docs = args.changes, [], {}, {}
    previous = json.loads(Path(args.previous).read_text()) if args.previous else {}
    cluster = connect(workers=args.workers, dashboard_address=":0")  # as simdask starts it
    client = cluster.__enter__()
    try:
        for n in args.docs:
            data = Path(args.data) / f"n{n}"
            data.mkdir(parents=True, exist_ok=True)
            extra = 2 + args.unmerged_runs + args.side_by_side  # documents past the base's
            corpus = generate_corpus(n + extra * c, mean_words=args.words, seed=7)
            docs = [(d.key, d.text) for d in corpus.docs]
            del corpus
            if args.side_by_side:
                all_docs[n] = docs
            info = build_base(data, docs, n, args.shards, client, args.fresh, args.hash_bits)
            if args.build_only:
                continue
            r = dict(previous.get(str(n), {}))
            if not args.queries_only:
                r["rows"] = []
                work = data / "work-index"
                shutil.rmtree(work, ignore_errors=True)
                shutil.copytree(data / "index", work)
                r["build"] = info
                r["changes"] = time_changes(work, docs, n, c, client, r["rows"])
                r["cli_add"] = cli_add(work, docs, n, c, args.workers)
                with Index.open(work) as idx:
                    segs = idx.stats()["segments"]
                    r["compaction"] = {**idx.compact(client=client, force=True), "segments": segs}
                sec = r["compaction"]["seconds"]
                print(f"{n}: full compaction of {segs} segments: {sec:.2f} s")
            rows += r.get("rows", [])
            if args.unmerged_runs:
                r["queries"] = unmerged_queries(data, docs, n, c, args.unmerged_runs, client)
            results[n] = r
        if args.side_by_side:
            sbs = side_by_side(sorted(args.docs), c, args.side_by_side, args, client, all_docs)
            for n, x in sbs.items():
                results.setdefault(n, {})["side_by_side"] = x
    finally:
        cluster.__exit__(None, None, None)
    if args.build_only:
        return
    if args.save:
        Path(args.save).write_text(json.dumps({str(n): r for n, r in results.items()}))
    write_section(args.out, "Incremental runs (bench_incremental.py)", report(args, rows, results))
    print(f"wrote {args.out}")


def report(args, rows: list[str], results: dict) -> str:
    """The docs/benchmarks.md section."""
    c, sizes = args.changes, sorted(results)
    lines = [
        f"Machine: {machine()}. Date: {today()}.",
        f"Corpus: generated documents (synth, seed 7, ~{args.words} words each), "
        f"hash_bits {args.hash_bits}, "
        f"{args.shards} shards (raw layout: an index directory), {args.workers} worker "
        "processes. Incremental runs write per-range delta segments and tombstones "
        "(DESIGN §3, issue 14); seconds, stages from the run summary, totals until the "
        "similarities are queryable.",
        "",
        "| documents | run | total s | stages (s) | added/modified/deleted | similarity rows "
        "written | delta segments written | ranges rewritten | load average |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "| documents | base build s | add/modify/delete 100 in process s | `simdask update` "
        "(+100, new process) s: default (in-process workers) / `--workers N` (worker "
        "processes), load average | full compaction s (segments) |",
        "|---|---|---|---|---|",
    ]
    timed = [n for n in sizes if "changes" in results[n]]
    for n in timed:
        r = results[n]
        ch = r["changes"]
        lines.append(
            f"| {n:,} | {r['build']['seconds'].get('total', 0):.1f} (built {r['build']['date']}) | "
            f"{ch['add']:.2f} / {ch['modify']:.2f} / {ch['delete']:.2f} | "
            f"{r['cli_add']['default']:.2f} / {r['cli_add']['processes']:.2f}, "
            f"{r['cli_add']['load']:.1f} | "
            f"{r['compaction']['seconds']:.2f} ({r['compaction']['segments']}) |"
        )
    if len(timed) >= 2:
        lo, hi = timed[0], timed[-1]
        ratio = results[hi]["changes"]["add"] / results[lo]["changes"]["add"]
        lines += ["", f"Adding {c} documents at {hi:,} vs {lo:,} documents: **{ratio:.2f}x**."]
    sbs = {n: results[n]["side_by_side"] for n in sizes if "side_by_side" in results[n]}
    if sbs:
        lines += [
            "",
            f"Side by side: every round runs each operation on every size in turn ({args.side_by_side} "
            f"rounds, the same machine load for all; medians; {c} documents each; in-process runs "
            "on the running cluster, `simdask update` as a new process):",
            "",
            "| documents | operation | median s | all s | stages (s) | candidate pair counts | load average |",
            "|---|---|---|---|---|---|---|",
        ]
        for n, x in sbs.items():
            for op, y in x.items():
                stages = ", ".join(f"{k} {v:.2f}" for k, v in y["stages"].items() if k != "total")
                lines.append(
                    f"| {n:,} | {op} | {y['median_s']:.2f} | {', '.join(f'{v:.2f}' for v in y['all_s'])} | "
                    f"{stages or '-'} | {y['pairs']:,.0f} | {y['load']:.1f} |"
                )
        if len(sbs) >= 2:
            lo, hi = min(sbs), max(sbs)
            ratios = ", ".join(
                f"{op} **{sbs[hi][op]['median_s'] / sbs[lo][op]['median_s']:.2f}x**"
                for op in sbs[lo]
            )
            lines.append(f"\nRatios {hi:,} / {lo:,}: {ratios}.")
    q = {n: results[n]["queries"] for n in sizes if "queries" in results[n]}
    if q:
        lines += [
            "",
            f"Queries (20 texts not in the index, median of 3 warm passes) after "
            f"{args.unmerged_runs} runs adding {c} documents each with compaction off, and after "
            "a forced compaction of that index (the two timed alternately, twice each):",
            "",
            "| documents | segments | query ms, unmerged | query ms, compacted | ratio | "
            "compaction s | load average |",
            "|---|---|---|---|---|---|---|",
        ]
        for n, x in q.items():
            lines.append(
                f"| {n:,} | {x['segments']} | {x['unmerged_ms']:.1f} | {x['compacted_ms']:.1f} | "
                f"{x['unmerged_ms'] / x['compacted_ms']:.2f} | {x['compact_s']:.2f} | "
                f"{x.get('load', float('nan')):.1f} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
