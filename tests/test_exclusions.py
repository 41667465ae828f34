"""Quotation and reference-list spans (simdask.kernels.exclusions) on planted text."""

from __future__ import annotations

import random

import pytest

from simdask.kernels.exclusions import (
    bibliography_span,
    blank_spans,
    merge_spans,
    quote_spans,
)
from simdask.kernels.words import words

pytestmark = pytest.mark.unit

MARKS = [('"', '"'), ("“", "”"), ("„", "“"), ("«", "»"), ("»", "«"), ("‚", "‘"), ("「", "」")]


def planted(seed: int):
    """A text of own words with quotes of every kind planted: (text, own words, quoted words)."""
    rng = random.Random(seed)
    own, quoted, parts = [], [], []
    for i in range(20):
        ws = [f"own{i}x{j}" for j in range(rng.randint(3, 9))]
        own += ws
        parts.append(" ".join(ws) + rng.choice([", ", ". ", " — ", "\n"]))
        if i % 2 == 0:
            o, c = MARKS[i // 2 % len(MARKS)]
            q = [f"quoted{i}y{j}" for j in range(rng.randint(1, 12))]
            quoted += q
            parts.append(f"{o}{' '.join(q)}{c} ")
    parts.append("\n> block quoted line one\n> blockq two\n")
    quoted += ["block", "quoted", "line", "one", "blockq", "two"]
    return "".join(parts), own, quoted


@pytest.mark.parametrize("seed", range(5))
def test_planted_quotes_excluded_others_kept(seed):
    text, own, quoted = planted(seed)
    left = words(blank_spans(text, quote_spans(text)))
    assert left == [w.casefold() for w in own]
    gone = [w for w in words(text) if w not in set(left)]
    assert gone == [w.casefold() for w in quoted]


def test_apostrophes_and_unclosed_marks_are_not_quotes():
    text = "It’s the students’ work. An unclosed « mark\n\nstays out. Don't ‘quote’ this."
    assert [text[s:e] for s, e in quote_spans(text)] == ["‘quote’"]


def test_quote_does_not_cross_paragraphs():
    text = 'He said "yes\n\nand then" nothing'
    assert quote_spans(text) == []


@pytest.mark.parametrize(
    "heading",
    ["References", "BIBLIOGRAPHY", "Works Cited:", "7. Seznam literatury", "Literatura",
     "  Použitá literatura", "Literaturverzeichnis", "IV. Références"],
)  # fmt: skip
def test_bibliography_from_last_heading_to_end_or_appendix(heading):
    body = "Contents\nReferences ... 52\n\n1 Introduction\nOur own text here.\n"
    refs = "Smith, J. (2001). A title. Journal 3.\nNovák, P. Kniha. Praha 1999.\n"
    text = f"{body}{heading}\n{refs}"
    s, e = bibliography_span(text)
    assert text[s:e].strip().startswith(heading.strip()) and e == len(text)
    assert "Our own text here" not in text[s:e]
    text2 = f"{text}Appendix A: Questionnaire\nQ1 How old are you\n"
    s2, e2 = bibliography_span(text2)
    assert (s2, text2[e2:].startswith("Appendix A")) == (s, True)


def test_no_heading_no_bibliography():
    assert bibliography_span("We list references in the text; see the bibliography below.") is None


def test_blank_spans_keeps_offsets_and_lines():
    text = "ab «cd»\nef"
    out = blank_spans(text, quote_spans(text))
    assert (out, len(out)) == ("ab     \nef", len(text))
    assert merge_spans([(5, 9), (0, 2), (1, 3), (9, 10)]) == [(0, 3), (5, 10)]
