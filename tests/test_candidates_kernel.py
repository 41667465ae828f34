"""Candidate partners, the kernels (simdask/kernels/content_ngrams.py, candidates.py): the
content n-gram equals its plain-Python reference; the scores and top lists equal a brute
force over Python sets and Counters; the documents an incremental run recomputes include
every one whose list changes; a disguised copy finds its source among 2,000 documents."""

from __future__ import annotations

import math
from collections import Counter
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.errors import ConfigError
from simdask.ingest.synth import generate_corpus
from simdask.kernels import candidates
from simdask.kernels.candidates import (
    CandidateConfig,
    affected_documents,
    build_postings,
    top_candidates,
    weight_table,
)
from simdask.kernels.content_ngrams import CONTENT_NGRAM, content_words
from simdask.kernels.features import SORTED_CHUNK, feature_type
from simdask.kernels.stemming import stem_words
from simdask.kernels.stopwords import CONTENT_STOPWORDS
from simdask.kernels.text import words
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


def _brute(sets: dict[int, set[int]], targets, max_df: int, depth: int):
    """Each target's top partners by the sum of round(1000 ln((max_df+1)/df)) over shared
    features of 2 <= df <= max_df, in plain Python."""
    df = Counter(f for s in sets.values() for f in s)
    out = {}
    for d in targets:
        scores: Counter[int] = Counter()
        for e, s in sets.items():
            if e == d:
                continue
            for f in sets[d] & s:
                if 2 <= df[f] <= max_df:
                    scores[e] += round(1000 * math.log((max_df + 1) / df[f]))
        ranked = sorted((e for e in scores if scores[e] > 0), key=lambda e: (-scores[e], e))
        out[d] = [(e, scores[e]) for e in ranked[:depth]]
    return out


def _kernel_lists(sets: dict[int, set[int]], targets, max_df: int, depth: int):
    ids = [np.array(sorted(sets[d]), np.uint64) for d in sets]
    docs = [np.full(len(sets[d]), d, np.int64) for d in sets]
    post = build_postings(
        np.concatenate([np.zeros(0, np.uint64), *ids]),
        np.concatenate([np.zeros(0, np.int64), *docs]),
    )
    feats = [np.array(sorted(sets[d]), np.uint64) for d in targets]
    doc, other, score = top_candidates(post, np.array(targets, np.int64), feats, max_df, depth)
    out: dict[int, list] = {d: [] for d in targets}
    for d, e, s in zip(doc.tolist(), other.tolist(), score.tolist(), strict=True):
        out[d].append((e, s))
    return out, post


doc_sets = st.dictionaries(
    st.integers(0, 40), st.sets(st.integers(0, 30), max_size=12), min_size=1, max_size=14
)


@settings(max_examples=150, deadline=None)
@given(doc_sets, st.integers(2, 8), st.integers(1, 6), st.sampled_from([1 << 23, 1, 7]))
@pytest.mark.parametrize("dense", [1 << 25, 0], ids=["dense", "sorted"])
def test_top_candidates_equal_the_brute_force(dense, sets, max_df, depth, block):
    """Both ways of summing a block (a dense table, sorted pair keys), blocks of any size."""
    targets = sorted(sets)
    with (
        mock.patch.object(candidates, "DENSE_CELLS", dense),
        mock.patch.object(candidates, "BLOCK_ENTRIES", block),
    ):
        got, _ = _kernel_lists(sets, targets, max_df, depth)
    assert got == _brute(sets, targets, max_df, depth)


@settings(max_examples=150, deadline=None)
@given(doc_sets, doc_sets, st.integers(2, 6), st.integers(1, 4), st.data())
def test_affected_documents_hold_every_changed_list(before, change, max_df, depth, data):
    """After adding/modifying ``change`` and deleting some of ``before``, every document whose
    list differs from its list before is among the affected documents."""
    deleted = data.draw(st.sets(st.sampled_from(sorted(before))))
    after = {d: s for d, s in before.items() if d not in deleted}
    after.update(change)
    gone = [d for d in before if d in deleted or d in change]
    removed = [np.array(sorted(before[d]), np.uint64) for d in gone]
    added = [np.array(sorted(s), np.uint64) for s in change.values()]
    old = _brute(before, sorted(before), max_df, depth)
    new = _brute(after, sorted(after), max_df, depth)
    _, post = _kernel_lists(after, sorted(after), max_df, depth)
    hit = set(affected_documents(post, added, removed, max_df).tolist())
    for d in after:
        if d not in change and d in old and old[d] != new[d]:
            assert d in hit, (d, old[d], new[d])


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
    post = build_postings(cb.chunk_ids, cb.doc)
    first = len(corpus_texts)
    targets = np.arange(first, len(allt), dtype=np.int64)
    feats = [cb.chunk_ids[cb.doc == t] for t in targets]
    doc, other, _ = top_candidates(post, targets, feats, cfg.max_df, 10)
    return {int(t): other[doc == t].tolist() for t in targets}


def test_a_disguised_copy_finds_its_source_among_2000_documents():
    corpus = generate_corpus(2000, mean_words=300, vocab_size=20_000, seed=3)
    texts_ = [d.text for d in corpus.docs]
    para = paraphrased_pair()
    texts_[1234] = para.source
    chosen = [7, 500, 1999]
    queries = [disguise(texts_[i], seed=i) for i in chosen] + [para.essay]
    lists = _ranks_of(texts_, queries, CandidateConfig())
    for q, src in zip(sorted(lists), [*chosen, 1234], strict=True):
        assert src in lists[q][:5], (src, lists[q])
    # the disguise defeats the 5-word chunk: the copy shares few of its source's chunks
    a = SORTED_CHUNK.chunk([texts_[7], queries[0]], 5, 32, 0)
    shared = np.intersect1d(a.chunk_ids[a.doc == 0], a.chunk_ids[a.doc == 1])
    assert len(shared) < 0.1 * a.n_chunks[0]
    assert PARAGRAPHS[1] in para.source
