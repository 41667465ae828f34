"""Repeated n-gram kernels (simdask.kernels.ngrams) against brute-force Counters."""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.kernels.ngrams import (
    _equal_to_leader,
    _json_str,
    gather_slices,
    group_exact,
    jsonl_rows,
    ngram_records,
    ngram_texts,
    range_of,
    repeated_by_hash,
    split_by_range,
    tokenize,
)
from simdask.kernels.words import words

pytestmark = pytest.mark.unit


def brute_force(texts: list[str], n: int, m: int) -> dict[str, list[tuple[int, int]]]:
    """``{ngram: [(doc, offset), ...]}`` of every n-gram occurring >= m times (Python only)."""
    locs: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for d, t in enumerate(texts):
        ws = words(t)
        for i in range(len(ws) - n + 1):
            locs[" ".join(ws[i : i + n])].append((d, i))
    return {g: v for g, v in locs.items() if len(v) >= m}


def gen_texts(seed: int, n_docs: int = 12, vocab: int = 8) -> list[str]:
    """Random texts of a small vocabulary (with case, accents, punctuation), a passage of 8
    words planted in a few of them so that long n-grams repeat too."""
    rng = random.Random(seed)
    vocab_words = ["a", "Bb", "ccc", "Ünï", "dd-ee", "x1", "straße", "ΣΑΣ", "w"][:vocab]
    docs = [rng.choices(vocab_words, k=rng.randint(0, 30)) for _ in range(n_docs)]
    passage = rng.choices(vocab_words, k=8)
    for d in rng.sample(range(n_docs), 6):
        at = rng.randint(0, len(docs[d]))
        docs[d][at:at] = passage
    return [", ".join(d) + "." for d in docs]


def run_kernels(texts, n, m, bits):
    tok = tokenize(texts)
    rec = ngram_records(tok, n, bits, 0)
    sel = repeated_by_hash(rec, m)
    lengths, blob = ngram_texts(tok, sel["doc"], sel["off"], n)
    return {
        t.decode(): [(int(sel["doc"][i]), int(sel["off"][i])) for i in idx]
        for t, idx in group_exact(sel, lengths, blob, m)
    }


@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("m", [2, 3, 5])
@pytest.mark.parametrize("bits", [64, 56, 3, 1])
def test_two_pass_kernels_equal_brute_force(n, m, bits):
    texts = gen_texts(n * 100 + m)
    want = brute_force(texts, n, m)
    assert want  # the generator's small vocabulary makes repeats: the comparison is not vacuous
    assert run_kernels(texts, n, m, bits) == want


def test_narrow_hash_collides_and_pass_one_keeps_false_candidates():
    texts = gen_texts(7)
    tok = tokenize(texts)
    rec = ngram_records(tok, 3, 2, 0)
    distinct = Counter(" ".join(words(t)[i : i + 3]) for t in texts for i in range(30))
    assert len(np.unique(rec["h"])) <= 4 < len(distinct)  # collisions are certain
    sel = repeated_by_hash(rec, 2)
    true_occurrences = sum(len(v) for v in brute_force(texts, 3, 2).values())
    assert len(sel) > true_occurrences  # pass 1 over-selects; group_exact must remove these


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(["a", "b", "Ç", "dé"]), max_size=25), max_size=6),
    st.integers(1, 4),
    st.integers(2, 4),
    st.integers(1, 64),
)
def test_kernels_property(docs, n, m, bits):
    texts = [" ".join(d) for d in docs]
    assert run_kernels(texts, n, m, bits) == brute_force(texts, n, m)


def test_ngrams_in_text_order_not_sorted():
    texts = ["alpha beta gamma", "gamma beta alpha", "alpha beta gamma!"]
    got = run_kernels(texts, 3, 2, 64)
    assert got == {"alpha beta gamma": [(0, 0), (2, 0)]}


def test_ngrams_do_not_cross_documents():
    texts = ["x y", "z", "x y", "z"]  # "y z" would repeat if documents were joined
    assert run_kernels(texts, 2, 2, 64) == {"x y": [(0, 0), (2, 0)]}


