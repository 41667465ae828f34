"""The aligner's word and stem IDs remembered per process (issue 29, the totals' cost): the
tables give the IDs computed without them, bit for bit, whatever was asked before, in any
language, after the tables were emptied, and from several threads at once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdask.alignment.word_keys as word_keys
from simdask.alignment.word_keys import ids_of, stem_ids_of, word_ids
from simdask.kernels.stemming import stem_words

pytestmark = pytest.mark.unit

_WORDS = st.lists(
    st.sampled_from(
        ["running", "runs", "ran", "the", "häuser", "häusern", "connection", "connected", "ß"]
    )
    | st.text(min_size=1, max_size=8),
    max_size=40,
)
_LANGUAGES = st.sampled_from(["english", "german", "czech", "klingon"])


def _direct(words: list[str]) -> np.ndarray:
    return word_ids(words, len(words))


def _direct_stems(words: list[str], language: str) -> np.ndarray:
    stems = stem_words(words, language)
    return word_ids(stems, len(stems))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_WORDS, _LANGUAGES), min_size=1, max_size=6), st.integers(1, 30))
def test_remembered_ids_equal_the_computed_ones(calls, most):
    """A sequence of calls (different words, languages; tables emptied when more than
    ``most`` words are held) gives each call's IDs as computed directly."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(word_keys, "MAX_WORDS", most)
        for words, language in calls:
            got = ids_of(words)
            assert got.dtype == np.int64
            assert np.array_equal(got, _direct(words))
            assert np.array_equal(stem_ids_of(words, language), _direct_stems(words, language))


def test_a_stem_remembered_in_one_language_is_not_given_in_another():
    """The German and English stems of "häusern" differ: each language has its own table."""
    words = ["häusern", "running"]
    english, german = stem_ids_of(words, "english"), stem_ids_of(words, "german")
    assert np.array_equal(english, _direct_stems(words, "english"))
    assert np.array_equal(german, _direct_stems(words, "german"))
    assert english[0] != german[0]


def test_threads_emptying_the_table_still_get_every_id(monkeypatch):
    """Many threads with a tiny table (emptied on nearly every call): no lookup fails, every
    result is the computed one."""
    monkeypatch.setattr(word_keys, "MAX_WORDS", 3)
    lists = [[f"w{i}-{j}" for j in range(20)] + ["shared", "words"] for i in range(64)]

    def one(words: list[str]) -> bool:
        return all(np.array_equal(ids_of(words), _direct(words)) for _ in range(20))

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(one, lists))
