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
from simdask.kernels.hashing import ChunkedBatch, chunk_id, hash_chunks, word_hashes
from simdask.kernels.packed_sort import distinct_pairs
from simdask.kernels.postings import chunk_dtype
from simdask.kernels.stemming import stem_words
from simdask.kernels.stopwords import CONTENT_STOPWORDS
from simdask.kernels.words import normal_bytes, utf8_word_spans, words

__all__ = ["CONTENT_NGRAM", "ContentNgram", "content_hashes", "content_words"]

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
        s = self.seed(seed)
        hashes, n_words = content_hashes(texts, s, exclusions)
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(n_words, out=offsets[1:])
        ids, doc = hash_chunks(hashes, offsets, k, hash_bits, s)
        first = np.zeros(len(texts), dtype=np.int64)
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


def content_hashes(
    texts: Sequence[str], seed: int, exclusions: Exclusions | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The hash (:func:`~simdask.kernels.hashing.word_hash` with ``seed``, uint64) of the stem
    of every content word of ``texts`` in order, the texts concatenated, and each text's
    number of content words (int64): the words of :func:`content_words`, found in numpy
    (:func:`~simdask.kernels.words.utf8_word_spans` on the normalised bytes) and grouped by a
    64-bit hash of the word, so that only each distinct word of the batch is looked up,
    stemmed and hashed in Python (two words of one batch with the same 64-bit hash, about
    ``n**2 / 2**65`` for ``n`` distinct words, would share a stem)."""
    parts = [normal_bytes(_kept_text(t, exclusions)) for t in texts]
    lens = np.fromiter((len(p) + 1 for p in parts), np.int64, len(parts))
    bounds = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(lens, out=bounds[1:])
    joined = b" ".join(parts) + b" "
    buf = np.frombuffer(joined, dtype=np.uint8)
    starts, ends = utf8_word_spans(buf)
    per_text = np.diff(np.searchsorted(starts, bounds))
    raw = word_hashes(buf, starts, ends, 0)
    _, first, inverse = np.unique(raw, return_index=True, return_inverse=True)
    vocab = [
        joined[a:b].decode("utf-8", "surrogatepass")
        for a, b in zip(starts[first].tolist(), ends[first].tolist(), strict=True)
    ]
    content = np.fromiter((w not in CONTENT_STOPWORDS for w in vocab), bool, len(vocab))
    kept = [w for w, c in zip(vocab, content.tolist(), strict=True) if c]
    stems = stem_words(kept, LANGUAGE) if kept else []
    of_word = np.zeros(len(vocab), dtype=np.uint64)
    of_word[content] = _stem_hashes(stems, seed)
    inverse = inverse.reshape(-1)
    mask = content[inverse]
    text_of = np.repeat(np.arange(len(parts), dtype=np.int64), per_text)
    n_words = np.bincount(text_of[mask], minlength=len(parts)).astype(np.int64)
    return of_word[inverse[mask]], n_words


def _stem_hashes(stems: list[str], seed: int) -> np.ndarray:
    """:func:`~simdask.kernels.hashing.word_hash` of each of ``stems`` (uint64), in numpy."""
    encoded = [t.encode("utf-8") for t in stems]
    ends = np.cumsum(np.fromiter((len(e) for e in encoded), np.int64, len(encoded)))
    buf = np.frombuffer(b"".join(encoded) or b" ", dtype=np.uint8)
    return word_hashes(buf, ends - np.diff(ends, prepend=0), ends, seed)


def _kept_text(text: str, exclusions: Exclusions | None) -> str:
    """``text`` with its quotations and reference list blanked when ``exclusions`` says so."""
    if exclusions is None or not (exclusions.quotes or exclusions.bibliography):
        return text
    return blank_spans(text, exclusions.spans(text))


#: the feature of the candidate partners (:mod:`simdask.kernels.candidate_scores`)
CONTENT_NGRAM = ContentNgram()
FEATURE_TYPES[CONTENT_NGRAM.name] = CONTENT_NGRAM
