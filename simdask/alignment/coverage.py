"""Coverage: the share of each text's words that lie inside the aligned passages."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simdask.alignment.passage import Passage
from simdask.alignment.segment import word_spans
from simdask.kernels.exclusions import merge_spans

__all__ = ["aligned_coverage", "word_share"]


def word_share(text: str, spans: Sequence[tuple[int, int]]) -> float:
    """The share (0..1) of the words of ``text`` lying wholly inside the union of ``spans``
    (code-point ``(start, end)``); 0 for a text without words."""
    starts, ends, _ = word_spans(text)
    if len(starts) == 0:
        return 0.0
    merged = np.asarray(merge_spans([(int(s), int(e)) for s, e in spans if e > s]), np.int64)
    if len(merged) == 0:
        return 0.0
    k = np.searchsorted(merged[:, 0], starts, side="right") - 1
    inside = (k >= 0) & (merged[np.maximum(k, 0), 1] >= ends)
    return float(inside.mean())


def aligned_coverage(passages: Sequence[Passage], text_a: str, text_b: str) -> tuple[float, float]:
    """``(share_a, share_b)``: the share (0..1) of the words of each text inside the union of
    the passages' spans in it ("62 % of A lies in passages taken from B")."""
    return (
        word_share(text_a, [(p.a_start, p.a_end) for p in passages]),
        word_share(text_b, [(p.b_start, p.b_end) for p in passages]),
    )
