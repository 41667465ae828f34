"""Repeated word n-grams (paper 004, Huston, Moffat & Croft), the pure numpy kernels.

Words are those of DESIGN §1 (:func:`simdask.kernels.text.token_bytes` and
:func:`simdask.kernels.hashing.word_spans`). An n-gram is ``n`` consecutive words *in text
order* (not sorted, unlike a chunk) inside one document. Its hash folds the ``n`` word hashes
in order with the chunk hash's step and keeps the top ``bits`` bits; its text is the words
joined by single spaces.

A batch of records is a structured array of :data:`RECORD` (hash, document ordinal, word
offset in the document), little-endian. N-gram texts travel as ``(lengths, blob)``: uint32
byte lengths and the concatenated UTF-8 bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simdask.kernels.hashing import _avalanche, _step, word_hashes, word_spans
from simdask.kernels.text import token_bytes

__all__ = [
    "RECORD",
    "Tokens",
    "group_exact",
    "ngram_records",
    "ngram_texts",
    "range_of",
    "repeated_by_hash",
    "split_by_range",
    "tokenize",
]

#: one n-gram occurrence: hash (top ``bits`` bits of 64), document ordinal, word offset
RECORD = np.dtype([("h", "<u8"), ("doc", "<u4"), ("off", "<u4")])
_SEED_TAG = 0x6E6772616D  # "ngram": keeps n-gram hashes apart from chunk hashes


@dataclass(frozen=True)
class Tokens:
    """The words of a batch of documents.

    ``buf``: uint8, every word followed by one space (so the text of words ``i..j`` is
    ``buf[start[i]:start[j] + length[j]]``); ``start``/``length``: int64 byte offset and length
    of each word in ``buf``; ``hashes``: uint64 word hashes; ``word_offsets``: int64, document
    ``d``'s words are ``word_offsets[d]:word_offsets[d + 1]``.
    """

    buf: np.ndarray
    start: np.ndarray
    length: np.ndarray
    hashes: np.ndarray
    word_offsets: np.ndarray


def _ranges(lengths: np.ndarray) -> np.ndarray:
    """``concatenate([arange(l) for l in lengths])`` without a Python loop (int64)."""
    total = int(lengths.sum())
    first = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=first[1:])
    return np.arange(total, dtype=np.int64) - np.repeat(first, lengths)


def tokenize(texts: list[str], seed: int = 0) -> Tokens:
    """Words of ``texts`` (DESIGN §1) packed as :class:`Tokens`, word hashes with ``seed``."""
    parts = [token_bytes(t) for t in texts]
    raw = np.frombuffer(b" ".join(parts) + b" ", dtype=np.uint8)
    doc_starts = np.zeros(len(parts), dtype=np.int64)
    if parts:
        np.cumsum([len(p) + 1 for p in parts[:-1]], out=doc_starts[1:])
    starts, ends = word_spans(raw)
    hashes = word_hashes(raw, starts, ends, seed)
    word_offsets = np.searchsorted(starts, np.append(doc_starts, len(raw))).astype(np.int64)
    length = (ends - starts).astype(np.int64)
    start = np.zeros(len(length), dtype=np.int64)
    np.cumsum(length[:-1] + 1, out=start[1:])
    buf = np.full(int((length + 1).sum()), ord(" "), dtype=np.uint8)
    within = _ranges(length)
    buf[np.repeat(start, length) + within] = raw[np.repeat(starts, length) + within]
    return Tokens(buf, start, length, hashes, word_offsets)


def _windows(word_offsets: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """First word (global index) and document of every ``n``-word window inside a document."""
    counts = np.diff(word_offsets)
    nwin = np.maximum(counts - n + 1, 0)
    doc = np.repeat(np.arange(len(counts), dtype=np.int64), nwin)
    return word_offsets[:-1][doc] + _ranges(nwin), doc


def _hash_windows(hashes: np.ndarray, first: np.ndarray, n: int, bits: int, seed: int):
    h = np.full(len(first), (seed * 0x9E3779B97F4A7C15 ^ _SEED_TAG ^ n) & (2**64 - 1), np.uint64)
    for j in range(n):
        h = _step(h, hashes[first + j])
    _avalanche(h)
    return h >> np.uint64(64 - bits)


def ngram_records(tok: Tokens, n: int, bits: int, seed: int, doc_base: int = 0) -> np.ndarray:
    """Every ``n``-gram of the batch as :data:`RECORD` (documents numbered from ``doc_base``).

    ``bits`` (1..64) is the hash width; records are in text order.
    """
    first, doc = _windows(tok.word_offsets, n)
    out = np.empty(len(first), dtype=RECORD)
    out["h"] = _hash_windows(tok.hashes, first, n, bits, seed)
    out["doc"] = doc + doc_base
    out["off"] = first - tok.word_offsets[doc]
    return out


def ngram_texts(
    tok: Tokens, doc: np.ndarray, off: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """The texts of the n-grams at (batch-local document, word offset): ``(lengths, blob)``."""
    first = tok.word_offsets[doc.astype(np.int64)] + off.astype(np.int64)
    lo = tok.start[first]
    hi = tok.start[first + n - 1] + tok.length[first + n - 1]
    lengths = (hi - lo).astype(np.int64)
    blob = tok.buf[np.repeat(lo, lengths) + _ranges(lengths)]
    return lengths.astype("<u4"), blob


def range_of(h: np.ndarray, bits: int, range_bits: int) -> np.ndarray:
    """The hash range (int64, ``0 .. 2**min(range_bits, bits) - 1``) of each hash: top bits."""
    return (h >> np.uint64(max(bits - range_bits, 0))).astype(np.int64)


def split_by_range(rec: np.ndarray, ranges: np.ndarray, n_ranges: int) -> list[np.ndarray]:
    """``rec`` split into ``n_ranges`` parts by ``ranges``; each part keeps the input order."""
    order = np.argsort(ranges, kind="stable")
    bounds = np.searchsorted(ranges[order], np.arange(n_ranges + 1))
    rec = rec[order]
    return [rec[bounds[r] : bounds[r + 1]] for r in range(n_ranges)]


def _runs(sorted_h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and length (int64) of each run of equal values in a sorted array."""
    if len(sorted_h) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    edge = np.flatnonzero(sorted_h[1:] != sorted_h[:-1]) + 1
    starts = np.concatenate([[0], edge]).astype(np.int64)
    return starts, np.diff(np.append(starts, len(sorted_h)))