def test_split_by_range_partitions_by_top_bits():
    tok = tokenize(gen_texts(3))
    rec = ngram_records(tok, 2, 60, 0)
    parts = split_by_range(rec, range_of(rec["h"], 60, 3), 8)
    assert sum(len(p) for p in parts) == len(rec)
    for r, p in enumerate(parts):
        assert np.all((p["h"] >> np.uint64(57)) == r)


def test_tokenize_buffer_is_the_words_each_followed_by_one_space():
    texts = [*gen_texts(11), "", "  --  ", "Ünï, straße!  x1\n\tdd-ee", "trailing word"]
    tok = tokenize(texts)
    ws = [w for t in texts for w in words(t)]
    assert tok.buf.tobytes() == b"".join(w.encode() + b" " for w in ws)
    spans = zip(tok.start, tok.length, strict=True)
    assert [tok.buf[a : a + n].tobytes().decode() for a, n in spans] == ws
    assert np.diff(tok.word_offsets).tolist() == [len(words(t)) for t in texts]


@settings(max_examples=60, deadline=None)
@given(
    st.binary(min_size=1, max_size=60),
    st.lists(st.tuples(st.integers(0, 59), st.integers(0, 12)), max_size=30),
    st.integers(1, 40),
)
def test_gather_slices_equals_concatenation(src, slices, block):
    slices = [(a % len(src), min(n, len(src) - a % len(src))) for a, n in slices]
    lo = np.array([a for a, _ in slices], dtype=np.int64)
    ln = np.array([n for _, n in slices], dtype=np.int64)
    got = gather_slices(np.frombuffer(src, np.uint8), lo, ln, block=block)
    assert got.tobytes() == b"".join(src[a : a + n] for a, n in slices)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from([b"ab", b"abc", b"abd", b"b", b"ab ab", b"x" * 20]), min_size=1),
    st.data(),
    st.integers(1, 64),
)
def test_equal_to_leader_compares_bytes(texts, data, block):
    lengths = np.array([len(t) for t in texts], dtype=np.uint32)
    start = np.concatenate([[0], np.cumsum(lengths[:-1].astype(np.int64))]).astype(np.int64)
    blob = np.frombuffer(b"".join(texts), np.uint8)
    idx = st.integers(0, len(texts) - 1)
    pairs = data.draw(st.lists(st.tuples(idx, idx), max_size=20))
    member = np.array([a for a, _ in pairs], dtype=np.int64)
    leader = np.array([b for _, b in pairs], dtype=np.int64)
    got = _equal_to_leader(member, leader, lengths, start, blob, block=block)
    assert got.tolist() == [texts[a] == texts[b] for a, b in pairs]


def test_jsonl_rows_are_byte_identical_to_json_dumps():
    keys = ["plain", 'quo"te', "back\\slash", "ünïcode ключ", "tab\tand\nnewline", "\x01ctl"]
    texts = ["alpha beta", "x1 straße", "Ünï dd ee", "w w w"] * 3
    rng = np.random.default_rng(0)
    doc = rng.integers(0, len(keys), len(texts)).astype(np.uint32)
    tok = tokenize(texts)
    rec = ngram_records(tok, 2, 64, 0)
    lengths, blob = ngram_texts(tok, rec["doc"], rec["off"], 2)  # the true texts
    rec["doc"] = doc[rec["doc"]]  # then other locations, to test their formatting
    rec["off"] = rng.choice(np.array([0, 9, 10, 99, 100, 12345, 2**32 - 1]), len(rec))
    groups = group_exact(rec, lengths, blob, 2)
    assert len(groups) >= 3
    want = b""
    for t, idx in groups:
        docs, offs = rec["doc"][idx].tolist(), rec["off"][idx].tolist()
        row = {
            "ngram": t.decode(),
            "count": len(idx),
            "documents": len(set(docs)),
            "locations": [[keys[d], o] for d, o in zip(docs, offs, strict=True)],
        }
        want += (json.dumps(row, ensure_ascii=False) + "\n").encode()
    for piece in (1, 2, 50_000):
        got = b"".join(jsonl_rows(groups, rec["doc"], rec["off"], keys, rows_per_piece=piece))
        assert got == want


def test_json_str_escapes_like_json_dumps():
    for s in ["a b", 'say "hi"', "a\\b", "tab\t", "ünï ключ", "\x00\x1f"]:
        assert _json_str(s.encode()) == json.dumps(s, ensure_ascii=False).encode()
