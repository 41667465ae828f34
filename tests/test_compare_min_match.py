"""``compare`` per direction (issue 31, items 4, 11 and 16): with ``--exclude-quotes`` each
pair's two percentages are each document's own count (a quotation is left out of its own
document only), also for a direction below the threshold; with ``--min-match WORDS`` both
count only the matches of at least WORDS words, in the printed pairs and the ``--html``
table alike. Against a brute force over the texts' 5-word chunks."""

from __future__ import annotations

import json
import re

import pytest

from simdask.kernels.words import words
from tests.helpers.cli import run
from tests.helpers.documents import prose

pytestmark = pytest.mark.system

K = 5
SHARED = prose(40, seed=80)  # copied unquoted both ways
SHORT = prose(25, seed=81)  # a shorter match
PASSAGE = " ".join(f"famous{i}" for i in range(40))  # quoted in A, copied unquoted by B


def own(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


A = f"{own('a', 15)} {SHARED} {own('m', 10)} {SHORT} {own('n', 8)} As they say, “{PASSAGE}”."
B = f"{own('b', 10)} {PASSAGE} {own('o', 5)} {SHORT} {own('k', 7)} {SHARED} {own('z', 4)}"


def chunk_set(ws: list[str]) -> set[tuple[str, ...]]:
    return {tuple(sorted(ws[i : i + K])) for i in range(len(ws) - K + 1)}


def counted(text: str) -> set[tuple[str, ...]]:
    """U: the chunks of ``text`` not wholly inside its quotation (the one “…” of A)."""
    ws = words(text)
    inside = set()
    if "“" in text:
        start = len(words(text[: text.index("“")]))
        inside = set(range(start, start + len(words(PASSAGE))))
    return {
        tuple(sorted(ws[i : i + K]))
        for i in range(len(ws) - K + 1)
        if not set(range(i, i + K)) <= inside
    }


def brute(x: str, y: str, parts: list[str]) -> float:
    """Percent of ``x``'s counted chunks that ``y`` holds (counted or quoted: the checked
    document's quotations only are left out) and that lie in one of ``parts``."""
    ux, all_y = counted(x), chunk_set(words(y))
    inside = set().union(*(chunk_set(words(p)) for p in parts))
    return 100.0 * len(ux & all_y & inside) / len(ux)


@pytest.fixture(scope="module")
def groups(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("comparemm")
    for name, text in (("ga", A), ("gb", B)):
        (tmp / name).mkdir()
        (tmp / name / f"{name}.txt").write_text(text, encoding="utf-8")
    return tmp


def _pairs(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


def test_each_direction_its_own_count_below_the_threshold_too(groups):
    tmp = groups
    out = run(
        "compare", tmp / "ga", tmp / "gb", "--exclude-quotes", "--threshold", 60,
        "--format", "jsonl", "--quiet",
    ).stdout  # fmt: skip
    (p,) = _pairs(out)
    everything = [SHARED, SHORT, PASSAGE]
    assert p["b_in_a"] == pytest.approx(brute(B, A, everything))  # stored (above 60 %)
    assert p["a_in_b"] == pytest.approx(brute(A, B, everything))  # below: A's own count
    assert p["a_in_b"] < 60 < p["b_in_a"]


def test_min_match_counts_the_long_matches_per_direction(groups):
    tmp = groups
    page = tmp / "pairs.html"
    out = run(
        "compare", tmp / "ga", tmp / "gb", "--exclude-quotes", "--min-match", 30,
        "--format", "jsonl", "--quiet", "--html", page, "--exact-only",
    ).stdout  # fmt: skip
    (p,) = _pairs(out)
    # A: the shared 40 words (the short match left out); B: those and A's quotation
    assert p["a_in_b"] == pytest.approx(brute(A, B, [SHARED]))
    assert p["b_in_a"] == pytest.approx(brute(B, A, [SHARED, PASSAGE]))
    html = page.read_text(encoding="utf-8")
    cells = [float(v) for v in re.findall(r"<td class=n data-v=([0-9.]+)>", html)]
    assert cells == pytest.approx([p["a_in_b"], p["b_in_a"]], abs=1e-5)
    assert "matches shorter than 30 words left out" in html
    assert "25 words" not in html and "40 words" in html
