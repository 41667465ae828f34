"""The content n-gram: a second feature type for finding a disguised copy's source.

``k`` consecutive *content* words of a text (stop words dropped,
:data:`~simdask.kernels.stopwords.CONTENT_STOPWORDS`; each word stemmed,
:func:`~simdask.kernels.stemming.stem_words`), sorted, hashed like the sorted chunk
(:func:`~simdask.kernels.hashing.chunk_id` of the stems) in namespace 1 of the chunk-ID space.
Reordering words inside a window, inserting or dropping function words and changing a word's
inflection keep the feature; a synonym changes only the ``k`` windows holding it. With
``k = 2`` a summary that keeps a source's word pairs still shares features with it, which the
5-word chunk never does (docs/alignment.md, "Retrieval").

Quotations and the reference list (``exclusions``) are left out by blanking their characters
before the words are read: a content word inside them is not a content word of the text.
The template chunk IDs of ``exclusions`` are sorted-chunk IDs (namespace 0) and do not apply
to this feature. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simdask.kernels.exclusions import Exclusions, blank_spans
from simdask.kernels.features import FEATURE_TYPES, FeatureType
from simdask.kernels.hashing import ChunkedBatch, chunk_id, hash_chunks, word_hash
from simdask.kernels.packed_sort import distinct_pairs
from simdask.kernels.postings import chunk_dtype
from simdask.kernels.stemming import stem_words
from simdask.kernels.stopwords import CONTENT_STOPWORDS
from simdask.kernels.words import words

__all__ = ["CONTENT_NGRAM", "ContentNgram", "content_words"]

#: the language of the stemmer (the stop words are English)
LANGUAGE = "english"


def content_words(text: str, language: str = LANGUAGE) -> list[str]:
    """The stems of the content words of ``text`` in order (normalised words that are not
    stop words, stemmed in ``language``)."""
    kept = [w for w in words(text) if w not in CONTENT_STOPWORDS]
    return stem_words(kept, language) if kept else []


class ContentNgram(FeatureType):
    """``k`` consecutive content-word stems, sorted, hashed (see the module docstring)."""

    name = "content_ngram"
    namespace = 1

    def windows(
        self,
        texts: Sequence[str],
        k: int,
        hash_bits: int,
        seed: int,
        exclusions: Exclusions | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every window's feature ID in document order, its text and its position (the
        index of its first content word)."""
        ids, doc, pos, _ = self._windows(texts, k, hash_bits, seed, exclusions)
        return ids, doc, pos

    def _windows(
        self,
        texts: Sequence[str],
        k: int,
        hash_bits: int,
        seed: int,
        exclusions: Exclusions | None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`windows` and each text's number of content words (int64)."""
        tokens = [
            [w for w in words(_kept_text(t, exclusions)) if w not in CONTENT_STOPWORDS]
            for t in texts
        ]
        vocab: dict[str, int] = {}  # each distinct word's index, in order of first use
        index = [vocab.setdefault(w, len(vocab)) for doc in tokens for w in doc]
        s = self.seed(seed)
        stems = stem_words(list(vocab), LANGUAGE) if vocab else []
        by_stem: dict[str, int] = {}
        for stem in stems:
            if stem not in by_stem:
                by_stem[stem] = word_hash(stem, s)
        of_word = np.array([by_stem[stem] for stem in stems], dtype=np.uint64)
        hashes = of_word[np.array(index, dtype=np.int64)]
        n_words = np.array([len(d) for d in tokens], dtype=np.int64)
        offsets = np.zeros(len(tokens) + 1, dtype=np.int64)
        np.cumsum(n_words, out=offsets[1:])
        ids, doc = hash_chunks(hashes, offsets, k, hash_bits, s)
        first = np.zeros(len(tokens), dtype=np.int64)
        nwin = np.maximum(n_words - k + 1, 0)
        np.cumsum(nwin[:-1], out=first[1:])
        pos = np.arange(len(ids), dtype=np.int64) - first[doc]
        return ids, doc, pos, n_words

    def chunk(
        self,
        texts: Sequence[str],
        k: int,
        hash_bits: int,
        seed: int,
        exclusions: Exclusions | None = None,
    ) -> ChunkedBatch:
        """Each text's distinct feature IDs sorted by ``(id, text)``; ``n_words``: its content
        words, ``n_chunks``: its distinct features."""
        ids, doc, _, n_words = self._windows(texts, k, hash_bits, seed, exclusions)
        n = len(texts)
        if len(ids) == 0:
            none = np.zeros(0, np.int64)
            return ChunkedBatch(
                np.zeros(0, chunk_dtype(hash_bits)), none, n_words, np.zeros(n, np.int64)
            )
        ids, doc = distinct_pairs(ids, doc)
        n_chunks = np.bincount(doc, minlength=n).astype(np.int64)
        return ChunkedBatch(ids, doc, n_words, n_chunks)

    def feature_id(self, words: Sequence[str], hash_bits: int, seed: int) -> int:
        """The ID of the feature of the stems ``words``, in plain Python."""
        return chunk_id(list(words), hash_bits, self.seed(seed))


def _kept_text(text: str, exclusions: Exclusions | None) -> str:
    """``text`` with its quotations and reference list blanked when ``exclusions`` says so."""
    if exclusions is None or not (exclusions.quotes or exclusions.bibliography):
        return text
    return blank_spans(text, exclusions.spans(text))


#: the feature of the candidate partners (:mod:`simdask.kernels.candidate_scores`)
CONTENT_NGRAM = ContentNgram()
FEATURE_TYPES[CONTENT_NGRAM.name] = CONTENT_NGRAM
