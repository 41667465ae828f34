"""Chunk IDs (DESIGN §1), vectorised with numpy: bytes -> words -> word hashes -> chunk IDs.

The hash is seeded, deterministic and independent of platform and byte order:

* a **word hash** is a simple-tabulation sum: ``sum(T[i mod 256, b_i]) + len * C`` over the
  word's UTF-8 bytes ``b_i`` (mod 2**64), finished with the xxh64 avalanche. The table ``T``
  (256 x 256 uint64) is filled from ``xxh3_64(seed, i, b)``, so every word is hashed in numpy
  without a Python call per word or per chunk;
* a **chunk hash** sorts the ``k`` word hashes of a window (so word order inside a chunk does
  not matter, as with sorting the words), folds them with multiply/xor/avalanche steps and
  keeps the top ``hash_bits`` bits.

:func:`chunk_id` computes the same function in plain Python for one chunk; the tests check
that both agree.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import xxhash

from .text import token_bytes

__all__ = [
    "ChunkedBatch",
    "chunk_batch",
    "chunk_id",
    "hash_chunks",
    "word_hash",
    "word_hashes",
    "word_spans",
]

_M64 = (1 << 64) - 1
_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_LEN = 0x27D4EB2F165667C5

#: bytes that belong to words in :func:`simdask.text.token_bytes` output
_WORD_BYTE = np.zeros(256, dtype=bool)
_WORD_BYTE[ord("0") : ord("9") + 1] = True
_WORD_BYTE[ord("a") : ord("z") + 1] = True
_WORD_BYTE[0x80:] = True


@lru_cache(maxsize=8)
def _table(seed: int) -> np.ndarray:
    """The 256*256 tabulation table for ``seed``, flattened, as uint64."""
    h = xxhash.xxh3_64_intdigest
    sb = seed.to_bytes(8, "little")
    vals = [h(sb + bytes((i, b))) for i in range(256) for b in range(256)]
    t = np.array(vals, dtype=np.uint64)
    t.setflags(write=False)
    return t


def _avalanche(h: np.ndarray) -> np.ndarray:
    """xxh64's final mix, in place on a uint64 array; returns it."""
    h ^= h >> np.uint64(33)
    h *= np.uint64(_P2)
    h ^= h >> np.uint64(29)
    h *= np.uint64(_P3)
    h ^= h >> np.uint64(32)
    return h


def _avalanche_int(h: int) -> int:
    h ^= h >> 33
    h = (h * _P2) & _M64
    h ^= h >> 29
    h = (h * _P3) & _M64
    return h ^ (h >> 32)


