"""Passages and exact similarity of a pair, against the generator's ground truth."""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from simdask.evidence.passages import compare_texts, word_offsets
from simdask.evidence.report_html import render_pair_html
from simdask.ingest.synth import generate_corpus
from simdask.kernels.words import chunks, words
from tests.helpers.documents import outside_evidence

pytestmark = pytest.mark.unit


CORPUS = generate_corpus(400, mean_words=400, seed=3, reuse_fraction=0.25)


def _char_span(text: str, start_word: int, end_word: int) -> tuple[int, int]:
    _, spans, exact = word_offsets(text)
    assert exact
    return spans[start_word][0], spans[end_word - 1][1]


def _covering(passages, lo, hi, side="doc"):
    """Share of [lo, hi) (characters) covered by the passages on one side."""
    covered = 0
    for p in passages:
        s, e = (p.doc_start, p.doc_end) if side == "doc" else (p.other_start, p.other_end)
        covered += max(0, min(e, hi) - max(s, lo))
    return covered / (hi - lo)


@pytest.mark.parametrize("kind", ["passage", "contained", "line_swap"])
def test_exact_copies_are_found_where_they_were_planted(kind):
    cases = [r for r in CORPUS.reuse if r.kind == kind][:8]
    assert cases
    for r in cases:
        target, source = CORPUS.text_of(r.target), CORPUS.text_of(r.source)
        ev = compare_texts(target, source)
        t_lo, t_hi = _char_span(target, r.target_start, r.target_end)
        s_lo, s_hi = _char_span(source, r.source_start, r.source_end)
        twins = [p for p in ev.passages if p.doc_start <= t_lo and p.doc_end >= t_hi]
        assert twins, (kind, r, ev.passages[:3])
        # the twin passage in the source starts where the copy was taken (same diagonal)
        assert any(p.other_start <= s_lo and p.other_end >= s_hi for p in twins)


@pytest.mark.parametrize("kind", ["every_xth", "random_subst"])
def test_copies_with_substitutions_stay_mostly_one_passage(kind):
    def findable(r):  # a chunk survives only between substitutions k words apart
        return (kind == "random_subst" and r.params["p"] <= 0.1) or r.params.get("x", 0) >= 6

    cases = [r for r in CORPUS.reuse if r.kind == kind and findable(r)][:6]
    assert cases
    for r in cases:
        target, source = CORPUS.text_of(r.target), CORPUS.text_of(r.source)
        ev = compare_texts(target, source)
        t_lo, t_hi = _char_span(target, r.target_start, r.target_end)
        assert _covering(ev.passages, t_lo, t_hi) >= 0.6, (r, ev.passages)


def test_exact_similarity_and_offsets():
    a = "Intro words here. The quick brown fox jumps over the lazy dog today, said Ann."
    b = "Other text: THE QUICK BROWN FOX jumps over the lazy dog today! End."
    ev = compare_texts(a, b)
    ca, cb = set(chunks(a)), set(chunks(b))
    assert ev.shared == len(ca & cb) > 0
    assert ev.similarity == pytest.approx(100 * len(ca & cb) / len(ca))
    assert ev.reverse_similarity == pytest.approx(100 * len(ca & cb) / len(cb))
    [p] = ev.passages
    assert a[p.doc_start : p.doc_end] == "The quick brown fox jumps over the lazy dog today"
    assert b[p.other_start : p.other_end] == "THE QUICK BROWN FOX jumps over the lazy dog today"
    assert p.words == 10 and p.chunks == 6


def test_word_offsets_follow_the_definition_on_unicode():
    text = "Ｆｕｌｌ width, Straße, ﬁne and e\u0301cole."
    ws, spans, _ = word_offsets(text)
    assert ws == words(text)
    assert len(spans) == len(ws)


