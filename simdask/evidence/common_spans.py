"""Where two texts share chunks that an index's ``max_df`` leaves out: the character spans of
those windows in each text, for the aligner to treat as excluded text (the stored
similarities and the exact evidence do not count these chunks; a passage must not be made of
them either). The same chunks :func:`~simdask.evidence.passages.compare_texts` drops with
its ``drop_shared`` filter (:func:`simdask.doc_freq.common_filter`).
"""

from __future__ import annotations

import numpy as np

from simdask.evidence.passages import word_offsets
from simdask.evidence.passages_np import (
    LARGE_CHARS,
    chunk_keys,
    distinct,
    drop_common_keys,
    index_chunk_ids,
    word_table,
)
from simdask.kernels.exclusions import merge_spans

__all__ = ["common_spans"]

Spans = list[tuple[int, int]]


def _window_spans(starts, ends, hit: np.ndarray, k: int) -> Spans:
    """The merged character spans of the ``k``-word windows flagged in ``hit``."""
    idx = np.flatnonzero(hit).tolist()
    last = len(ends) - 1
    return merge_spans([(int(starts[i]), int(ends[min(i + k - 1, last)])) for i in idx])


def common_spans(a: str, b: str, k: int, drop) -> tuple[Spans, Spans]:
    """``(spans of a, spans of b)``: the windows of the chunks both texts share that ``drop``
    (a :class:`~simdask.doc_freq.CommonChunks`, None: no ``max_df``) leaves out, merged
    (character offsets). Texts longer than :data:`~simdask.evidence.passages_np.LARGE_CHARS`
    together are compared on hashed keys, as the exact evidence does."""
    if drop is None:
        return [], []
    if len(a) + len(b) > LARGE_CHARS:
        return _large(a, b, k, drop)
    wa, sa, _ = word_offsets(a)
    wb, sb, _ = word_offsets(b)
    ca = [tuple(sorted(wa[i : i + k])) for i in range(len(wa) - k + 1)]
    cb = [tuple(sorted(wb[i : i + k])) for i in range(len(wb) - k + 1)]
    shared = set(ca) & set(cb)
    dropped = drop(shared) if shared else set()
    if not dropped:
        return [], []
    out = []
    for spans, windows in ((sa, ca), (sb, cb)):
        hit = np.fromiter((c in dropped for c in windows), dtype=bool, count=len(windows))
        starts = [s for s, _ in spans]
        ends = [e for _, e in spans]
        out.append(_window_spans(starts, ends, hit, k))
    return out[0], out[1]


def _large(a: str, b: str, k: int, drop) -> tuple[Spans, Spans]:
    """:func:`common_spans` on hashed window keys (numpy, bounded memory)."""
    ha, sa0, sa1, _ = word_table(a)
    hb, sb0, sb1, _ = word_table(b)
    ka, kb = chunk_keys(ha, k), chunk_keys(hb, k)
    ids_a = index_chunk_ids(a, ha, k, drop.hash_bits, drop.seed)
    shared = np.intersect1d(distinct(ka), distinct(kb), assume_unique=True)
    if not len(shared):
        return [], []
    kept = drop_common_keys(ka, ids_a, shared, drop.common_ids)
    dropped = np.setdiff1d(shared, kept, assume_unique=True)
    if not len(dropped):
        return [], []
    return (
        _window_spans(sa0, sa1, np.isin(ka, dropped), k),
        _window_spans(sb0, sb1, np.isin(kb, dropped), k),
    )
