"""What a pair report leaves out (issue 16): the index's exclusions applied to true chunks.

A report compares two texts exactly (true chunks as strings, no hashing); it applies the
same exclusions as the index's stored similarities: a window of ``k`` words all inside a
quotation or the reference list (when the index excludes them) is not counted, nor a window
whose sorted words are a chunk of an excluded template text. :func:`excluded_windows` gives
the windows left out; :func:`excluded_marks` the character spans to show as excluded, each
with its kind (``template``, ``quote``, ``bibliography``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simdask.kernels.exclusions import excluded_spans, merge_spans
from simdask.kernels.words import chunks

__all__ = ["PairExclusions", "excluded_marks", "excluded_windows", "inside_words"]


@dataclass(frozen=True)
class PairExclusions:
    """The exclusions of an index as a report applies them: the two settings and the template
    texts (their true chunks are built on first use, per ``k``)."""

    quotes: bool = False
    bibliography: bool = False
    templates: tuple[str, ...] = ()
    _chunks: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def active(self) -> bool:
        """Whether anything is left out."""
        return self.quotes or self.bibliography or bool(self.templates)

    def template_chunks(self, k: int) -> frozenset[tuple[str, ...]]:
        """The true chunks (sorted words) of every template text."""
        if k not in self._chunks:
            self._chunks[k] = frozenset(c for t in self.templates for c in chunks(t, k))
        return self._chunks[k]

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """Quotation and reference-list spans of ``text`` with their kinds (as the index)."""
        return excluded_spans(text, self.quotes, self.bibliography)


def inside_words(starts: np.ndarray, ends: np.ndarray, spans: list[tuple[int, int]]) -> np.ndarray:
    """Whether each word (character span ``[starts[i], ends[i])``) lies inside one of the
    sorted, merged ``spans`` (bool array)."""
    if not spans or not len(starts):
        return np.zeros(len(starts), dtype=bool)
    lo = np.array([s for s, _ in spans], dtype=np.int64)
    hi = np.array([e for _, e in spans], dtype=np.int64)
    j = np.searchsorted(lo, starts, side="right") - 1
    ok = j >= 0
    jj = np.maximum(j, 0)
    return ok & (ends <= hi[jj]) & (starts >= lo[jj])


def window_inside(inside: np.ndarray, k: int) -> np.ndarray:
    """Per ``k``-word window: whether all its words are inside (bool array)."""
    m = max(len(inside) - k + 1, 0)
    marked = np.zeros(len(inside) + 1, dtype=np.int64)
    np.cumsum(inside, out=marked[1:])
    return marked[k : k + m] - marked[:m] == k


def excluded_windows(
    text: str,
    word_spans: list[tuple[int, int]],
    windows: list[tuple[str, ...]],
    k: int,
    excl: PairExclusions,
) -> tuple[np.ndarray, np.ndarray]:
    """Per window of ``text``: ``(by_span, by_template)`` bool arrays: all its words in an
    excluded quotation or reference list, and its chunk one of a template's."""
    m = len(windows)
    starts = np.array([s for s, _ in word_spans], dtype=np.int64)
    ends = np.array([e for _, e in word_spans], dtype=np.int64)
    spans = merge_spans([(s, e) for s, e, _ in excl.spans(text)])
    by_span = window_inside(inside_words(starts, ends, spans), k)[:m]
    tpl = excl.template_chunks(k) if excl.templates else frozenset()
    by_template = np.fromiter((c in tpl for c in windows), dtype=bool, count=m)
    return by_span, by_template


def excluded_marks(
    text: str,
    starts: np.ndarray,
    ends: np.ndarray,
    by_template: np.ndarray,
    k: int,
    excl: PairExclusions,
) -> list[tuple[int, int, str]]:
    """The character spans of ``text`` to show as excluded, with their kinds: the quotations
    and reference list found (when excluded) and the runs of template windows (their words'
    spans, merged), sorted. ``starts``/``ends``: the words' character spans."""
    out = list(excl.spans(text))
    idx = np.flatnonzero(by_template)
    runs = merge_spans(
        [(int(starts[i]), int(ends[min(i + k - 1, len(ends) - 1)])) for i in idx.tolist()]
    )
    out += [(s, e, "template") for s, e in runs]
    return sorted(out)
