"""Page furniture (issue 31 item 6): running headers, footers and page numbers recurring at the
edges of most pages are left out of a PDF's text, so that a passage copied across a page
break is found whole; text that merely repeats is kept."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.evidence.passages import compare_texts
from simdask.ingest.extract import extract_text
from simdask.ingest.extract.furniture import (
    drop_furniture,
    furniture_patterns,
    line_pattern,
)
from simdask.kernels.words import words
from tests.helpers.documents import pdf_bytes, prose, wrap

# the PDF tests read through the extraction helper process
pytestmark = pytest.mark.integration

HEADER = "Reuse in student essays: a study, J. Smith 2026"


def _paged(lines: list[str], per_page: int, footer: str = "Page {i}/{n}") -> list[list[str]]:
    """Lines cut into pages, each with the running header and a numbered footer."""
    body = [lines[i : i + per_page] for i in range(0, len(lines), per_page)]
    n = len(body)
    return [[HEADER, *page, footer.format(i=i + 1, n=n)] for i, page in enumerate(body)]


def test_pattern_ignores_digits_case_and_spaces():
    assert line_pattern("  Page 3  of 12 ") == line_pattern("page 11 of 12") == "page # of #"
    assert line_pattern("\t") == ""


def test_headers_footers_and_page_numbers_go_repeats_stay():
    body = [f"line {c} of the body text here" for c in "abcdefghijklmnopqrst"]
    pages = ["\r\n".join([HEADER, *body[i : i + 4], f"- {i + 1} -"]) for i in range(0, 20, 4)]
    out = drop_furniture(pages)
    assert all(HEADER not in p and "- " not in p for p in out)
    assert [line for p in out for line in p.splitlines()] == body
    # a line at the top of 2 of 5 pages (a heading used twice) is kept
    twice = [("Chapter summary\r\n" if i in (1, 3) else "") + p for i, p in enumerate(out)]
    assert drop_furniture(twice) == twice


def test_only_the_edges_of_a_page_and_limits():
    middle = [
        f"{w} one\n{w} two\n{w} three\nrepeated note\n{w} four\n{w} five\n{w} six"
        for w in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")
    ]
    assert drop_furniture(middle) == middle  # furniture is at the top or bottom only
    assert drop_furniture(["Title\nbody one\nPage 1"]) == ["Title\nbody one\nPage 1"]
    # two pages: the page numbers go, a line repeated on both is kept (fewer than MIN_PAGES)
    two = ["Heading\nfirst page body\nPage 1 of 2", "Heading\nsecond page body\nPage 2 of 2"]
    assert drop_furniture(two) == ["Heading\nfirst page body", "Heading\nsecond page body"]
    assert furniture_patterns(two) == {"page # of #"}
    # too long to be a running title
    long = "x" * 130
    assert drop_furniture([f"{long}\nbody {i}" for i in range(5)])[0].startswith(long)


_WORD = st.text("abcdefghij", min_size=3, max_size=8)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(_WORD, min_size=4, max_size=9), min_size=8, max_size=60, unique_by=tuple),
    st.integers(3, 8),
    st.booleans(),
)
def test_generated_pages_lose_exactly_their_furniture(body_lines, per_page, header):
    """Distinct body lines (no digits) cut into pages with a footer (and a header): the
    furniture is dropped, every body line is kept in order; without furniture nothing
    changes."""
    lines = [" ".join(ws) for ws in body_lines]
    cut = [lines[i : i + per_page] for i in range(0, len(lines), per_page)]
    plain = ["\n".join(p) for p in cut]
    assert drop_furniture(plain) == plain
    n = len(cut)
    pages = [
        "\n".join(([HEADER] if header else []) + p + [f"Page {i + 1} of {n}"])
        for i, p in enumerate(cut)
    ]
    kept = [line for p in drop_furniture(pages) for line in p.splitlines()]
    if n == 1:  # one page: nothing is furniture
        assert kept == [*([HEADER] if header else []), *lines, "Page 1 of 1"]
    elif n == 2 and header:  # two pages: the page numbers go, a repeated header stays
        assert kept == [x for i, p in enumerate(cut) for x in [HEADER, *p]]
    else:
        assert kept == lines


def test_pdf_passage_across_a_page_break_is_found_whole():
    text = prose(1400, seed=11)
    lines = wrap(text)
    pages = _paged(lines, 30)
    assert len(pages) >= 5
    # a passage crossing the first page break: the last 4 lines of page 1, first 4 of page 2
    passage = " ".join(lines[26:34])
    # a line repeated on the top of 2 of the pages only (not furniture) is kept
    pages[2].insert(1, "A note repeated once")
    pages[4].insert(1, "A note repeated once")
    out = extract_text(pdf_bytes(pages), "essay.pdf")
    assert "Page" not in out and HEADER not in out
    assert out.count("A note repeated once") == 2
    note = "A note repeated once"
    expected = [*lines[:60], note, *lines[60:120], note, *lines[120:]]
    assert words(out) == words(" ".join(expected))
    ev = compare_texts(passage, out, k=5, min_chunks=2)
    assert ev.similarity == 100.0
    assert len(ev.passages) == 1 and ev.passages[0].words == len(words(passage))
