"""Incremental runs on the scale benchmark's prose indexes (issue 14 "+100 at 1M", issue 13).

``bench_incremental.py`` builds its own bases of the synthetic generator at 10k and 100k; a
base of a million documents costs a full build of half an hour, so the million-document figure
is measured here, on the indexes that ``bench_scale.py --keep`` leaves (generated prose with
real phrase statistics, ``DATA/index-N``), and side by side on the smaller ones of the same
corpus. The indexes are changed in place (each round adds, modifies and deletes other
documents), so run this after the scale figures are taken.

Per round, for every index in turn (the same machine load for all sizes): a run that adds
``--changes`` new prose documents and reads one of their stored similarities, one that modifies
as many base documents (the first half of the text kept, the start of document p000000000 appended:
same key, same source) and one that deletes as many, in process on one running LocalCluster;
then ``simdask update INDEX new.jsonl`` as a whole new process (cluster start included).
Prints the numbers and writes the section "Incremental runs on the scale indexes" of
docs/benchmarks.md.

    python scripts/bench_incremental_scale.py --data /work/data/scale \\
        --sizes 10000,100000,1000000 --rounds 3
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from simdask import Index
from simdask.cluster.connect import connect
from simdask.errors import DocumentNotFoundError
from simdask.ingest.prose import ProseModel, iter_documents
from simdask.ingest.sources import list_items, source_id

from _benchutil import load_average, machine, today, write_section

REPO = Path(__file__).resolve().parent.parent
PER_FILE = 10_000
OPS = ("add", "modify", "delete", "cli")


def write_jsonl(docs: list[tuple[str, str]], path: Path) -> Path:
    """``docs`` as JSONL of ``{"id", "text"}`` lines at ``path``."""
    with open(path, "w", encoding="utf-8") as f:
        for key, text in docs:
            f.write(json.dumps({"id": key, "text": text}) + "\n")
    return path


def new_docs(model: ProseModel, c: int, start: int, prefix: str) -> list[tuple[str, str]]:
    """``c`` prose documents that no base holds (seed 424,242), keys prefixed ``prefix``."""
    return [
        (f"{prefix}-{d.key}", d.text) for d in iter_documents(model, c, seed=424_242, start=start)
    ]


def victims(n: int, c: int, rounds: int) -> list[list[int]]:
    """Per round and operation (modify, delete): ``c`` distinct base document numbers spread
    over the base, different in every round."""
    step = max(1, n // (2 * c * rounds))
    picks = list(range(1, n, step))[: 2 * c * rounds]
    return [picks[i * c : (i + 1) * c] for i in range(2 * rounds)]


def live_picks(idx: Index, picks: list[int], n: int, c: int) -> list[int]:
    """``c`` base document numbers from ``picks``, skipping those no longer in ``idx`` (deleted
    by an earlier invocation, ``--first-round``), topped up by other numbers from 1 on."""
    out: list[int] = []
    for i in [*picks, *range(1, n)]:
        if len(out) == c:
            break
        if i in out:
            continue
        try:
            idx.catalog.document(f"p{i:09d}")
        except DocumentNotFoundError:
            continue
        out.append(i)
    return out


def timed_run(idx: Index, op: str, batch, corpus: Path, work: Path, client) -> tuple[float, object]:
    """One in-process run of ``op`` on ``idx``; the seconds until the change is queryable."""
    if op == "add":
        kwargs = {"sources": [write_jsonl(batch, work / "add.jsonl")]}
    elif op == "modify":
        items = []
        for key, text in batch:
            part = corpus / f"part-{int(key[1:]) // PER_FILE:05d}.jsonl"
            one = write_jsonl([(key, text)], work / f"mod-{key}.jsonl")
            items += [dataclasses.replace(i, source=source_id(part)) for i in list_items([one])]
        kwargs = {"items": items}
    else:
        kwargs = {"remove": batch}
    t = time.perf_counter()
    s = idx.update(client=client, **kwargs)
    if op != "delete":
        idx.similar(batch[0][0])
    return time.perf_counter() - t, s


def run_round(args, model, r: int, indexes: dict[int, Path], client, times: dict) -> None:
    """Round ``r``: add, modify, delete in process on every index, then the CLI add."""
    c = args.changes
    corpus = Path(args.data) / f"corpus-seed{args.seed}"
    added = new_docs(model, c, r * c, f"inc{r}")
    for op in ("add", "modify", "delete"):
        for n, path in indexes.items():
            work = path.parent / f"incr-work-{n}"
            work.mkdir(exist_ok=True)
            picks = victims(n, c, args.first_round + args.rounds)[2 * r + (op == "delete")]
            with Index.open(path) as idx:
                picks = live_picks(idx, picks, n, c)
                if op == "add":
                    batch = [(f"{k}-{n}", t) for k, t in added]
                elif op == "modify":
                    other = idx.text("p000000000")[:2000]  # never a victim
                    batch = []
                    for i in picks:
                        text = idx.text(f"p{i:09d}")
                        batch.append((f"p{i:09d}", text[: len(text) // 2] + " " + other))
                else:
                    batch = [f"p{i:09d}" for i in picks]
                load = os.getloadavg()[0]
                total, s = timed_run(idx, op, batch, corpus, work, client)
            want = {"add": (c, 0, 0), "modify": (0, c, 0), "delete": (0, 0, c)}[op]
            if (s.added, s.modified, s.deleted) != want:
                raise RuntimeError(f"{op} at {n}: expected {want} added/modified/deleted, got {s}")
            delta = s.extra.get("delta_seconds") or {}
            times[(n, op)].append({"s": total, "load": load, "stages": s.seconds, "delta": delta})
            print(f"round {r} {n:,}: {op} {c}: {total:.2f} s {delta}", flush=True)
    cli_docs = new_docs(model, c, (args.rounds + r) * c, f"cli{r}")
    for n, path in indexes.items():
        jsonl = write_jsonl(
            [(f"{k}-{n}", t) for k, t in cli_docs], path.parent / f"incr-work-{n}/cli.jsonl"
        )
        cmd = [sys.executable, "-m", "simdask.cli", "update", str(path), str(jsonl), "--quiet"]
        load = os.getloadavg()[0]
        t = time.perf_counter()
        subprocess.run(cmd, capture_output=True, text=True, check=True)
        times[(n, "cli")].append({"s": time.perf_counter() - t, "load": load})
        print(f"round {r} {n:,}: simdask update +{c}: {times[(n, 'cli')][-1]['s']:.2f} s")


def summarise(times: dict, sizes: list[int]) -> dict:
    """Median seconds and load per (size, operation), and the ratio to the smallest size."""
    out: dict = {}
    for (n, op), xs in times.items():
        out.setdefault(n, {})[op] = {
            "median_s": statistics.median(x["s"] for x in xs),
            "all_s": [round(x["s"], 3) for x in xs],
            "load": statistics.median(x["load"] for x in xs),
        }
        if xs and "delta" in xs[0]:
            keys = set().union(*(x["delta"] for x in xs))
            out[n][op]["delta"] = {
                k: round(statistics.median(x["delta"].get(k, 0.0) for x in xs), 3) for k in keys
            }
    for n in sizes:
        for op in OPS:
            out[n][op]["ratio"] = out[n][op]["median_s"] / out[sizes[0]][op]["median_s"]
    return out


def report(args, res: dict, sizes: list[int], load_before: str) -> str:
    """The docs/benchmarks.md section."""
    head = "| operation, median of {r} | " + " | ".join(f"{n:,}" for n in sizes) + " |"
    lines = [
        f"`scripts/bench_incremental_scale.py --sizes {args.sizes} --rounds {args.rounds} "
        f"--changes {args.changes}` on {machine()}, {today()}; load before {load_before}, "
        f"after {load_average()}.",
        "",
        "The bases are the scale benchmark's indexes of generated prose with real phrase "
        "statistics (`bench_scale.py --keep`, default settings), changed in place; every "
        "round adds, modifies and deletes other documents of every size in turn. In-process "
        "runs share one LocalCluster of "
        f"{args.workers} workers; `simdask update` is a new process with its cluster start.",
        "",
        head.format(r=args.rounds),
        "|---" * (len(sizes) + 1) + "|",
    ]
    names = {
        "add": f"add {args.changes} in process",
        "modify": f"modify {args.changes}",
        "delete": f"delete {args.changes}",
        "cli": f"`simdask update` +{args.changes}, new process",
    }
    for op in OPS:
        cells = [
            f"{res[n][op]['median_s']:.2f} s"
            + (f" ({res[n][op]['ratio']:.2f}×)" if n != sizes[0] else "")
            for n in sizes
        ]
        lines.append(f"| {names[op]} | " + " | ".join(cells) + " |")
    lines += ["", "Medians of the run's delta steps (s), add:", ""]
    for n in sizes:
        lines.append(f"- {n:,}: {json.dumps(res[n]['add'].get('delta', {}), sort_keys=True)}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", default=str(REPO / "bench-data/scale"), help="bench_scale's DATA")
    ap.add_argument("--sizes", default="10000,100000,1000000", help="kept indexes DATA/index-N")
    ap.add_argument("--model", default=None, help="bigram model (default DATA/prose-model.npz)")
    ap.add_argument("--seed", type=int, default=1, help="the corpus seed of bench_scale")
    ap.add_argument("--changes", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--first-round",
        type=int,
        default=0,
        help="number the rounds from here (new keys and victims on indexes this script changed)",
    )
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--save", default=None, help="write the results here (JSON)")
    ap.add_argument("--out", default=str(REPO / "docs/benchmarks.md"))
    ap.add_argument("--no-doc", action="store_true", help="do not write docs/benchmarks.md")
    args = ap.parse_args()
    data = Path(args.data)
    sizes = [int(s) for s in args.sizes.split(",")]
    indexes = {n: data / f"index-{n}" for n in sizes}
    missing = [str(p) for p in indexes.values() if not (p / "catalog.sqlite").exists()]
    if missing:
        raise SystemExit(f"expected kept indexes of bench_scale.py --keep, missing: {missing}")
    model = ProseModel.load(Path(args.model or data / "prose-model.npz"))
    load_before = load_average()
    times: dict = {(n, op): [] for n in sizes for op in OPS}
    with connect(workers=args.workers) as client:
        for r in range(args.first_round, args.first_round + args.rounds):
            run_round(args, model, r, indexes, client, times)
    res = summarise(times, sizes)
    print(json.dumps(res, indent=1))
    if args.save:
        Path(args.save).write_text(json.dumps({str(k): v for k, v in res.items()}, indent=1))
    if not args.no_doc:
        write_section(
            args.out, "Incremental runs on the scale indexes", report(args, res, sizes, load_before)
        )


if __name__ == "__main__":
    main()
