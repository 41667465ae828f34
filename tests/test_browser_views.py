"""The total first in every view (issue 29; issue 31 items 9, 10, 15, 16), in headless Chromium:
a late essay copied from three sources (one with a hostile key) shows "70 % of … is found in 3
other documents" as the first number of its page on the static site and on ``serve``, its
sources by their share with one colour each in ONE view of its text, a next-passage button
and a header that leaves the text room on a 1024x700 window; the documents table sorts by the
total; the sources table gives each source's dates (first indexed, file modified: item 13);
"this term" lists the run's documents by total with the group that shares text; a
document whose total was never computed says so and never shows 0 %. Screenshots are saved in
the test's temporary directory."""

from __future__ import annotations

import urllib.parse

import pytest

from simdask import Index
from simdask.read.review import iso_time
from simdask.storage.doc_dates import dates_of
from tests.helpers.browser import chromium_driver
from tests.helpers.cli import run
from tests.helpers.documents import prose
from tests.helpers.server import serving

pytestmark = pytest.mark.system

HOSTILE = "<img src=x onerror=window.__xss=1> & 'q'.txt"
LATE = "c/late/quinn.txt"
SOURCES = ("c/old/lee.txt", "c/old/kim.txt", f"c/old/{HOSTILE}")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("views")
    (tmp / "c" / "old").mkdir(parents=True)
    (tmp / "c" / "late").mkdir()
    texts = [prose(400, seed=s) for s in (1, 2, 3)]
    for key, text in zip(SOURCES, texts, strict=True):
        (tmp / key).write_text(text, encoding="utf-8")
    a, b, c = texts
    own = prose(200, seed=9)
    late = a[: len(a) // 3] + " " + own + " " + b[: len(b) // 3] + " " + c[len(c) // 2 :]
    (tmp / LATE).write_text(late, encoding="utf-8")
    (tmp / "c" / "late" / "alone.txt").write_text(prose(300, seed=11), encoding="utf-8")
    idx = tmp / "idx"
    run("update", idx, tmp / "c", "--workers", 1, "--quiet")
    run("export-html", idx, tmp / "site0", "--quiet")  # before any total is computed
    with Index.open(idx) as index:
        index.compute_totals()
        totals = {t.doc: t for t in index.totals()}
    run("export-html", idx, tmp / "site", "--quiet")
    return tmp, totals


def _doc_page(tmp, site: str, key: str) -> str:
    for page in sorted((tmp / site / "docs").glob("*.html")):
        if f"<h1>{key}</h1>" in page.read_text("utf-8"):
            return page.as_uri()
    raise AssertionError(f"no page of {key}")


FIRST_PCT = "var t=document.body.innerText;return t.slice(0, t.indexOf('%') + 1);"


def _check_document_view(driver, totals, tmp, name: str) -> None:
    """The total is the first number with a percent sign, one colour per source in the one
    view of the text (the sources table's swatch has the colour of its passages), sources
    by their share, next passage scrolls to a passage, the header is small."""
    total = totals[LATE]
    assert driver.execute_script("return window.__xss") is None
    head = driver.find_element("id", "total")
    assert head.text == f"{round(total.total)} % of {LATE} is found in 3 other documents"
    assert abs(float(head.get_attribute("data-total")) - total.total) < 1e-6
    before = driver.execute_script(FIRST_PCT)
    assert before.endswith(head.text[: head.text.index("%") + 1]), before
    rows = driver.find_elements("css selector", "#sources tbody tr")
    keys = [r.get_attribute("data-key") for r in rows]
    assert keys == [s.key for s in total.sources] and SOURCES[2] in keys
    shares = [float(r.find_elements("tag name", "td")[1].get_attribute("data-v")) for r in rows]
    assert shares == sorted(shares, reverse=True)
    assert [round(x, 4) for x in shares] == [round(s.share, 4) for s in total.sources]
    # who was first (item 13): each source's dates as the catalog holds them, shown
    with Index.open(tmp / "idx") as index:
        dates = dates_of(index.catalog, keys)
    cells = [r.find_elements("css selector", "td.d") for r in rows]
    assert [[c.get_attribute("data-v") for c in row] for row in cells] == [
        [iso_time(dates[k][0]), iso_time(dates[k][1])] for k in keys
    ]
    assert all(c.text == iso_time(dates[k][0])[:16].replace("T", " ")
               for k, (c, _) in zip(keys, cells, strict=True))  # fmt: skip
    swatches = [
        r.find_element("css selector", "span.sw").value_of_css_property("background-color")
        for r in rows
    ]
    assert len(set(swatches)) == 3
    marks = driver.find_elements("css selector", "#text mark")
    by_source: dict[int, set] = {}
    for m in marks:
        i = int(m.get_attribute("data-source"))
        by_source.setdefault(i, set()).add(m.value_of_css_property("background-color"))
        assert m.get_attribute("title").startswith(f"shared with {keys[i]}")
    assert sorted(by_source) == [0, 1, 2]
    assert [by_source[i] for i in range(3)] == [{c} for c in swatches]
    height = driver.execute_script("return document.querySelector('.docview-head').offsetHeight")
    assert height < 120, height
    driver.execute_script("window.scrollTo(0, 0)")
    driver.find_element("id", "next-passage").click()
    flashed = driver.find_elements("css selector", "#text mark.flash")
    assert len(flashed) == 1 and flashed[0].get_attribute("id") == "p-0"
    driver.save_screenshot(str(tmp / f"{name}.png"))


def test_site_shows_the_total_first_and_sorts_by_it(corpus):
    tmp, totals = corpus
    driver = chromium_driver(1024, 700)
    try:
        driver.get(_doc_page(tmp, "site0", LATE))  # no total stored yet
        head = driver.find_element("id", "total")
        assert "total not computed" in head.text and "0 %" not in head.text
        assert head.get_attribute("data-total") == ""
        driver.get((tmp / "site0" / "index.html").as_uri())
        assert "not computed" in driver.find_element("id", "totals-missing").text
        driver.get(_doc_page(tmp, "site", LATE))
        _check_document_view(driver, totals, tmp, "site-document")
        driver.find_element("css selector", "#sources a.report").click()  # its best source
        assert LATE in driver.find_element("tag name", "h1").text
        driver.find_element("id", "next-passage").click()  # the pair report's next passage
        flashed = driver.find_elements("css selector", "#doc mark.flash")
        assert [m.get_attribute("id") for m in flashed] == ["a-0"]
        driver.get((tmp / "site" / "index.html").as_uri())
        driver.save_screenshot(str(tmp / "site-front.png"))
        assert driver.execute_script("return window.__xss") is None

        def order():
            rows = driver.find_elements("css selector", "#docs tbody tr")
            return [r.get_attribute("data-key") for r in rows]

        by_total = sorted(totals, key=lambda k: (-totals[k].total, k))
        assert order() == by_total  # the largest total first
        driver.find_element("xpath", "//table[@id='docs']//th[1]").click()  # by key
        assert order() == sorted(totals, reverse=True)
        total_th = driver.find_element("xpath", "//table[@id='docs']//th[3]")
        total_th.click()
        assert order() == by_total
        total_th.click()
        assert order() == by_total[::-1]  # the smallest total first
        # the pairs: chunk containment and aligned coverage both ways, sortable by either
        pairs = driver.find_elements("css selector", "#top-pairs tbody tr")
        for r in pairs:
            cells = r.find_elements("tag name", "td")
            a, b = cells[0].text, cells[1].text
            want = {s.key: s.share for s in totals[a].sources}[b]
            assert abs(float(cells[6].get_attribute("data-v")) - want) < 1e-4
        driver.find_element("xpath", "//table[@id='top-pairs']//th[8]").click()
        backs = [
            float(r.find_elements("tag name", "td")[7].get_attribute("data-v"))
            for r in driver.find_elements("css selector", "#top-pairs tbody tr")
        ]
        assert backs == sorted(backs, reverse=True) and len(backs) == 3
        driver.find_element("id", "q").send_keys("old/")
        shown = [r for r in driver.find_elements("css selector", "#docs tbody tr")]
        visible = [r.get_attribute("data-key") for r in shown if r.is_displayed()]
        assert sorted(visible) == sorted(SOURCES)
    finally:
        driver.quit()


def test_web_document_and_term_pages(corpus):
    tmp, totals = corpus
    import requests  # the web extra (serving() skips without it)

    q = urllib.parse.quote
    driver = chromium_driver(1024, 700)
    try:
        with serving(tmp / "idx", log=tmp / "serve.log") as (url, _):
            driver.get(f"{url}/document?key={q(LATE)}")
            _check_document_view(driver, totals, tmp, "web-document")
            driver.get(f"{url}/document?key={q(SOURCES[2])}")  # the hostile key's own page
            assert driver.execute_script("return window.__xss") is None
            assert driver.find_element("id", "doc-key").text == SOURCES[2]
            # a checked essay: its total from the passages of its sources, shown first
            essay = (tmp / LATE).read_text(encoding="utf-8")
            got = requests.post(f"{url}/api/query", data={"text": essay}, timeout=60).json()
            qkey = got["queries"][0]["key"]
            driver.get(f"{url}/check/{got['qid']}/document?query={q(qkey)}")
            head = driver.find_element("id", "total").text
            # the essay itself is indexed: wholly found (in it and its 3 sources)
            assert head == f"100 % of {qkey} is found in 4 other documents"
            rows = driver.find_elements("css selector", "#sources tbody tr")
            assert rows[0].get_attribute("data-key") == LATE
            driver.get(f"{url}/term")
            driver.save_screenshot(str(tmp / "web-term.png"))
            assert driver.execute_script("return window.__xss") is None
            assert driver.find_element("tag name", "h1").text == "This term: run 1"
            rows = driver.find_elements("css selector", "#batch tbody tr")
            got = [r.get_attribute("data-key") for r in rows]
            assert got == sorted(totals, key=lambda k: (-totals[k].total, k))
            first = rows[0].find_elements("tag name", "td")
            assert first[0].text == LATE and first[3].text == totals[LATE].sources[0].key
            assert first[5].text == "c/old"
            groups = driver.find_elements("css selector", "#groups li")
            assert len(groups) == 1
            links = [a.text for a in groups[0].find_elements("tag name", "a")]
            assert sorted(links) == sorted([LATE, *SOURCES])
            driver.get(f"{url}/term?folder=c/late&level=40")
            got = [
                r.get_attribute("data-key")
                for r in driver.find_elements("css selector", "#batch tbody tr")
            ]
            assert got == [LATE, "c/late/alone.txt"]
            groups = driver.find_elements("css selector", "#groups li")
            assert len(groups) == 1 and groups[0].text.startswith("2 documents")
    finally:
        driver.quit()
