"""Who was first on the document pages (issue 31, item 13): the sources table of a document's
page on the static site (``export-html``), on ``serve`` (``/document``) and of a checked
document in ``query --html`` gives each source's dates (first indexed, file modified) as the
catalog holds them (:func:`~simdask.storage.doc_dates.dates_of`, in the ISO 8601 form of
``report`` and ``similar --details``), and an indexed document's page its own."""

from __future__ import annotations

import os
from html.parser import HTMLParser

import pytest

from simdask import Index
from simdask.evidence.doc_html import date_cell
from simdask.read.review import iso_time
from simdask.storage.doc_dates import dates_of
from tests.helpers.cli import run
from tests.helpers.documents import prose
from tests.helpers.server import serving

pytestmark = pytest.mark.system

OPTS = ("--workers", 1, "--quiet")
OLD, MID, NEW = 1_690_000_000, 1_720_000_000, 1_780_000_000  # the files' modification times
OLD_TEXT, MID_TEXT = prose(300, seed=41), prose(250, seed=42)
LATE = "class/2026/late.txt"
SOURCES = ("class/2025/old.txt", "class/2025/mid.txt")


class _SourceDates(HTMLParser):
    """The rows of ``<table id=sources>``: ``data-key -> [data-v of each date cell]``, and
    the ``datetime`` of the page's ``<time id=doc-...>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.inside, self.key = False, None
        self.rows: dict[str, list[str]] = {}
        self.own: dict[str, str] = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.inside = a.get("id") == "sources"
        elif self.inside and tag == "tr" and "data-key" in a:
            self.key = a["data-key"]
            self.rows[self.key] = []
        elif self.inside and tag == "td" and a.get("class") == "d" and self.key:
            self.rows[self.key].append(a.get("data-v"))
        elif tag == "time" and (a.get("id") or "").startswith("doc-"):
            self.own[a["id"]] = a["datetime"]

    def handle_endtag(self, tag):
        if tag == "table":
            self.inside = False


def _parsed(page: str) -> _SourceDates:
    p = _SourceDates()
    p.feed(page)
    return p


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("dates")
    old, new = root / "class" / "2025", root / "class" / "2026"
    old.mkdir(parents=True)
    new.mkdir()
    for key, text, when in zip(SOURCES, (OLD_TEXT, MID_TEXT), (OLD, MID), strict=True):
        (root / key).write_text(text, encoding="utf-8")
        os.utime(root / key, (when, when))
    idx = root / "idx"
    run("update", idx, root / "class", *OPTS)
    late = OLD_TEXT[: len(OLD_TEXT) // 2] + " " + prose(100, seed=43) + " " + MID_TEXT
    (root / LATE).write_text(late, encoding="utf-8")
    os.utime(root / LATE, (NEW, NEW))
    run("update", idx, root / "class", *OPTS)  # a later run: a later first-indexed date
    (root / "checked.txt").write_text(late, encoding="utf-8")
    with Index.open(idx) as index:
        dates = dates_of(index.catalog, [LATE, *SOURCES])
    want = {k: [iso_time(f), iso_time(m)] for k, (f, m) in dates.items()}
    assert want[SOURCES[0]][1] == iso_time(OLD) and want[LATE][1] == iso_time(NEW)
    assert want[SOURCES[0]][0] < want[LATE][0]  # indexed in two runs
    return root, idx, want


def _check(page: str, want: dict, own: bool = True, keys=SOURCES) -> None:
    got = _parsed(page)
    assert set(got.rows) == set(keys)  # every source listed
    assert got.rows == {k: want[k] for k in keys}  # first indexed, file modified
    if own:
        assert got.own == {"doc-first-indexed": want[LATE][0], "doc-modified": want[LATE][1]}
    else:  # a checked text is not indexed: no dates of its own
        assert got.own == {}


def test_site_document_page_shows_the_sources_dates(built):
    root, idx, want = built
    run("export-html", idx, root / "site", "--quiet")
    page = next(
        t
        for p in (root / "site" / "docs").glob("*.html")
        if f"<h1>{LATE}</h1>" in (t := p.read_text(encoding="utf-8"))
    )
    _check(page, want)


def test_serve_document_page_shows_the_sources_dates(built):
    import requests

    root, idx, want = built
    with serving(idx, log=root / "serve.log") as (url, _):
        page = requests.get(url + "/document", params={"key": LATE}, timeout=60).text
    _check(page, want)


def test_query_html_shows_the_sources_dates(built):
    root, idx, want = built
    run("query", idx, root / "checked.txt", "--html", root / "q.html")
    page = (root / "q.html").read_text(encoding="utf-8")
    # the checked text is a copy of the late essay: it and the essay's two sources
    _check(page.split("<section class=checked>", 1)[1], want, False, (*SOURCES, LATE))


@pytest.mark.unit
def test_a_date_cell_is_the_iso_time_and_a_dash_when_unknown():
    cell = date_cell(1_780_000_000.0)
    assert 'data-v="2026-05-28T20:26:40Z"' in cell and ">2026-05-28 20:26</time>" in cell
    assert date_cell(None) == '<td class=d data-v="">—</td>'
