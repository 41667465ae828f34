"""Candidate partners, the kernels (simdask/kernels/content_ngrams.py, candidates.py,
candidate_ranges.py): the content n-gram equals its plain-Python reference; the per-range
postings and the scores and top lists, however ranges and blocks split the work, equal a
brute force over Python sets and Counters; a run that merges its changes into the ranges and
recomputes only the affected documents' lists ends with every list equal to the brute force
after it; a disguised copy finds its source among 2,000 documents."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.errors import ConfigError
from simdask.ingest.synth import generate_corpus
from simdask.kernels.candidate_ranges import (
    block_entries,
    block_neighbours,
    block_top,
    mass_vector,
    merge_range,
    range_mass,
    split_by_range,
)
from simdask.kernels.candidate_scores import CandidateConfig, weight_table
from simdask.kernels.content_ngrams import CONTENT_NGRAM, content_hashes, content_words
from simdask.kernels.features import SORTED_CHUNK, feature_type
from simdask.kernels.hashing import word_hash
from simdask.kernels.postings import ShardData, shard_ranges
from simdask.kernels.stemming import stem_words
from simdask.kernels.stopwords import CONTENT_STOPWORDS
from simdask.kernels.words import words
from tests.helpers.candidates import brute_lists
from tests.helpers.paraphrase import PARAGRAPHS, disguise, paraphrased_pair

pytestmark = pytest.mark.unit

VOCAB = ["the", "of", "rivers", "river", "flowing", "flows", "valley", "big", "Ökö", "x", "and"]
texts = st.lists(st.lists(st.sampled_from(VOCAB), max_size=30).map(" ".join), max_size=6)


def _reference(text: str, k: int, bits: int, seed: int) -> set[int]:
    stems = stem_words([w for w in words(text) if w not in CONTENT_STOPWORDS], "english")
    return {
        CONTENT_NGRAM.feature_id(stems[i : i + k], bits, seed) for i in range(len(stems) - k + 1)
    }


@settings(max_examples=100, deadline=None)
@given(texts, st.integers(1, 4), st.sampled_from([20, 32, 40]), st.integers(0, 2**32))
def test_content_ngram_ids_equal_the_reference(batch, k, bits, seed):
    cb = CONTENT_NGRAM.chunk(batch, k, bits, seed)
    for i, text in enumerate(batch):
        got = set(cb.chunk_ids[cb.doc == i].tolist())
        assert got == _reference(text, k, bits, seed)
        assert cb.n_chunks[i] == len(got)
        assert cb.n_words[i] == len(content_words(text))
    assert np.all(np.diff(cb.chunk_ids.astype(np.float64)) >= 0)


def test_content_ngram_survives_reordering_and_inflection_and_is_namespaced():
    a = CONTENT_NGRAM.chunk(["The river flows into the valley"], 2, 32, 0)
    b = CONTENT_NGRAM.chunk(["valley rivers flowing into a"], 2, 32, 0)
    assert set(a.chunk_ids.tolist()) & set(b.chunk_ids.tolist())
    text = ["alpha beta gamma delta epsilon zeta"]
    assert not set(CONTENT_NGRAM.chunk(text, 5, 32, 0).chunk_ids.tolist()) & set(
        SORTED_CHUNK.chunk(text, 5, 32, 0).chunk_ids.tolist()
    )
    assert feature_type("content_ngram") is CONTENT_NGRAM


def _brute(sets: dict[int, set[int]], targets, max_df: int, depth: int, normalise=False):
    """Each target's top partners in plain Python (tests/helpers/candidates.brute_lists)."""
    return brute_lists(sets, targets, max_df, depth, normalise)


BITS = 16


def _ranges(sets: dict[int, set[int]], n_ranges: int, max_df: int) -> list:
    """Each range's merge from nothing of the pairs of ``sets``."""
    ids = np.array([f for d in sets for f in sets[d]], np.uint64)
    docs = np.array([d for d in sets for _ in sets[d]], np.uint32)
    split = split_by_range(ids, docs, BITS, n_ranges)
    return [
        merge_range(ShardData.empty(lo, hi), i, d, np.zeros(0, np.uint32), max_df)
        for (lo, hi), (i, d) in zip(shard_ranges(BITS, n_ranges), split, strict=True)
    ]


