"""The web query page: one ~10,000-word document (about 20 pages) checked through a running
``simdask serve`` against an index of generated documents, in a real headless Chromium and
through the JSON API; ``simdask query`` on the same file beside it (ratios).

Builds (or reuses) ``DATA/index`` from the same generated corpus as ``bench_query.py`` (seed 7,
~1,000 words per document), starts the server as a subprocess (which preloads the shards), and
times: the server's start until it listens; ``POST /api/query`` (first, then warm: median and
slowest of ``--warm``); the check page in Chromium from the click on "Check" to the results
table shown; ``simdask query INDEX FILE`` as a new process. Writes the section "Web query" of
docs/benchmarks.md with machine and date.

    PYTHONPATH=. python scripts/bench_web.py --docs 10000
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import requests

from simdask import Index
from simdask.ingest.synth import generate_corpus

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_query import _EXTRA, build_index, make_query

from tests.helpers.browser import chromium_driver
from tests.helpers.server import serving

from _benchutil import machine, today, write_section


def page_seconds(url: str, qfile: Path, repeat: int) -> list[float]:
    """Seconds from the click on "Check" to the results table shown, ``repeat`` times."""
    driver = chromium_driver()
    out = []
    try:
        for _ in range(repeat):
            driver.get(url + "/")
            box = driver.find_element("id", "files")
            driver.execute_script("arguments[0].hidden=false", box)
            box.send_keys(str(qfile.resolve()))
            button = driver.find_element("id", "check")
            t = time.perf_counter()
            button.click()
            results = driver.find_element("id", "results")
            while not results.is_displayed():
                time.sleep(0.005)
            out.append(time.perf_counter() - t)
    finally:
        driver.quit()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--query-words", type=int, default=10_000)
    ap.add_argument("--warm", type=int, default=10)
    ap.add_argument("--data", default="bench-data/web")
    ap.add_argument("--out", default="docs/benchmarks.md")
    args = ap.parse_args()
    data = Path(args.data) / f"n{args.docs}"
    data.mkdir(parents=True, exist_ok=True)
    n = args.docs
    corpus = generate_corpus(n + _EXTRA, mean_words=1000, seed=7)
    index_path = data / "index"
    if not (index_path / "catalog.sqlite").exists():
        info = build_index(data, [(d.key, d.text) for d in corpus.docs[:n]], 16, 2)
        print(f"built the index: {info['seconds']}", flush=True)
    info = json.loads((data / "base-build.json").read_text())
    with Index.open(index_path) as idx:
        st = idx.stats()
    qfile = data / "query.txt"
    qfile.write_text(make_query(corpus, n, args.query_words), encoding="utf-8")
    n_words = len(qfile.read_text(encoding="utf-8").split())
    files = [("file", ("query.txt", qfile.read_bytes()))]

    t = time.perf_counter()
    with serving(index_path) as (url, _):
        started = time.perf_counter() - t
        api = []
        for _ in range(args.warm + 1):
            t = time.perf_counter()
            r = requests.post(url + "/api/query", files=files, timeout=120)
            api.append((time.perf_counter() - t, r.json()["seconds"]))
        rows = r.json()["results"]
        page = page_seconds(url, qfile, 5)
    t = time.perf_counter()
    cli = subprocess.run(
        [sys.executable, "-m", "simdask.cli", "query", str(index_path), str(qfile), "-o", "jsonl"],
        capture_output=True,
        text=True,
        check=True,
    )
    cli_s = time.perf_counter() - t
    same = [json.loads(line) for line in cli.stdout.splitlines()] == rows
    warm = [a for a, _ in api[1:]]
    server_warm = [s for _, s in api[1:]]
    body = f"""Script: `scripts/bench_web.py`. Machine: {machine()}. Date: {today()}.
Index: {st["documents"]:,} generated documents (synth, seed 7, ~1,000 words each),
{st["postings"]:,} postings, 16 shards (built in {info["seconds"]["total"]:.0f} s, not
counted). Query: one document of {n_words:,} words (about 20 pages), new text with passages
copied from indexed documents; {len(rows)} documents are >= 1 % similar either way (the
page's default). The API's rows equal `simdask query -o jsonl`'s: {same}.

| measurement (seconds) | value |
|---|---|
| `simdask serve` start until it listens (opens the index, preloads the shards) | {started:.2f} |
| first `POST /api/query` after the start (upload, extraction, query, JSON) | {api[0][0]:.3f} |
| warm `POST /api/query`: median of {args.warm} | **{statistics.median(warm):.3f}** |
| warm `POST /api/query`: slowest | {max(warm):.3f} |
| of it on the server (read, query, rows): median | {statistics.median(server_warm):.3f} |
| check page in Chromium, click to table shown: median of 5 | **{statistics.median(page):.3f}** |
| check page in Chromium: slowest of 5 | {max(page):.3f} |
| `simdask query INDEX FILE` as a new process (for comparison) | {cli_s:.3f} |
"""
    print(body)
    write_section(args.out, f"Web query ({n:,} documents)", body)


if __name__ == "__main__":
    main()
