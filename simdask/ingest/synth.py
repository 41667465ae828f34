"""A synthetic corpus with ground truth: Zipfian words, realistic lengths, planted reuse.

Reuse is planted the way students plagiarise (the kinds of :data:`REUSE_KINDS`):

* ``passage``: a contiguous passage of a source copied into the target;
* ``every_xth``: the same, with every x-th copied word replaced;
* ``random_subst``: the same, each copied word replaced with probability p;
* ``line_swap``: whole lines of the source put in place of lines of the target;
* ``contained``: the target is a short document wholly cut out of the source.

Sources are never targets, so the ground-truth word offsets (into
:func:`simdask.kernels.words.words` of each final text) stay exact.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from simdask.errors import ConfigError

__all__ = [
    "REUSE_KINDS",
    "Corpus",
    "Reuse",
    "SynthDoc",
    "generate_corpus",
    "read_truth",
    "write_corpus",
]

REUSE_KINDS = ("passage", "every_xth", "random_subst", "line_swap", "contained")
LINE_WORDS = 12
SENTENCE_WORDS = 15
_SYLLABLES = [c + v for c in "bcdfghjklmnprstvz" for v in "aeiou"] + ["th", "st", "an", "er", "on"]


@dataclass(frozen=True)
class SynthDoc:
    """A generated document."""

    key: str
    text: str


@dataclass(frozen=True)
class Reuse:
    """One planted reuse: ``target`` words ``[target_start, target_end)`` come from ``source``
    words ``[source_start, source_end)`` (word offsets into :func:`simdask.kernels.words.words`)."""

    kind: str
    source: str
    target: str
    source_start: int
    source_end: int
    target_start: int
    target_end: int
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Corpus:
    """Documents and the reuse planted in them."""

    docs: tuple[SynthDoc, ...]
    reuse: tuple[Reuse, ...]

    def keys(self) -> list[str]:
        """Keys of all documents, in order."""
        return [d.key for d in self.docs]

    def text_of(self, key: str) -> str:
        """The text of one document."""
        for d in self.docs:
            if d.key == key:
                return d.text
        raise KeyError(key)


def _vocabulary(size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` distinct pronounceable lowercase pseudo-words of 2..12 letters."""
    syl = np.array(_SYLLABLES)
    words: dict[str, None] = {}
    while len(words) < size:
        n = size - len(words) + 1000
        counts = rng.integers(1, 6, n)
        picks = syl[rng.integers(0, len(syl), (n, 5))]
        for row, c in zip(picks.tolist(), counts.tolist(), strict=True):
            w = "".join(row[:c])[:12]
            words.setdefault(w, None)
    return np.array(list(words)[:size])


def _render(tokens: list[str]) -> str:
    """Lines of 12 words; sentences of 15 words, capitalised, ending with a period."""
    out = list(tokens)
    for j in range(SENTENCE_WORDS, len(out), SENTENCE_WORDS):
        out[j] = out[j].capitalize()
    for j in range(SENTENCE_WORDS - 1, len(out), SENTENCE_WORDS):
        out[j] += "."
    if out:
        out[0] = out[0].capitalize()
        out[-1] += "" if out[-1].endswith(".") else "."
    return "\n".join(" ".join(out[i : i + LINE_WORDS]) for i in range(0, len(out), LINE_WORDS))


def generate_corpus(
    n_docs: int,
    *,
    mean_words: int = 1000,
    vocab_size: int = 200_000,
    zipf_s: float = 1.1,
    reuse_fraction: float = 0.05,
    seed: int = 0,
) -> Corpus:
    """Generate ``n_docs`` documents of about ``mean_words`` words (lognormal lengths, at
    least 20), words drawn from a Zipf law of exponent ``zipf_s`` over ``vocab_size``
    pseudo-words, and plant reuse in a ``reuse_fraction`` (0..0.5) of them."""
    if not isinstance(n_docs, int) or n_docs < 1:
        raise ConfigError(f"n_docs must be a positive integer, got {n_docs!r}")
    if mean_words < 20:
        raise ConfigError(f"mean_words must be at least 20, got {mean_words!r}")
    if vocab_size < 100:
        raise ConfigError(f"vocab_size must be at least 100, got {vocab_size!r}")
    if not 0 <= reuse_fraction <= 0.5:
        raise ConfigError(f"reuse_fraction must be in [0, 0.5], got {reuse_fraction!r}")
    if zipf_s <= 0:
        raise ConfigError(f"zipf_s must be positive, got {zipf_s!r}")
    rng = np.random.default_rng(seed)
    vocab = _vocabulary(vocab_size, rng)
    cdf = np.cumsum(1.0 / np.arange(1, vocab_size + 1) ** zipf_s)
    cdf /= cdf[-1]
    sigma = 0.5
    lengths = rng.lognormal(np.log(mean_words) - sigma**2 / 2, sigma, n_docs)
    lengths = np.maximum(lengths.astype(np.int64), 20)
    flat = vocab[np.searchsorted(cdf, rng.random(int(lengths.sum())))].tolist()
    bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    tokens = [flat[bounds[i] : bounds[i + 1]] for i in range(n_docs)]
    width = max(6, len(str(n_docs - 1)))
    keys = [f"doc{i:0{width}d}" for i in range(n_docs)]

    n_targets = round(n_docs * reuse_fraction)
    order = rng.permutation(n_docs)
    targets, pool = order[:n_targets].tolist(), order[n_targets:].tolist()
    reuse: list[Reuse] = []
    for j, t in enumerate(targets):
        if not pool:
            break
        s = pool[int(rng.integers(len(pool)))]
        kind = REUSE_KINDS[j % len(REUSE_KINDS)]
        reuse += _plant(kind, tokens, keys, s, t, vocab, rng)
    docs = tuple(SynthDoc(keys[i], _render(tokens[i])) for i in range(n_docs))
    return Corpus(docs, tuple(reuse))


