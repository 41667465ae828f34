"""The exact side-by-side page leads with one number per direction in a teacher's words (issue
31, item 16): "83 % of scott.txt is found in thesis.txt", the percent of each text's words
inside the exact passages, as the aligned pages say it; the chunk containment and the shared
chunks are folded in a details section. Rendered from a report (unit), by ``report
--exact-only --html`` and by ``serve``'s ``/report?exact=1`` (system), each page parsed."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

from simdask.evidence.passages import compare_texts
from simdask.evidence.report_html import render_pair_html
from simdask.kernels.words import WORD_PATTERN
from simdask.read.undirected_pairs import pct
from tests.helpers.cli import run
from tests.helpers.documents import prose
from tests.helpers.server import serving

pytestmark = pytest.mark.system

SHARED = prose(120, seed=51)
A_TEXT = prose(40, seed=52) + " " + SHARED + " " + prose(20, seed=53)
B_TEXT = prose(300, seed=54) + " " + SHARED + " " + prose(200, seed=55)


class _Header(HTMLParser):
    """The rows of the header's ``table.sum`` (``(label, value)``) and the text of its
    ``<details>`` (the folded rows)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.where: str | None = None
        self.rows: list[list[str]] = []
        self.folded: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("class") == "sum":
            self.where = "sum"
        elif tag == "details" and self.where is None:
            self.where = "details"
        elif tag == "tr" and self.where == "sum":
            self.rows.append([])
        elif tag == "td" and self.where == "sum":
            self.rows[-1].append("")

    def handle_endtag(self, tag):
        if (tag == "table" and self.where == "sum") or (tag == "details" and self.where):
            self.where = None

    def handle_data(self, data):
        if self.where == "sum" and self.rows and self.rows[-1]:
            self.rows[-1][-1] += data
        elif self.where == "details":
            self.folded.append(data)


def _header(page: str) -> _Header:
    head = page.split("<header>", 1)[1].split("</header>", 1)[0]
    p = _Header()
    p.feed(head)
    return p


def _words_inside(text: str, spans: list[tuple[int, int]]) -> float:
    """Brute force: the percent of ``text``'s words lying wholly inside one of ``spans``."""
    words = [(m.start(), m.end()) for m in WORD_PATTERN.finditer(text)]
    merged: list[list[int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    inside = sum(1 for ws, we in words if any(s <= ws and we <= e for s, e in merged))
    return 100.0 * inside / len(words)


def _check(page: str, rep: dict, a: str, b: str, text_a: str, text_b: str) -> None:
    ps = rep["passages"]
    assert ps, "the pair shares a passage"
    in_a = _words_inside(text_a, [(p["doc_start"], p["doc_end"]) for p in ps])
    in_b = _words_inside(text_b, [(p["other_start"], p["other_end"]) for p in ps])
    assert in_a > 50 > in_b > 5  # a short essay taken from a long text
    head = _header(page)
    assert head.rows[0][1] == f"{pct(in_a)} of {a} is found in {b}"
    assert head.rows[1][1] == f"{pct(in_b)} of {b} is found in {a}"
    shown = " ".join(v for _, v in head.rows)
    assert "chunks" not in shown  # the chunk measures are details
    folded = "".join(head.folded)
    assert f"of {a}'s chunks are in {b}" in folded and "shared chunks" in folded


@pytest.mark.unit
def test_the_exact_page_leads_with_each_texts_share_in_words():
    ev = compare_texts(A_TEXT, B_TEXT)
    rep = ev.report("scott.txt", "thesis.txt", ev.similarity)
    assert "aligned_coverage" not in rep  # the exact evidence
    page = render_pair_html(rep, A_TEXT, B_TEXT)
    _check(page, rep, "scott.txt", "thesis.txt", A_TEXT, B_TEXT)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("exact")
    (root / "class").mkdir()
    (root / "class" / "scott.txt").write_text(A_TEXT, encoding="utf-8")
    (root / "class" / "thesis.txt").write_text(B_TEXT, encoding="utf-8")
    run("update", root / "idx", root / "class", "--workers", 1, "--quiet")
    return root


def test_report_exact_only_html_leads_with_the_words(built):
    root = built
    idx, a, b = root / "idx", "class/scott.txt", "class/thesis.txt"
    rep = json.loads(run("report", idx, a, b, "--exact-only", "--format", "json").stdout)
    run("report", idx, a, b, "--exact-only", "--html", root / "r.html")
    _check((root / "r.html").read_text(encoding="utf-8"), rep, a, b, A_TEXT, B_TEXT)


def test_serve_exact_report_leads_with_the_words(built):
    import requests

    root = built
    idx, a, b = root / "idx", "class/scott.txt", "class/thesis.txt"
    rep = json.loads(run("report", idx, a, b, "--exact-only", "--format", "json").stdout)
    with serving(idx, log=root / "serve.log") as (url, _):
        page = requests.get(url + "/report", params={"a": a, "b": b, "exact": 1}, timeout=60)
    _check(page.text, rep, a, b, A_TEXT, B_TEXT)
