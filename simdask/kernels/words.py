"""Normalisation and words (DESIGN §1): NFKC, casefold, words are runs of ``[^\\W_]``."""

from __future__ import annotations

import re
import unicodedata

import numpy as np

__all__ = [
    "WORD_PATTERN",
    "chunks",
    "normal_bytes",
    "normalize",
    "token_bytes",
    "utf8_word_spans",
    "words",
]

#: A word is a maximal run of Unicode letters or digits.
WORD_PATTERN = re.compile(r"[^\W_]+")


#: per ASCII byte: whether :data:`WORD_PATTERN` matches it (then False
#: up to 255: bytes of other characters are classified by :func:`utf8_word_spans`)
_ASCII_WORD = np.zeros(256, dtype=bool)
_ASCII_WORD[:128] = [WORD_PATTERN.fullmatch(chr(c)) is not None for c in range(128)]
#: per code point: whether WORD_PATTERN matches it (``[1]``: whether ``[0]`` is known yet)
_CODE_POINTS = (np.zeros(0x110000, dtype=bool), np.zeros(0x110000, dtype=bool))


def _is_word_code_point(cp: np.ndarray) -> np.ndarray:
    """Whether :data:`WORD_PATTERN` matches each code point of ``cp`` (int array): looked up in
    a table over all code points, in which the code points never seen before are classified
    by the pattern itself (one match each), so it is the regex's definition of a word
    character, not a copy of it."""
    word, known = _CODE_POINTS
    new = cp[~known[cp]]
    if len(new):
        for c in np.unique(new).tolist():
            word[c] = WORD_PATTERN.fullmatch(chr(c)) is not None
            known[c] = True
    return word[cp]


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
    which :func:`utf8_word_spans` finds in the bytes (cheaper than
    :func:`token_bytes` for text that is not ASCII: no regex pass and no join in Python).
    ASCII text takes the same fast path as :func:`token_bytes`.
    """
    if text.isascii():
        return text.encode("ascii").lower()
    return normalize(text).encode("utf-8", "surrogatepass")


def utf8_word_spans(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end byte offsets (int64) of the words in ``buf``, the UTF-8 bytes of
    normalised text (:func:`normal_bytes` of texts joined by spaces).

    A word is a maximal run of characters :data:`WORD_PATTERN` matches,
    as :func:`words` finds them: ASCII bytes are classified by a table,
    the code point of every other character is decoded from its lead and continuation bytes in
    numpy and looked up in a table over all code points (filled per process from the pattern
    as code points are met). Only the bytes >= 0x80 are decoded: ASCII text costs one table
    lookup a byte.
    ``buf`` must be well-formed UTF-8 (Python's encoder, ``surrogatepass``, writes it)."""
    isw = _ASCII_WORD[buf]
    high = np.flatnonzero(buf >= 0x80)
    if len(high):
        lead = buf[high] >= 0xC0  # continuation bytes are 10xxxxxx
        at = high[lead]
        last = len(buf) - 1
        b0 = buf[at].astype(np.int32)
        c1, c2, c3 = ((buf[np.minimum(at + j, last)] & 0x3F).astype(np.int32) for j in (1, 2, 3))
        cp = np.where(
            b0 >= 0xF0,
            ((b0 & 0x07) << 18) | (c1 << 12) | (c2 << 6) | c3,
            np.where(b0 >= 0xE0, ((b0 & 0x0F) << 12) | (c1 << 6) | c2, ((b0 & 0x1F) << 6) | c1),
        )
        isw[high] = _is_word_code_point(cp)[np.cumsum(lead) - 1]
    flags = np.zeros(len(buf) + 2, dtype=bool)
    flags[1:-1] = isw
    edges = np.flatnonzero(flags[1:] != flags[:-1])  # starts and ends alternate
    return edges[0::2], edges[1::2]
