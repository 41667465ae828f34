"""Generated text of one vocabulary, as essays on one assignment share theirs: made-up content
words drawn with Zipf frequencies (rank r with weight 1 / r^1.05) from a vocabulary of a given
size, English function words between them. Two texts of one vocabulary share their frequent
content words and are otherwise unrelated; :func:`summary_of` condenses a text's sentences
(one sentence in three, about half its words kept) into a planted summary.
"""

from __future__ import annotations

import random

from tests.helpers.made_up_words import FUNCTION_WORDS, SYLLABLES

__all__ = ["summary_of", "vocabulary", "zipf_sentences"]


def vocabulary(size: int, seed: int = 0) -> list[str]:
    """``size`` distinct made-up words of two to four syllables, in a random order."""
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choices(SYLLABLES, k=rng.randint(2, 4))))
    out = sorted(words)
    rng.shuffle(out)
    return out


def zipf_sentences(n_words: int, vocab: list[str], seed: int) -> list[str]:
    """Sentences of about ``n_words`` words in all: 8 to 18 words each, 35 % function words,
    the content words drawn from ``vocab`` with Zipf frequencies; deterministic by ``seed``."""
    rng = random.Random(seed)
    weights = [1.0 / (r + 1) ** 1.05 for r in range(len(vocab))]
    out: list[str] = []
    done = 0
    while done < n_words:
        n = rng.randint(8, 18)
        words = [
            rng.choice(FUNCTION_WORDS) if rng.random() < 0.35 else rng.choices(vocab, weights)[0]
            for _ in range(n)
        ]
        out.append(" ".join(words).capitalize() + ".")
        done += n
    return out


def summary_of(sentences: list[str], seed: int, every: int = 3, keep: float = 0.5) -> list[str]:
    """A summary of ``sentences``: of each run of ``every`` sentences, one (chosen at random)
    with a ``keep`` share of its words (in order), so the summary is about ``every / keep``
    times shorter than its source and follows its order."""
    rng = random.Random(seed)
    out = []
    for i in range(0, len(sentences), every):
        words = rng.choice(sentences[i : i + every]).rstrip(".").lower().split()
        kept = [w for w in words if rng.random() < keep] or words[:1]
        out.append(" ".join(kept).capitalize() + ".")
    return out