def _score(
    ranges: list, targets, max_df: int, depth: int, n_blocks: int, normalise=False, allowed=None
) -> dict:
    """The lists of ``targets`` scored over ``ranges`` in ``n_blocks`` blocks (normalised
    by the masses summed over the ranges; partners in ``allowed``, a mask by doc ID)."""
    targets = np.array(sorted(targets), np.uint32)
    mass = mass_vector([range_mass(m.data, max_df) for m in ranges]) if normalise else None
    out: dict[int, list] = {int(d): [] for d in targets}
    for blk in np.array_split(targets, n_blocks):
        parts = [block_entries(m.data, blk, max_df, allowed) for m in ranges]
        got = block_top(parts, blk, depth, mass)
        for d, e, sc in zip(*(a.tolist() for a in got), strict=True):
            out[d].append((e, sc))
    return out


def _neighbours(ranges: list, targets, max_df: int) -> set[int]:
    targets = np.array(sorted(targets), np.uint32)
    parts = [block_entries(m.data, targets, max_df) for m in ranges]
    return set(block_neighbours(parts).tolist())


doc_sets = st.dictionaries(
    st.integers(0, 40), st.sets(st.integers(0, 1 << BITS - 1), max_size=12), min_size=1, max_size=14
)
small_sets = st.dictionaries(
    st.integers(0, 40), st.sets(st.integers(0, 30), max_size=12), min_size=1, max_size=14
)


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(doc_sets, small_sets),
    st.integers(2, 8),
    st.integers(1, 6),
    st.integers(1, 5),
    st.integers(1, 4),
    st.booleans(),
    st.data(),
)
def test_range_scores_equal_the_brute_force(
    sets, max_df, depth, n_ranges, n_blocks, normalise, data
):
    """Any split into ranges and blocks, any subset of targets, summed or normalised
    scores; the postings are the sets'."""
    ranges = _ranges(sets, n_ranges, max_df)
    targets = data.draw(st.sets(st.sampled_from(sorted(sets)), min_size=1))
    got = _score(ranges, targets, max_df, depth, n_blocks, normalise)
    assert got == _brute(sets, sorted(targets), max_df, depth, normalise)
    # a partner filter: the lists ranked among the allowed documents only (the weights
    # still count every holder), as the brute force's lists without the others, uncut
    allowed_ids = data.draw(st.sets(st.sampled_from(sorted(sets))))
    mask = np.zeros(max(sets) + 1, bool)
    mask[sorted(allowed_ids)] = True
    among = _score(ranges, targets, max_df, depth, n_blocks, normalise, mask)
    full = _brute(sets, sorted(targets), max_df, 10**6, normalise)
    assert among == {d: [p for p in full[d] if p[0] in allowed_ids][:depth] for d in full}
    held = {
        (int(k), int(d))
        for m in ranges
        for k, a, b in zip(m.data.chunk_keys, m.data.offsets[:-1], m.data.offsets[1:], strict=True)
        for d in m.data.doc_ids[int(a) : int(b)]
    }
    assert held == {(f, d) for d, fs in sets.items() for f in fs}
    for m in ranges:
        assert np.all(np.diff(m.data.chunk_keys.astype(np.int64)) > 0)
        assert np.all((m.data.chunk_keys >= m.data.lo) & (m.data.chunk_keys < m.data.hi))


@settings(max_examples=200, deadline=None)
@given(
    small_sets,
    small_sets,
    st.integers(2, 6),
    st.integers(1, 4),
    st.integers(1, 3),
    st.booleans(),
    st.data(),
)
def test_an_incremental_merge_and_rescoring_equals_the_brute_force(
    before, change, max_df, depth, n_ranges, normalise, data
):
    """After adding/modifying ``change`` and deleting some of ``before``: each range merged
    with the change, the lists of the changed and affected documents recomputed (normalised:
    and of the documents sharing a weighted feature with those), the others kept: every
    list equals the brute force over the sets after."""
    deleted = data.draw(st.sets(st.sampled_from(sorted(before))))
    after = {d: s for d, s in before.items() if d not in deleted}
    after.update(change)
    gone = np.array(sorted(d for d in before if d in deleted or d in change), np.uint32)
    old_lists = _brute(before, sorted(before), max_df, depth, normalise)
    ids = np.array([f for d in change for f in change[d]], np.uint64)
    docs = np.array([d for d in change for _ in change[d]], np.uint32)
    merged = [
        merge_range(m.data, i, d, gone, max_df)
        for m, (i, d) in zip(
            _ranges(before, n_ranges, max_df),
            split_by_range(ids, docs, BITS, n_ranges),
            strict=True,
        )
    ]
    affected = set(np.concatenate([m.affected for m in merged]).tolist())
    targets = affected | set(change)
    if normalise and targets:
        targets |= _neighbours(merged, targets, max_df)
    fresh = _score(merged, targets, max_df, depth, 2, normalise)
    got = {d: fresh[d] if d in targets else old_lists[d] for d in after}
    assert got == _brute(after, sorted(after), max_df, depth, normalise)
    assert [m.entries for m in merged] == [m.entries for m in _ranges(after, n_ranges, max_df)]