def repeated_by_hash(rec: np.ndarray, min_count: int) -> np.ndarray:
    """The records whose hash occurs at least ``min_count`` times, in (doc, off) order.

    Every n-gram occurring ``min_count`` times is among them (equal n-grams have equal
    hashes); others may be too, where hashes collide (pass 2 removes those).
    """
    srt = rec[np.argsort(rec["h"], kind="stable")]
    _, lengths = _runs(srt["h"])
    keep = np.repeat(lengths >= min_count, lengths)
    sel = srt[keep]
    return sel[np.lexsort((sel["off"], sel["doc"]))]


def _equal_to_leader(
    member: np.ndarray, leader: np.ndarray, lengths: np.ndarray, text_start: np.ndarray, blob
) -> np.ndarray:
    """Whether the text of ``member[i]`` equals that of ``leader[i]`` (bool), byte for byte."""
    ok = lengths[member] == lengths[leader]
    m, ld = member[ok], leader[ok]
    ln = lengths[m].astype(np.int64)
    if len(m) == 0:
        return ok
    within = _ranges(ln)
    diff = (
        blob[np.repeat(text_start[m], ln) + within] != blob[np.repeat(text_start[ld], ln) + within]
    )
    ok[np.flatnonzero(ok)] = np.add.reduceat(diff.astype(np.int64), _first(ln)) == 0
    return ok


def group_exact(
    rec: np.ndarray, lengths: np.ndarray, blob: np.ndarray, min_count: int
) -> list[tuple[bytes, np.ndarray]]:
    """Exact groups of equal n-gram texts occurring at least ``min_count`` times.

    ``rec[i]`` is an occurrence whose text is the ``i``-th of ``(lengths, blob)`` (lengths of
    at least one byte). Records are sorted by hash; only hash runs of ``min_count`` or more are
    compared byte for byte (vectorised against the run's first text; a run with another text
    in it, a hash collision, is split by text in Python), so a collision never merges two
    texts. Returns ``[(text, indices into rec)]`` sorted by text; indices in (doc, off) order.
    """
    text_start = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1].astype(np.int64), out=text_start[1:])
    order = np.lexsort((rec["off"], rec["doc"], rec["h"]))
    starts, run_len = _runs(rec["h"][order])
    big = run_len >= min_count
    starts, run_len = starts[big], run_len[big]
    member = order[np.repeat(starts, run_len) + _ranges(run_len)]
    leader = order[np.repeat(starts, run_len)]
    ok = _equal_to_leader(member, leader, lengths, text_start, blob)
    clean = np.add.reduceat(ok.astype(np.int64), _first(run_len)) == run_len if len(ok) else ok
    raw = blob.tobytes()

    def text_of(i: int) -> bytes:
        a = int(text_start[i])
        return raw[a : a + int(lengths[i])]

    out: dict[bytes, np.ndarray] = {}
    for s, ln, c in zip(starts.tolist(), run_len.tolist(), clean.tolist(), strict=True):
        idx = order[s : s + ln]
        if c:
            out[text_of(int(idx[0]))] = idx
            continue
        groups: dict[bytes, list[int]] = {}
        for i in idx.tolist():
            groups.setdefault(text_of(i), []).append(i)
        out.update((t, np.asarray(g)) for t, g in groups.items() if len(g) >= min_count)
    return [(t, out[t]) for t in sorted(out)]


def _first(lengths: np.ndarray) -> np.ndarray:
    """Start of each of consecutive segments of these lengths (int64)."""
    first = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=first[1:])
    return first
