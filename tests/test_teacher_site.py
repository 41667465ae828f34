"""The static site as a teacher reads it (issue 18), in real Chromium: the table of the most
similar pairs (one row per pair), a document's page with its best match and its text with the
shared passages marked, the explicit "no similar documents", the files not indexed, the date
and the settings of the index."""

from __future__ import annotations

import json

import pytest

from tests.helpers.browser import chromium_driver
from tests.helpers.cli import run
from tests.helpers.teacher import write_essays

pytestmark = pytest.mark.system


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    e = write_essays(root)
    run("update", root / "idx", e.essays, "--workers", 1, "--quiet")
    run("export-html", root / "idx", root / "site", "--quiet")
    pairs = [
        json.loads(x)
        for x in run("similar", root / "idx", "--pairs", "-o", "jsonl").stdout.splitlines()
    ]
    report = json.loads(run("report", root / "idx", e.bailey, e.brown, "--format", "json").stdout)
    return root, e, pairs, report


def _cells(row) -> list[str]:
    return [td.text for td in row.find_elements("tag name", "td")]


def test_site_in_chromium(site):
    root, e, pairs, report = site
    driver = chromium_driver()
    try:
        driver.get((root / "site" / "index.html").as_uri())
        h1 = driver.find_element("tag name", "h1").text
        assert h1 == f"simdask: 8 documents, {len(pairs)} similar pairs" and len(pairs) == 3
        rows = driver.find_elements("css selector", "#top-pairs tbody tr")
        got = [_cells(r)[:4] for r in rows]
        assert got == [
            [p["a_key"], p["b_key"], f"{p['a_in_b']:.2f}", f"{p['b_in_a']:.2f}"] for p in pairs
        ]
        copy = next(r for r in rows if _cells(r)[0] == e.brown)
        assert _cells(copy)[4].startswith(f"{e.bailey} holds 74 % of {e.brown}")
        failed = driver.find_elements("css selector", "#failed tbody tr")
        assert sorted((_cells(r)[0], _cells(r)[1]) for r in failed) == [
            (k, "unsupported") for k in e.unsupported
        ]
        assert driver.find_element("id", "updated").text.startswith("Index last updated: 20")
        k = driver.find_element("css selector", "[data-setting=k]").text
        assert k == "5"
        # the copier's page: best match named, text shown, shared passages marked
        copy.find_elements("tag name", "a")[1].click()  # bailey's page
        assert driver.find_element("tag name", "h1").text == e.bailey
        assert driver.find_element("id", "best").text.startswith(f"Best match: {e.brown}")
        text = driver.find_element("id", "text").text
        bailey = (e.essays / "bailey.txt").read_text(encoding="utf-8")
        assert text == bailey
        marks = driver.find_elements("css selector", "#text mark")
        marked = "".join(m.text for m in marks)
        expected = "".join(bailey[p["doc_start"] : p["doc_end"]] for p in report["passages"])
        assert marked == expected and len(marked) > 1000
        kind = report["passages"][0]["kind"]  # the aligned passages carry their kind
        assert marks[0].get_attribute("title") == f"shared with {e.brown} ({kind})"
        driver.get((root / "site" / "index.html").as_uri())
        link = driver.find_element("link text", "essays/alone.txt")
        link.click()
        assert driver.find_element("id", "no-similar").text.startswith("No similar documents")
    finally:
        driver.quit()
