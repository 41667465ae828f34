"""Phrase-rich generated prose: documents built from a Zipf-distributed bank of set phrases.

The bigram generator of :mod:`simdask.ingest.prose` reproduces the phrase statistics of the
README and docstring text it is trained on. Text dominated by near-template reference pages
(man pages, manuals, forms, legal text) has far more *mid-frequency* 5-word chunks: set phrases
held by hundreds to thousands of documents, which give every document many partners at 1-3 %
and all-pairs counting a work that grows with the square of the corpus (issue 33). This
module generates that workload without any corpus, deterministically:

* a **phrase bank** (:class:`PhraseBank`): ``n_phrases`` phrases of ``min_phrase ..
  max_phrase`` words, the words drawn from a Zipf law (exponent ``word_zipf``) over a
  vocabulary of ``vocab_words`` made-up words;
* a **document** alternates filler runs (geometric lengths of mean ``mean_filler`` words, words
  from the same Zipf law) with phrases drawn from a Zipf law over the bank (exponent
  ``phrase_zipf``: phrase ``r`` has probability proportional to ``r ** -phrase_zipf``), a
  sentence ending after a phrase with probability 1/2; lengths, planted copied passages and
  rendering are those of :mod:`simdask.ingest.prose` (:class:`~simdask.ingest.prose.ProseParams`).

A phrase of rank ``r`` is in about ``n * phrases_per_doc * p(r)`` documents, so a fixed bank
gives chunks whose document frequency grows in proportion to the corpus, at every frequency
from "in every document" to "in two": the mid-frequency band that the heavy cutoff of
:mod:`simdask.kernels.heavy` leaves light grows with the corpus (docs/scale.md, issue 33).
Documents are made in blocks of :data:`~simdask.ingest.prose.BLOCK_DOCS` with one random stream
each, so document ``i`` is the same whatever the corpus size (keys ``f<number>``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass

import numpy as np

from simdask.errors import ConfigError
from simdask.ingest.prose import (
    BLOCK_DOCS,
    ProseParams,
    iter_blocks,
    plant_passages,
    render_tokens,
)
from simdask.ingest.synth import Reuse, SynthDoc
from simdask.kernels.arrays import expand_ranges

__all__ = ["PhraseBank", "PhraseParams", "generate_phrase_block", "iter_phrase_documents"]

_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


@dataclass(frozen=True)
class PhraseParams:
    """The phrase bank and how documents draw from it (see the module docstring). Counts are
    words or phrases; ``seed`` makes the bank (documents have their own seed)."""

    vocab_words: int = 20_000
    word_zipf: float = 1.05
    n_phrases: int = 400_000
    phrase_zipf: float = 1.0
    min_phrase: int = 5
    max_phrase: int = 12
    mean_filler: float = 6.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.vocab_words < 10 or self.n_phrases < 1:
            raise ConfigError(
                f"expected vocab_words >= 10 and n_phrases >= 1, found {self.vocab_words}, "
                f"{self.n_phrases}"
            )
        if not 1 <= self.min_phrase <= self.max_phrase:
            raise ConfigError(
                f"expected 1 <= min_phrase <= max_phrase, found {self.min_phrase}, "
                f"{self.max_phrase}"
            )
        if not (self.word_zipf > 0 and self.phrase_zipf > 0 and self.mean_filler >= 1):
            raise ConfigError(
                "expected word_zipf > 0, phrase_zipf > 0 and mean_filler >= 1, found "
                f"{self.word_zipf}, {self.phrase_zipf}, {self.mean_filler}"
            )
        if self.seed < 0:
            raise ConfigError(f"seed must be >= 0, got {self.seed!r}")

    def to_dict(self) -> dict:
        """The parameters as a plain dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> PhraseParams:
        """Parameters from :meth:`to_dict` (unknown keys refused)."""
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigError(f"unknown phrase parameters {sorted(unknown)}")
        return cls(**d)


def _zipf_cdf(n: int, s: float) -> np.ndarray:
    """Cumulative probabilities of ranks ``1..n`` under ``p(r) ∝ r ** -s`` (last exactly 1)."""
    w = np.arange(1, n + 1, dtype=np.float64) ** -s
    cdf = np.cumsum(w)
    return cdf / cdf[-1]


def _word(i: int) -> str:
    """A made-up word, distinct for every ``i >= 0`` (its syllables are ``i`` in base 70)."""
    out = []
    i += 1
    while i:
        i, r = divmod(i - 1, len(_SYLLABLES))
        out.append(_SYLLABLES[r])
    return "".join(out)


