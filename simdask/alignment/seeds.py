"""Seeds: pairs (sentence of A, sentence of B) that look taken from one another.

Three features: sentence pairs whose tf-isf cosine and Dice both pass their thresholds
(robust to reordering and synonyms; computed by :mod:`.pairs`); exact sorted ``k``-word
chunks (DESIGN §1: verbatim copies); stop-word n-grams (Stamatatos 2011: the skeleton of
function words survives when content words are replaced). Keys are 64-bit mixes of
per-process word hashes.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["key_matches", "window_keys"]

_MIX = np.random.default_rng(20261127).integers(1, 2**63, size=64, dtype=np.uint64) | np.uint64(1)


def window_keys(hashes: np.ndarray, k: int, sort: bool) -> np.ndarray:
    """One uint64 key per window of ``k`` consecutive hashes (int64 word hashes): the words
    sorted inside the window first when ``sort`` (simdask's chunks), else in order."""
    if len(hashes) < k:
        return np.zeros(0, dtype=np.uint64)
    win = sliding_window_view(hashes.view(np.uint64), k)
    if sort:
        win = np.sort(win, axis=1)
    with np.errstate(over="ignore"):
        return (win * _MIX[:k]).sum(axis=1, dtype=np.uint64)


def key_matches(
    keys_a: np.ndarray, keys_b: np.ndarray, max_repeats: int
) -> tuple[np.ndarray, np.ndarray]:
    """Every pair ``(i, j)`` with ``keys_a[i] == keys_b[j]``, for keys occurring at most
    ``max_repeats`` times in each text (a frequent phrase is no evidence); int64 arrays."""
    empty = np.zeros(0, dtype=np.int64)
    if len(keys_a) == 0 or len(keys_b) == 0:
        return empty, empty
    order = np.argsort(keys_b, kind="stable")
    sorted_b = keys_b[order]
    lo = np.searchsorted(sorted_b, keys_a, side="left")
    count = np.searchsorted(sorted_b, keys_a, side="right") - lo
    _, inverse, count_a = np.unique(keys_a, return_inverse=True, return_counts=True)
    ok = (count > 0) & (count <= max_repeats) & (count_a[inverse] <= max_repeats)
    ia = np.flatnonzero(ok)
    n = count[ia]
    if n.sum() == 0:
        return empty, empty
    first = np.repeat(lo[ia] - (np.cumsum(n) - n), n)
    ib = order[first + np.arange(int(n.sum()))]
    return np.repeat(ia, n), ib.astype(np.int64)