@pytest.mark.system
def test_report_command(tmp_path):
    docs = {d.key: d.text for d in CORPUS.docs}
    r = next(x for x in CORPUS.reuse if x.kind == "passage")
    src = tmp_path / "docs"
    src.mkdir()
    for key in (r.target, r.source):
        (src / f"{key}.txt").write_text(docs[key], encoding="utf-8")
    run = [sys.executable, "-m", "simdask.cli"]
    subprocess.run(
        [*run, "update", tmp_path / "i", src, "--workers", "1", "--quiet", "--hash-bits", "32"],
        check=True,
    )
    out = subprocess.run(
        [
            *run,
            "report",
            tmp_path / "i",
            f"docs/{r.target}.txt",
            f"docs/{r.source}.txt",
            "--html",
            tmp_path / "r.html",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rep = json.loads(out)
    assert {
        "doc",
        "other",
        "similarity",
        "reverse_similarity",
        "shared",
        "hashed_similarity",
        "passages",
    } <= set(rep)
    assert rep["hashed_similarity"] == rep["similarity"]  # 32-bit IDs: no collision here
    text = subprocess.run(
        [*run, "text", tmp_path / "i", f"docs/{r.target}.txt"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert text == docs[r.target]
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert outside_evidence(page).count("<mark ") == 2 * len(rep["passages"])
    longest = max(rep["passages"], key=lambda p: p["words"])
    assert longest["words"] >= r.target_end - r.target_start
    t_lo, t_hi = _char_span(text, r.target_start, r.target_end)
    assert longest["doc_start"] <= t_lo and longest["doc_end"] >= t_hi
    cut = longest["words"]  # --min-match: shorter passages hidden and not counted
    report = [
        *run,
        "report",
        tmp_path / "i",
        f"docs/{r.target}.txt",
        f"docs/{r.source}.txt",
        "--format",
        "json",
    ]
    for min_match, want in (
        (cut, [p for p in rep["passages"] if p["words"] >= cut]),
        (cut + 1, []),
    ):
        shown = json.loads(
            subprocess.run(
                [*report, "--min-match", str(min_match)], capture_output=True, text=True, check=True
            ).stdout
        )
        assert shown["passages"] == want
        # short matches are ignored in the percentages too (issue 31, item 11)
        assert 0 < shown["similarity"] <= rep["similarity"] if want else shown["similarity"] == 0
        assert shown["shared"] <= rep["shared"] and (want or shown["shared"] == 0)


class _Marks(HTMLParser):
    """Collects each column's text and its <mark> elements."""

    def __init__(self):
        super().__init__()
        self.col = None
        self.depth = 0
        self.text = {"doc": [], "other": []}
        self.marks = {}
        self.current = None
        self.external = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href"):
            if k in a and "://" in a[k]:
                self.external.append(a[k])
        if tag == "section":
            self.col = a["id"]
        elif tag == "mark":
            self.current = a["id"]
            self.marks[a["id"]] = {
                "twin": a["data-twin"],
                "style": a["style"],
                "text": "",
                "col": self.col,
            }

    def handle_endtag(self, tag):
        if tag == "mark":
            self.current = None
        elif tag == "section":
            self.col = None

    def handle_data(self, data):
        if self.col and self.lasttag != "h2":
            self.text[self.col].append(data)
            if self.current:
                self.marks[self.current]["text"] += data


def test_html_report_pairs_twins_and_keeps_texts():
    r = next(x for x in CORPUS.reuse if x.kind == "line_swap")
    a, b = CORPUS.text_of(r.target), CORPUS.text_of(r.source)
    ev = compare_texts(a, b)
    rep = ev.report(r.target, r.source, hashed_similarity=ev.similarity)
    page = render_pair_html(rep, a, b)
    parser = _Marks()
    parser.feed(outside_evidence(page))
    assert not parser.external and "<script src" not in page
    assert "".join(parser.text["doc"]) == a and "".join(parser.text["other"]) == b
    assert len(ev.passages) >= 3
    for i, p in enumerate(ev.passages):
        ma, mb = parser.marks[f"a-{i}"], parser.marks[f"b-{i}"]
        assert ma["twin"] == f"b-{i}" and mb["twin"] == f"a-{i}"
        assert ma["style"] == mb["style"] and ma["col"] == "doc" and mb["col"] == "other"
        assert ma["text"] == a[p.doc_start : p.doc_end]
        assert mb["text"] == b[p.other_start : p.other_end]
    assert f"{ev.similarity:.2f} %" in page and f"{ev.reverse_similarity:.2f} %" in page


def test_chance_matches_inside_a_passage_are_dropped():
    """A 6-word sequence repeated inside a copied passage matches on a second diagonal too;
    that match lies within the passage in both documents and is not reported."""
    rep = "alpha beta gamma delta epsilon zeta"
    src = f"{rep} one two three four five six seven {rep} eight nine ten eleven twelve"
    a = "start words here " + src + " end words here"
    ev = compare_texts(a, src)
    assert len(ev.passages) == 1
    p = ev.passages[0]
    assert a[p.doc_start : p.doc_end] == src and (p.other_start, p.other_end) == (0, len(src))
    page = render_pair_html(ev.report("a", "b", ev.similarity), a, src)
    assert outside_evidence(page).count("<mark ") == 2


def test_min_words_ignores_short_passages_in_the_similarities_too():
    long = " ".join(f"long{i}" for i in range(30))
    short = " ".join(f"short{i}" for i in range(8))
    noise_a = " ".join(f"a{i}" for i in range(40))
    noise_b = " ".join(f"b{i}" for i in range(40))
    a = f"{noise_a} {long} {noise_a[:60]} {short} end"
    b = f"{short} {noise_b} {long}"
    every = compare_texts(a, b, 5, 1)
    assert sorted(p.words for p in every.passages) == [8, 30]
    for min_words, want in ((0, [8, 30]), (8, [8, 30]), (9, [30]), (30, [30]), (31, [])):
        ev = compare_texts(a, b, 5, 1, min_words)
        assert sorted(p.words for p in ev.passages) == want
        # every shared chunk lies in a passage shown: 26 chunks of the long one, 4 of the short
        assert ev.shared == {(8, 30): 30, (30,): 26, (): 0}[tuple(want)]
        assert ev.similarity == pytest.approx(100.0 * ev.shared / every.doc_chunks)
    assert every.shared == 30


def test_keys_are_escaped_once_in_the_report_page():
    """A key holding HTML characters shows as itself (``a&b``), never as ``a&amp;b``, in the
    summary table, headings and title of a pair page (the site's pair pages are these pages)."""
    import html as _html

    a = "one two three four five six seven eight nine ten"
    ev = compare_texts(a, a)
    rep = ev.report("a&b <x>.txt", 'q"c.txt', ev.similarity)
    page = render_pair_html(rep, a, a)

    class _Text(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.chunks = []

        def handle_data(self, data):
            self.chunks.append(data)

    parser = _Text()
    parser.feed(page)
    shown = "".join(parser.chunks)
    assert 'a&b <x>.txt → q"c.txt' in shown
    assert "% of a&b <x>.txt's chunks are in q\"c.txt" in shown
    assert "&amp;" not in shown and "&lt;" not in shown
    assert "<x>" not in page  # escaped exactly once in the markup
    assert _html.escape("a&b <x>.txt") in page


def test_large_path_gives_the_same_evidence_as_the_exact_path():
    """The numpy path for large texts (64-bit chunk keys, no Python object per word) finds
    the same similarities and passages as the word-tuple path, on the generator's reuse."""
    cases = [r for r in CORPUS.reuse][:40]
    assert len(cases) == 40
    for r in cases:
        a, b = CORPUS.text_of(r.target), CORPUS.text_of(r.source)
        x, y = compare_texts(a, b), compare_texts(a, b, large=True)
        assert (x.similarity, x.reverse_similarity, x.shared) == (
            y.similarity,
            y.reverse_similarity,
            y.shared,
        )
        assert x.doc_chunks == y.doc_chunks and x.other_chunks == y.other_chunks
        assert x.passages == y.passages and not y.passages_truncated


def test_large_path_bounds_passages(monkeypatch):
    """Repeated text multiplies matches: past MAX_MATCHES/MAX_PASSAGES the most repeated
    chunks and the shortest passages are left out, and the report says so."""
    from simdask.evidence import passages_np

    unit = "alpha beta gamma delta epsilon zeta eta theta iota kappa "
    a = unit * 40
    b = unit * 40
    full = compare_texts(a, b, large=True)
    assert not full.passages_truncated and full.similarity == 100.0
    monkeypatch.setattr(passages_np, "MAX_MATCHES", 50)
    cut = compare_texts(a, b, large=True)
    assert cut.passages_truncated and cut.similarity == 100.0  # similarity never truncated
    monkeypatch.setattr(passages_np, "MAX_MATCHES", 10**9)
    monkeypatch.setattr(passages_np, "MAX_PASSAGES", 3)
    few = compare_texts(a, b, large=True)
    assert few.passages_truncated and len(few.passages) <= 3
    assert ev_report_flag(few)


def ev_report_flag(ev) -> bool:
    return ev.report("a", "b", 0.0)["passages_truncated"] is True
