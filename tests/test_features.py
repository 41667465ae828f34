"""The feature-type seam (simdask/kernels/features.py): the sorted chunk, registered as one
feature type, gives exactly the reference chunk IDs (plain-Python words, sorted, hashed);
a namespace moves a feature type's IDs to other hashes; the registry."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.errors import ConfigError
from simdask.kernels.content_ngrams import CONTENT_NGRAM
from simdask.kernels.features import (
    FEATURE_TYPES,
    SORTED_CHUNK,
    FeatureType,
    SortedChunk,
    feature_type,
)
from simdask.kernels.hashing import chunk_id
from simdask.kernels.words import words

pytestmark = pytest.mark.unit

VOCAB = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "Ökö", "x"]
texts = st.lists(st.lists(st.sampled_from(VOCAB), max_size=30).map(" ".join), max_size=6)


def _reference(text: str, k: int, bits: int, seed: int) -> set[int]:
    """The distinct chunk IDs of a text by the reference definition: each window of ``k``
    words (kernels/words.py), hashed in plain Python."""
    w = words(text)
    return {chunk_id(tuple(w[i : i + k]), bits, seed) for i in range(len(w) - k + 1)}


@settings(max_examples=100, deadline=None)
@given(texts, st.integers(1, 5), st.sampled_from([20, 28, 40]), st.integers(0, 2**32))
def test_sorted_chunk_ids_equal_the_reference(batch, k, bits, seed):
    cb = SORTED_CHUNK.chunk(batch, k, bits, seed)
    for i, text in enumerate(batch):
        got = set(cb.chunk_ids[cb.doc == i].tolist())
        assert got == _reference(text, k, bits, seed)
        assert cb.n_chunks[i] == len(got)
    ids, doc, _ = SORTED_CHUNK.windows(batch, k, bits, seed)
    for i, text in enumerate(batch):
        assert set(ids[doc == i].tolist()) == _reference(text, k, bits, seed)
    w = ["beta", "alpha", "gamma"]
    assert SORTED_CHUNK.feature_id(w, bits, seed) == chunk_id(tuple(w), bits, seed)


class _Shifted(SortedChunk):
    """The sorted chunk in another namespace: what a second feature type gets."""

    name = "shifted"
    namespace = 1


def test_a_namespace_gives_other_ids():
    text = ["one two three four five six seven eight nine ten"]
    base, other = SORTED_CHUNK.chunk(text, 5, 40, 7), _Shifted().chunk(text, 5, 40, 7)
    assert SORTED_CHUNK.seed(7) == 7 and _Shifted().seed(7) != 7
    assert len(base.chunk_ids) == len(other.chunk_ids) == 6
    assert not np.intersect1d(base.chunk_ids, other.chunk_ids).size


def test_registry():
    assert FEATURE_TYPES == {"sorted_chunk": SORTED_CHUNK, "content_ngram": CONTENT_NGRAM}
    assert isinstance(SORTED_CHUNK, FeatureType) and feature_type("sorted_chunk") is SORTED_CHUNK
    with pytest.raises(ConfigError, match="unknown feature type 'shingle'") as e:
        feature_type("shingle")
    assert isinstance(e.value, ValueError)