def test_weight_table_and_config():
    w = weight_table(200)
    assert w[0] == w[1] == w[201] == 0
    assert w[2] == round(1000 * math.log(201 / 2)) and w[200] == round(1000 * math.log(201 / 200))
    c = CandidateConfig(max_df=50)
    assert CandidateConfig.from_dict(c.to_dict()) == c
    with pytest.raises(ConfigError, match="max_df"):
        CandidateConfig(max_df=1)
    with pytest.raises(ConfigError, match="unknown"):
        CandidateConfig.from_dict({"ngram": 2, "cap": 3})


def _ranks_of(corpus_texts: list[str], queries: list[str], cfg: CandidateConfig):
    """The candidate lists of the ``queries`` documents added to ``corpus_texts``."""
    allt = corpus_texts + queries
    cb = CONTENT_NGRAM.chunk(allt, cfg.ngram, cfg.hash_bits, cfg.seed)
    bounds = shard_ranges(cfg.hash_bits, 4)
    split = split_by_range(cb.chunk_ids, cb.doc, cfg.hash_bits, 4)
    none = np.zeros(0, np.uint32)
    ranges = [
        merge_range(ShardData.empty(lo, hi), i, d, none, cfg.max_df).data
        for (lo, hi), (i, d) in zip(bounds, split, strict=True)
    ]
    targets = np.arange(len(corpus_texts), len(allt), dtype=np.uint32)
    parts = [block_entries(r, targets, cfg.max_df) for r in ranges]
    mass = mass_vector([range_mass(r, cfg.max_df) for r in ranges]) if cfg.normalise else None
    doc, other, _ = block_top(parts, targets, 10, mass)
    return {int(t): other[doc == t].tolist() for t in targets}


def test_a_disguised_copy_finds_its_source_among_2000_documents():
    corpus = generate_corpus(2000, mean_words=300, vocab_size=20_000, seed=3)
    texts_ = [d.text for d in corpus.docs]
    para = paraphrased_pair()
    texts_[1234] = para.source
    chosen = [7, 500, 1999]
    queries = [disguise(texts_[i], seed=i) for i in chosen] + [para.essay]
    for normalise in (True, False):  # the stored score, and the summed one of before
        lists = _ranks_of(texts_, queries, CandidateConfig(normalise=normalise))
        for q, src in zip(sorted(lists), [*chosen, 1234], strict=True):
            assert src in lists[q][:5], (normalise, src, lists[q])
    # the disguise defeats the 5-word chunk: the copy shares few of its source's chunks
    a = SORTED_CHUNK.chunk([texts_[7], queries[0]], 5, 32, 0)
    shared = np.intersect1d(a.chunk_ids[a.doc == 0], a.chunk_ids[a.doc == 1])
    assert len(shared) < 0.1 * a.n_chunks[0]
    assert PARAGRAPHS[1] in para.source


#: words with stop words, inflections, non-ASCII letters, digits, marks and separators
_WORDISH = st.text(
    st.sampled_from(list("abcxyz ÖköŞİßﬁ½²́'_-.,\n\t")) | st.characters(codec="utf-8"),
    max_size=60,
)
_TEXTS = st.lists(
    st.lists(_WORDISH | st.sampled_from(VOCAB), max_size=12).map(" ".join), max_size=5
)


@settings(max_examples=200, deadline=None)
@given(_TEXTS, st.integers(0, 2**32))
def test_content_hashes_equal_each_content_words_stem_hash(batch, seed):
    """The batch's word hashes in numpy (grouped by distinct word) equal the plain-Python
    word hash of every stem of :func:`content_words`, text by text, in order."""
    hashes, n_words = content_hashes(batch, seed)
    want = [[word_hash(w, seed) for w in content_words(t)] for t in batch]
    assert n_words.tolist() == [len(w) for w in want]
    assert hashes.tolist() == [h for w in want for h in w]
