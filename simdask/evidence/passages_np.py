"""Evidence for a pair of large texts in bounded memory and time (numpy, no Python object per
word): used by :func:`simdask.evidence.passages.compare_texts` above
:data:`LARGE_CHARS` characters.

Chunks are identified by a 64-bit hash of their sorted word hashes (words hashed as the index
does, :func:`simdask.kernels.hashing.word_hashes`) instead of the words themselves: two
distinct chunks of texts of n chunks collide with probability about n² / 2⁶⁵ (< 10⁻⁴ at 30
million chunks), against 2²⁸..2³² buckets in the index. Memory is about 40 bytes per word of
the two texts. Matches of chunks that occur many times in both texts (boilerplate) multiply;
at most :data:`MAX_MATCHES` matched positions are paired (the most repeated chunks are left
out of the passages, never out of the similarity) and at most :data:`MAX_PASSAGES` passages,
the longest, are reported; ``passages_truncated`` then says so.
"""

from __future__ import annotations

import numpy as np

from simdask.kernels.hashing import hash_chunks, word_hashes, word_spans
from simdask.kernels.words import token_bytes

__all__ = [
    "LARGE_CHARS",
    "MAX_MATCHES",
    "MAX_PASSAGES",
    "chunk_keys",
    "distinct",
    "drop_common_keys",
    "index_chunk_ids",
    "matched_runs",
    "word_table",
]

#: texts (both together) longer than this many characters take this module's path
LARGE_CHARS = 2_000_000
#: most matched chunk positions (pairs of window indexes) turned into passages
MAX_MATCHES = 4_000_000
#: most passages reported for one pair (the longest)
MAX_PASSAGES = 1000
_MIX = np.uint64(0x9E3779B97F4A7C15)
_BLOCK = 1 << 20  # windows hashed at a time