def word_spans(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end byte offsets (int64) of the words in a :func:`token_bytes` buffer."""
    isw = _WORD_BYTE[buf].view(np.int8)
    edge = np.diff(isw, prepend=np.int8(0), append=np.int8(0))
    return np.flatnonzero(edge == 1), np.flatnonzero(edge == -1)


def word_hashes(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, seed: int) -> np.ndarray:
    """64-bit hashes (uint64) of the words ``buf[starts[i]:ends[i]]``."""
    n = len(starts)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    lengths = ends - starts
    first = np.zeros(n, dtype=np.int64)
    np.cumsum(lengths[:-1], out=first[1:])
    total = int(first[-1] + lengths[-1])
    # position of every word byte inside its word, and the byte itself
    pos = np.arange(total, dtype=np.int64) - np.repeat(first, lengths)
    src = pos + np.repeat(starts, lengths)
    idx = ((pos & 255) << 8) | buf[src]
    vals = _table(seed)[idx]
    sums = np.add.reduceat(vals, first)
    sums += lengths.astype(np.uint64) * np.uint64(_LEN)
    return _avalanche(sums)


def word_hash(word: str, seed: int = 0) -> int:
    """The hash of one (already normalised) word, in plain Python; equals :func:`word_hashes`."""
    t = _table(seed)
    data = word.encode("utf-8")
    s = sum(int(t[((i & 255) << 8) | b]) for i, b in enumerate(data))
    return _avalanche_int((s + len(data) * _LEN) & _M64)


def _seed_state(seed: int, k: int) -> int:
    return xxhash.xxh3_64_intdigest(b"chunk", seed=seed) ^ k


def hash_chunks(
    hashes: np.ndarray, word_offsets: np.ndarray, k: int, hash_bits: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Chunk IDs of every ``k``-word window inside each document.

    ``hashes``: word hashes (uint64) of all documents, concatenated; ``word_offsets``: int64,
    document ``d``'s words are ``hashes[word_offsets[d]:word_offsets[d+1]]``. Returns
    ``(ids, doc)``: the chunk ID (uint32, ``hash_bits`` bits) of each window and the index of
    its document (int64), windows in order. Windows never cross documents.
    """
    counts = np.diff(word_offsets)
    nwin = np.maximum(counts - k + 1, 0)
    m = int(nwin.sum())
    if m == 0:
        return np.zeros(0, dtype=np.uint32), np.zeros(0, dtype=np.int64)
    doc = np.repeat(np.arange(len(counts), dtype=np.int64), nwin)
    win_first = np.zeros(len(counts), dtype=np.int64)
    np.cumsum(nwin[:-1], out=win_first[1:])
    starts = np.arange(m, dtype=np.int64) - win_first[doc] + word_offsets[:-1][doc]
    win = hashes[starts[:, None] + np.arange(k, dtype=np.int64)]
    win.sort(axis=1)
    h = np.full(m, _seed_state(seed, k), dtype=np.uint64)
    for j in range(k):
        h ^= win[:, j]
        h *= np.uint64(_P1)
        h = (h << np.uint64(31)) | (h >> np.uint64(33))
        h *= np.uint64(_P2)
    _avalanche(h)
    ids = (h >> np.uint64(64 - hash_bits)).astype(np.uint32)
    return ids, doc


def chunk_id(chunk_words: tuple[str, ...] | list[str], hash_bits: int = 28, seed: int = 0) -> int:
    """The chunk ID of one chunk (its words, already normalised), in plain Python."""
    k = len(chunk_words)
    hs = sorted(word_hash(w, seed) for w in chunk_words)
    h = _seed_state(seed, k)
    for x in hs:
        h = ((h ^ x) * _P1) & _M64
        h = ((h << 31) | (h >> 33)) & _M64
        h = (h * _P2) & _M64
    return _avalanche_int(h) >> (64 - hash_bits)


class ChunkedBatch:
    """The chunk sets of a batch of documents.

    ``chunk_ids`` (uint32) and ``doc`` (int64, index into the batch) list each document's
    *distinct* chunk IDs, sorted by ``(doc, chunk_id)``; ``n_words`` and ``n_chunks`` (int64)
    give per document its word count and ``|A|``.
    """

    __slots__ = ("chunk_ids", "doc", "n_chunks", "n_words")

    def __init__(self, chunk_ids, doc, n_words, n_chunks):
        self.chunk_ids = chunk_ids
        self.doc = doc
        self.n_words = n_words
        self.n_chunks = n_chunks


def chunk_batch(texts: list[str], k: int = 5, hash_bits: int = 28, seed: int = 0) -> ChunkedBatch:
    """Words -> chunk IDs -> distinct chunk IDs per document, for a batch of texts."""
    parts = [token_bytes(t) for t in texts]
    buf = np.frombuffer(b" ".join(parts) + b" ", dtype=np.uint8)
    doc_starts = np.zeros(len(parts), dtype=np.int64)
    if parts:
        np.cumsum([len(p) + 1 for p in parts[:-1]], out=doc_starts[1:])
    starts, ends = word_spans(buf)
    hashes = word_hashes(buf, starts, ends, seed)
    word_offsets = np.searchsorted(starts, np.append(doc_starts, len(buf)))
    n_words = np.diff(word_offsets)
    ids, doc = hash_chunks(hashes, word_offsets, k, hash_bits, seed)
    key = (doc.astype(np.uint64) << np.uint64(32)) | ids
    key.sort()
    if len(key):
        keep = np.empty(len(key), dtype=bool)
        keep[0] = True
        np.not_equal(key[1:], key[:-1], out=keep[1:])
        key = key[keep]
    doc_u = (key >> np.uint64(32)).astype(np.int64)
    return ChunkedBatch(
        chunk_ids=(key & np.uint64(0xFFFFFFFF)).astype(np.uint32),
        doc=doc_u,
        n_words=n_words,
        n_chunks=np.bincount(doc_u, minlength=len(texts)).astype(np.int64),
    )
