"""Ignoring small matches (issue 31, item 11): ``--min-match WORDS`` leaves matches shorter
than WORDS words out of the passages *and* the percentages of a view, the exact ones against a
brute-force count, through the real CLI (``report``, ``query --html``)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.evidence.passages import compare_texts
from simdask.kernels.words import words
from tests.helpers.cli import run
from tests.helpers.documents import prose

pytestmark = pytest.mark.system

K = 5
LONG = prose(40, seed=70)  # a copied paragraph
SHORT = prose(25, seed=71)  # a shorter match, 25 words


def own(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


A = f"{own('a', 60)} {LONG} {own('b', 30)} {SHORT} {own('c', 30)}"
B = f"{own('x', 50)} {SHORT} {own('y', 40)} {LONG} {own('z', 20)}"


def windows(text: str) -> list[tuple[str, ...]]:
    ws = words(text)
    return [tuple(sorted(ws[i : i + K])) for i in range(len(ws) - K + 1)]


def brute(a: str, b: str, inside: str) -> float:
    """Percent of ``a``'s distinct chunks that ``b`` holds and that lie in ``inside``."""
    sa, sb, si = set(windows(a)), set(windows(b)), set(windows(inside))
    return 100.0 * len(sa & sb & si) / len(sa)


@pytest.mark.unit
def test_short_matches_leave_the_exact_percentages():
    every = compare_texts(A, B, K)
    long_only = compare_texts(A, B, K, min_words=30)
    assert every.similarity == pytest.approx(
        100.0 * len(set(windows(A)) & set(windows(B))) / len(set(windows(A)))
    )
    assert long_only.similarity == pytest.approx(brute(A, B, LONG))
    assert long_only.reverse_similarity == pytest.approx(brute(B, A, LONG))
    assert long_only.similarity < every.similarity
    assert [p.words for p in long_only.passages] == [40]
    assert compare_texts(A, B, K, min_words=41).similarity == 0.0


@pytest.mark.unit
@settings(max_examples=30, deadline=None)
@given(st.integers(0, 60), st.integers(0, 3))
def test_a_longer_minimum_never_raises_the_percentages(n, seed):
    a = f"{prose(50, seed)} {LONG} {SHORT} {prose(30, seed + 10)}"
    b = f"{SHORT} {prose(40, seed + 20)} {LONG}"
    lo, hi = compare_texts(a, b, K, min_words=n), compare_texts(a, b, K, min_words=n + 5)
    assert hi.similarity <= lo.similarity and hi.reverse_similarity <= lo.reverse_similarity
    assert all(p.words >= n for p in lo.passages)


@pytest.mark.system
def test_min_match_changes_the_report_and_query_pages(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text(A)
    (src / "b.txt").write_text(B)
    idx = tmp_path / "idx"
    run("update", idx, src, "--workers", 1, "--quiet", "--shards", 2)
    every = json.loads(run("report", idx, "src/a.txt", "src/b.txt", "--format", "json").stdout)
    some = json.loads(
        run("report", idx, "src/a.txt", "src/b.txt", "--format", "json", "--min-match", 30).stdout
    )
    assert some["similarity"] == pytest.approx(brute(A, B, LONG))
    assert some["similarity"] < every["similarity"]
    assert some["aligned_coverage"]["doc"] < every["aligned_coverage"]["doc"]
    assert some["min_words"] == 30 and all(p["words"] >= 30 for p in some["passages"])
    assert len(some["passages"]) < len(every["passages"])

    q = tmp_path / "q.txt"
    q.write_text(A)
    page_all, page_some = tmp_path / "all.html", tmp_path / "some.html"
    run("query", idx, q, "--html", page_all, "--exact-only")
    run("query", idx, q, "--html", page_some, "--exact-only", "--min-match", 30)
    assert page_all.read_text().count("25 words") >= 1
    assert page_some.read_text().count("25 words") == 0
    assert page_some.read_text().count("40 words") >= 1
    # the table of matches counts as the view does: the long match only, both ways
    row = re.search(
        r"<td>src/b\.txt</td><td class=n data-v=([0-9.]+)>.*?data-v=([0-9.]+)>",
        page_some.read_text(),
    )
    assert float(row.group(1)) == pytest.approx(brute(A, B, LONG), abs=1e-5)
    assert float(row.group(2)) == pytest.approx(brute(B, A, LONG), abs=1e-5)
    assert "matches shorter than 30 words left out" in page_some.read_text()
