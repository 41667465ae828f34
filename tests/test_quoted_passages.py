"""Issue 31 item 4: with ``--exclude-quotes`` a passage one document copies from inside the
other's quotation counts for the copier only; the pair views mark it in both texts, as
copied (counted) in the copier and "quoted: not counted" in the quoting one. Checked in the
HTML (parsed) of ``report --html`` and the site's pair page, and in ``report --format
json``, against the counts the index stores."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

from simdask.kernels.words import words
from tests.helpers.cli import run

pytestmark = pytest.mark.system

PASSAGE = " ".join(f"famous{i}" for i in range(40))
K = 5


def own(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("quotedmarks")
    src = tmp / "src"
    src.mkdir()
    # A quotes the passage and shares 20 words of its own with B, unquoted
    (src / "a.txt").write_text(f"{own('a', 15)} {own('both', 20)} As they say, “{PASSAGE}”.\n")
    (src / "b.txt").write_text(f"{own('b', 10)} {PASSAGE} {own('bb', 5)} {own('both', 20)}\n")
    (src / "c.txt").write_text(own("c", 80) + "\n")
    idx = tmp / "idx"
    run("update", idx, src, "--exclude-quotes", "--quiet", "--hash-bits", 32)  # in-process: small
    stored = {}
    for line in run("similar", idx, "--format", "jsonl").stdout.splitlines():
        r = json.loads(line)
        stored[(r["doc"], r["other"])] = r["shared"]
    return tmp, idx, stored


class _Marks(HTMLParser):
    """Each ``<mark>`` inside the element with ``id``: its label and text."""

    def __init__(self, ident: str):
        super().__init__(convert_charrefs=True)
        self.ident, self.depth, self.open = ident, 0, None
        self.marks: list[tuple[str, ...]] = []

    def opened(self, tag: str, a: dict) -> list[str] | None:
        """The fields of a mark this start tag opens (its text appended last), or None."""
        return [a.get("data-label", ""), ""] if tag == "mark" else None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.depth == 0 and a.get("id") == self.ident:
            self.depth = 1
        elif self.depth:
            self.depth += 1
            fields = self.opened(tag, a)
            if fields is not None:
                self.open = fields

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1
            if tag == "mark" and self.open is not None:
                self.marks.append(tuple(self.open))
                self.open = None

    def handle_data(self, data):
        if self.open is not None:
            self.open[-1] += data


def marks(page: str, ident: str) -> list[tuple[str, str]]:
    p = _Marks(ident)
    p.feed(page)
    return p.marks


def chunks(text: str) -> set[tuple[str, ...]]:
    ws = words(text)
    return {tuple(sorted(ws[i : i + K])) for i in range(len(ws) - K + 1)}


def check_page(page: str, copier: str, quoter: str, stored: dict) -> None:
    """The copier's side marks the passage as copied from a quotation, the quoter's as
    quoted and not counted; the chunks of the copier's marks are what the stored count
    adds to the chunks both count (``shared`` of copier -> quoter minus the reverse's)."""
    sides = {"doc": marks(page, "doc"), "other": marks(page, "other")}
    first = "doc" if f"<h1>{copier} and" in page else "other"
    second = "other" if first == "doc" else "doc"
    copied = [
        t
        for label, t in sides[first]
        if label.endswith("copied from the other's quotation: counted")
    ]
    quoted = [t for label, t in sides[second] if label.endswith("quoted: not counted")]
    assert len(copied) == 1 and len(quoted) == 1
    assert words(copied[0]) == words(PASSAGE) == words(quoted[0])
    extra = stored[(copier, quoter)] - stored.get((quoter, copier), 0)
    assert len(chunks(copied[0])) == extra == len(chunks(PASSAGE))
    assert "inside a quotation" in page


@pytest.mark.parametrize("order", ["copier first", "quoter first"])
def test_report_html_marks_the_copy_of_a_quotation_on_both_sides(index, order):
    tmp, idx, stored = index
    a, b = "src/b.txt", "src/a.txt"
    if order == "quoter first":
        a, b = b, a
    out = tmp / f"{order}.html"
    run("report", idx, a, b, "--html", out)
    check_page(out.read_text(encoding="utf-8"), "src/b.txt", "src/a.txt", stored)


def test_json_report_lists_the_copies_of_a_quotation_per_side(index):
    _, idx, stored = index
    rep = json.loads(run("report", idx, "src/b.txt", "src/a.txt", "--format", "json").stdout)
    text_b = run("text", idx, "src/b.txt").stdout
    (p,) = rep["quoted_copies"]["doc"]
    assert rep["quoted_copies"]["other"] == []
    assert words(text_b[p["doc_start"] : p["doc_end"]]) == words(PASSAGE)
    # the copy counts for B only: B's count is the stored one, the passages both count not
    assert rep["shared"] == stored[("src/b.txt", "src/a.txt")]
    # the passages both count leave it out (it is inside A's quotation)
    shown = [text_b[x["doc_start"] : x["doc_end"]] for x in rep["passages"]]
    assert not any("famous" in t for t in shown)


def test_site_pair_page_marks_the_copy_of_a_quotation(index):
    tmp, idx, stored = index
    site = tmp / "site"
    run("export-html", idx, site, "--quiet")
    pages = [p.read_text(encoding="utf-8") for p in (site / "pairs").glob("*.html")]
    page = next(t for t in pages if "src/a.txt" in t and "src/b.txt" in t and "<h1>" in t)
    check_page(page, "src/b.txt", "src/a.txt", stored)


class _DocMarks(_Marks):
    """Each ``<mark data-quoted>`` inside ``#text`` of a document page: its kind, its title
    and its text; and whether the page has the legend of these marks."""

    def __init__(self):
        super().__init__("text")
        self.legend = False

    def opened(self, tag: str, a: dict) -> list[str] | None:
        if tag == "mark" and a.get("data-quoted"):
            return [a["data-quoted"], a.get("title", ""), ""]
        return None

    def handle_starttag(self, tag, attrs):
        if dict(attrs).get("id") == "quote-legend":
            self.legend = True
        super().handle_starttag(tag, attrs)


def check_document_pages(copier_page: str, quoter_page: str, stored: dict) -> None:
    """The copier's page marks the passage as copied from the quoter's quotation (counted),
    the quoter's as quoted and not counted, each with the legend; the marked words' chunks
    are the stored count minus the reverse one."""
    extra = stored[("src/b.txt", "src/a.txt")] - stored.get(("src/a.txt", "src/b.txt"), 0)
    for page, kind, title in (
        (copier_page, "from-quote", "copied from src/a.txt's quotation: counted"),
        (quoter_page, "quoted", "quoted: not counted (copied by src/b.txt"),
    ):
        p = _DocMarks()
        p.feed(page)
        assert p.legend
        assert [(k, t[: len(title)]) for k, t, _ in p.marks] == [(kind, title)]
        marked = p.marks[0][2]
        assert words(marked) == words(PASSAGE)
        assert len(chunks(marked)) == extra == len(chunks(PASSAGE))


def test_site_document_pages_mark_the_copy_of_a_quotation(index):
    tmp, idx, stored = index
    site = tmp / "site-docs"
    run("export-html", idx, site, "--quiet")
    pages = {}
    for page in (site / "docs").glob("*.html"):
        text = page.read_text(encoding="utf-8")
        for key in ("src/a.txt", "src/b.txt"):
            if f"<h1>{key}</h1>" in text:
                pages[key] = text
    check_document_pages(pages["src/b.txt"], pages["src/a.txt"], stored)


def test_web_document_pages_mark_the_copy_of_a_quotation(index):
    tmp, idx, stored = index
    from tests.helpers.server import serving

    with serving(idx, log=tmp / "serve-quoted.log") as (url, _):
        import requests  # the web extra (serving() skips without it)

        got = {
            key: requests.get(f"{url}/document", params={"key": key}, timeout=120)
            for key in ("src/a.txt", "src/b.txt")
        }
    assert all(r.status_code == 200 for r in got.values())
    check_document_pages(got["src/b.txt"].text, got["src/a.txt"].text, stored)
