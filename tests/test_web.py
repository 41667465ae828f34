"""``simdask serve`` against a running server (a real subprocess) and a real headless Chromium:
check a document, see its matches with the right percentages, open the side-by-side report,
browse documents, statistics and errors; the JSON API gives exactly the rows of the CLI; keys
and texts holding markup are shown as text, escaped once, and never run."""

from __future__ import annotations

import json
import random
import time

import pytest

from simdask.read.undirected_pairs import holds
from tests.helpers.browser import chromium_driver
from tests.helpers.cli import run
from tests.helpers.corpus import make_docs, reference_similarity, write_jsonl, write_txt
from tests.helpers.server import need_web, serving

pytestmark = pytest.mark.system

#: a key holding markup, quotes and an ampersand (a file name on Linux may hold all of them)
NASTY = "<script>window.__xss=1</script> \"q\" & 'x' <img src=x onerror=window.__xss=2>"
IN_VIEW = (
    "var r=arguments[0].getBoundingClientRect();"
    "return r.bottom>0 && r.top<window.innerHeight && r.width>0 && r.height>0;"
)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    need_web()
    tmp = tmp_path_factory.mktemp("web")
    docs = make_docs(40, seed=3)
    # a document whose key and text hold markup; it shares text with d005
    nasty = docs["d005"] + ' <b>bold</b> & <script>window.__xss=3</script> "quoted"'
    write_txt(docs, tmp / "src")
    write_jsonl({NASTY: nasty}, tmp / "nasty.jsonl")  # a JSONL id is the key, as given
    docs[NASTY] = nasty
    run("update", tmp / "idx", tmp / "src", tmp / "nasty.jsonl", "--workers", "1", "--quiet")
    rng = random.Random(5)
    fresh = " ".join(f"fresh{rng.randrange(10**6)}q" for _ in range(120))
    query = docs["d002"].split()
    (tmp / "q.txt").write_text(" ".join(query[:150]) + " " + fresh, encoding="utf-8")
    (tmp / "other.txt").write_text(docs["d005"], encoding="utf-8")
    with serving(tmp / "idx", log=tmp / "serve.log") as (url, _):
        yield {"url": url, "tmp": tmp, "docs": docs}


def _cli_rows(*args) -> list[dict]:
    out = run(*args, "-o", "jsonl").stdout
    return [json.loads(line) for line in out.splitlines()]


def test_api_query_same_rows_as_cli(site):
    import requests

    tmp = site["tmp"]
    files = [
        ("file", ("q.txt", (tmp / "q.txt").read_bytes())),
        ("file", ("other.txt", (tmp / "other.txt").read_bytes())),
    ]
    r = requests.post(site["url"] + "/api/query", files=files, timeout=60)
    assert r.status_code == 200, r.text
    expected = _cli_rows("query", tmp / "idx", tmp / "q.txt", tmp / "other.txt")
    assert r.json()["results"] == expected
    assert {row["key"] for row in expected} >= {"src/d002.txt", "src/d005.txt", NASTY}
    # and with a least similarity
    r = requests.post(site["url"] + "/api/query", files=files, data={"min": "50"}, timeout=60)
    assert r.json()["results"] == _cli_rows(
        "query", tmp / "idx", tmp / "q.txt", tmp / "other.txt", "--min", "50"
    )


def test_api_browse_same_as_cli(site):
    import requests

    url, idx = site["url"], site["tmp"] / "idx"
    key = "src/d001.txt"
    got = requests.get(f"{url}/api/similar/{key}", timeout=30).json()
    cli = _cli_rows("similar", idx, key)
    assert [{k: r[k] for k in cli[0]} for r in got["similar"]] == cli
    assert got["document"]["key"] == key
    rep = requests.get(url + "/api/report", params={"a": key, "b": cli[0]["other"]}, timeout=30)
    expected = json.loads(run("report", idx, key, cli[0]["other"], "--format", "json").stdout)
    assert rep.json() == expected
    found = requests.get(url + "/api/documents", params={"search": "D00"}, timeout=30).json()
    assert [d["key"] for d in found["documents"]] == [f"src/d00{i}.txt" for i in range(10)]
    assert found["total"] == 10
    nasty = requests.get(url + "/api/documents", params={"search": "<script>"}, timeout=30)
    assert [d["key"] for d in nasty.json()["documents"]] == [NASTY]
    counts = [0] * 10  # unordered pairs, by the larger of their two similarities
    for row in _cli_rows("similar", idx, "--pairs"):
        counts[min(9, int(max(row["a_in_b"], row["b_in_a"]) * 10 / 100))] += 1
    assert requests.get(url + "/api/histogram", timeout=30).json()["bins"] == counts
    missing = requests.get(f"{url}/api/similar/nope.txt", timeout=30)
    assert missing.status_code == 404 and "nope.txt" in missing.json()["error"]


