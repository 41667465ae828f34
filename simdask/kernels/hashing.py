"""Chunk IDs (DESIGN §1), vectorised with numpy: bytes -> words -> word hashes -> chunk IDs.

The hash is seeded, deterministic and independent of platform and byte order:

* a **word hash** reads the word's UTF-8 bytes as little-endian 8-byte groups (zero padded)
  and folds them into a seeded 64-bit state with a bijective multiply-rotate-multiply step,
  then applies the xxh64 avalanche. One gather per group of every word (from an overlapping
  uint64 view of the bytes), all in numpy: no Python call per word or per chunk. Words
  longer than 64 bytes (rare: URLs, base64) are hashed with ``xxh3_64`` instead, one call each;
* a **chunk hash** sorts the ``k`` word hashes of a window (so word order inside a chunk does
  not matter, as with sorting the words), folds them with the same step and keeps the top
  ``hash_bits`` bits after the avalanche.

:func:`word_hash` and :func:`chunk_id` compute the same functions in plain Python for one
word or chunk; the tests check that both agree.
"""

from __future__ import annotations

import numpy as np
import xxhash

from simdask.kernels.postings import (
    chunk_dtype,
    pack_pairs,
    pair_chunks,
    pair_docs,
    sort_columns,
    sort_pairs,
)
from simdask.kernels.words import normal_bytes, utf8_word_spans

__all__ = [
    "ChunkedBatch",
    "chunk_batch",
    "chunk_id",
    "hash_chunks",
    "window_chunks",
    "word_hash",
    "word_hashes",
    "word_spans",
]

_M64 = (1 << 64) - 1
_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_LEN = 0x27D4EB2F165667C5
#: words longer than this many bytes are hashed with xxh3_64 (one Python call each)
LONG_WORD = 64

#: bytes that belong to words in :func:`simdask.kernels.words.token_bytes` output
_WORD_BYTE = np.zeros(256, dtype=bool)
_WORD_BYTE[ord("0") : ord("9") + 1] = True
_WORD_BYTE[ord("a") : ord("z") + 1] = True
_WORD_BYTE[0x80:] = True


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


def _step(h: np.ndarray, x: np.ndarray) -> np.ndarray:
    """One bijective fold of ``x`` into the state ``h`` (uint64 arrays); returns a new array."""
    h = h ^ x
    h *= np.uint64(_P1)
    h = (h << np.uint64(31)) | (h >> np.uint64(33))
    h *= np.uint64(_P2)
    return h