def _plant(kind, tokens, keys, s, t, vocab, rng) -> list[Reuse]:
    src, dst = tokens[s], tokens[t]
    if kind == "contained":
        n = int(min(len(src), rng.integers(50, 301)))
        a = int(rng.integers(0, len(src) - n + 1))
        tokens[t] = src[a : a + n]
        return [Reuse(kind, keys[s], keys[t], a, a + n, 0, n)]
    if kind == "line_swap":
        full_src = len(src) // LINE_WORDS
        full_dst = len(dst) // LINE_WORDS
        m = int(min(rng.integers(3, 11), full_src, full_dst))
        out = []
        for i, j in zip(
            rng.choice(full_src, m, replace=False).tolist(),
            rng.choice(full_dst, m, replace=False).tolist(),
            strict=True,
        ):
            a, b = i * LINE_WORDS, j * LINE_WORDS
            dst[b : b + LINE_WORDS] = src[a : a + LINE_WORDS]
            out.append(Reuse(kind, keys[s], keys[t], a, a + LINE_WORDS, b, b + LINE_WORDS))
        return out
    n = int(min(len(src), rng.integers(100, 401)))
    a = int(rng.integers(0, len(src) - n + 1))
    passage = list(src[a : a + n])
    params: dict = {}
    if kind == "every_xth":
        x = int(rng.integers(3, 9))
        params = {"x": x}
        for i in range(x - 1, n, x):
            passage[i] = str(vocab[int(rng.integers(len(vocab)))])
    elif kind == "random_subst":
        p = float(rng.uniform(0.05, 0.2))
        params = {"p": round(p, 4)}
        for i in np.flatnonzero(rng.random(n) < p).tolist():
            passage[i] = str(vocab[int(rng.integers(len(vocab)))])
    at = int(rng.integers(0, len(dst) + 1))
    tokens[t] = dst[:at] + passage + dst[at:]
    return [Reuse(kind, keys[s], keys[t], a, a + n, at, at + n, params)]


def _truth_path(path: Path, fmt: str) -> Path:
    return (
        path.with_suffix(".truth.jsonl")
        if fmt == "jsonl"
        else path.with_name(path.name + ".truth.jsonl")
    )


def write_corpus(corpus: Corpus, path: str | Path, fmt: str = "txt") -> Path:
    """Write the documents (``txt``: a folder of ``<key>.txt``; ``jsonl``: one file of
    ``{"id", "text"}`` lines) and the ground truth beside them; returns ``path``."""
    path = Path(path)
    if fmt == "txt":
        path.mkdir(parents=True, exist_ok=True)
        for d in corpus.docs:
            (path / f"{d.key}.txt").write_text(d.text, encoding="utf-8")
    elif fmt == "jsonl":
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            for d in corpus.docs:
                f.write(json.dumps({"id": d.key, "text": d.text}, ensure_ascii=False) + "\n")
    else:
        raise ConfigError(f"fmt must be 'txt' or 'jsonl', got {fmt!r}")
    with open(_truth_path(path, fmt), "w", encoding="utf-8") as f:
        for r in corpus.reuse:
            f.write(json.dumps(asdict(r)) + "\n")
    return path


def read_truth(path: str | Path) -> list[Reuse]:
    """Ground truth written by :func:`write_corpus` (give the truth file or the corpus path)."""
    path = Path(path)
    if not path.name.endswith(".truth.jsonl"):
        path = _truth_path(path, "jsonl" if path.suffix == ".jsonl" else "txt")
    with open(path, encoding="utf-8") as f:
        return [Reuse(**json.loads(line)) for line in f if line.strip()]