def test_check_in_chromium(site):
    url, tmp, docs = site["url"], site["tmp"], site["docs"]
    query_text = (tmp / "q.txt").read_text(encoding="utf-8")
    ref = reference_similarity({"q": query_text, "d002": docs["d002"]})
    fwd, rev = ref[("q", "d002")][1], ref[("d002", "q")][1]
    driver = chromium_driver()
    try:
        driver.get(url + "/")
        box = driver.find_element("id", "files")
        driver.execute_script("arguments[0].hidden=false", box)
        box.send_keys(str(tmp / "q.txt"))
        assert "q.txt" in driver.find_element("id", "chosen").text
        driver.find_element("id", "check").click()
        _wait(lambda: driver.find_element("id", "results").is_displayed())
        rows = driver.find_elements("css selector", "#results-table tbody tr")
        cells = {
            r.find_elements("tag name", "td")[1].text: [
                td.text for td in r.find_elements("tag name", "td")
            ]
            for r in rows
        }
        assert cells["src/d002.txt"][:4] == ["q.txt", "src/d002.txt", f"{fwd:.2f}", f"{rev:.2f}"]
        # the pair in words (issue 18)
        assert cells["src/d002.txt"][4] == holds("q.txt", "src/d002.txt", fwd, rev)
        assert "src/short_inside.txt" in cells  # wholly inside d002's first 150 words
        driver.save_screenshot(str(tmp / "check.png"))
        assert (tmp / "check.png").stat().st_size > 10_000
        row = next(r for r in rows if r.find_elements("tag name", "td")[1].text == "src/d002.txt")
        row.find_element("css selector", "a.report").click()
        _wait(lambda: len(driver.window_handles) == 2)
        driver.switch_to.window(driver.window_handles[1])
        _wait(lambda: driver.find_elements("id", "a-0"))
        assert driver.find_element("tag name", "h1").text == "q.txt and src/d002.txt"
        _twins_in_view(driver)
    finally:
        driver.quit()


def test_browse_in_chromium(site):
    url, docs = site["url"], site["docs"]
    driver = chromium_driver()
    try:
        driver.get(url + "/documents")
        search = driver.find_element("id", "search")
        search.send_keys("d00")
        driver.find_element("id", "search-button").click()
        _wait(lambda: "d00" in driver.current_url)
        links = driver.find_elements("css selector", "#documents tbody a")
        assert [a.text for a in links] == [f"src/d00{i}.txt" for i in range(10)]
        next(a for a in links if a.text == "src/d001.txt").click()
        _wait(lambda: driver.find_elements("id", "doc-key"))
        assert driver.find_element("id", "doc-key").text == "src/d001.txt"
        first = driver.find_elements("css selector", "#similar tbody tr")[0]
        assert first.find_elements("tag name", "td")[0].text == "src/d000.txt"
        first.find_element("css selector", "a.report").click()
        _wait(lambda: driver.find_elements("id", "a-0"))
        _twins_in_view(driver)
        driver.get(url + "/stats")
        stat = driver.find_element("css selector", "[data-stat=documents]")
        assert stat.text == str(len(docs))
        bars = driver.find_elements("css selector", "#histogram rect")
        stored = len(_cli_rows("similar", site["tmp"] / "idx", "--pairs"))
        assert sum(int(b.get_attribute("data-count")) for b in bars) == stored
        driver.get(url + "/errors")
        cells = [td.text for td in driver.find_elements("css selector", "#errors td")]
        assert cells[:2] == ["src/tiny.txt", "too_short"]
    finally:
        driver.quit()


def test_markup_in_keys_and_texts_is_inert_and_escaped_once(site):
    import requests

    url, key = site["url"], NASTY
    page = requests.get(url + "/documents", params={"search": "script"}, timeout=30).text
    assert "<script>window.__xss" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in page
    assert "&amp;lt;" not in page and "&amp;#" not in page and "&amp;amp;" not in page
    report = requests.get(url + "/report", params={"a": key, "b": "src/d005.txt"}, timeout=30).text
    assert "&amp;lt;" not in report and "&amp;#" not in report and "&amp;amp;" not in report
    driver = chromium_driver()
    try:
        driver.get(url + "/documents?search=script")
        link = driver.find_element("css selector", "#documents tbody a")
        assert link.text == key  # shown exactly as the key: escaped once
        link.click()
        _wait(lambda: driver.find_elements("id", "doc-key"))
        assert driver.find_element("id", "doc-key").text == key
        driver.find_element("css selector", "a.report").click()
        _wait(lambda: driver.find_elements("id", "a-0"))
        assert driver.find_element("tag name", "h1").text == f"{key} and src/d005.txt"
        assert "<script>window.__xss=3</script>" in driver.find_element("id", "doc").text
        # the chunk counts, folded under the aligned passages' headline
        summary = driver.find_element("css selector", "table.details").get_attribute("textContent")
        assert f"{key} → src/d005.txt" in summary and "&amp;" not in summary
        assert "&amp;" not in driver.find_element("css selector", "table.sum").text
        # the check page puts the matched keys in with textContent
        driver.get(url + "/")
        driver.find_element("id", "text").send_keys(site["docs"]["d005"])
        driver.find_element("id", "check").click()
        _wait(lambda: driver.find_element("id", "results").is_displayed())
        keys = [
            td.text for td in driver.find_elements("css selector", "#results-table td:nth-child(2)")
        ]
        assert key in keys and "src/d005.txt" in keys
        assert driver.execute_script("return window.__xss") is None
    finally:
        driver.quit()


def _twins_in_view(driver) -> None:
    """Both columns hold passage 0 in the same colour; a click on the one in A brings its twin
    in B into view."""
    mark_a, mark_b = driver.find_element("id", "a-0"), driver.find_element("id", "b-0")
    assert mark_a.is_displayed() and mark_b.is_displayed()
    colour = mark_a.value_of_css_property("background-color")
    assert colour == mark_b.value_of_css_property("background-color") != "rgba(0, 0, 0, 0)"
    driver.execute_script("arguments[0].scrollIntoView({block:'center'})", mark_a)
    mark_a.click()
    _wait(lambda: driver.execute_script(IN_VIEW, mark_b))
    assert "flash" in mark_b.get_attribute("class")


def _wait(cond, timeout: float = 30.0):
    deadline = time.time() + timeout
    while True:
        try:
            value = cond()
        except Exception:  # the page is still changing
            value = None
        if value:
            return value
        if time.time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {cond}")
        time.sleep(0.1)
