"""The phrase-rich generator (simdask/ingest/phrases.py, issue 33): deterministic by seed and
document number, planted passages where the truth says, phrases drawn by their Zipf law, and
chunk document frequencies that grow in proportion to the corpus (the mid-frequency band)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.errors import ConfigError
from simdask.ingest.phrases import (
    PhraseBank,
    PhraseParams,
    generate_phrase_block,
    iter_phrase_documents,
)
from simdask.ingest.prose import BLOCK_DOCS, ProseParams
from simdask.kernels.words import words
from tests.helpers.planted_truth import assert_planted_where_truth_says

pytestmark = pytest.mark.unit

SMALL = ProseParams(mean_words=150, sigma=0.3, min_words=30, reuse_fraction=0.05)
BANK = PhraseParams(vocab_words=2_000, n_phrases=5_000)


@pytest.fixture(scope="module")
def bank() -> PhraseBank:
    return PhraseBank.build(BANK)


def test_deterministic_by_seed_and_document_number(bank):
    whole = list(iter_phrase_documents(bank, BLOCK_DOCS + 20, seed=3, params=SMALL))
    part = list(iter_phrase_documents(bank, 10, seed=3, start=BLOCK_DOCS - 5, params=SMALL))
    assert part == whole[BLOCK_DOCS - 5 : BLOCK_DOCS + 5]
    assert part[0].key == f"f{BLOCK_DOCS - 5:09d}"
    other = list(iter_phrase_documents(bank, 10, seed=4, start=BLOCK_DOCS - 5, params=SMALL))
    assert all(a.text != b.text for a, b in zip(part, other, strict=True))
    assert PhraseBank.build(BANK).tokens.tolist() == bank.tokens.tolist()
    lengths = [len(words(d.text)) for d in whole]
    assert min(lengths) >= SMALL.min_words
    assert 0.8 * SMALL.mean_words < np.mean(lengths) < 1.3 * SMALL.mean_words


def test_planted_passages_are_where_the_truth_says(bank):
    docs, reuse = generate_phrase_block(bank, 2, seed=1, params=SMALL)
    assert_planted_where_truth_says(docs, reuse, SMALL)


def _phrase(bank: PhraseBank, p: int) -> str:
    ids = bank.tokens[bank.offsets[p] : bank.offsets[p + 1]]
    return " " + " ".join(bank.vocab[i] for i in ids.tolist()) + " "


def test_documents_are_filler_and_phrases_drawn_by_their_zipf_law(bank):
    rng = np.random.default_rng(5)
    docs = bank.document_tokens(np.full(300, 400), rng)
    texts = [" " + " ".join(bank.vocab[i] for i in t[t != 0].tolist()) + " " for t in docs]
    assert all(len(t[t != 0]) == 400 for t in docs)
    df = [sum(_phrase(bank, p) in t for t in texts) for p in (0, 30, 3_000)]
    # phrase 1 is drawn with p = 1 / H(5000) ~ 0.11 per segment, ~27 segments a document:
    # missing from a document with probability ~exp(-3) ~ 5 %
    assert 260 <= df[0] <= 299
    assert df[0] > df[1] > df[2]
    # the words of phrases are made-up words of the vocabulary, boundaries never inside
    assert set(bank.tokens.tolist()) <= set(range(1, BANK.vocab_words + 1))


def _chunk_df(texts: list[str], k: int = 5) -> Counter:
    df: Counter = Counter()
    for t in texts:
        ws = words(t)
        df.update({tuple(sorted(ws[i : i + k])) for i in range(len(ws) - k + 1)})
    return df


def test_chunk_document_frequency_grows_with_the_corpus(bank):
    """A fixed bank: the mid-frequency chunks' df doubles with the corpus (the workload of
    issue 33), unlike independent words, where two documents share almost no chunk."""
    params = ProseParams(mean_words=300, sigma=0.0, min_words=300, reuse_fraction=0.0)
    docs = [d.text for d in iter_phrase_documents(bank, 800, seed=2, params=params)]
    small, large = _chunk_df(docs[:400]), _chunk_df(docs)
    mid = [c for c, n in small.items() if 10 <= n <= 40]
    assert len(mid) > 200  # many chunks held by 2.5-10 % of the documents
    ratio = np.mean([large[c] for c in mid]) / np.mean([small[c] for c in mid])
    assert 1.8 < ratio < 2.2


@settings(max_examples=20, deadline=None)
@given(
    vocab=st.integers(10, 300),
    n_phrases=st.integers(1, 200),
    lo=st.integers(1, 6),
    extra=st.integers(0, 6),
    filler=st.floats(1.0, 20.0),
    length=st.integers(1, 300),
)
def test_document_tokens_have_the_asked_length(vocab, n_phrases, lo, extra, filler, length):
    p = PhraseParams(
        vocab_words=vocab, n_phrases=n_phrases, min_phrase=lo, max_phrase=lo + extra,
        mean_filler=filler,
    )  # fmt: skip
    b = PhraseBank.build(p)
    assert np.all(np.diff(b.offsets) >= lo) and np.all(np.diff(b.offsets) <= lo + extra)
    out = b.document_tokens(np.array([length, 1, length + 7]), np.random.default_rng(0))
    assert [int(np.count_nonzero(t)) for t in out] == [length, 1, length + 7]
    assert all(t[-1] != 0 for t in out)  # cut right after the last word


def test_params_round_trip_and_bad_values():
    p = PhraseParams(n_phrases=7, seed=3)
    assert PhraseParams.from_dict(p.to_dict()) == p
    for bad in (
        {"vocab_words": 5},
        {"n_phrases": 0},
        {"min_phrase": 4, "max_phrase": 3},
        {"phrase_zipf": 0},
        {"mean_filler": 0.5},
        {"seed": -1},
    ):
        with pytest.raises(ConfigError):
            PhraseParams(**bad)
    with pytest.raises(ConfigError, match="unknown"):
        PhraseParams.from_dict({"vocab": 3})
    with pytest.raises(ConfigError):
        generate_phrase_block(PhraseBank.build(p), -1)
