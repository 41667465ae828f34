"""Repeated word n-grams (paper 004, Huston, Moffat & Croft), the pure numpy kernels.

Words are those of DESIGN §1 (:func:`simdask.kernels.words.token_bytes` and
:func:`simdask.kernels.hashing.word_spans`). An n-gram is ``n`` consecutive words *in text
order* (not sorted, unlike a chunk) inside one document. Its hash folds the ``n`` word hashes
in order with the chunk hash's step and keeps the top ``bits`` bits; its text is the words
joined by single spaces.

A batch of records is a structured array of :data:`RECORD` (hash, document ordinal, word
offset in the document), little-endian. N-gram texts travel as ``(lengths, blob)``: uint32
byte lengths and the concatenated UTF-8 bytes.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from simdask.kernels.hashing import (
    _WORD_BYTE,
    _avalanche,
    _step,
    word_hashes,
    word_spans,
)
from simdask.kernels.words import token_bytes

__all__ = [
    "RECORD",
    "Groups",
    "Tokens",
    "gather_slices",
    "group_exact",
    "jsonl_rows",
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
_BLOCK = 1 << 24  # bytes of temporary rows copied or compared at a time


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
    """Words of ``texts`` (DESIGN §1) packed as :class:`Tokens`, word hashes with ``seed``.

    Memory: a few bytes per text byte (boolean masks), no per-byte index arrays.
    """
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
    # every word byte, and the first byte after each word (``raw`` ends in a space) as a space
    isw = _WORD_BYTE[raw].view(np.bool_)
    keep = isw.copy()
    keep[ends] = True
    buf = raw[keep]
    buf[~isw[keep]] = ord(" ")
    return Tokens(buf, start, length, hashes, word_offsets)


def _windows(word_offsets: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """First word (global index) and document of every ``n``-word window inside a document."""
    counts = np.diff(word_offsets)
    nwin = np.maximum(counts - n + 1, 0)
    doc = np.repeat(np.arange(len(counts), dtype=np.int64), nwin)
    return word_offsets[:-1][doc] + _ranges(nwin), doc


def _hash_windows(
    hashes: np.ndarray, first: np.ndarray, n: int, bits: int, seed: int
) -> np.ndarray:
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
    lengths = hi - lo
    return lengths.astype("<u4"), gather_slices(tok.buf, lo, lengths)


def _by_length(lengths: np.ndarray, block: int) -> Iterator[tuple[int, np.ndarray]]:
    """``(L, indices)`` of the entries of ``lengths`` equal to ``L`` (L >= 1), in pieces of
    at most ``block // L`` (at least one) entries."""
    if len(lengths) == 0:
        return
    order = np.argsort(lengths, kind="stable")
    srt = lengths[order]
    cuts = np.flatnonzero(srt[1:] != srt[:-1]) + 1
    for a, b in itertools.pairwise([0, *cuts.tolist(), len(srt)]):
        ln = int(srt[a])
        if ln <= 0:
            continue
        step = max(1, block // ln)
        for c in range(a, b, step):
            yield ln, order[c : min(b, c + step)]


def gather_slices(
    src: np.ndarray, lo: np.ndarray, lengths: np.ndarray, block: int = _BLOCK
) -> np.ndarray:
    """``concatenate([src[a:a + l] for a, l in zip(lo, lengths)])`` (uint8), without a Python
    loop per slice or an index per byte: slices of equal length are copied as rows of strided
    views, ``block`` bytes at a time (the temporary memory)."""
    lo, lengths = np.asarray(lo, np.int64), np.asarray(lengths, np.int64)
    out = np.empty(int(lengths.sum()), dtype=np.uint8)
    dest = _first(lengths)
    for ln, idx in _by_length(lengths, block):
        rows = np.lib.stride_tricks.sliding_window_view(src, ln)[lo[idx]]
        np.lib.stride_tricks.as_strided(out, (len(out) - ln + 1, ln), (1, 1))[dest[idx]] = rows
    return out


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
    member: np.ndarray,
    leader: np.ndarray,
    lengths: np.ndarray,
    text_start: np.ndarray,
    blob: np.ndarray,
    block: int = _BLOCK,
) -> np.ndarray:
    """Whether the text of ``member[i]`` equals that of ``leader[i]`` (bool), byte for byte.

    Texts of equal length are compared as rows of a strided view of ``blob``, ``block`` bytes
    at a time, so temporary memory is bounded whatever the range size.
    """
    ok = lengths[member] == lengths[leader]
    todo = np.flatnonzero(ok & (member != leader))
    for ln, idx in _by_length(lengths[member[todo]].astype(np.int64), block):
        t = todo[idx]
        view = np.lib.stride_tricks.sliding_window_view(blob, ln)
        ok[t] = (view[text_start[member[t]]] == view[text_start[leader[t]]]).all(axis=1)
    return ok