@dataclass(frozen=True)
class PhraseBank:
    """The vocabulary (``vocab[0]`` is the sentence boundary ``"."``; word rank ``r`` is token
    ``r``), the phrases as CSR token ids ``tokens[offsets[p]:offsets[p+1]]`` (phrase ``p`` has
    rank ``p + 1``), and the two Zipf laws' cumulative probabilities."""

    params: PhraseParams
    vocab: tuple[str, ...]
    offsets: np.ndarray
    tokens: np.ndarray
    word_cdf: np.ndarray
    phrase_cdf: np.ndarray

    @classmethod
    def build(cls, params: PhraseParams = PhraseParams()) -> PhraseBank:
        """The bank of ``params`` (deterministic by ``params.seed``)."""
        rng = np.random.default_rng([params.seed, 0xB4A7])
        vocab = (".", *(_word(i) for i in range(params.vocab_words)))
        word_cdf = _zipf_cdf(params.vocab_words, params.word_zipf)
        lengths = rng.integers(params.min_phrase, params.max_phrase + 1, params.n_phrases)
        offsets = np.zeros(params.n_phrases + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        tokens = _draw_words(word_cdf, int(offsets[-1]), rng)
        phrase_cdf = _zipf_cdf(params.n_phrases, params.phrase_zipf)
        return cls(params, vocab, offsets, tokens, word_cdf, phrase_cdf)

    def document_tokens(self, lengths: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
        """Token ids of one document per entry of ``lengths`` (words, boundaries not counted;
        each starts after a boundary): filler runs and phrases alternating, cut after
        ``lengths[i]`` words."""
        p = self.params
        lengths = np.asarray(lengths, np.int64)
        n_seg = -(-lengths // (1 + p.min_phrase))  # each segment gives >= 1 + min_phrase words
        n = int(n_seg.sum())
        fill = rng.geometric(1.0 / p.mean_filler, n).astype(np.int64)
        phrase = np.searchsorted(self.phrase_cdf, rng.random(n), side="right")
        phrase = np.minimum(phrase, p.n_phrases - 1)
        plen = self.offsets[phrase + 1] - self.offsets[phrase]
        stop = (rng.random(n) < 0.5).astype(np.int64)
        seg_len = fill + plen + stop
        seg_at = np.concatenate([[0], np.cumsum(seg_len)])
        flat = np.zeros(int(seg_at[-1]), np.int64)  # 0: boundary where nothing is written
        flat[expand_ranges(seg_at[:-1], fill)] = _draw_words(self.word_cdf, int(fill.sum()), rng)
        flat[expand_ranges(seg_at[:-1] + fill, plen)] = self.tokens[
            expand_ranges(self.offsets[phrase], plen)
        ]
        doc_at = seg_at[np.concatenate([[0], np.cumsum(n_seg)])]
        out = []
        for i, m in enumerate(lengths.tolist()):
            t = flat[doc_at[i] : doc_at[i + 1]]
            out.append(t[: int(np.searchsorted(np.cumsum(t != 0), m)) + 1])
        return out


def _draw_words(cdf: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` word tokens (1-based ranks) from the Zipf law of ``cdf``."""
    r = np.searchsorted(cdf, rng.random(n), side="right")
    return np.minimum(r, len(cdf) - 1).astype(np.int64) + 1


def generate_phrase_block(
    bank: PhraseBank, block: int, *, seed: int = 0, params: ProseParams | None = None
) -> tuple[list[SynthDoc], list[Reuse]]:
    """The :data:`~simdask.ingest.prose.BLOCK_DOCS` documents of block ``block`` (keys
    ``f<number>``) and the reuse planted among them (``params``: None, the defaults)."""
    params = params or ProseParams()
    if block < 0 or seed < 0:
        raise ConfigError(f"expected block >= 0 and seed >= 0, found {block}, {seed}")
    rng = np.random.default_rng([seed, block, 0xF4A5])
    mu = np.log(params.mean_words) - params.sigma**2 / 2
    lengths = rng.lognormal(mu, params.sigma, BLOCK_DOCS).astype(np.int64)
    lengths = np.maximum(lengths, params.min_words)
    tokens = bank.document_tokens(lengths, rng)
    first = block * BLOCK_DOCS
    keys = [f"f{first + i:09d}" for i in range(BLOCK_DOCS)]
    frac = params.reuse_fraction
    reuse = plant_passages(tokens, keys, frac, rng) if frac else []
    docs = [SynthDoc(k, render_tokens(bank.vocab, t)) for k, t in zip(keys, tokens, strict=True)]
    return docs, reuse


def iter_phrase_documents(
    bank: PhraseBank,
    n_docs: int,
    *,
    seed: int = 0,
    start: int = 0,
    params: ProseParams | None = None,
    truth: list[Reuse] | None = None,
) -> Iterator[SynthDoc]:
    """Documents ``start .. start + n_docs - 1``, one block in memory at a time; planted
    reuse with both ends in the range is appended to ``truth`` when given."""
    return iter_blocks(
        lambda b: generate_phrase_block(bank, b, seed=seed, params=params), n_docs, start, truth
    )
