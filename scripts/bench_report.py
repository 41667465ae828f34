"""Render time of the side-by-side report of a 100-page pair in headless Chromium (issue 6).

Two documents of ``--pages`` x 500 words; A reuses 30 passages of B (some reordered). Times
the exact comparison, the HTML rendering, and the page load in Chromium (until the whole
page is laid out), median of 5 loads. Writes the section "Pair report
(bench_report.py)" of docs/benchmarks.md.

    python scripts/bench_report.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from simdask.evidence.passages import compare_texts
from simdask.evidence.report_html import render_pair_html
from simdask.ingest.synth import generate_corpus

from _benchutil import machine, today, write_section

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from browser_util import chromium_driver


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--pages", type=int, default=100)
    ap.add_argument("--out", default="docs/benchmarks.md")
    args = ap.parse_args()
    words_needed = args.pages * 500
    corpus = generate_corpus(2 * args.pages, mean_words=1000, seed=11, reuse_fraction=0.0)
    pool = " ".join(d.text for d in corpus.docs).split()
    b_words = pool[:words_needed]
    a_words = pool[words_needed : 2 * words_needed]
    step = words_needed // 30
    for i in range(30):  # copy 30 passages of 300 words, in reverse order
        src = (29 - i) * step
        a_words[i * step : i * step + 300] = b_words[src : src + 300]
    a, b = " ".join(a_words), " ".join(b_words)
    t = time.perf_counter()
    ev = compare_texts(a, b)
    t_cmp = time.perf_counter() - t
    rep = ev.report("A", "B", hashed_similarity=ev.similarity)
    t = time.perf_counter()
    page = render_pair_html(rep, a, b)
    t_html = time.perf_counter() - t
    path = Path(tempfile.mkdtemp()) / "report.html"
    path.write_text(page, encoding="utf-8")
    driver = chromium_driver()
    loads, walls = [], []
    try:
        for _ in range(5):
            driver.get("about:blank")
            t = time.perf_counter()
            driver.get(path.as_uri())
            nav = driver.execute_script(
                "var n=performance.getEntriesByType('navigation')[0];"
                "document.body.scrollHeight;"  # force layout of the whole page
                "return [n.loadEventEnd];"
            )
            walls.append(time.perf_counter() - t)
            loads.append(nav[0] / 1000)
    finally:
        driver.quit()
    load = statistics.median(loads)
    wall = statistics.median(walls)
    print(
        f"pages {args.pages}: compare {t_cmp:.2f} s, html {t_html:.2f} s ({len(page) / 1e6:.1f} MB), "
        f"load {load:.2f} s, wall to full layout {wall:.2f} s, passages {len(ev.passages)}"
    )
    body = f"""Machine: {machine()}. Date: {today()}.
Two documents of {args.pages} pages x 500 words ({len(a_words):,} words each); A holds 30
passages of 300 words copied from B in reverse order. Chromium {driver.capabilities.get("browserVersion", "?")},
headless; median of 5 loads.

| step | seconds |
|---|---|
| exact comparison and passages (`compare_texts`) | {t_cmp:.2f} |
| HTML rendering ({len(page) / 1e6:.1f} MB, {len(ev.passages)} passages) | {t_html:.2f} |
| Chromium: from `driver.get` to the whole page laid out (wall clock, WebDriver included) | **{wall:.2f}** |
| Chromium: navigation start to load event | {load:.2f} |

Target: the report renders in under 2 s.
"""
    write_section(args.out, "Pair report (bench_report.py)", body)


if __name__ == "__main__":
    main()