def word_table(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """``(word hashes uint64, starts int64, ends int64, exact)``: character spans of the words
    of ``text``. ASCII text: spans exact; other text: the words of its normalised form, spans
    spread over the text proportionally (``exact`` False)."""
    raw = token_bytes(text)
    buf = np.frombuffer(raw, dtype=np.uint8)
    starts, ends = word_spans(buf)
    hashes = word_hashes(buf, starts, ends, 0)
    exact = text.isascii()
    if not exact and len(buf):
        scale = len(text) / len(buf)
        starts = (starts * scale).astype(np.int64)
        ends = np.minimum((ends * scale).astype(np.int64) + 1, len(text))
    return hashes, starts, ends, exact


def chunk_keys(hashes: np.ndarray, k: int) -> np.ndarray:
    """64-bit key (uint64) of each ``k``-word window (words sorted inside it), in blocks."""
    m = max(len(hashes) - k + 1, 0)
    out = np.empty(m, dtype=np.uint64)
    for lo in range(0, m, _BLOCK):
        hi = min(m, lo + _BLOCK)
        cols = np.sort(np.stack([hashes[lo + j : hi + j] for j in range(k)], axis=1), axis=1)
        h = np.full(hi - lo, np.uint64(k), dtype=np.uint64)
        with np.errstate(over="ignore"):
            for j in range(k):
                h = (h ^ cols[:, j]) * _MIX
                h ^= h >> np.uint64(29)
        out[lo:hi] = h
    return out


def index_chunk_ids(text: str, hashes: np.ndarray, k: int, hash_bits: int, seed: int) -> np.ndarray:
    """The index's chunk ID (``hash_bits`` bits, :func:`~simdask.kernels.hashing.hash_chunks`)
    of every ``k``-word window of ``text``, in window order (as :func:`chunk_keys`).
    ``hashes``: the text's word hashes with seed 0 (:func:`word_table`), reused when the
    index's ``seed`` is 0."""
    if seed != 0:
        buf = np.frombuffer(token_bytes(text), dtype=np.uint8)
        starts, ends = word_spans(buf)
        hashes = word_hashes(buf, starts, ends, seed)
    offsets = np.array([0, len(hashes)], dtype=np.int64)
    return hash_chunks(hashes, offsets, k, hash_bits, seed)[0]


def drop_common_keys(keys: np.ndarray, ids: np.ndarray, shared: np.ndarray, common_ids):
    """``shared`` (sorted distinct window keys of one text, :func:`chunk_keys`) without the
    keys whose chunk ID (``ids``, per window of the same text) ``common_ids`` names: given the
    distinct IDs of the shared windows, it returns those to leave out (chunks held by more
    than ``max_df`` documents of the index)."""
    pos = np.searchsorted(shared, keys)
    pos[pos == len(shared)] = 0
    hit = shared[pos] == keys
    hit_keys, hit_ids = keys[hit], ids[hit]
    common = np.asarray(common_ids(np.unique(hit_ids)))
    if not len(common):
        return shared
    at = np.searchsorted(common, hit_ids)
    at[at == len(common)] = 0
    gone = distinct(hit_keys[common[at] == hit_ids])
    return np.setdiff1d(shared, gone, assume_unique=True)


def distinct(keys: np.ndarray) -> np.ndarray:
    """The distinct values of ``keys``, sorted (by sorting: ``np.unique``'s hash path is ~10x
    slower on millions of 64-bit keys)."""
    s = np.sort(keys)
    if not len(s):
        return s
    keep = np.ones(len(s), dtype=bool)
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def _pairs(ka: np.ndarray, kb: np.ndarray, shared: np.ndarray):
    """Window index pairs ``(i, j)`` with ``ka[i] == kb[j]`` for keys in ``shared``, at most
    :data:`MAX_MATCHES` (the keys repeated most are left out first); and whether any were."""
    oa, ob = np.argsort(ka, kind="stable"), np.argsort(kb, kind="stable")
    sa, sb = ka[oa], kb[ob]
    a0, a1 = np.searchsorted(sa, shared, "left"), np.searchsorted(sa, shared, "right")
    b0, b1 = np.searchsorted(sb, shared, "left"), np.searchsorted(sb, shared, "right")
    ca, cb = a1 - a0, b1 - b0
    per = ca * cb
    truncated = False
    if per.sum() > MAX_MATCHES:
        keep = np.argsort(per, kind="stable")
        fits = np.cumsum(per[keep]) <= MAX_MATCHES
        sel = np.sort(keep[fits])
        a0, ca, b0, cb, per = a0[sel], ca[sel], b0[sel], cb[sel], per[sel]
        truncated = True
    total = int(per.sum())
    g = np.repeat(np.arange(len(per)), per)
    first = np.zeros(len(per), dtype=np.int64)
    np.cumsum(per[:-1], out=first[1:])
    local = np.arange(total, dtype=np.int64) - first[g]
    i = oa[a0[g] + local // cb[g]]
    j = ob[b0[g] + local % cb[g]]
    return i.astype(np.int64), j.astype(np.int64), truncated


def matched_runs(ka: np.ndarray, kb: np.ndarray, shared: np.ndarray, k: int, min_chunks: int):
    """Runs of matches on one diagonal with gaps of at most ``2 k`` windows (as
    :func:`simdask.evidence.passages.compare_texts`): arrays ``i0, j0, i1, count`` of the runs
    of at least ``min_chunks`` matches, by ``(i0, j0)``, at most :data:`MAX_PASSAGES` (the
    most chunks); and whether matches or passages were left out."""
    i, j, truncated = _pairs(ka, kb, shared)
    if not len(i):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty, truncated
    d = i - j
    order = np.lexsort((i, d))
    i, j, d = i[order], j[order], d[order]
    brk = np.ones(len(i), dtype=bool)
    brk[1:] = (d[1:] != d[:-1]) | (i[1:] - i[:-1] > 2 * k)
    starts = np.flatnonzero(brk)
    ends = np.append(starts[1:], len(i)) - 1
    count = ends - starts + 1
    keep = count >= min_chunks
    starts, ends, count = starts[keep], ends[keep], count[keep]
    if len(starts) > MAX_PASSAGES:
        top = np.sort(np.argsort(-count, kind="stable")[:MAX_PASSAGES])
        starts, ends, count = starts[top], ends[top], count[top]
        truncated = True
    i0, j0, i1 = i[starts], j[starts], i[ends]
    order = np.lexsort((j0, i0))
    return i0[order], j0[order], i1[order], count[order], truncated
