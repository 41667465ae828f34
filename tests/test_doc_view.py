"""A document's view with all its sources (issue 29 views, issue 31 items 10, 15, 16): the
headline in a teacher's words (never 0 % for a total never computed), the text with every
source's passages marked once each in the source's colour (overlaps clipped, everything
escaped once), the passages listed in text order, and on an index: a checked text's total
is the union of its sources' passages and an indexed document's is the stored one."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdask.evidence.pair_view as pair_view
from simdask import Index, IndexConfig
from simdask.alignment.coverage import word_share
from simdask.cli.main import main
from simdask.evidence.doc_html import SOURCE_COLORS, doc_view_html, marked_sources
from simdask.evidence.doc_view import (
    NOT_COMPUTED,
    DocView,
    SourceView,
    document_view,
    total_sentence,
)
from tests.helpers.documents import prose

pytestmark = pytest.mark.unit


def _source(key, spans, share=10.0):
    ps = tuple(
        {"doc_start": s, "doc_end": e, "words": 1, "kind": "verbatim", "score": 1.0}
        for s, e in spans
    )
    return SourceView(key, share, 5.0, 4.0, 3.0, ps, ())


def _view(text, sources, total=50.0, more=0):
    return DocView("a<b>.txt", 10, total, "stored", tuple(sources), more, text)


def test_total_sentence_in_words():
    one = _source("x.txt", [(0, 3)])
    assert (
        total_sentence(_view("abc", [one], 71.2)) == "71 % of a<b>.txt is found in 1 other document"
    )
    two = [one, _source("y.txt", [(1, 2)])]
    assert total_sentence(_view("abc", two, 4.44, more=1)).startswith("4.4 % of a<b>.txt is")
    assert total_sentence(_view("abc", two, 4.44, more=1)).endswith("in 3 other documents")
    assert total_sentence(_view("abc", [], 0.0)) == (
        "No passage of a<b>.txt is found in another document"
    )
    checked = DocView("c.txt", 3, 40.0, "view", (one, _source("z.txt", [], 0.0)), 30, "abc")
    assert total_sentence(checked) == "40 % of c.txt is found in 1 other document"
    assert "30 further matches were not aligned" in doc_view_html(checked)
    missing = total_sentence(_view("abc", [one], None))
    assert NOT_COMPUTED in missing and "%" not in missing.replace(NOT_COMPUTED, "")
    page = doc_view_html(_view("abc", [one], None))
    assert 'class="total none"' in page and "0 %" not in page and 'data-total=""' in page


MARK = re.compile(
    r'<mark id="p-(\d+)" data-source="(\d+)" style="background:([^"]+)"[^>]*>(.*?)</mark>'
)

span = st.tuples(st.integers(0, 40), st.integers(0, 40)).map(sorted)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(span, max_size=4), min_size=1, max_size=4))
def test_marks_cover_each_character_once_in_its_source_colour(by_source):
    text = "<&>\"'" * 8 + "tail"
    sources = [_source(f"s{i}", spans) for i, spans in enumerate(by_source)]
    view = _view(text, sources)
    out = marked_sources(view)
    assert html.unescape(re.sub(r"<[^>]+>", "", out)) == text  # the whole text, escaped once
    covered = set()
    for m in MARK.finditer(out):
        i = int(m.group(2))
        assert m.group(3) == SOURCE_COLORS[i]
        body = html.unescape(m.group(4))
        start = len(html.unescape(re.sub(r"<[^>]+>", "", out[: m.start()])))
        # the mark lies inside one of its source's passages
        assert body and any(s <= start and start + len(body) <= e for s, e in by_source[i])
        chars = set(range(start, start + len(body)))
        assert not chars & covered
        covered |= chars
    union = {c for spans in by_source for s, e in spans for c in range(s, e)}
    assert covered == union  # every character of a passage is marked, once


def test_passages_listed_in_text_order_with_links():
    text = "one two three four five six seven eight nine ten"
    view = _view(text, [_source("late.txt", [(30, 40)]), _source("x&y.txt", [(0, 7)])])
    assert [(s, i) for s, _, i, _ in view.passages()] == [(0, 1), (30, 0)]
    page = doc_view_html(view, href=lambda k: f"/d?k={k}")
    assert '<a href="#p-0"' in page and '<a href="#p-1"' in page and "next-passage" in page
    assert 'href="/d?k=x&amp;y.txt"' in page and "x&amp;y.txt" in page
    assert "excl-legend" not in page
    quoted = SourceView("q.txt", 1.0, 1.0, 1.0, 1.0, (), ((8, 13, "quote"),))
    page = doc_view_html(_view(text, [quoted]))
    assert "excl-legend" in page and '<span class="excl excl-quote"' in page
    assert "three</span>" in page  # the quotation "three" shown as excluded text


@pytest.mark.integration
def test_document_view_totals_on_an_index(tmp_path):
    a, b = prose(300, seed=21), prose(300, seed=22)
    own = prose(150, seed=23)
    late = a[: len(a) // 2] + " " + own + " " + b[len(b) // 2 :]
    src = tmp_path / "src"
    src.mkdir()
    for name, t in (("a.txt", a), ("b.txt", b), ("late.txt", late)):
        (src / name).write_text(t, encoding="utf-8")
    with Index.create(tmp_path / "idx", IndexConfig(shards=1)) as idx:
        idx.update([src])
        key = "src/late.txt"
        pairs = idx.pair_list(0.0, key)
        pairs = [p if p.a_key == key else p.swapped() for p in pairs]
        before = document_view(idx, key, pairs, total=idx.total(key))
        assert before.total is None and len(before.sources) == 2
        checked = document_view(idx, "mine.txt", pairs, text=late)
        spans = [(p["doc_start"], p["doc_end"]) for s in checked.sources for p in s.passages]
        assert checked.total_from == "view"
        assert checked.total == pytest.approx(100.0 * word_share(late, spans))
        assert 40 < checked.total < 80
        shares = [s.share for s in checked.sources]
        assert shares == sorted(shares, reverse=True) and checked.total < sum(shares) + 1e-9
        idx.compute_totals()
        stored = idx.total(key)
        after = document_view(idx, key, pairs, total=stored)
        assert after.total == stored.total and after.total_from == "stored"
        assert [s.key for s in after.sources] == [s.key for s in stored.sources]
        assert after.total == pytest.approx(checked.total, abs=1.0)
        # query --html: the checked document's total first, then all matches
        mine = tmp_path / "mine.txt"
        mine.write_text(a[: len(a) // 2] + " " + prose(150, seed=24), encoding="utf-8")
        page_path = tmp_path / "query.html"
        assert main(["query", str(tmp_path / "idx"), str(mine), "--html", str(page_path)]) == 0
        page = page_path.read_text("utf-8")
        text = re.sub(r"<[^>]+>", " ", page[page.index("<body>") :])
        first = text[: text.index("%") + 1]
        assert (
            re.search(r"\b\d+ %$", first) and "mine.txt is found in" in text[: text.index("%") + 40]
        )
        assert page.index("id=total") < page.index("id=results")
        assert page.index('data-key="src/a.txt"') < page.index("id=results")


@pytest.mark.integration
def test_query_html_aligns_each_pair_once(tmp_path, monkeypatch):
    """``query --html``: a checked document's view and the results table show the same pairs;
    each pair is aligned once (the aligner's calls counted by the texts they get)."""
    a, b = prose(300, seed=31), prose(300, seed=32)
    src = tmp_path / "src"
    src.mkdir()
    for name, t in (("a.txt", a), ("b.txt", b)):
        (src / name).write_text(t, encoding="utf-8")
    mine = tmp_path / "mine.txt"
    mine.write_text(a[: len(a) // 2] + " " + b[len(b) // 2 :], encoding="utf-8")
    with Index.create(tmp_path / "idx", IndexConfig(shards=1)) as idx:
        idx.update([src])
    calls, texts = [], {}
    real, real_prepare = pair_view.align_prepared, pair_view.prepare

    def prepared(text, *args, **kwargs):
        out = real_prepare(text, *args, **kwargs)
        texts[id(out)] = (text, out)  # kept alive: the id stays this text's
        return out

    def counted(a, b, *args, **kwargs):
        calls.append((texts[id(a)][0], texts[id(b)][0]))
        return real(a, b, *args, **kwargs)

    monkeypatch.setattr(pair_view, "prepare", prepared)
    monkeypatch.setattr(pair_view, "align_prepared", counted)
    page_path = tmp_path / "query.html"
    assert main(["query", str(tmp_path / "idx"), str(mine), "--html", str(page_path)]) == 0
    assert len(calls) == 2, "both sources are shown (view and table), each aligned once"
    assert len(set(calls)) == len(calls)
    page = page_path.read_text("utf-8")
    assert page.index("id=total") < page.index("id=results")
    assert page.count("paraphrased, ") + page.count("verbatim, ") >= 4  # view and table
