"""Made-up words for generated test text: syllables that build content words no real
vocabulary holds, and the English function words placed between them (shared by the
generators of ``zipf_text`` and ``term_corpus``)."""

from __future__ import annotations

__all__ = ["FUNCTION_WORDS", "SYLLABLES"]

#: syllables of made-up content words (two to four of them a word)
SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "tu",
    "ra",
    "se",
    "vi",
    "po",
    "da",
    "ge",
    "hu",
    "li",
    "mo",
    "ta",
    "re",
    "si",
    "no",
    "pu",
    "fe",
    "ba",
    "zo",
]
#: English function words, drawn between the content words
FUNCTION_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "a",
    "is",
    "that",
    "for",
    "it",
    "as",
    "with",
    "was",
    "on",
    "by",
    "be",
    "this",
    "are",
    "from",
]
