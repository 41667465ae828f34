"""Each text's own part of a pair view, computed once for the many pairs it is in (issue 31
item 7).

A view of a pair (:func:`~simdask.evidence.pair_view.index_report`) first works on each text
alone: its words and windows, what the exclusions leave out
(:func:`~simdask.evidence.passages.prepare_side`), and the aligner's preparation
(:func:`simdask.alignment.prepare`: sentences, word IDs, stems). None of it depends on the
other text, so a text seen in many pairs (a document page's eight sources, a licence shipped
by ten packages) needs it once. :class:`TextCache` keeps it, keyed by the text itself and the
settings it was computed with, the least recently used dropped past a size bound; the
answer is the same as without it (tests compare them).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from simdask.alignment import AlignConfig, PreparedText, prepare
from simdask.errors import ConfigError
from simdask.evidence.excluded import PairExclusions
from simdask.evidence.passages import TextSide, prepare_side

__all__ = ["DEFAULT_MAX_CHARS", "TextCache"]

#: characters of text whose parts a cache keeps (each costs about 100 bytes per character
#: in Python objects: windows of words, arrays)
DEFAULT_MAX_CHARS = 4_000_000


class TextCache:
    """Per-text parts of pair views, kept for texts seen again: the exact comparison's
    :meth:`side` and the aligner's :meth:`aligned`. At most ``max_chars`` characters of
    text are kept per kind (the least recently used go first; a single larger text is
    computed and not kept). ``hits`` and ``misses`` count the look-ups."""

    def __init__(self, max_chars: int = DEFAULT_MAX_CHARS):
        if type(max_chars) is not int or max_chars < 0:
            raise ConfigError(f"max_chars must be a whole number >= 0, found {max_chars!r}")
        self.max_chars = max_chars
        self._sides: OrderedDict[Hashable, tuple[int, TextSide]] = OrderedDict()
        self._aligned: OrderedDict[Hashable, tuple[int, PreparedText]] = OrderedDict()
        self._chars = {"side": 0, "aligned": 0}
        self.hits = 0
        self.misses = 0

    def side(self, text: str, k: int, exclusions: PairExclusions | None) -> TextSide:
        """:func:`~simdask.evidence.passages.prepare_side` of ``text``, kept."""
        key = (text, k, exclusions)
        return self._get(self._sides, "side", key, len(text), lambda: prepare_side(*key))

    def aligned(
        self, text: str, config: AlignConfig | None, excluded: Sequence[tuple[int, int]]
    ) -> PreparedText:
        """:func:`simdask.alignment.prepare` of ``text`` with ``excluded`` spans, kept (only
        ``language`` and ``min_sentence_words`` of ``config`` matter to it)."""
        cfg = config or AlignConfig()
        spans = tuple((int(s), int(e)) for s, e in excluded)
        key = (text, cfg.language, cfg.min_sentence_words, spans)
        return self._get(
            self._aligned, "aligned", key, len(text), lambda: prepare(text, cfg, spans)
        )

    def _get(self, kept: OrderedDict, kind: str, key: Hashable, size: int, make: Callable) -> Any:
        found = kept.get(key)
        if found is not None:
            kept.move_to_end(key)
            self.hits += 1
            return found[1]
        self.misses += 1
        value = make()
        if size <= self.max_chars:
            kept[key] = (size, value)
            self._chars[kind] += size
            while self._chars[kind] > self.max_chars:
                _, (n, _) = kept.popitem(last=False)
                self._chars[kind] -= n
        return value
