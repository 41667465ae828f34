"""The static site's pairs without a page of their own (issue 31 item 7), in a real headless
Chromium: ``pair.html#<a>-<b>`` renders each such pair side by side from the site's data,
from ``file://`` and from a static web server, and the passages shown are those of
``simdask report --exact-only --format json`` for the pair (offsets, words, chunks, and the
marked text of both columns), with the index's exclusions (a template, quotations, reference
list) applied; hostile keys and texts (``<script>``, ``onerror``) are shown as text and never
run."""

from __future__ import annotations

import functools
import http.server
import json
import re
import threading
from pathlib import Path

import pytest

from simdask.evidence.pair_view import ViewOptions, index_report
from simdask.index import Index
from tests.helpers.browser import chromium_driver
from tests.helpers.cli import run
from tests.helpers.documents import prose

pytestmark = pytest.mark.system

SHEET = prose(40, seed=80)  # the assignment sheet, in every essay and excluded
PARTS = [prose(35, seed=81 + i) for i in range(4)]  # passages shared by some essays
HOSTILE_KEY = "<img src=x onerror=window.__xss=1>.txt"
HOSTILE_TEXT = "<script>window.__xss=2</script> <img src=x onerror=window.__xss=3> & "
QUOTE = '"' + prose(12, seed=90) + '"'  # quoted in one essay, excluded there