@dataclass(frozen=True)
class Groups:
    """Exact groups of equal n-gram texts: ``texts`` (sorted bytes), and for group ``g`` the
    record indices ``members[bounds[g]:bounds[g + 1]]`` in (doc, off) order."""

    texts: list[bytes]
    members: np.ndarray
    bounds: np.ndarray

    def __len__(self) -> int:
        return len(self.texts)

    def __iter__(self) -> Iterator[tuple[bytes, np.ndarray]]:
        """``(text, member indices)`` of each group, in text order."""
        for g, t in enumerate(self.texts):
            yield t, self.members[self.bounds[g] : self.bounds[g + 1]]

    def distinct(self, values: np.ndarray) -> np.ndarray:
        """Number of distinct ``values[members]`` per group (int64), for values that are
        sorted within each group (as the documents are)."""
        v = values[self.members]
        new = np.ones(len(v), dtype=np.int64)
        new[1:] = v[1:] != v[:-1]
        if len(self.texts) == 0:
            return np.zeros(0, np.int64)
        new[self.bounds[:-1]] = 1
        return np.add.reduceat(new, self.bounds[:-1])


def group_exact(rec: np.ndarray, lengths: np.ndarray, blob: np.ndarray, min_count: int) -> Groups:
    """Exact groups of equal n-gram texts occurring at least ``min_count`` times.

    ``rec[i]`` is an occurrence whose text is the ``i``-th of ``(lengths, blob)`` (lengths of
    at least one byte). Records are sorted by hash; only hash runs of ``min_count`` or more are
    compared byte for byte (vectorised against the run's first text; a run with another text
    in it, a hash collision, is split by text in Python), so a collision never merges two
    texts. Returns :class:`Groups` sorted by text; members in (doc, off) order.
    """
    text_start = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1].astype(np.int64), out=text_start[1:])
    order = np.lexsort((rec["off"], rec["doc"], rec["h"]))
    starts, run_len = _runs(rec["h"][order])
    big = run_len >= min_count
    starts, run_len = starts[big], run_len[big]
    member = order[np.repeat(starts, run_len) + _ranges(run_len)]
    leader = order[starts]
    ok = _equal_to_leader(member, np.repeat(leader, run_len), lengths, text_start, blob)
    at = _first(run_len)
    clean = np.add.reduceat(ok.astype(np.int64), at) == run_len if len(ok) else ok
    raw = blob.tobytes()
    lead = leader[clean]
    a, b = text_start[lead], text_start[lead] + lengths[lead]
    texts = [raw[x:y] for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    seg_at, seg_len = at[clean].tolist(), run_len[clean].tolist()
    extra: list[np.ndarray] = []
    base = len(member)
    for s, ln in zip(at[~clean].tolist(), run_len[~clean].tolist(), strict=True):
        groups: dict[bytes, list[int]] = {}
        for i in member[s : s + ln].tolist():
            x = int(text_start[i])
            groups.setdefault(raw[x : x + int(lengths[i])], []).append(i)
        for t, g in groups.items():
            if len(g) >= min_count:
                texts.append(t)
                seg_at.append(base)
                seg_len.append(len(g))
                extra.append(np.asarray(g, dtype=member.dtype))
                base += len(g)
    pool = np.concatenate([member, *extra]) if extra else member
    perm = sorted(range(len(texts)), key=texts.__getitem__)
    sa = np.asarray(seg_at, dtype=np.int64)[perm]
    sl = np.asarray(seg_len, dtype=np.int64)[perm]
    members = pool[np.repeat(sa, sl) + _ranges(sl)]
    bounds = np.append(_first(sl), len(members)) if len(sl) else np.zeros(1, np.int64)
    return Groups([texts[i] for i in perm], members.astype(np.int64), bounds)


def _first(lengths: np.ndarray) -> np.ndarray:
    """Start of each of consecutive segments of these lengths (int64)."""
    first = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=first[1:])
    return first


