"""Stemming with PyStemmer (Snowball stemmers in C); a language without a stemmer leaves
words as they are."""

from __future__ import annotations

from functools import cache
from typing import Any

import Stemmer

__all__ = ["has_stemmer", "stem_words"]


@cache
def _stemmer(language: str) -> Any:
    if language.lower() not in Stemmer.algorithms():
        return None
    return Stemmer.Stemmer(language.lower())


def has_stemmer(language: str) -> bool:
    """Whether PyStemmer has a stemmer for ``language`` (e.g. ``"english"``, ``"czech"``)."""
    return _stemmer(language) is not None


def stem_words(words: list[str], language: str) -> list[str]:
    """The stems of ``words`` (normalised words) in ``language``; the words unchanged when
    PyStemmer has no stemmer for it (the fallback: exact words still match)."""
    stemmer = _stemmer(language)
    if stemmer is None:
        return list(words)
    return stemmer.stemWords(words)