def own(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


ESSAYS = {
    "a.txt": f"{own('a', 30)} {SHEET} {PARTS[0]} {own('aa', 20)} {PARTS[1]} {QUOTE}",
    "b.txt": f"{own('b', 25)} {PARTS[0]} {SHEET} {own('bb', 20)} {PARTS[2]}",
    "c.txt": f"{SHEET} {own('c', 20)} {PARTS[1]} {own('cc', 15)} {PARTS[2]} {PARTS[3]}",
    "d.txt": f"{own('d', 10)} {PARTS[3]} {own('dd', 30)} {PARTS[0]} {SHEET}",
    "e.txt": f"{own('e', 40)} {PARTS[1]} {prose(12, seed=90)} {PARTS[3]} {own('ee', 10)}",
    HOSTILE_KEY: f"{HOSTILE_TEXT} {own('h', 20)} {PARTS[2]} {own('hh', 20)} {PARTS[0]}",
    # the sheet between two copied parts, in the same order: one diagonal, cut in two
    "f.txt": f"{own('f', 15)} {PARTS[2]} {SHEET} {PARTS[3]} {own('ff', 10)}",
    "g.txt": f"{own('g', 5)} {PARTS[2]} {SHEET} {PARTS[3]} {QUOTE} {own('gg', 5)}",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sitepairs")
    src = tmp / "src"
    src.mkdir()
    for name, text in ESSAYS.items():
        (src / name).write_text(text, encoding="utf-8")
    (tmp / "sheet.txt").write_text(SHEET, encoding="utf-8")
    idx = tmp / "idx"
    run("update", idx, src, "--exclude", tmp / "sheet.txt", "--exclude-quotes", "--quiet")
    out = tmp / "site"
    run("export-html", idx, out, "--per-document", "1", "--quiet")
    return idx, out


def _without_page(out: Path) -> list[tuple[str, str]]:
    """The ``<a>-<b>`` pairs the site links to pair.html (no page of their own)."""
    text = "".join(p.read_text(encoding="utf-8") for p in (out / "docs").iterdir())
    return sorted(set(re.findall(r'href="\.\./pair\.html#(\d+)-(\d+)"', text)))


def _keys(out: Path) -> dict[str, str]:
    body = (out / "data" / "site.js").read_text(encoding="utf-8")
    data = json.loads(body[body.index("=") + 1 : body.rindex(";")])
    return {i: v[0] for i, v in data["docs"].items()}


def _shown(driver, base: str, a: str, b: str) -> dict:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(f"{base}/pair.html#{a}-{b}")
    WebDriverWait(driver, 60).until(
        lambda d: (
            d.execute_script("return document.body.getAttribute('data-rendered')") == f"{a}-{b}"
        )
    )
    return driver.execute_script(
        "var rows=[].slice.call(document.querySelectorAll('#passages tr[data-doc-start]'));"
        "function marked(id,n){return [].slice.call(document.querySelectorAll('#'+id+' mark'))"
        ".filter(function(m){return m.getAttribute('data-p').split(' ').indexOf(String(n))>=0;})"
        ".map(function(m){return m.textContent;}).join('');}"
        "return {keys:document.getElementById('pair-keys').textContent,"
        "passages:rows.map(function(r,n){return {doc_start:+r.dataset.docStart,"
        "doc_end:+r.dataset.docEnd,other_start:+r.dataset.otherStart,"
        "other_end:+r.dataset.otherEnd,words:+r.dataset.words,chunks:+r.dataset.chunks,"
        "a:marked('text-a',n),b:marked('text-b',n)};}),"
        "a:document.getElementById('text-a').textContent,"
        "b:document.getElementById('text-b').textContent,xss:window.__xss||null};"
    )


FIELDS = ("doc_start", "doc_end", "other_start", "other_end", "words", "chunks")


def _check(idx, shown: dict, ka: str, kb: str, cli: bool = False) -> int:
    """The page's passages against ``report --exact-only`` (``cli``: the command's JSON,
    else the function it prints, ``index_report``); their number."""
    if cli:
        rep = json.loads(run("report", idx, ka, kb, "--exact-only", "--format", "json").stdout)
    with Index.open(idx) as index:
        ta, tb = index.text(ka), index.text(kb)
        if not cli:
            rep = index_report(index, ka, kb, options=ViewOptions(exact_only=True))
    assert shown["keys"] == f"{ka} and {kb}" and shown["xss"] is None
    assert shown["a"] == ta and shown["b"] == tb  # the whole texts, as text
    want = [{f: p[f] for f in FIELDS} for p in rep["passages"]]
    assert [{f: p[f] for f in FIELDS} for p in shown["passages"]] == want
    for p in shown["passages"]:
        assert p["a"] == ta[p["doc_start"] : p["doc_end"]]
        assert p["b"] == tb[p["other_start"] : p["other_end"]]
    excluded = [(x["start"], x["end"]) for x in rep["excluded"]["doc"]]
    for p in want:  # no passage inside the excluded sheet or quotation
        assert not any(s <= p["doc_start"] and p["doc_end"] <= e for s, e in excluded)
    return len(want)


def test_pairs_without_a_page_render_the_exact_report_in_the_browser(site):
    idx, out = site
    pairs, keys = _without_page(out), _keys(out)
    assert len(pairs) >= 10  # most of the 28 pairs: --per-document 1
    assert not any((out / "pairs" / f"{a}-{b}.html").exists() for a, b in pairs)
    with_page = [tuple(p.stem.split("-")) for p in (out / "pairs").iterdir()]
    hostile = next(i for i, k in keys.items() if k.endswith(HOSTILE_KEY))
    driver = chromium_driver(1200, 800)
    try:
        found = 0
        for a, b in pairs + with_page:  # a pair with a page renders the same way when asked
            shown = _shown(driver, out.as_uri(), a, b)
            found += _check(idx, shown, keys[a], keys[b], cli=hostile in (a, b)) > 0
        assert found >= 8  # pairs that share passages, not only empty ones
        assert any(hostile in p for p in pairs)
        assert driver.execute_script("return window.__xss||null") is None
    finally:
        driver.quit()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def test_pair_page_works_from_a_static_web_server(site):
    idx, out = site
    handler = functools.partial(_Quiet, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    keys = _keys(out)
    driver = chromium_driver(1200, 800)
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        a, b = _without_page(out)[0]
        _check(idx, _shown(driver, base, a, b), keys[a], keys[b])
        driver.get(f"{base}/pair.html#999-1000")
        status = driver.find_element("id", "pair-status").text
        assert status == "No such pair in this site."
    finally:
        driver.quit()
        server.shutdown()
