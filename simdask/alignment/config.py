"""The aligner's settings: every threshold of seeding, extension and filtering is a field."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from simdask.errors import ConfigError, check_keys

__all__ = ["AlignConfig"]

_UNIT = (
    "cosine_threshold",
    "dice_threshold",
    "validation_threshold",
    "verbatim_share",
    "verbatim_cover",
    "single_seed_threshold",
    "summary_cosine_threshold",
    "summary_dice_threshold",
    "trim_keep_cosine",
    "rare_share",
    "max_seed_share",
    "summary_alpha",
)
_COUNTS = (
    "min_sentence_words",
    "max_gap",
    "min_gap",
    "summary_source_gap",
    "summary_suspicious_gap",
    "min_seeds",
    "min_chars",
    "chunk_words",
    "stopword_ngram",
    "max_key_repeats",
    "pair_block",
    "summary_shuffles",
)


@dataclass(frozen=True)
class AlignConfig:
    """Settings of :func:`simdask.alignment.align` (published values of Sanchez-Perez et al.
    2014 where they exist).

    ``language`` picks the PyStemmer stemmer (``"english"``, ``"czech"``, ...); a language
    PyStemmer lacks leaves words unstemmed. Gaps are in sentences, sizes in words or
    characters (code points) as named.
    """

    language: str = "english"
    #: sentences of at most this many words are joined to the next sentence
    min_sentence_words: int = 3
    #: a sentence pair is a seed when its tf-isf cosine AND its Dice coefficient (over
    #: stemmed content words) are at least these
    cosine_threshold: float = 0.3
    dice_threshold: float = 0.3
    #: a passage's two fragments (sums of their sentence vectors) must have this cosine
    validation_threshold: float = 0.34
    #: ... and the two sentences share a rare stem: one held by at most this share of all
    #: sentences of both texts (or by 2). Text whose every sentence is made of the same few
    #: words (lists, generated text) then seeds nothing; 1 switches the condition off
    rare_share: float = 0.1
    #: no sentence seeds when more than this share of (at least 400) sentence pairs pass the
    #: thresholds: the texts are uniformly similar (the same few words throughout)
    max_seed_share: float = 0.05
    #: a passage resting on a single seed (one sentence pair) needs this cosine instead
    single_seed_threshold: float = 0.6
    #: seeds further apart than this many sentences (in either text) start a new fragment;
    #: a fragment that fails validation is retried with gaps one smaller, down to min_gap
    max_gap: int = 4
    min_gap: int = 0
    #: the summary variant's gaps (source side, suspicious side), chosen when the passages
    #: of the normal variant are summary_ratio times longer in B than in A
    summary_source_gap: int = 40
    summary_suspicious_gap: int = 3
    summary_ratio: float = 2.0
    #: a passage is "summarised" when its B span has this many times the words of its A span
    summarised_ratio: float = 2.0
    #: the summary variant's seed thresholds (cosine, Dice)
    summary_cosine_threshold: float = 0.2
    summary_dice_threshold: float = 0.2
    #: a passage of the summary variant is kept only when it beats chance at this level
    #: (:mod:`.null_model`: its seeds, or its sentences' best matches, against B with its
    #: words shuffled across its sentences); 1 switches the test off
    summary_alpha: float = 0.01
    #: ... with this many shuffles of B (0: no test)
    summary_shuffles: int = 4
    #: a fragment needs this many seeds
    min_seeds: int = 1
    #: passages shorter than this (characters, either text) are dropped
    min_chars: int = 150
    #: seeds from exact sorted chunks of this many words (DESIGN §1)
    chunk_words: int = 5
    #: seeds from sequences of this many consecutive stop words (Stamatatos 2011)
    stopword_ngram: int = 8
    #: chunk or stop-word n-gram keys occurring more often than this in either text seed nothing
    max_key_repeats: int = 4
    #: seed features. Exact chunk seeds are off by default: measured on the PAN training
    #: corpus they lower plagdet (single shared chunks widen passages); the chunks still
    #: make the verbatim runs and decide the kind
    sentence_seeds: bool = True
    chunk_seeds: bool = False
    stopword_seeds: bool = True
    #: neighbouring passages (at most summary_suspicious_gap sentences apart in A) whose B
    #: spans follow in the same order are joined when the joined pair still validates: this
    #: decides whether the summary variant is tried, and is kept for its passages only
    join_passages: bool = True
    #: passages of the normal variant narrowed to their mutually best seeds
    trim: bool = True
    #: ... keeping every seed of at least this cosine
    trim_keep_cosine: float = 0.5
    #: sentence pairs (and joined entry pairs) per block of the sentence-pair similarity
    #: (:mod:`.pairs`): memory, not results, depends on it
    pair_block: int = 1 << 18
    #: a passage is "verbatim" when exact chunks cover this share of its words on both sides
    verbatim_share: float = 0.8
    #: verbatim runs (exact chunks, word-exact spans) replace a passage they cover this much of
    verbatim_cover: float = 0.5

    def __post_init__(self) -> None:
        if not isinstance(self.language, str) or not self.language:
            raise ConfigError(f"language must be a non-empty string, got {self.language!r}")
        for name in _UNIT:
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise ConfigError(f"{name} must be a number in [0, 1], got {value!r}")
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"{name} must be in [0, 1], got {value}")
        for name in _COUNTS:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"{name} must be a non-negative integer, got {value!r}")
        for name in ("chunk_words", "stopword_ngram", "min_seeds", "max_key_repeats", "pair_block"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.min_gap > self.max_gap:
            raise ConfigError(f"min_gap must be <= max_gap ({self.max_gap}), got {self.min_gap}")
        for name in ("summary_ratio", "summarised_ratio"):
            ratio = getattr(self, name)
            if not isinstance(ratio, int | float) or isinstance(ratio, bool) or ratio < 1.0:
                raise ConfigError(f"{name} must be a number >= 1, got {ratio!r}")
        for name in ("sentence_seeds", "chunk_seeds", "stopword_seeds", "join_passages", "trim"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be True or False, got {getattr(self, name)!r}")

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AlignConfig:
        """Build from a dict written by :meth:`to_dict`; unknown keys are an error."""
        check_keys("AlignConfig", data, (f.name for f in dataclasses.fields(cls)))
        return cls(**data)

    def replace(self, **changes: Any) -> AlignConfig:
        """A copy with some settings changed (validated again)."""
        return dataclasses.replace(self, **changes)
