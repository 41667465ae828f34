"""Block quotes where the format shows them (issue 16): HTML ``blockquote``/``q``, DOCX and ODT
paragraphs in a quotation style or indented clearly more than the body, rendered as ``> ``
lines that :func:`~simdask.kernels.exclusions.quote_spans` finds; documents written by
python-docx, odfpy and by hand, checked against the planted paragraphs."""

from __future__ import annotations

import random

import pytest

from simdask.ingest.extract import extract_text
from simdask.ingest.extract.blockquote import length_pt
from simdask.kernels.exclusions import quote_spans
from simdask.kernels.words import WORD_PATTERN, words
from tests.helpers.quoted_docs import KINDS, QUOTE_KINDS, WRITERS

pytestmark = pytest.mark.unit


def planted(fmt: str, seed: int) -> list[tuple[str, list[str]]]:
    """Paragraphs of random kinds in random order, each with its own words; body text holds
    most of the characters, so its left edge is the body's."""
    rng = random.Random(seed)
    kinds = [k for k in KINDS[fmt] if k != "body"]
    others = [rng.choice(kinds) for _ in range(rng.randint(1, 8))] + kinds[: rng.randint(0, 3)]
    n_other = sum(rng.randint(3, 12) for _ in others)
    paras = [(k, rng.randint(3, 12)) for k in others]
    paras += [("body", n_other // 2 + rng.randint(2, 10)) for _ in range(3)]
    rng.shuffle(paras)
    return [(k, [f"{tag(k)}{i}w{j}" for j in range(n)]) for i, (k, n) in enumerate(paras)]


def tag(kind: str) -> str:
    """The kind as part of a word (no underscore: not a word character)."""
    return kind.replace("_", "")


def quoted_words(text: str) -> list[str]:
    """The words of ``text`` inside the quotations it shows (as the index reads them)."""
    return [w for s, e in quote_spans(text) for w in WORD_PATTERN.findall(text[s:e])]


@pytest.mark.parametrize("fmt", ["docx", "odt", "html"])
@pytest.mark.parametrize("seed", range(6))
def test_block_quotes_are_the_planted_ones(fmt, seed):
    paras = planted(fmt, seed)
    text = extract_text(WRITERS[fmt](paras), f"doc.{fmt}")
    assert words(text) == [w.casefold() for _, ws in paras for w in ws]  # no word added or lost
    want = [w.casefold() for k, ws in paras if k in QUOTE_KINDS for w in ws]
    assert [w.casefold() for w in quoted_words(text)] == want


@pytest.mark.parametrize("fmt", ["docx", "odt"])
def test_every_kind_once(fmt):
    paras = [("body", [f"body{j}" for j in range(40)])]
    paras += [(k, [f"{tag(k)}w{j}" for j in range(5)]) for k in KINDS[fmt] if k != "body"]
    text = extract_text(WRITERS[fmt](paras), f"doc.{fmt}")
    got = {w.rstrip("0123456789").removesuffix("w") for w in quoted_words(text)}
    assert got == {tag(k) for k in QUOTE_KINDS & set(KINDS[fmt])}


def test_indentation_is_relative_to_the_body():
    # every paragraph indented 1.5 cm: that is the body, not a quotation
    paras = [("indent", [f"a{i}w{j}" for j in range(8)]) for i in range(4)]
    text = extract_text(WRITERS["docx"](paras), "doc.docx")
    assert quote_spans(text) == [] and ">" not in text


def test_html_inline_q_and_nested_blockquote():
    page = (
        b"<p>She said <q>one two <q>three four</q> five</q> and left.</p>"
        b"<blockquote>outer <blockquote>inner\n   text</blockquote> tail</blockquote><p>end</p>"
    )
    text = extract_text(page, "p.html")
    assert "“one two ‘three four’ five”" in text
    assert quoted_words(text) == [
        "one",
        "two",
        "three",
        "four",
        "five",
        "outer",
        "inner",
        "text",
        "tail",
    ]
    assert words(text)[-1] == "end"


def test_marks_in_the_documents_own_text_are_dropped():
    odd = "\ufdd0" + "7" + "\ufdd1"  # what the extractor marks lines with, as document text
    paras = [("body", ["alpha", odd, "beta"] + [f"b{j}" for j in range(20)]), ("quote", ["q"])]
    for fmt in ("docx", "odt", "html"):
        text = extract_text(WRITERS[fmt](paras), f"doc.{fmt}")
        assert "\ufdd0" not in text and quoted_words(text) == ["q"]
        assert words(text)[:3] == ["alpha", "7", "beta"]


def test_lengths():
    assert length_pt("1cm") == pytest.approx(72 / 2.54)
    assert length_pt("0.5in") == 36 and length_pt("-12pt") == -12
    assert length_pt("720", 1 / 20) == 36 and length_pt("720") is None
    assert length_pt(None) is None and length_pt("wide") is None