_NEEDS_ESCAPE = re.compile(rb'[\x00-\x1f"\\]')


def _json_str(text: bytes) -> bytes:
    """``text`` (UTF-8) as a JSON string, as ``json.dumps(..., ensure_ascii=False)`` writes it."""
    if _NEEDS_ESCAPE.search(text) is None:
        return b'"' + text + b'"'
    return json.dumps(text.decode("utf-8"), ensure_ascii=False).encode("utf-8")


def _locations(
    docs: np.ndarray, offs: np.ndarray, last: np.ndarray, keys: list[str]
) -> tuple[bytes, np.ndarray]:
    """The ``["key", offset]`` items of locations as one byte string, each followed by
    ``", "`` unless ``last``; returns ``(bytes, end of each item)`` (int64).

    Each item is laid out in a fixed-width row padded with zero bytes (never part of UTF-8
    text or of a JSON string), and the rows are compressed by dropping the zeros.
    """
    used, inv = np.unique(docs, return_inverse=True)
    kb = [b"[" + _json_str(keys[d].encode("utf-8")) + b", " for d in used.tolist()]
    wk = max(map(len, kb), default=0)
    kmat = np.zeros((len(kb), wk), dtype=np.uint8)
    for i, k in enumerate(kb):
        kmat[i, : len(k)] = np.frombuffer(k, np.uint8)
    rows = np.zeros((len(docs), wk + 13), dtype=np.uint8)
    rows[:, :wk] = kmat[inv]
    x = offs.astype(np.int64)
    nd = 1 + np.searchsorted(10 ** np.arange(1, 10), x, side="right")  # decimal digits
    for col in range(wk + 9, wk - 1, -1):
        rows[:, col] = 48 + x % 10
        x //= 10
    rows[:, wk : wk + 10][np.arange(10) < (10 - nd)[:, None]] = 0  # no leading zeros
    rows[:, wk + 10] = ord("]")
    rows[~last, wk + 11 : wk + 13] = np.frombuffer(b", ", np.uint8)
    keep = rows != 0
    return rows[keep].tobytes(), np.cumsum(keep.sum(axis=1))


def jsonl_rows(
    groups: Groups, doc: np.ndarray, off: np.ndarray, keys: list[str], rows_per_piece: int = 50_000
) -> Iterator[bytes]:
    """The rows of ``groups`` as JSON lines (UTF-8 bytes, ``rows_per_piece`` rows a piece).

    A row is ``{"ngram": text, "count": c, "documents": d, "locations": [[key, offset], ...]}``
    byte for byte as ``json.dumps(row, ensure_ascii=False)`` writes it; ``doc``/``off``: the
    records' document ordinals and word offsets, ``keys``: the key of each document ordinal.
    The locations are formatted with numpy, a Python step is one row.
    """
    docs, offs = doc[groups.members], off[groups.members]
    counts, ndocs = np.diff(groups.bounds).tolist(), groups.distinct(doc).tolist()
    bounds = groups.bounds
    row = b'{"ngram": %b, "count": %d, "documents": %d, "locations": [%b]}\n'
    for g0 in range(0, len(groups), rows_per_piece):
        g1 = min(g0 + rows_per_piece, len(groups))
        a, b = int(bounds[g0]), int(bounds[g1])
        last = np.zeros(b - a, dtype=bool)
        last[bounds[g0 + 1 : g1 + 1] - a - 1] = True
        text, ends = _locations(docs[a:b], offs[a:b], last, keys)
        cut = [0, *ends[bounds[g0 + 1 : g1 + 1] - a - 1].tolist()]
        yield b"".join(
            [
                row % (_json_str(groups.texts[g]), counts[g], ndocs[g],
                       text[cut[g - g0] : cut[g - g0 + 1]])
                for g in range(g0, g1)
            ]
        )  # fmt: skip
