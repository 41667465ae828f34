"""Word IDs and stem IDs of the aligner, remembered per process.

A word's ID is the xxh3-64 of its UTF-8 bytes (:func:`word_ids`); a content word's stem ID
is the ID of its Snowball stem. Both depend on the word alone (and the language), so a
process that prepares many texts of one vocabulary (a Dask worker aligning an index's
candidate pairs: ``totals --compute``, a run's totals) hashes and stems each distinct word
once, not once per text: :func:`ids_of` and :func:`stem_ids_of` keep a table per process,
at most :data:`MAX_WORDS` words each (emptied when full). The IDs are those computed
without the tables, bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache

import numpy as np
from xxhash import xxh3_64_intdigest

from simdask.kernels.stemming import stem_words

__all__ = ["MAX_WORDS", "ids_of", "stem_ids_of", "word_ids"]

#: most words a table holds (about 100 bytes a word: ~100 MB at most per table)
MAX_WORDS = 1 << 20

_WORDS: dict[str, int] = {}


@cache
def _stems(language: str) -> dict[str, int]:
    """The table of stem IDs of ``language`` (one per language, per process)."""
    return {}


def word_ids(words: Iterable[str], n: int) -> np.ndarray:
    """int64 IDs of ``n`` words: xxh3-64 of their UTF-8 bytes, the same in every process and
    on every machine (Python's ``hash()`` of a string is salted per process, which made ties
    between equal similarities, and so the passages, differ from run to run)."""
    ids = (xxh3_64_intdigest(w.encode("utf-8", "surrogatepass")) for w in words)
    return np.fromiter(ids, np.uint64, n).view(np.int64)


def _looked_up(
    words: list[str], table: dict[str, int], compute: Callable[[list[str]], list[int]]
) -> np.ndarray:
    """int64 per word of ``words``: its entry in ``table``, the words not in it computed
    (``compute``: a list of distinct words -> their IDs) and added. Safe with threads: the
    words are looked up in a table of this call, never in ``table`` after another thread
    may have emptied it."""
    distinct = dict.fromkeys(words)
    local = {w: v for w in distinct if (v := table.get(w)) is not None}
    new = [w for w in distinct if w not in local]
    if new:
        got = dict(zip(new, compute(new), strict=True))
        local.update(got)
        if len(table) + len(got) > MAX_WORDS:
            table.clear()
        table.update(got)
    return np.fromiter(map(local.__getitem__, words), np.int64, len(words))


def _hashed(words: list[str]) -> list[int]:
    return word_ids(words, len(words)).tolist()


def ids_of(words: list[str]) -> np.ndarray:
    """:func:`word_ids` of ``words`` (int64, one per word), each distinct word hashed once
    per process."""
    return _looked_up(words, _WORDS, _hashed)


def stem_ids_of(words: list[str], language: str) -> np.ndarray:
    """The IDs (:func:`word_ids`) of the stems of ``words`` in ``language``
    (:func:`~simdask.kernels.stemming.stem_words`), each distinct word stemmed once per
    process."""
    return _looked_up(words, _stems(language), lambda new: _hashed(stem_words(new, language)))
