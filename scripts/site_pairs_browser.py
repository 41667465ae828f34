"""The static site's in-browser pairs (issue 31 item 7) on a real index: for a random sample
of stored pairs (and the pair of the two longest texts), headless Chromium renders
``pair.html#<a>-<b>`` from the site's data and the passages shown are compared with
``report --exact-only`` computed in Python (``index_report`` with ``exact_only``); prints
per pair the passages, whether they are equal, and the browser's time to render.

Writes only the data and ``pair.html`` (what the browser needs) into a temporary folder.

    python scripts/site_pairs_browser.py INDEX [--sample 30] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simdask.evidence.pair_view import ViewOptions, index_report  # noqa: E402
from simdask.evidence.passages_np import LARGE_CHARS  # noqa: E402
from simdask.evidence.site_data import write_site_data  # noqa: E402
from simdask.evidence.site_pair_page import PAIR_PAGE, pair_page_body  # noqa: E402
from simdask.index import Index  # noqa: E402
from tests.helpers.browser import chromium_driver  # noqa: E402

FIELDS = ("doc_start", "doc_end", "other_start", "other_end", "words", "chunks")
SHOWN = (
    "return [].slice.call(document.querySelectorAll('#passages tr[data-doc-start]'))"
    ".map(function(r){return [+r.dataset.docStart,+r.dataset.docEnd,+r.dataset.otherStart,"
    "+r.dataset.otherEnd,+r.dataset.words,+r.dataset.chunks];});"
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("index", type=Path)
    ap.add_argument("--sample", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    from selenium.webdriver.support.ui import WebDriverWait

    with Index.open(args.index) as idx, tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        docs = idx.catalog.documents()
        t0 = time.process_time()
        data = write_site_data(idx, out, docs, ViewOptions(exact_only=True))
        print(
            f"data: {data['texts']} texts, {data['bytes'] / 1e6:.1f} MB, "
            f"{time.process_time() - t0:.1f} CPU s",
            flush=True,
        )
        page = f"<!DOCTYPE html><html><head><meta charset=utf-8></head><body>{pair_page_body()}"
        (out / PAIR_PAGE).write_text(page + "</body></html>", encoding="utf-8")
        ids = {d.key: d.doc_id for d in docs}
        rows = idx.pair_list()
        random.seed(args.seed)
        chosen = random.sample(rows, min(args.sample, len(rows)))
        longest = sorted(docs, key=lambda d: -d.n_words)[:2]
        pairs = [(r.a_key, r.b_key) for r in chosen] + [(longest[0].key, longest[1].key)]
        pairs = [p for p in pairs if len(idx.text(p[0])) + len(idx.text(p[1])) <= LARGE_CHARS]
        driver = chromium_driver()
        equal = 0
        try:
            for ka, kb in pairs:
                a, b = ids[ka], ids[kb]
                t = time.perf_counter()
                driver.get(f"{out.as_uri()}/{PAIR_PAGE}#{a}-{b}")
                WebDriverWait(driver, 600).until(
                    lambda d, h=f"{a}-{b}": (
                        d.execute_script("return document.body.getAttribute('data-rendered')") == h
                    )
                )
                secs = time.perf_counter() - t
                got = driver.execute_script(SHOWN)
                rep = index_report(idx, ka, kb, options=ViewOptions(exact_only=True))
                want = [[p[f] for f in FIELDS] for p in rep["passages"]]
                same = got == want
                equal += same
                print(
                    f"{ka} | {kb}: {len(want)} passages, equal: {same}, browser {secs:.2f} s",
                    flush=True,
                )
        finally:
            driver.quit()
        print(f"{equal} of {len(pairs)} pairs equal", flush=True)


if __name__ == "__main__":
    main()