def _step_into(h: np.ndarray, x: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """:func:`_step` in place on ``h`` (``tmp``: scratch of the same length): no new arrays,
    which at millions of words costs as much as the arithmetic (fresh pages)."""
    np.bitwise_xor(h, x, out=h)
    np.multiply(h, np.uint64(_P1), out=h)
    np.right_shift(h, np.uint64(33), out=tmp)
    np.left_shift(h, np.uint64(31), out=h)
    np.bitwise_or(h, tmp, out=h)
    np.multiply(h, np.uint64(_P2), out=h)
    return h


def _avalanche_into(h: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """:func:`_avalanche` with a scratch array ``tmp`` (no new arrays); returns ``h``."""
    for shift, prime in ((33, _P2), (29, _P3), (32, None)):
        np.right_shift(h, np.uint64(shift), out=tmp)
        np.bitwise_xor(h, tmp, out=h)
        if prime is not None:
            np.multiply(h, np.uint64(prime), out=h)
    return h


def _step_int(h: int, x: int) -> int:
    h = ((h ^ x) * _P1) & _M64
    h = ((h << 31) | (h >> 33)) & _M64
    return (h * _P2) & _M64


def _word_state(seed: int) -> int:
    return xxhash.xxh3_64_intdigest(b"word", seed=seed)


def word_spans(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end byte offsets (int64) of the words in a
    :func:`~simdask.kernels.words.token_bytes` buffer."""
    isw = _WORD_BYTE[buf].view(np.int8)
    edge = np.diff(isw, prepend=np.int8(0), append=np.int8(0))
    return np.flatnonzero(edge == 1), np.flatnonzero(edge == -1)


#: mask of the first ``r`` bytes of a little-endian uint64, at index ``min(r, 8)``
_BYTE_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(9)], dtype=np.uint64)


def word_hashes(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, seed: int) -> np.ndarray:
    """64-bit hashes (uint64) of the words ``buf[starts[i]:ends[i]]`` (see module docstring).

    The 8-byte groups are gathered from an overlapping view of the buffer (a uint64 at every
    byte offset, little-endian), masked past the word's end, and folded in place; a word's
    ``g``-th group is read only for the words longer than ``8 g`` bytes."""
    n = len(starts)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    lengths = ends - starts
    padded = np.zeros(len(buf) + 8, dtype=np.uint8)
    padded[: len(buf)] = buf
    at = np.ndarray((len(buf) + 1,), dtype="<u8", buffer=padded, strides=(1,))
    h = lengths.astype(np.uint64)
    np.multiply(h, np.uint64(_LEN), out=h)
    np.bitwise_xor(h, np.uint64(_word_state(seed)), out=h)
    tmp = np.empty(n, dtype=np.uint64)
    long_words = lengths > LONG_WORD
    act = np.flatnonzero(~long_words) if long_words.any() else None  # None: every word
    for g in range(-(-min(int(lengths.max()), LONG_WORD) // 8)):
        if act is None:  # g == 0, no long word: the whole arrays, no index
            grp = at[starts].astype(np.uint64, copy=False)
            grp &= _BYTE_MASKS[np.minimum(lengths, 8)]
            _step_into(h, grp, tmp)
            act = np.flatnonzero(lengths > 8)
            continue
        if g:
            act = act[lengths[act] > 8 * g]
        if len(act) == 0:
            break
        grp = at[starts[act] + 8 * g].astype(np.uint64, copy=False)
        grp &= _BYTE_MASKS[np.minimum(lengths[act] - 8 * g, 8)]
        h[act] = _step_into(h[act], grp, tmp[: len(act)])
    _avalanche_into(h, tmp)
    for j in np.flatnonzero(long_words).tolist():
        h[j] = xxhash.xxh3_64_intdigest(buf[starts[j] : ends[j]].tobytes(), seed=seed)
    return h


def word_hash(word: str, seed: int = 0) -> int:
    """The hash of one (already normalised) word, in plain Python; equals :func:`word_hashes`."""
    data = word.encode("utf-8")
    if len(data) > LONG_WORD:
        return xxhash.xxh3_64_intdigest(data, seed=seed)
    h = _word_state(seed) ^ ((len(data) * _LEN) & _M64)
    for g in range(0, len(data), 8):
        h = _step_int(h, int.from_bytes(data[g : g + 8], "little"))
    return _avalanche_int(h)


def _seed_state(seed: int, k: int) -> int:
    return xxhash.xxh3_64_intdigest(b"chunk", seed=seed) ^ k


def _sorted_columns(cols: list[np.ndarray]) -> list[np.ndarray]:
    """Sort ``k`` equally long columns element-wise (row ``i`` of the result is sorted); the
    input columns are not changed.

    An odd-even transposition network of ``np.minimum``/``np.maximum`` on copies of the columns,
    in place with one scratch array, for small ``k`` (twice as fast as ``np.sort(axis=1)`` on
    5 columns), ``np.sort`` beyond.
    """
    k = len(cols)
    if k > 12:
        srt = np.sort(np.stack(cols, axis=1), axis=1)
        return [srt[:, j] for j in range(k)]
    cols = [np.array(c, dtype=np.uint64) for c in cols]
    tmp = np.empty(len(cols[0]), dtype=np.uint64)
    for r in range(k):
        for i in range(r % 2, k - 1, 2):
            np.minimum(cols[i], cols[i + 1], out=tmp)
            np.maximum(cols[i], cols[i + 1], out=cols[i + 1])
            cols[i], tmp = tmp, cols[i]
    return cols


def _window_hashes(cols: list[np.ndarray], seed: int) -> np.ndarray:
    """The 64-bit chunk hash of each row of the ``k`` columns of word hashes (before the
    truncation to ``hash_bits``): sorted, folded from the seed state, avalanched."""
    cols = _sorted_columns(cols)
    tmp = np.empty(len(cols[0]), dtype=np.uint64)
    h = cols[0]
    _step_into(h, np.uint64(_seed_state(seed, len(cols))), tmp)  # = _step(state, cols[0])
    for col in cols[1:]:
        _step_into(h, col, tmp)
    return _avalanche_into(h, tmp)


def hash_chunks(
    hashes: np.ndarray,
    word_offsets: np.ndarray,
    k: int,
    hash_bits: int,
    seed: int,
    skip_words: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Chunk IDs of every ``k``-word window inside each document.

    ``hashes``: word hashes (uint64) of all documents, concatenated; ``word_offsets``: int64,
    document ``d``'s words are ``hashes[word_offsets[d]:word_offsets[d+1]]``. Returns
    ``(ids, doc)``: the chunk ID (``hash_bits`` bits; uint32 up to 32 bits, else uint64) of
    each window and the index of its document (int64), windows in order. Windows never cross
    documents. ``skip_words`` (bool per word, optional): a window whose ``k`` words are all
    marked is left out (words inside an excluded quotation or reference list,
    :mod:`simdask.kernels.exclusions`).
    """
    dtype = chunk_dtype(hash_bits)
    counts = np.diff(word_offsets)
    nwin = np.maximum(counts - k + 1, 0)
    m = int(nwin.sum())
    if m == 0:
        return np.zeros(0, dtype=dtype), np.zeros(0, dtype=np.int64)
    doc = np.repeat(np.arange(len(counts), dtype=np.int64), nwin)
    win_first = np.zeros(len(counts), dtype=np.int64)
    np.cumsum(nwin[:-1], out=win_first[1:])
    starts = np.arange(m, dtype=np.int64) - win_first[doc] + word_offsets[:-1][doc]
    if skip_words is not None and len(skip_words):
        marked = np.zeros(len(skip_words) + 1, dtype=np.int64)
        np.cumsum(skip_words, out=marked[1:])
        keep = marked[starts + k] - marked[starts] < k
        starts, doc = starts[keep], doc[keep]
        m = len(starts)
        if m == 0:
            return np.zeros(0, dtype=dtype), doc
    lo, hi = int(starts[0]), int(starts[-1]) + 1
    if hi - lo <= m + m // 4:  # windows nearly contiguous: hash every position, no gathers
        h = _window_hashes([hashes[lo + j : hi + j] for j in range(k)], seed)
        if hi - lo != m:
            h = h[starts - lo]
    else:
        h = _window_hashes([hashes[starts + j] for j in range(k)], seed)
    if hash_bits < 64:
        h >>= np.uint64(64 - hash_bits)
    return h.astype(dtype, copy=False), doc


def chunk_id(chunk_words: tuple[str, ...] | list[str], hash_bits: int = 28, seed: int = 0) -> int:
    """The chunk ID of one chunk (its words, already normalised), in plain Python."""
    k = len(chunk_words)
    hs = sorted(word_hash(w, seed) for w in chunk_words)
    h = _seed_state(seed, k)
    for x in hs:
        h = _step_int(h, x)
    return _avalanche_int(h) >> (64 - hash_bits)


class ChunkedBatch:
    """The chunk sets of a batch of documents.

    ``chunk_ids`` (uint32; uint64 above 32 bits) and ``doc`` (int64, index into the batch)
    list each document's
    *distinct* chunk IDs, sorted by ``(chunk_id, doc)`` (the order of a shard's postings);
    ``n_words`` and ``n_chunks`` (int64) give per document its word count and ``|A|``.
    """

    __slots__ = ("chunk_ids", "doc", "n_chunks", "n_words")

    def __init__(
        self, chunk_ids: np.ndarray, doc: np.ndarray, n_words: np.ndarray, n_chunks: np.ndarray
    ) -> None:
        self.chunk_ids = chunk_ids
        self.doc = doc
        self.n_words = n_words
        self.n_chunks = n_chunks


def window_chunks(
    texts: list[str],
    k: int = 5,
    hash_bits: int = 28,
    seed: int = 0,
    *,
    excluded_spans: list[list[tuple[int, int]]] | None = None,
    drop_ids: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ids, doc, n_words)``: the chunk ID of every ``k``-word window of each text, in
    document order, repeats kept (what a MinHash signature needs: no sort), the index of its
    text (int64) and each text's word count. Exclusions as for :func:`chunk_batch`, whose
    distinct sorted sets are these windows' IDs."""
    if excluded_spans is None:
        parts = [normal_bytes(t) for t in texts]
        first_part = np.arange(len(parts) + 1, dtype=np.int64)
        inside = None
    else:
        parts, inside, first_part = _split_parts(texts, excluded_spans)
    part_end = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter((len(p) + 1 for p in parts), np.int64, len(parts)), out=part_end[1:])
    text_end = part_end[first_part]
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    t0 = 0
    while t0 < len(texts) or not out:  # blocks of whole texts of about BLOCK_BYTES
        t1 = max(t0 + 1, int(np.searchsorted(text_end, text_end[t0] + BLOCK_BYTES, "right")) - 1)
        t1 = min(t1, len(texts))
        p0, p1 = int(first_part[t0]), int(first_part[t1])
        ids, doc, n_words = _window_block(
            parts[p0:p1],
            first_part[t0 : t1 + 1] - p0,
            None if inside is None else inside[p0:p1],
            k,
            hash_bits,
            seed,
        )
        out.append((ids, doc + t0, n_words))
        t0 = t1
    ids, doc, n_words = (np.concatenate(a) for a in zip(*out, strict=True))
    if drop_ids is not None and len(drop_ids) and len(ids):
        keep = ~_in_sorted(ids, drop_ids)
        ids, doc = ids[keep], doc[keep]
    return ids, doc, n_words


#: bytes of normalised text chunked at a time by :func:`window_chunks`: the arrays of a block
#: (a few per word and per window) stay in the CPU cache instead of costing fresh pages
BLOCK_BYTES = 1 << 18


def _window_block(
    parts: list[bytes],
    first_part: np.ndarray,
    inside: np.ndarray | None,
    k: int,
    hash_bits: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`window_chunks` of the texts whose parts are ``parts`` (text ``i``: parts
    ``first_part[i]:first_part[i+1]``; ``inside``: per part, whether it is excluded)."""
    lens = np.fromiter((len(p) + 1 for p in parts), np.int64, len(parts))
    buf = np.frombuffer(b" ".join(parts) + b" ", dtype=np.uint8)
    part_starts = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(lens, out=part_starts[1:])
    part_starts[-1] = len(buf)
    starts, ends = utf8_word_spans(buf)
    hashes = word_hashes(buf, starts, ends, seed)
    part_words = np.searchsorted(starts, part_starts)
    word_offsets = part_words[first_part]
    skip = None if inside is None else np.repeat(inside, np.diff(part_words))
    ids, doc = hash_chunks(hashes, word_offsets, k, hash_bits, seed, skip)
    return ids, doc, np.diff(word_offsets)


def chunk_batch(
    texts: list[str],
    k: int = 5,
    hash_bits: int = 28,
    seed: int = 0,
    *,
    excluded_spans: list[list[tuple[int, int]]] | None = None,
    drop_ids: np.ndarray | None = None,
) -> ChunkedBatch:
    """Words -> chunk IDs -> distinct chunk IDs per document, for a batch of texts.

    Exclusions (issue 16; :mod:`simdask.kernels.exclusions` says what they are):
    ``excluded_spans``: per text, sorted non-overlapping character spans ``[start, end)``
    (quotations, the reference list) whose words are excluded: a window of ``k`` words all
    inside them has no chunk (a window with a word of the document's own keeps its chunk).
    Span boundaries lie between words (the spans start and end at quotation marks and line
    breaks), so the words are those of the whole text. ``drop_ids``: sorted chunk IDs left out
    of every chunk set (a template's chunks). ``n_chunks`` counts what is left.
    """
    ids, doc, n_words = window_chunks(
        texts, k, hash_bits, seed, excluded_spans=excluded_spans, drop_ids=drop_ids
    )
    if ids.dtype == np.uint64:  # wide IDs: sorted as two columns
        chunk_ids, doc_u = sort_columns(ids, doc, distinct=True)
        doc_u = doc_u.astype(np.int64)
    else:
        key = sort_pairs(pack_pairs(ids, doc), distinct=True)
        chunk_ids, doc_u = pair_chunks(key), pair_docs(key).astype(np.int64)
    return ChunkedBatch(
        chunk_ids=chunk_ids,
        doc=doc_u,
        n_words=n_words,
        n_chunks=np.bincount(doc_u, minlength=len(texts)).astype(np.int64),
    )


def _split_parts(
    texts: list[str], spans: list[list[tuple[int, int]]]
) -> tuple[list[bytes], np.ndarray, np.ndarray]:
    """Each text cut at its span boundaries: the parts' token bytes, whether each part is
    inside a span, and the index of each text's first part (then the part count)."""
    if len(spans) != len(texts):
        raise ValueError(f"expected spans for each of {len(texts)} texts, found {len(spans)}")
    parts: list[bytes] = []
    inside: list[bool] = []
    first = [0]
    for text, sp in zip(texts, spans, strict=True):
        pos = 0
        for s, e in sp:
            parts += [normal_bytes(text[pos:s]), normal_bytes(text[s:e])]
            inside += [False, True]
            pos = e
        parts.append(normal_bytes(text[pos:]))
        inside.append(False)
        first.append(len(parts))
    return parts, np.array(inside, dtype=bool), np.array(first, dtype=np.int64)


def _in_sorted(values: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Whether each of ``values`` is in the sorted array ``table`` (bool array)."""
    table = np.asarray(table).astype(values.dtype, copy=False)
    pos = np.searchsorted(table, values)
    pos[pos == len(table)] = 0
    return table[pos] == values
