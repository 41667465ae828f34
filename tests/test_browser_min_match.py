"""The web page's "leave out matches shorter than N words" (issue 31, item 11), in headless
Chromium: on the side-by-side view and the document page, the form sets ``min_match`` and the
view's passages *and* percentages change, as ``--min-match`` does in the CLI (the exact ones
against a brute-force count); the setting survives the switch to the exact evidence; a bad
value is a 400 with a clear message, a hostile key stays escaped in the form."""

from __future__ import annotations

import json
import re
import urllib.parse

import pytest

from simdask.kernels.words import words
from tests.helpers.browser import chromium_driver
from tests.helpers.cli import run
from tests.helpers.documents import prose
from tests.helpers.server import serving

pytestmark = pytest.mark.system

K = 5
LONG = prose(40, seed=70)  # a copied paragraph
SHORT = prose(25, seed=71)  # a shorter match


def own(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


A = f"{own('a', 60)} {LONG} {own('b', 30)} {SHORT} {own('c', 30)}"
B = f"{own('x', 50)} {SHORT} {own('y', 40)} {LONG} {own('z', 20)}"
HOSTILE = "<img src=x onerror=window.__xss=1> & 'q'.txt"


def chunks(text: str) -> set[tuple[str, ...]]:
    ws = words(text)
    return {tuple(sorted(ws[i : i + K])) for i in range(len(ws) - K + 1)}


def brute(a: str, b: str, inside: str) -> float:
    """Percent of ``a``'s distinct chunks that ``b`` holds and that lie in ``inside``."""
    return 100.0 * len(chunks(a) & chunks(b) & chunks(inside)) / len(chunks(a))


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("minmatch")
    src = tmp / "src"
    src.mkdir()
    (src / "a.txt").write_text(A)
    (src / "b.txt").write_text(B)
    (src / HOSTILE).write_text(f"{own('h', 30)} {LONG} {own('i', 30)}")
    idx = tmp / "idx"
    run("update", idx, src, "--quiet")  # a small run: in-process workers
    with serving(idx, log=tmp / "serve.log") as (url, _):
        yield tmp, url


def _report(driver) -> dict:
    data = driver.find_element("css selector", "table.sum").get_attribute("data-report")
    return json.loads(data)


def _set_min_match(driver, value: str) -> None:
    box = driver.find_element("id", "min-match-input")
    box.clear()
    box.send_keys(value)
    driver.find_element("css selector", "#min-match-form button").click()


def test_side_by_side_and_document_page_leave_short_matches_out(served):
    tmp, url = served
    q = urllib.parse.quote
    driver = chromium_driver(1024, 700)
    try:
        driver.get(f"{url}/report?a={q('src/a.txt')}&b={q('src/b.txt')}&exact=1")
        every = _report(driver)
        assert every["similarity"] == pytest.approx(
            100.0 * len(chunks(A) & chunks(B)) / len(chunks(A))
        )
        _set_min_match(driver, "30")
        assert "min_match=30" in driver.current_url and "exact=1" in driver.current_url
        some = _report(driver)
        assert some["similarity"] == pytest.approx(brute(A, B, LONG))
        assert some["reverse_similarity"] == pytest.approx(brute(B, A, LONG))
        assert some["similarity"] < every["similarity"]
        assert "matches shorter than 30 words" in driver.find_element("tag name", "header").text
        labels = [a.text for a in driver.find_elements("css selector", "nav.passages a")]
        assert labels == ["1: 40 words"]
        # to the aligned passages: the setting stays, the coverage counts long ones only
        driver.find_element("css selector", "p.links a").click()
        assert "min_match=30" in driver.current_url and "exact" not in driver.current_url
        aligned = _report(driver)
        assert aligned["min_words"] == 30 and aligned["similarity"] == some["similarity"]
        labels = [a.text for a in driver.find_elements("css selector", "nav.passages a")]
        sizes = [int(re.search(r"(\d+) words", t).group(1)) for t in labels]
        assert sizes and all(n >= 30 for n in sizes), labels
        assert 0 < aligned["aligned_coverage"]["doc"] <= 100.0 * 45 / len(words(A))
        driver.save_screenshot(str(tmp / "report-min-match.png"))

        driver.get(f"{url}/document?key={q('src/a.txt')}&exact=1")
        assert "not computed" in driver.find_element("id", "total").text
        assert not driver.find_elements("id", "min-match")
        _set_min_match(driver, "30")
        head = driver.find_element("id", "total")
        # the view's total: the 40 words of the long passage, of A's words
        assert float(head.get_attribute("data-total")) == pytest.approx(
            100.0 * len(words(LONG)) / len(words(A))
        )
        assert (
            head.text
            == f"{round(100 * 40 / len(words(A)))} % of src/a.txt is found in 2 other documents"
        )
        shares = driver.find_elements("css selector", "#sources tbody td:nth-child(2)")
        assert [float(c.get_attribute("data-v")) for c in shares] == pytest.approx(
            [100.0 * len(words(LONG)) / len(words(A))] * 2
        )
        assert "shorter than 30 words" in driver.find_element("id", "min-match").text
        marks = driver.find_elements("css selector", "#text mark")
        # b and HOSTILE hold the same long passage: one mark (a character is in one mark)
        assert [words(m.text) for m in marks] == [words(LONG)]
        chunk_cells = driver.find_elements("css selector", "#chunks tbody tr")
        got = {
            r.get_attribute("data-key"): float(
                r.find_elements("tag name", "td")[1].get_attribute("data-v")
            )
            for r in chunk_cells
        }
        assert got["src/b.txt"] == pytest.approx(brute(A, B, LONG), abs=1e-5)
        # the side-by-side link keeps the setting
        link = driver.find_element("css selector", "#sources a.report").get_attribute("href")
        assert "min_match=30" in link
        driver.get(f"{url}/document?key={q('src/' + HOSTILE)}&min_match=12&exact=1")
        assert driver.execute_script("return window.__xss") is None
        hidden = driver.find_element("css selector", "#min-match-form input[name=key]")
        assert hidden.get_attribute("value") == "src/" + HOSTILE
        driver.save_screenshot(str(tmp / "document-min-match.png"))
    finally:
        driver.quit()


@pytest.mark.parametrize("value", ["abc", "-1", "10001", "1.5", "<script>x</script>", "1_0"])
def test_a_bad_min_match_is_a_clear_400(served, value):
    _, url = served
    import requests  # the web extra (serving() skips without it)

    for path, params in (
        ("/document", {"key": "src/a.txt"}),
        ("/report", {"a": "src/a.txt", "b": "src/b.txt"}),
    ):
        r = requests.get(f"{url}{path}", params={**params, "min_match": value}, timeout=120)
        assert r.status_code == 400, (path, value)
        assert "min_match" in r.text and "whole number of words from 0 to 10000" in r.text
        assert "<script>x" not in r.text


def test_checked_document_takes_the_setting(served):
    _, url = served
    import requests

    got = requests.post(f"{url}/api/query", data={"text": A}, timeout=120).json()
    qkey = got["queries"][0]["key"]
    base = f"{url}/check/{got['qid']}/document"
    every = requests.get(base, params={"query": qkey, "exact": "1"}, timeout=120)
    some = requests.get(base, params={"query": qkey, "exact": "1", "min_match": 30}, timeout=120)
    assert every.status_code == some.status_code == 200
    assert "shorter than 30 words" in some.text and "id=min-match-form" in some.text
    assert "25 words" in every.text and "25 words" not in some.text
    assert "min_match=30" in some.text  # the side-by-side links keep it
