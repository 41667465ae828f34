"""Every view of a pair's passages applies the index's exclusions (issue 28; issue 31 item 1):
``report`` (JSON, ``--html``, ``--exact-only``), ``query --html`` (its results table and its
view of the checked document), ``compare --html``, the
site's pair page and document page (``export-html``), and ``serve``'s side-by-side views and
JSON report. One parametrised test: in each view no passage covers text the similarities do
not count (a template, a quotation, the reference list, chunks over ``max_df``), and the
copied paragraph is shown. Plus: the JSON report carries the aligned passages with their kind
and both coverages, and ``--exact-only`` gives the exact evidence of ``Index.report``."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from simdask.kernels.words import WORD_PATTERN
from tests.helpers.cli import run
from tests.helpers.paraphrase import OWN, PARAGRAPHS
from tests.helpers.server import serving

pytestmark = pytest.mark.system

TEMPLATE = (
    "Assignment two. Write an essay of about eight hundred words on a topic of history or "
    "natural science. Cite every source you use, put quotations in quotation marks and list "
    "your references at the end. Essays are due on the last Friday of the month."
)
QUOTED = PARAGRAPHS[5]  # quoted in a, the same words unquoted in b
COPIED = PARAGRAPHS[2]  # copied without quotation marks: what every view must show
COMMON = PARAGRAPHS[7]  # in four documents: over max_df 2
REFS = (
    "References\n\nSmith, J. (2019). A History of Printing. Oxford University Press.\n"
    "Brown, K. (2021). Railways and Time. Cambridge University Press."
)
A_TEXT = "\n\n".join(
    [TEMPLATE, OWN[0], f"As one historian put it, “{QUOTED}”", COPIED, COMMON, OWN[1], REFS]
)
B_TEXT = "\n\n".join([TEMPLATE, PARAGRAPHS[0], QUOTED, COPIED, COMMON, PARAGRAPHS[3], REFS])


def _extent(text: str, part: str) -> tuple[int, int]:
    """From the first to the last word of ``part`` inside ``text``."""
    at = text.index(part)
    found = list(WORD_PATTERN.finditer(text, at, at + len(part)))
    return found[0].start(), found[-1].end()


def _excluded(text: str, quoted: bool, common: bool) -> list[tuple[int, int]]:
    out = [_extent(text, TEMPLATE), _extent(text, REFS)]
    out += [_extent(text, QUOTED)] if quoted else []
    return out + ([_extent(text, COMMON)] if common else [])


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("views")
    src = root / "class"
    src.mkdir()
    (src / "a.txt").write_text(A_TEXT, encoding="utf-8")
    (src / "b.txt").write_text(B_TEXT, encoding="utf-8")
    (src / "c.txt").write_text(OWN[2] + "\n\n" + COMMON, encoding="utf-8")
    (src / "d.txt").write_text(PARAGRAPHS[6] + "\n\n" + COMMON, encoding="utf-8")
    (root / "template.txt").write_text(TEMPLATE, encoding="utf-8")
    (root / "a.txt").write_text(A_TEXT, encoding="utf-8")  # a checked document (query)
    for g in ("ga", "gb"):
        (root / g).mkdir()
    (root / "ga" / "a.txt").write_text(A_TEXT, encoding="utf-8")
    (root / "gb" / "b.txt").write_text(B_TEXT, encoding="utf-8")
    excl = ("--exclude", root / "template.txt", "--exclude-quotes", "--exclude-bibliography")
    run("update", root / "idx", src, *excl, "--max-df", 2, "--workers", 1, "--quiet")
    return root, excl


class _Marks(HTMLParser):
    """Character spans of ``<mark>`` (or ``<li data-start>``) elements inside the element
    with ``id`` (and its ``div.text`` when it has one), offsets into its text."""

    def __init__(self, ident: str):
        super().__init__(convert_charrefs=True)
        self.ident, self.depth, self.pos, self.open = ident, 0, 0, None
        self.spans: list[tuple[int, int]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.depth == 0 and a.get("id") == self.ident:
            self.depth = 1
        elif self.depth:
            self.depth += tag not in ("br", "wbr")
            # a passage the other text copies from inside this one's quotation is marked in
            # the quotation, "quoted: not counted" (tests/test_quoted_passages.py): not a
            # passage of this text (on a document page: ``data-quoted="quoted"``)
            quoted = a.get("data-label", "").endswith("quoted: not counted")
            if tag == "mark" and not quoted and a.get("data-quoted") != "quoted":
                self.open = self.pos
            if tag == "li" and "data-start" in a:
                self.spans.append((int(a["data-start"]), int(a["data-end"])))
            if tag == "h2":
                self.skip = True

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1
            if tag == "mark" and self.open is not None:
                self.spans.append((self.open, self.pos))
                self.open = None
            if tag == "h2":
                self.skip = False

    def handle_data(self, data):
        if self.depth and not getattr(self, "skip", False):
            self.pos += len(data)


def _spans(page: str, ident: str) -> list[tuple[int, int]]:
    p = _Marks(ident)
    p.feed(page)
    return p.spans


def _pair_page(page: str) -> dict[str, list[tuple[int, int]]]:
    return {"a": _spans(page, "doc"), "b": _spans(page, "other")}


def _json(rep: dict) -> dict[str, list[tuple[int, int]]]:
    ps = rep["passages"]
    return {
        "a": [(p["doc_start"], p["doc_end"]) for p in ps],
        "b": [(p["other_start"], p["other_end"]) for p in ps],
    }


def _report_json(root, excl, *extra):
    out = run("report", root / "idx", "a.txt", "b.txt", "--format", "json", *extra).stdout
    return _json(json.loads(out))


def _report_html(root, excl):
    run("report", root / "idx", "a.txt", "b.txt", "--html", root / "r.html")
    return _pair_page((root / "r.html").read_text(encoding="utf-8"))


def _query_html(root, excl):
    run("query", root / "idx", root / "a.txt", "--html", root / "q.html")
    page = (root / "q.html").read_text(encoding="utf-8")
    row = re.search(r"<tr><td>a\.txt</td><td>class/b\.txt</td>.*?</tr>", page, re.S).group()
    return {"a": _spans(f"<table id=t>{row}</table>", "t")}


def _query_html_view(root, excl):
    """``query --html``'s view of the checked document: its text with every source's
    passages marked (the one view of a checked text, above the results table)."""
    page = root / "q.html"
    if not page.exists():
        run("query", root / "idx", root / "a.txt", "--html", page)
    view = page.read_text(encoding="utf-8").split("<section class=checked>", 1)[1]
    return {"a": _spans(view.split("</section>", 1)[0], "text")}


def _compare_html(root, excl):
    run("compare", root / "ga", root / "gb", *excl, "--workers", 1, "--quiet",
        "--html", root / "c.html")  # fmt: skip
    page = (root / "c.html").read_text(encoding="utf-8")
    return {"a": _spans(page, "results")}


def _site(root, excl, which):
    site = root / "site"
    if not (site / "index.html").exists():
        run("export-html", root / "idx", site, "--quiet")
    pages = {p: p.read_text(encoding="utf-8") for p in (site / "docs").glob("*.html")}
    doc = next(t for t in pages.values() if "<h1>class/a.txt</h1>" in t)
    if which == "doc":
        return {"a": _spans(doc, "text")}
    link = re.search(r'href="\.\./(pairs/\d+-\d+\.html)">side by side</a>', doc.split(
        "class/b.txt</a>")[1]).group(1)  # fmt: skip
    page = (site / link).read_text(encoding="utf-8")
    spans = _pair_page(page)
    return spans if "<h1>class/a.txt and" in page else {"a": spans["b"], "b": spans["a"]}


def _serve(root, excl, which):
    import requests

    with serving(root / "idx", log=root / "serve.log") as (url, _):
        q = {"a": "class/a.txt", "b": "class/b.txt"}
        if which == "api":
            return _json(requests.get(url + "/api/report", params=q, timeout=60).json())
        if which == "report":
            return _pair_page(requests.get(url + "/report", params=q, timeout=60).text)
        if which == "document":  # one text with all its sources
            page = requests.get(url + "/document", params={"key": q["a"]}, timeout=60).text
            return {"a": _spans(page, "text")}
        files = [("file", ("a.txt", A_TEXT.encode()))]
        got = requests.post(url + "/api/query", files=files, timeout=60).json()
        page = requests.get(
            f"{url}/check/{got['qid']}/report",
            params={"query": "a.txt", "key": "class/b.txt"},
            timeout=60,
        ).text
        return _pair_page(page)


VIEWS = {
    "report-json": (_report_json, True),
    "report-json-exact": (lambda r, e: _report_json(r, e, "--exact-only"), True),
    "report-html": (_report_html, True),
    "query-html": (_query_html, True),
    "query-html-document-view": (_query_html_view, True),
    "compare-html": (_compare_html, False),  # two documents: nothing over max_df
    "site-pair-page": (lambda r, e: _site(r, e, "pair"), True),
    "site-document-page": (lambda r, e: _site(r, e, "doc"), True),
    "serve-report": (lambda r, e: _serve(r, e, "report"), True),
    "serve-document-page": (lambda r, e: _serve(r, e, "document"), True),
    "serve-check-report": (lambda r, e: _serve(r, e, "check"), True),
    "serve-api-report": (lambda r, e: _serve(r, e, "api"), True),
}


@pytest.mark.parametrize("view", list(VIEWS))
def test_no_view_shows_a_passage_in_excluded_text(built, view):
    root, excl = built
    get, max_df = VIEWS[view]
    got = get(root, excl)
    texts = {"a": A_TEXT, "b": B_TEXT}
    for side, spans in got.items():
        text = texts[side]
        bad = _excluded(text, quoted=side == "a", common=max_df)
        for s, e in spans:
            hit = [(x0, x1) for x0, x1 in bad if s < x1 and x0 < e]
            assert not hit, (view, side, text[s:e][:80], [text[x0:x1][:40] for x0, x1 in hit])
    copied = _extent(A_TEXT, COPIED)
    assert any(s < copied[1] and copied[0] < e for s, e in got["a"]), (view, got)


def test_json_report_has_kinds_and_both_coverages_and_exact_only_the_old_evidence(built):
    from simdask import Index
    from simdask.alignment import align, aligned_coverage

    root, _ = built
    base = ("report", root / "idx", "a.txt", "b.txt", "--format", "json")
    rep = json.loads(run(*base).stdout)
    exact = json.loads(run(*base, "--exact-only").stdout)
    with Index.open(root / "idx") as idx:
        old = idx.report("class/a.txt", "class/b.txt")  # the exact evidence, as before
    # the CLI's report adds the review of the pair (dates, decision: issue 31)
    assert set(exact.pop("review")) == set(rep.pop("review")) >= {"decision", "a_modified"}
    # ... and the settings the view applied (the evidence for a hearing: issue 31, item 14)
    assert (
        exact.pop("settings")
        == rep.pop("settings")
        == {
            "k": 5,
            "max_df": 2,
            "exclude_quotes": True,
            "exclude_bibliography": True,
            "excluded_templates": ["template.txt"],
        }
    )
    assert exact == {**old, "passages_method": "exact"}
    assert rep["passages_method"] == "aligned" and exact["passages_method"] == "exact"
    view_only = ("passages", "passages_method", "aligned_coverage", "min_words", "counted_spans")
    assert {k: v for k, v in rep.items() if k not in view_only} == {
        k: v for k, v in old.items() if k != "passages"
    }
    # brute force: the aligner on the two texts, with the excluded text the report lists
    spans = {
        side: [(x["start"], x["end"]) for x in rep["excluded"][side]] for side in ("doc", "other")
    }
    want = align(A_TEXT, B_TEXT, excluded_a=spans["doc"], excluded_b=spans["other"])
    assert [(p["doc_start"], p["doc_end"], p["other_start"], p["other_end"], p["kind"])
            for p in rep["passages"]] == [
        (p.a_start, p.a_end, p.b_start, p.b_end, p.kind) for p in want]  # fmt: skip
    assert all(p["words"] == len(WORD_PATTERN.findall(A_TEXT[p["doc_start"] : p["doc_end"]]))
               for p in rep["passages"])  # fmt: skip
    # each side's coverage: its own quotations excluded, the other's read as text (issue 31
    # item 4: a quotation is left out of its own document only)
    opened = {
        side: [(x["start"], x["end"]) for x in rep["excluded"][side] if x["kind"] != "quote"]
        for side in ("doc", "other")
    }
    for_a = align(A_TEXT, B_TEXT, excluded_a=spans["doc"], excluded_b=opened["other"])
    for_b = align(A_TEXT, B_TEXT, excluded_a=opened["doc"], excluded_b=spans["other"])
    share_a = aligned_coverage(for_a, A_TEXT, B_TEXT)[0]
    share_b = aligned_coverage(for_b, A_TEXT, B_TEXT)[1]
    assert rep["aligned_coverage"] == {
        "doc": pytest.approx(100 * share_a),
        "other": pytest.approx(100 * share_b),
    }
    assert 0 < rep["aligned_coverage"]["doc"] < 100
    kinds = {x["kind"] for x in rep["excluded"]["doc"]}
    assert kinds == {"template", "quote", "bibliography", "common"}
