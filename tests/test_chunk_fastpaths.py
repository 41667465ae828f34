"""The chunk stage's fast paths (issue 13, chunkfast) against the reference paths they replace.

* :func:`~simdask.kernels.words.normal_bytes` + :func:`~simdask.kernels.words.utf8_word_spans`
  (words found in UTF-8 bytes, code points decoded in numpy) against the regex reference
  :func:`~simdask.kernels.words.words` and against the previous pipeline
  (:func:`~simdask.kernels.words.token_bytes` + :func:`~simdask.kernels.hashing.word_spans`),
  on arbitrary Unicode including lone surrogates and 4-byte characters;
* the partitioned sort of :func:`~simdask.kernels.postings.sort_columns` (64-bit chunk IDs
  beside up to 16 excess bits of doc IDs) against Python's ``sorted(set(...))``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.kernels.hashing import (
    chunk_batch,
    chunk_id,
    hash_chunks,
    word_hashes,
    word_spans,
)
from simdask.kernels.postings import sort_columns
from simdask.kernels.words import chunks, normal_bytes, token_bytes, utf8_word_spans, words

pytestmark = pytest.mark.unit

_tricky = st.sampled_from(
    [
        *["Ab", "x_y", "ÉCOLE", "ß", "ﬁ", "™", "①", "Ⅻ", "漢字", "😀", "𝔘", "١٢٣", "e\u0301"],
        *["\u00a0", "\u2019", "\u2014", "\ufeff", "\ud800", "\udfff", "\U0010ffff", "İ", "ǅ"],
        *[" ", ",", "_", "\n", "\x00", "\x7f", "\x80", "é" * 40, "a" * 70],
    ]
)
#: any code point, lone surrogates included (a ``str`` may hold them; they are no words)
any_unicode = st.one_of(
    st.text(st.characters(exclude_categories=()), max_size=200),
    st.lists(_tricky, max_size=40).map("".join),
    st.lists(st.one_of(_tricky, st.sampled_from(["word", "Two", "3", " ", ". "])), max_size=60).map(
        "".join
    ),
)


def fast_words(texts: list[str]) -> list[list[bytes]]:
    """The words of each text as the fast path finds them (texts joined by spaces, as
    :func:`~simdask.kernels.hashing.window_chunks` joins them)."""
    parts = [normal_bytes(t) for t in texts]
    buf = np.frombuffer(b" ".join(parts) + b" ", dtype=np.uint8)
    starts, ends = utf8_word_spans(buf)
    out, pos, i = [], 0, 0
    for p in parts:
        end = pos + len(p)
        mine = []
        while i < len(starts) and starts[i] < end:
            assert ends[i] <= end  # a word never crosses into the next text
            mine.append(buf[starts[i] : ends[i]].tobytes())
            i += 1
        out.append(mine)
        pos = end + 1
    return out


@settings(max_examples=400, deadline=None)
@given(st.lists(any_unicode, min_size=1, max_size=5))
def test_utf8_word_spans_find_the_regex_words(texts):
    assert fast_words(texts) == [[w.encode("utf-8") for w in words(t)] for t in texts]


@settings(max_examples=300, deadline=None)
@given(st.lists(any_unicode, min_size=1, max_size=4), st.sampled_from([28, 32, 40, 64]))
def test_fast_chunk_ids_equal_the_previous_pipeline_and_the_reference(texts, bits):
    k, seed = 3, 5
    cb = chunk_batch(texts, k, bits, seed)
    # the previous pipeline: token_bytes (regex words joined by spaces) + word_spans
    parts = [token_bytes(t) for t in texts]
    buf = np.frombuffer(b" ".join(parts) + b" ", dtype=np.uint8)
    starts, ends = word_spans(buf)
    lens = np.array([len(p) + 1 for p in parts], dtype=np.int64)
    part_starts = np.concatenate([[0], np.cumsum(lens)])
    offsets = np.searchsorted(starts, part_starts)
    ids, doc = hash_chunks(word_hashes(buf, starts, ends, seed), offsets, k, bits, seed)
    prev = sorted(set(zip(ids.tolist(), doc.tolist(), strict=True)))
    got = list(zip(cb.chunk_ids.tolist(), cb.doc.tolist(), strict=True))
    assert got == prev
    ref = sorted({(chunk_id(c, bits, seed), d) for d, t in enumerate(texts) for c in chunks(t, k)})
    assert got == ref
    assert cb.n_words.tolist() == [len(words(t)) for t in texts]


def test_every_code_point_is_classified_as_the_pattern_does():
    """All 1,114,112 code points, each alone between spaces: a word exactly when the regex
    matches it (the table is filled from the pattern as code points are met)."""
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    text = " ".join(map(chr, cps)) + " \ud800 \udbff \udfff"
    buf = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    starts, ends = utf8_word_spans(buf)
    got = {buf[s:e].tobytes().decode("utf-8") for s, e in zip(starts, ends, strict=True)}
    assert all(len(w) == 1 for w in got)
    pattern = re.compile(r"[^\W_]")
    assert got == {chr(c) for c in cps if pattern.fullmatch(chr(c))}


#: 64-bit chunk IDs built to cross the partitions: equal low bits under different top bits
#: (one doc apart or the same doc), and IDs at both ends of the range
_chunk = st.one_of(
    st.integers(0, 2**64 - 1),
    st.builds(lambda top, low: (top << 52) | low, st.integers(0, 4095), st.integers(0, 3)),
    st.integers(2**64 - 4, 2**64 - 1),
    st.integers(0, 3),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_chunk, st.integers(0, 2**16 - 1)), max_size=300),
    st.sampled_from([1, 7, 2**12 - 1, 2**16 - 1]),
    st.booleans(),
)
def test_partitioned_sort_equals_python(pairs, doc_max, distinct):
    pairs = [(c, d % (doc_max + 1)) for c, d in pairs]
    pairs += pairs[: len(pairs) // 3]  # duplicates
    c = np.array([p[0] for p in pairs], dtype=np.uint64)
    d = np.array([p[1] for p in pairs], dtype=np.uint32)
    got_c, got_d = sort_columns(c, d, distinct)
    assert got_c.dtype == np.uint64 and got_d.dtype == np.uint32
    want = sorted(set(pairs)) if distinct else sorted(pairs)
    assert list(zip(got_c.tolist(), got_d.tolist(), strict=True)) == want


def test_partitioned_sort_large_batch_equals_lexsort():
    """A batch's shape: 400k 64-bit IDs, many shared, doc IDs up to 4,999 (13 bits: 8,192
    partitions)."""
    rng = np.random.default_rng(3)
    c = rng.integers(0, 2**64, 400_000, dtype=np.uint64, endpoint=False)
    c[::5] = c[1::5]
    d = np.sort(rng.integers(0, 5000, len(c))).astype(np.int64)
    got_c, got_d = sort_columns(c, d, distinct=True)
    order = np.lexsort((d, c))
    sc, sd = c[order], d[order]
    keep = np.concatenate([[True], (sc[1:] != sc[:-1]) | (sd[1:] != sd[:-1])])
    assert np.array_equal(got_c, sc[keep]) and np.array_equal(got_d, sd[keep])


@pytest.mark.parametrize("doc_max", [1, 7, 4095, 2**16 - 1])
def test_partitioned_sort_keeps_equal_keys_of_neighbouring_partitions(doc_max):
    """IDs that differ only in the top bits the partitions are cut by have equal packed keys in
    neighbouring partitions (the last of one, the first of the next): both are kept."""
    p = doc_max.bit_length()  # 64-bit IDs: the partitions are cut by the top p bits
    tops = sorted({0, 1, 2 ** (p - 1), 2**p - 1})
    pairs = [((t << (64 - p)) | 5, doc_max) for t in tops]  # one packed key in all
    pairs += [((t << (64 - p)) | low, d) for t in tops for low in (0, 5) for d in (0, doc_max)]
    for part in (pairs[: len(tops)], pairs):
        c = np.array([x for x, _ in part] * 2, dtype=np.uint64)
        d = np.array([y for _, y in part] * 2, dtype=np.uint32)
        got_c, got_d = sort_columns(c, d, distinct=True)
        assert list(zip(got_c.tolist(), got_d.tolist(), strict=True)) == sorted(set(part))


def _ref_window_ids(hashes, offsets, k, bits, seed, skip):
    """hash_chunks in plain Python: every window inside a document, sorted word hashes folded
    from the seed state (the scalar functions of the module)."""
    from simdask.kernels.hashing import _avalanche_int, _seed_state, _step_int

    ids, docs = [], []
    for d in range(len(offsets) - 1):
        for s in range(int(offsets[d]), int(offsets[d + 1]) - k + 1):
            if skip is not None and all(skip[s : s + k]):
                continue
            h = _seed_state(seed, k)
            for x in sorted(int(v) for v in hashes[s : s + k]):
                h = _step_int(h, x)
            ids.append(_avalanche_int(h) >> (64 - bits))
            docs.append(d)
    return ids, docs


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 12), min_size=1, max_size=12),  # words per document
    st.integers(1, 6),
    st.sampled_from([20, 32, 33, 64]),
    st.integers(0, 3),
    st.one_of(st.none(), st.integers(0, 2**32)),
)
def test_hash_chunks_equals_python_windows(counts, k, bits, seed, skip_seed):
    """Contiguous windows (hashed over slices) and gapped ones (short documents, skipped
    words: gathered) give the IDs of the scalar reference, in order."""
    rng = np.random.default_rng(sum(counts) + k)
    hashes = rng.integers(0, 2**64, sum(counts), dtype=np.uint64, endpoint=False)
    hashes[::3] = hashes[:1].sum()  # equal word hashes inside windows
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    skip = None
    if skip_seed is not None:
        skip = np.random.default_rng(skip_seed).random(len(hashes)) < 0.6
    ids, doc = hash_chunks(hashes, offsets, k, bits, seed, skip)
    want_ids, want_docs = _ref_window_ids(hashes, offsets, k, bits, seed, skip)
    assert ids.tolist() == want_ids and doc.tolist() == want_docs


@settings(max_examples=200, deadline=None)
@given(
    st.lists(any_unicode, min_size=0, max_size=8),
    st.sampled_from([1, 7, 40, 300]),
    st.integers(1, 5),
    st.booleans(),
)
def test_blocks_of_texts_change_nothing(texts, block, k, spans):
    """window_chunks hashes blocks of about BLOCK_BYTES of text at a time: tiny blocks (one
    text each, several texts, a text larger than the block) give the arrays of one block."""
    from simdask.kernels import hashing

    excluded = None
    if spans:  # the first half of each text excluded (spans on a character boundary)
        excluded = [[(0, len(t) // 2)] if len(t) > 1 else [] for t in texts]
    saved = hashing.BLOCK_BYTES
    try:
        hashing.BLOCK_BYTES = 1 << 40
        want = hashing.window_chunks(texts, k, 64, 1, excluded_spans=excluded)
        hashing.BLOCK_BYTES = block
        got = hashing.window_chunks(texts, k, 64, 1, excluded_spans=excluded)
    finally:
        hashing.BLOCK_BYTES = saved
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()
    assert len(want[2]) == len(texts)
