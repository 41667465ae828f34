"""Normalisation and words (DESIGN §1): NFKC, casefold, words are runs of ``[^\\W_]``."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["WORD_PATTERN", "chunks", "normal_bytes", "normalize", "token_bytes", "words"]

#: A word is a maximal run of Unicode letters or digits.
WORD_PATTERN = re.compile(r"[^\W_]+")


def normalize(text: str) -> str:
    """Unicode NFKC followed by ``str.casefold()``."""
    return unicodedata.normalize("NFKC", text).casefold()


def words(text: str) -> list[str]:
    """The words of ``text`` after normalisation, in order."""
    return WORD_PATTERN.findall(normalize(text))


def chunks(text: str, k: int = 5) -> list[tuple[str, ...]]:
    """The overlapping ``k``-word chunks of ``text``, words sorted inside each chunk.

    This is the readable (string) form of DESIGN §1, used for exact verification and as the
    reference the hashed chunk IDs are tested against. A text of fewer than ``k`` words has
    no chunks.
    """
    ws = words(text)
    return [tuple(sorted(ws[i : i + k])) for i in range(len(ws) - k + 1)]


def token_bytes(text: str) -> bytes:
    """``text`` as bytes in which the words are exactly the runs of ``[0-9a-z]`` or bytes >= 0x80.

    ASCII text takes a fast path (for ASCII, NFKC is the identity and casefold is lower);
    other text is normalised, split with :data:`WORD_PATTERN` and joined with spaces as UTF-8.
    Either way :func:`simdask.kernels.hashing.word_spans` finds the same words as :func:`words`.
    """
    if text.isascii():
        return text.encode("ascii").lower()
    return " ".join(words(text)).encode("utf-8")


def normal_bytes(text: str) -> bytes:
    """:func:`normalize` of ``text`` as UTF-8 (lone surrogates kept as their 3-byte form, so
    that any ``str`` encodes), separators and all.

    Its words are those of :func:`words`: the runs of characters :data:`WORD_PATTERN` matches,
    which :func:`simdask.kernels.hashing.utf8_word_spans` finds in the bytes (cheaper than
    :func:`token_bytes` for text that is not ASCII: no regex pass and no join in Python).
    ASCII text takes the same fast path as :func:`token_bytes`.
    """
    if text.isascii():
        return text.encode("ascii").lower()
    return normalize(text).encode("utf-8", "surrogatepass")
