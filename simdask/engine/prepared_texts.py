"""Texts prepared for the aligner, kept by a process across the tasks of one computation.

``totals --compute`` aligns every document's candidates: about four pairs a document, in
batches of consecutive pairs, so that a text is prepared again in each batch that holds one
of its pairs (1.19 texts a pair on the prose 100k index, against 0.25 if each were prepared
once: its candidate graph has hubs, a few documents in hundreds of pairs). A worker keeps the
prepared texts a later batch will ask for (the client names them: :func:`wanted_later`) in
a table of at most :data:`MAX_CHARS` characters of text (about 25 bytes of prepared text a
character: ~600 MB), least recently used out first; :func:`forget` empties it when the
computation ends.

An entry is found by the text itself and the settings it was prepared under (never by where
it is stored), so a kept text is the one :func:`~simdask.alignment.prepare` would give now.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Any

__all__ = ["MAX_CHARS", "forget", "held", "keep", "wanted_later"]

#: most characters of text whose preparations a process keeps
MAX_CHARS = 24_000_000

_TABLE: OrderedDict[tuple[str, str], Any] = OrderedDict()
_CHARS = [0]
_LOCK = threading.Lock()


def held(tag: str, text: str) -> Any | None:
    """The preparation kept for ``text`` under settings ``tag`` (None: none kept)."""
    with _LOCK:
        got = _TABLE.get((tag, text))
        if got is not None:
            _TABLE.move_to_end((tag, text))
        return got


def keep(tag: str, text: str, prepared: Any) -> None:
    """Keep ``prepared`` for ``text`` under ``tag``, the least recently used entries
    dropped while more than :data:`MAX_CHARS` characters are kept (a text longer than that
    is not kept)."""
    if len(text) > MAX_CHARS:
        return
    with _LOCK:
        if (tag, text) in _TABLE:
            return
        _TABLE[(tag, text)] = prepared
        _CHARS[0] += len(text)
        while _CHARS[0] > MAX_CHARS:
            (_, old), _ = _TABLE.popitem(last=False)
            _CHARS[0] -= len(old)


def forget() -> int:
    """Drop every kept preparation; returns how many there were."""
    with _LOCK:
        n = len(_TABLE)
        _TABLE.clear()
        _CHARS[0] = 0
        return n


def wanted_later(batches: Sequence[Sequence[Sequence[Hashable]]], horizon: int) -> list[frozenset]:
    """Per batch (each a list of jobs, each job the texts it needs), the texts of that batch
    that a later batch at most ``horizon`` batches on needs too: those worth keeping."""
    last: dict[Hashable, int] = {}
    out: list[frozenset] = [frozenset()] * len(batches)
    for i in range(len(batches) - 1, -1, -1):
        here = {t for job in batches[i] for t in job}
        out[i] = frozenset(t for t in here if t in last and last[t] - i <= horizon)
        for t in here:
            last[t] = i
    return out
