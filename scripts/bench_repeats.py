"""Benchmark ``simdask repeats``: two-pass vs one-pass, time and peak temporary disk.

The corpus grows with ``n`` fixed, and ``n`` varies at fixed size; both methods run side by
side on the same corpus and cluster (which goes first alternates), and their outputs are
checked to be byte-identical. Two kinds of corpus (``--corpus``), every size a prefix (whole
documents) of the same stream:

* ``prose`` (default): generated prose with real phrase statistics
  (:mod:`simdask.ingest.prose`, a word-bigram model trained on real text, 5 % of documents with
  a planted passage of another), streamed into the corpus file, so any size (10^8 words and
  more) can be made; the model is trained once from ``--train`` and cached in ``--data``;
* ``real``: the JSONL corpora of ``scripts/build_corpora.py`` concatenated in a fixed order
  (about 4e7 words in all).

Writes a section of ``docs/repeats.md`` (machine, date, load) and, if matplotlib is installed,
``docs/repeats.png``.

    PYTHONPATH=. nice -n 10 python scripts/bench_repeats.py --sizes 1e6,1e7,1e8 --ns 3,5,8,10
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from simdask.engine.repeats_run import RepeatsConfig, find_repeats
from simdask.kernels.words import WORD_PATTERN

from _benchutil import PeakRSS, load_average, machine, today, write_section

CORPORA = Path("/work/main/bench-data/corpora")
ORDER = ("manpages", "copyright", "pydocs", "docs", "changelogs")
PART_WORDS = 1_000_000  # words per cached file of generated prose


def real_lines() -> Iterator[str]:
    """JSONL lines of the real-text corpora, in :data:`ORDER`."""
    for name in ORDER:
        path = CORPORA / f"{name}.jsonl"
        if path.exists():
            with open(path, encoding="utf-8") as src:
                yield from src


def prose_model(data: Path, train: list[str], max_words: int):
    """The bigram model cached in ``data`` (trained from the JSONL files ``train`` if missing)."""
    from simdask.ingest.prose import ProseModel, jsonl_texts, train_model

    path = data / "prose-model.npz"
    if path.exists():
        return ProseModel.load(path)
    t = time.perf_counter()
    model = train_model(jsonl_texts([f for f in train if Path(f).exists()], max_words))
    data.mkdir(parents=True, exist_ok=True)
    model.save(path)
    print(f"trained {path}: {len(model.vocab)} words, {model.edges} bigrams, "
          f"{time.perf_counter() - t:.1f} s", flush=True)  # fmt: skip
    return model


def prose_lines(model, seed: int, start: int = 0) -> Iterator[str]:
    """JSONL lines of generated prose from document ``start`` on, without end."""
    from simdask.ingest.prose import BLOCK_DOCS, iter_documents

    for first in itertools.count(start, 64 * BLOCK_DOCS):
        for d in iter_documents(model, 64 * BLOCK_DOCS, seed=seed, start=first):
            yield json.dumps({"id": d.key, "text": d.text}) + "\n"


def prose_parts(args, size: int) -> list[tuple[Path, dict]]:
    """The first ``ceil(size / PART_WORDS)`` files of the generated-prose stream, cached in
    ``args.data`` (made where missing, continuing the stream), with ``{docs, words, bytes}``
    each. File ``k`` ends with the document that brings the stream to ``(k + 1) *
    PART_WORDS`` words, so the files up to ``k`` hold exactly the prefix of that size."""
    folder = Path(args.data, f"prose-seed{args.seed}")
    folder.mkdir(parents=True, exist_ok=True)
    out: list[tuple[Path, dict]] = []
    docs = words = 0
    lines = None
    for k in range(-(-size // PART_WORDS)):
        path, meta_path = folder / f"part-{k:05d}.jsonl", folder / f"part-{k:05d}.json"
        if not meta_path.exists():
            if lines is None:
                model = prose_model(Path(args.data), args.train.split(","), args.train_words)
                lines = prose_lines(model, args.seed, start=docs)
            tmp = path.with_name(path.name + ".tmp")
            d, w, b = build_prefix(lines, (k + 1) * PART_WORDS - words, tmp)
            os.replace(tmp, path)
            meta_path.write_text(json.dumps({"docs": d, "words": w, "bytes": b}))
        meta = json.loads(meta_path.read_text())
        docs, words = docs + meta["docs"], words + meta["words"]
        out.append((path, meta))
    return out


def build_prefix(lines: Iterator[str], words: int, out: Path) -> tuple[int, int, int]:
    """The first ``words`` words (whole documents) of ``lines`` into ``out``:
    ``(documents, words, text bytes)``."""
    docs = total = nbytes = 0
    with open(out, "w", encoding="utf-8") as f:
        for line in lines:
            text = json.loads(line)["text"]
            f.write(line)
            docs += 1
            total += len(WORD_PATTERN.findall(text.lower()))
            nbytes += len(text.encode("utf-8"))
            if total >= words:
                break
    return docs, total, nbytes


def corpus(args, size: int, td: str) -> tuple[list[Path], int, int, int]:
    """The corpus of ``size`` words (``args.corpus``): ``(files, documents, words, bytes)``."""
    if args.corpus == "real":
        src = Path(td, f"corpus-{size}.jsonl")
        return ([src], *build_prefix(real_lines(), size, src))
    parts = prose_parts(args, size)
    return (
        [p for p, _ in parts],
        *(sum(m[k] for _, m in parts) for k in ("docs", "words", "bytes")),
    )


def measure(client, src: list[Path], n: int, m: int, method: str, tmp: Path) -> dict:
    """One run: seconds, peak temporary bytes, bytes written, rows, output digest, peak RSS."""
    out = tmp / f"out-{method}.jsonl"
    cfg = RepeatsConfig(n=n, min_count=m, method=method)
    t0 = time.perf_counter()
    with PeakRSS() as rss:
        res = find_repeats(src, out, cfg, client=client, tmp=tmp)
    secs = time.perf_counter() - t0
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    row = {
        "method": method,
        "n": n,
        "seconds": round(secs, 2),
        "stage_seconds": {k: round(v, 2) for k, v in res.seconds.items()},
        "peak_temp": res.peak_temp_bytes,
        "temp_written": sum(res.temp_written.values()),
        "ngrams": res.ngrams,
        "candidates": res.candidates,
        "rows": res.rows,
        "out_bytes": out.stat().st_size,
        "digest": digest,
        "peak_rss": rss.peak_total,
        "peak_rss_process": rss.peak_single,
        "load": [round(x, 1) for x in os.getloadavg()],
    }
    out.unlink()
    print(json.dumps(row), flush=True)
    return row


def pair(client, src: list[Path], n: int, m: int, tmp: Path, one_first: bool = False) -> dict:
    """Both methods on one corpus (``one_first``: one-pass first); raises if their outputs
    differ."""
    if one_first:
        one = measure(client, src, n, m, "one-pass", tmp)
        two = measure(client, src, n, m, "two-pass", tmp)
    else:
        two = measure(client, src, n, m, "two-pass", tmp)
        one = measure(client, src, n, m, "one-pass", tmp)
    if two["digest"] != one["digest"]:
        raise SystemExit(f"outputs differ at n={n}: two-pass {two['rows']}, one-pass {one['rows']}")
    return {"two": two, "one": one}


def _mb(b: int) -> str:
    return f"{b / 1e6:.1f}"


def table(results: list[dict]) -> str:
    """A markdown table of the pairs: time and peak temporary disk of both methods, ratios."""
    lines = [
        "| words | docs | n | rows | candidates/ngrams | two-pass s | one-pass s | time ratio "
        "| two-pass peak tmp MB | one-pass peak tmp MB | disk ratio | peak RSS MB all (2p/1p) "
        "| largest process MB (2p/1p) | load (1 min) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        t, o = r["two"], r["one"]
        lines.append(
            f"| {r['words']:,} | {r['docs']:,} | {t['n']} | {t['rows']:,} "
            f"| {t['candidates'] / max(t['ngrams'], 1):.3f} | {t['seconds']} | {o['seconds']} "
            f"| {t['seconds'] / o['seconds']:.2f} | {_mb(t['peak_temp'])} | {_mb(o['peak_temp'])} "
            f"| {t['peak_temp'] / max(o['peak_temp'], 1):.2f} "
            f"| {_mb(t['peak_rss'])}/{_mb(o['peak_rss'])} "
            f"| {_mb(t.get('peak_rss_process', 0))}/{_mb(o.get('peak_rss_process', 0))} "
            f"| {t.get('load', ['?'])[0]}/{o.get('load', ['?'])[0]} |"
        )
    return "\n".join(lines)


def plot(results: list[dict], path: Path) -> bool:
    """Time and peak temporary disk against corpus size and against n (False: no matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    by_size = [r for r in results if r["series"] == "size"]
    by_n = [r for r in results if r["series"] == "n"]
    for col, (series, xkey, xlabel) in enumerate(
        ((by_size, "words", "words"), (by_n, "n", "n (words per n-gram)"))
    ):
        xs = [r[xkey] if xkey == "words" else r["two"]["n"] for r in series]
        for row, (key, ylabel, scale) in enumerate(
            (("seconds", "seconds", 1), ("peak_temp", "peak temporary disk (MB)", 1e6))
        ):
            ax = axes[row][col]
            for m, label in (("two", "two-pass (location-based)"), ("one", "one-pass")):
                ax.plot(xs, [r[m][key] / scale for r in series], "o-", label=label)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            if xkey == "words" and len(xs) > 1:
                ax.set_xscale("log")
                ax.set_yscale("log")
            ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return True


def main() -> None:
    """Run the series; rewrite the report after every pair (a long run leaves numbers)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1e6,3e6,1e7", help="corpus sizes in words (n fixed)")
    ap.add_argument("--n", type=int, default=8, help="n of the size series (8, as paper 004)")
    ap.add_argument("--n-sizes", default="1e6", help="corpus sizes of the n series")
    ap.add_argument("--ns", default="3,5,8,10", help="values of n of the n series")
    ap.add_argument("--m", type=int, default=2, help="min count (2, as paper 004)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--tmp", default=None, help="folder for corpora and temporary files")
    ap.add_argument("--corpus", choices=("prose", "real"), default="prose")
    ap.add_argument("--data", default="/work/data/repeats", help="folder of the cached model")
    ap.add_argument(
        "--train",
        default=",".join(str(CORPORA / f"{c}.jsonl") for c in ORDER),
        help="JSONL files to train the prose model on when it is missing",
    )
    ap.add_argument("--train-words", type=int, default=10_000_000)
    ap.add_argument("--seed", type=int, default=1, help="seed of the generated prose")
    ap.add_argument("--doc", default="docs/repeats.md")
    ap.add_argument("--flip", type=int, default=0, choices=(0, 1), help="1: the other method first")
    ap.add_argument(
        "--results", default=None, help="JSONL of pairs: rows found there are not run again"
    )
    args = ap.parse_args()
    from distributed import Client, LocalCluster

    sizes = [int(float(s)) for s in args.sizes.split(",") if s]
    n_sizes = [int(float(s)) for s in args.n_sizes.split(",") if s]
    ns = [int(x) for x in args.ns.split(",") if x]
    results: list[dict] = []
    if args.results and Path(args.results).exists():
        results = [json.loads(x) for x in Path(args.results).read_text().splitlines() if x]
    done = {(r["series"], r.get("size"), r["two"]["n"]) for r in results}
    with tempfile.TemporaryDirectory(dir=args.tmp) as td, LocalCluster(
        n_workers=args.workers, threads_per_worker=1, dashboard_address=":0"
    ) as cluster, Client(cluster) as client:  # fmt: skip
        for size in sorted(set(sizes) | set(n_sizes)):
            runs = [("size", args.n)] if size in sizes else []
            runs += [
                ("n", n) for n in ns if size in n_sizes and not (size in sizes and n == args.n)
            ]
            runs = [(se, n) for se, n in runs if (se, size, n) not in done]
            if not runs:
                continue
            t0 = time.perf_counter()
            src, docs, words, nbytes = corpus(args, size, td)
            print(f"corpus {size}: {docs} documents, {words} words, {nbytes} bytes, "
                  f"{time.perf_counter() - t0:.0f} s; load {load_average()}", flush=True)  # fmt: skip
            for series, n in runs:
                r = pair(
                    client, src, n, args.m, Path(td), one_first=(len(results) + args.flip) % 2 == 1
                )
                new = [{"series": series, "size": size, "words": words, "docs": docs, **r}]
                if series == "size" and size in n_sizes and ("n", size, n) not in done:
                    new.append({**new[0], "series": "n"})
                results += new
                if args.results:
                    with open(args.results, "a") as f:
                        f.writelines(json.dumps(x) + "\n" for x in new)
                report(args, results, done=False)
            if args.corpus == "real":
                src[0].unlink()
    report(args, results, done=True)


CORPUS_TEXT = {
    "real": "real text, the JSONL corpora of `scripts/build_corpora.py` ("
    + ", ".join(ORDER)
    + ") in this order",
    "prose": "generated prose (`simdask.ingest.prose`: a word-bigram model trained on the "
    "first 10^7 words of the real-text corpora, i.e. man pages, cached as "
    "`prose-model.npz` in `--data`; documents of about 1,500 words, 5 % with a planted passage of "
    "100..400 words of another), one stream, every size a prefix of it",
}


def report(args, results: list[dict], done: bool) -> None:
    """Write (or rewrite) the section of ``args.doc`` and the plot from the rows so far."""
    results = sorted(results, key=lambda r: (r["series"], r["words"], r["two"]["n"]))
    doc = Path(args.doc)
    png = doc.with_name(doc.stem + ("" if args.corpus == "prose" else "-real") + ".png")
    plotted = plot(results, png)
    by_n = [r for r in results if r["series"] == "n"]
    n_part = f"### n varies\n\n{table(by_n)}\n" if by_n else ""
    body = f"""Script: `scripts/bench_repeats.py {" ".join(sys.argv[1:])}`. Machine: {machine()}.
Date: {today()}. LocalCluster of {args.workers} single-threaded worker processes (the machine is
shared: other jobs ran meanwhile, so compare the two methods within a row, not across rows).
Corpus: {CORPUS_TEXT[args.corpus]}, whole documents up to the word count. `min_count` = {args.m}. Both methods produced
byte-identical output in every row.{"" if done else " (Partial: the run was still going.)"} Peak temporary disk: the most bytes the temporary folder
held (sampled every 50 ms), not counting the result rows (the output, the same for both). `candidates/ngrams`: the share of n-gram locations pass 1 kept.

### Corpus size (n = {args.n})

{table([r for r in results if r["series"] == "size"])}

{n_part}
{"![time and peak temporary disk](" + png.name + ")" if plotted else "(matplotlib missing: no plot)"}

Raw rows (JSON):

```
{chr(10).join(json.dumps(r) for r in results)}
```
"""
    title = f"Repeated n-grams: two-pass vs one-pass, {args.corpus} corpus ({today()})"
    write_section(args.doc, title, body)


if __name__ == "__main__":
    main()
