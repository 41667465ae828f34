"""``--min-match WORDS`` (issue 31, item 11): the similarities of a pair counted only over the
matches a view shows, those of at least WORDS words (as Turnitin's and WCopyfind's setting).

Each direction is counted on its own: A's count is A's shared chunks whose window lies inside
a passage shown (in A's text), and, with ``--exclude-quotes`` (a quotation is left out of its
own document only, docs/term.md), A's chunks inside a passage A copies from B's quotation
that is shown too (``doc_quoted_copies``, at least WORDS words of A); B's count the same from
B's side (``other_quoted_copies``, at least WORDS words of B). Without short matches this is
the view's exact count per direction. Pure Python and numpy on the evidence's own tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from simdask.kernels.similarity import containment

if TYPE_CHECKING:  # annotations only
    from simdask.evidence.passages import PairEvidence

__all__ = ["count_shown", "windows_in"]


def windows_in(windows: Sequence, bounds, start: int, end: int, k: int) -> set:
    """The windows (chunks) of the words lying wholly in ``[start, end)`` (characters);
    ``bounds``: the words' start and end offsets (int64 arrays)."""
    lo = int(np.searchsorted(bounds[0], start))
    hi = int(np.searchsorted(bounds[1], end, side="right")) - 1
    return set(windows[lo : max(lo, hi - k + 2)])


def _inside(passages, windows, bounds, side: str, counted: set, k: int) -> set:
    """The ``counted`` chunks whose window lies inside one of ``passages`` on ``side``
    (``doc``: the passages' ``doc_start``/``doc_end``, else ``other_*``)."""
    found: set = set()
    for p in passages:
        start, end = (p.doc_start, p.doc_end) if side == "doc" else (p.other_start, p.other_end)
        found |= windows_in(windows, bounds, start, end, k) & counted
    return found


def count_shown(
    ev: PairEvidence,
    sides: tuple[tuple[Sequence, tuple], tuple[Sequence, tuple]],
    shared: set,
    extras: tuple[set, set],
    k: int,
    min_words: int,
) -> PairEvidence:
    """``ev`` counted over the matches shown: its passages (already at least ``min_words``
    words) and its passages inside the other's quotation, those of at least ``min_words``
    words kept (the rest dropped from the listing too). ``sides``: ``(windows, bounds)`` of
    A and B; ``shared``: the chunks both count; ``extras``: A's chunks inside B's quotations
    and B's inside A's (empty without ``--exclude-quotes``). ``similarity`` and ``shared`` are
    A's count, ``reverse_similarity`` B's; percent."""
    (wa, ba), (wb, bb) = sides
    in_a = _inside(ev.passages, wa, ba, "doc", shared, k)
    in_b = _inside(ev.passages, wb, bb, "other", shared, k)
    if ev.doc_quoted_copies is not None:
        ev.doc_quoted_copies = [p for p in ev.doc_quoted_copies if p.words >= min_words]
        in_a |= _inside(ev.doc_quoted_copies, wa, ba, "doc", extras[0], k)
    if ev.other_quoted_copies is not None:
        ev.other_quoted_copies = [p for p in ev.other_quoted_copies if p.words >= min_words]
        in_b |= _inside(ev.other_quoted_copies, wb, bb, "other", extras[1], k)
    ev.similarity = containment(len(in_a), ev.doc_chunks)
    ev.reverse_similarity = containment(len(in_b), ev.other_chunks)
    ev.shared = len(in_a)
    return ev
