"""Generated prose with the phrase statistics of real text, streamed in constant memory.

The generator of :mod:`simdask.ingest.synth` draws words independently from a Zipf law, so two
unrelated documents almost never share a 5-word chunk; real prose does, through set phrases,
and that is what makes the similarity stage's work grow with the square of the corpus
(issue 13). Here a word-bigram Markov model (:class:`ProseModel`) is trained on real
documents (:func:`train_model`; e.g. the texts under ``/usr/share/doc`` or Python docstrings)
and walked to produce documents (:func:`iter_documents`).

* **Deterministic by seed and document number.** Documents are made in blocks of
  :data:`BLOCK_DOCS`; block ``b`` depends only on the model, the parameters, ``seed`` and
  ``b``, so document ``i`` is the same whatever the corpus size or where the stream starts.
* **Constant memory.** One block (its token matrix and its texts) is held at a time, whatever
  the corpus size; :func:`write_jsonl` writes the stream to files of ``docs_per_file`` lines.
* **Vectorised.** One step of all the block's chains is one ``searchsorted`` into the global
  cumulative transition counts (:meth:`ProseModel.step`).
* **Planted reuse.** A ``reuse_fraction`` of each block's documents get a passage of 100..400
  words copied from another document of the same block (not itself a target), recorded as
  :class:`~simdask.ingest.synth.Reuse` (word offsets into
  :func:`simdask.kernels.words.words` of the final texts).

Token 0 of the vocabulary is the sentence boundary (rendered as ``.``, not a word).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simdask.errors import ConfigError
from simdask.ingest.synth import Reuse, SynthDoc
from simdask.kernels.words import words

__all__ = [
    "BLOCK_DOCS",
    "ProseModel",
    "ProseParams",
    "generate_block",
    "iter_blocks",
    "iter_documents",
    "jsonl_texts",
    "plant_passages",
    "render_tokens",
    "train_model",
    "write_jsonl",
]

#: Documents generated together (one random stream per block).
BLOCK_DOCS = 512
#: Chain steps drawn per round (uniforms are drawn this many columns at a time).
_ROUND = 256
_SENTENCE = re.compile(r"[.!?]+(?=\s|$)|\n\s*\n")


@dataclass(frozen=True)
class ProseModel:
    """A word-bigram model as CSR transition counts.

    ``vocab``: the words (``vocab[0]`` is the sentence boundary ``"."``). State ``s`` (the
    last word) has edges ``row[s]:row[s+1]``; edge ``e`` leads to word ``nxt[e]`` and
    ``cum[e]`` is the count of edges ``0..e`` together (int64, strictly increasing), so that a
    draw in a row is one ``searchsorted`` into ``cum``. Every state has at least one edge.
    """

    vocab: tuple[str, ...]
    row: np.ndarray
    nxt: np.ndarray
    cum: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.vocab)
        if n < 2 or self.vocab[0] != ".":
            raise ConfigError(f"expected a vocabulary starting with '.', found {n} words")
        if len(self.row) != n + 1 or self.row[0] != 0 or self.row[-1] != len(self.nxt):
            raise ConfigError(
                f"expected {n + 1} row offsets from 0 to {len(self.nxt)}, found {len(self.row)}"
            )
        if np.any(np.diff(self.row) < 1):
            raise ConfigError("expected at least one edge from every state, found a dead end")
        if len(self.cum) != len(self.nxt) or np.any(np.diff(self.cum) < 1) or self.cum[0] < 1:
            raise ConfigError("expected strictly increasing positive cumulative edge counts")
        before = np.concatenate([[0], self.cum])  # count of the edges before edge e
        object.__setattr__(self, "_base", before[self.row[:-1]])
        object.__setattr__(self, "_total", before[self.row[1:]] - before[self.row[:-1]])

    @property
    def edges(self) -> int:
        """Number of distinct bigrams (edges)."""
        return len(self.nxt)

    def probabilities(self, state: int) -> dict[int, float]:
        """The model's next-word distribution of ``state``: ``{word id: probability}``."""
        lo, hi = int(self.row[state]), int(self.row[state + 1])
        base = int(self.cum[lo - 1]) if lo else 0
        counts = np.diff(np.concatenate([[base], self.cum[lo:hi]]))
        return dict(zip(self.nxt[lo:hi].tolist(), (counts / counts.sum()).tolist(), strict=True))

    def step(self, state: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The next words of chains in ``state`` (int64) for uniforms ``u`` in [0, 1)."""
        q = self._base[state] + (u * self._total[state]).astype(np.int64)
        order = np.argsort(q)  # sorted queries search faster (fewer cache misses)
        edge = np.empty_like(order)
        edge[order] = np.searchsorted(self.cum, q[order], side="right")
        return self.nxt[edge]

    def save(self, path: str | os.PathLike) -> Path:
        """Write the model (``.npz``, little-endian arrays; atomic)."""
        path = Path(path)
        blob = "\n".join(self.vocab).encode("utf-8")
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(
            tmp,
            vocab=np.frombuffer(blob, np.uint8),
            row=self.row.astype("<i8"),
            nxt=self.nxt.astype("<i4"),
            cum=self.cum.astype("<i8"),
        )
        os.replace(tmp, path)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> ProseModel:
        """Read a model written by :meth:`save`."""
        with np.load(path) as z:
            vocab = tuple(z["vocab"].tobytes().decode("utf-8").split("\n"))
            return cls(
                vocab,
                z["row"].astype(np.int64),
                z["nxt"].astype(np.int64),
                z["cum"].astype(np.int64),
            )


def _sentences(text: str) -> Iterator[list[str]]:
    for part in _SENTENCE.split(text):
        ws = words(part)
        if ws:
            yield ws


def _count_pairs(texts: Iterable[str], ids: dict[str, int], batch: int) -> tuple:
    """Bigram keys ``a << 32 | b`` (word ids, 0 = boundary) with their counts, and the word
    counts (by id)."""
    keys: list[np.ndarray] = []
    cnts: list[np.ndarray] = []
    buf: list[int] = [0]  # a text starts after a boundary

    def flush() -> None:
        seq = np.array(buf, np.int64)
        k, c = np.unique((seq[:-1] << 32) | seq[1:], return_counts=True)
        keys.append(k)
        cnts.append(c)
        buf[:] = buf[-1:]

    for text in texts:
        for ws in _sentences(text):
            buf.extend(ids.setdefault(w, len(ids)) for w in ws)
            buf.append(0)
        if len(buf) > batch:
            flush()
    if len(buf) > 1:
        flush()
    if not keys:
        raise ConfigError("expected training texts with words, found none")
    k, inv = np.unique(np.concatenate(keys), return_inverse=True)
    return k, np.bincount(inv, weights=np.concatenate(cnts)).astype(np.int64)


def train_model(
    texts: Iterable[str], *, max_vocab: int = 60_000, batch_tokens: int = 2_000_000
) -> ProseModel:
    """Train a bigram model on ``texts`` (streamed: at most ``batch_tokens`` tokens are held
    besides the counts). Sentences end at ``.``, ``!``, ``?`` before a space or at a blank
    line; words are runs of letters or digits, casefolded. The ``max_vocab`` most frequent
    words are kept; a rarer word ends its sentence. A word with no kept successor is followed
    by the boundary."""
    if max_vocab < 2:
        raise ConfigError(f"max_vocab must be at least 2, got {max_vocab!r}")
    ids: dict[str, int] = {".": 0}
    keys, counts = _count_pairs(texts, ids, batch_tokens)
    a, b = keys >> 32, keys & 0xFFFFFFFF
    freq = np.bincount(b, weights=counts, minlength=len(ids))
    freq[0] = np.inf
    keep = np.argsort(-freq, kind="stable")[:max_vocab]
    new = np.zeros(len(ids), np.int64)  # dropped words -> boundary
    new[keep] = np.arange(len(keep))
    vocab = np.array(list(ids), dtype=object)[keep]
    a, b = new[a], new[b]
    a = np.concatenate([a, np.arange(len(keep))])  # one boundary edge per state, weight 0 ...
    b = np.concatenate([b, np.zeros(len(keep), np.int64)])
    w = np.concatenate([counts, np.zeros(len(keep), np.int64)])
    k, inv = np.unique((a << 32) | b, return_inverse=True)
    w = np.bincount(inv, weights=w).astype(np.int64)
    dead = np.bincount(k >> 32, weights=w, minlength=len(keep)) == 0
    w[(k & 0xFFFFFFFF == 0) & dead[k >> 32]] = 1  # ... used only by states without successors
    live = w > 0
    k, w = k[live], w[live]
    row = np.concatenate([[0], np.cumsum(np.bincount(k >> 32, minlength=len(keep)))])
    return ProseModel(tuple(vocab.tolist()), row.astype(np.int64), k & 0xFFFFFFFF, np.cumsum(w))


def jsonl_texts(paths: Iterable[str | os.PathLike], max_words: int | None = None) -> Iterator[str]:
    """The ``text`` fields of JSONL files, one line at a time, until ``max_words`` words
    (whitespace-separated, roughly) have been given (None: all)."""
    seen = 0
    for p in paths:
        with open(p, encoding="utf-8") as f:
            for line in f:
                text = json.loads(line).get("text") or ""
                yield text
                seen += text.count(" ")
                if max_words is not None and seen >= max_words:
                    return


@dataclass(frozen=True)
class ProseParams:
    """How documents are drawn: lognormal lengths of mean ``mean_words`` (sigma ``sigma``, at
    least ``min_words``); a ``reuse_fraction`` (0..0.5) of documents get a copied passage."""

    mean_words: int = 1500
    sigma: float = 0.3
    min_words: int = 50
    reuse_fraction: float = 0.05

    def __post_init__(self) -> None:
        if self.min_words < 5 or self.mean_words < self.min_words:
            raise ConfigError(
                f"expected 5 <= min_words <= mean_words, found {self.min_words}, {self.mean_words}"
            )
        if not 0 <= self.sigma <= 2:
            raise ConfigError(f"sigma must be in [0, 2], got {self.sigma!r}")
        if not 0 <= self.reuse_fraction <= 0.5:
            raise ConfigError(f"reuse_fraction must be in [0, 0.5], got {self.reuse_fraction!r}")


def _walk(model: ProseModel, lengths: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    """Token ids of one chain per document, each cut after ``lengths[i]`` words (boundary
    tokens do not count), starting after a boundary; finished chains stop drawing."""
    n = len(lengths)
    state = np.zeros(n, np.int64)
    have = np.zeros(n, np.int64)
    pieces: list[list[np.ndarray]] = [[] for _ in range(n)]
    active = np.arange(n)
    while len(active):
        u = rng.random((_ROUND, len(active)))
        out = np.empty((_ROUND, len(active)), np.int64)
        st = state[active]
        for j in range(_ROUND):
            st = model.step(st, u[j])
            out[j] = st
        state[active] = st
        for col, i in enumerate(active.tolist()):
            pieces[i].append(out[:, col])
        have[active] += np.count_nonzero(out, axis=0)
        active = active[have[active] < lengths[active]]
    out_tokens = []
    for parts, m in zip(pieces, lengths.tolist(), strict=True):
        t = np.concatenate(parts)
        out_tokens.append(t[: int(np.searchsorted(np.cumsum(t != 0), m)) + 1])
    return out_tokens


def render_tokens(vocab: tuple[str, ...], ids: np.ndarray) -> str:
    """Sentences of the token ids (``vocab[0]`` is the boundary), capitalised, each ending with
    a period."""
    text = " ".join([vocab[i] for i in ids.tolist()]).replace(" .", ".").lstrip(". ")
    text = ". ".join(s[:1].upper() + s[1:] for s in text.split(". "))
    return text if text.endswith(".") else text + "."


def plant_passages(tokens: list[np.ndarray], keys: list[str], frac: float, rng) -> list[Reuse]:
    """Copy passages of 100..400 words between documents of one block (a ``frac`` of them are
    targets; sources are never targets); ``tokens`` are changed in place (0 = boundary)."""
    n = len(tokens)
    order = rng.permutation(n)
    n_t = round(n * frac)
    targets, pool = order[:n_t].tolist(), order[n_t:].tolist()
    out: list[Reuse] = []
    for t in targets:
        s = pool[int(rng.integers(len(pool)))]
        src, dst = tokens[s], tokens[t]
        pos_s = np.flatnonzero(src != 0)  # word positions
        size = int(min(len(pos_s), rng.integers(100, 401)))
        a = int(rng.integers(0, len(pos_s) - size + 1))
        piece = src[pos_s[a] : pos_s[a + size - 1] + 1]
        pos_d = np.flatnonzero(dst != 0)
        at = int(rng.integers(0, len(pos_d) + 1))
        cut = int(pos_d[at]) if at < len(pos_d) else len(dst)
        tokens[t] = np.concatenate([dst[:cut], [0], piece, [0], dst[cut:]])
        out.append(Reuse("passage", keys[s], keys[t], a, a + size, at, at + size))
    return out


def generate_block(
    model: ProseModel, block: int, *, seed: int = 0, params: ProseParams = ProseParams()
) -> tuple[list[SynthDoc], list[Reuse]]:
    """The :data:`BLOCK_DOCS` documents of block ``block`` (keys ``p<number>``, numbers
    ``block * BLOCK_DOCS ...``) and the reuse planted among them."""
    if block < 0 or seed < 0:
        raise ConfigError(f"expected block >= 0 and seed >= 0, found {block}, {seed}")
    rng = np.random.default_rng([seed, block, 0x9E05])
    mu = np.log(params.mean_words) - params.sigma**2 / 2
    lengths = rng.lognormal(mu, params.sigma, BLOCK_DOCS).astype(np.int64)
    lengths = np.maximum(lengths, params.min_words)
    tokens = _walk(model, lengths, rng)
    first = block * BLOCK_DOCS
    keys = [f"p{first + i:09d}" for i in range(BLOCK_DOCS)]
    reuse = (
        plant_passages(tokens, keys, params.reuse_fraction, rng) if params.reuse_fraction else []
    )
    docs = [SynthDoc(k, render_tokens(model.vocab, t)) for k, t in zip(keys, tokens, strict=True)]
    return docs, reuse


def iter_documents(
    model: ProseModel,
    n_docs: int,
    *,
    seed: int = 0,
    start: int = 0,
    params: ProseParams = ProseParams(),
    truth: list[Reuse] | None = None,
) -> Iterator[SynthDoc]:
    """Documents ``start .. start + n_docs - 1``, one block in memory at a time; planted
    reuse among them is appended to ``truth`` when given (both ends in the range)."""
    return iter_blocks(
        lambda b: generate_block(model, b, seed=seed, params=params), n_docs, start, truth
    )


def iter_blocks(
    make_block: Callable[[int], tuple[list[SynthDoc], list[Reuse]]],
    n_docs: int,
    start: int,
    truth: list[Reuse] | None,
) -> Iterator[SynthDoc]:
    """Documents ``start .. start + n_docs - 1`` of a generator made of blocks of
    :data:`BLOCK_DOCS` (``make_block(b)``: block ``b``'s documents and planted reuse), one block
    in memory at a time; the reuse with both ends in the range is appended to ``truth``."""
    if n_docs < 0 or start < 0:
        raise ConfigError(f"expected n_docs >= 0 and start >= 0, found {n_docs}, {start}")
    stop = start + n_docs
    for b in range(start // BLOCK_DOCS, (stop + BLOCK_DOCS - 1) // BLOCK_DOCS):
        docs, reuse = make_block(b)
        lo = b * BLOCK_DOCS
        inside = docs[max(0, start - lo) : max(0, stop - lo)]
        if truth is not None:
            names = {d.key for d in inside}
            truth.extend(r for r in reuse if r.source in names and r.target in names)
        yield from inside


def write_jsonl(
    model: ProseModel,
    n_docs: int,
    out_dir: str | os.PathLike,
    *,
    seed: int = 0,
    docs_per_file: int = 50_000,
    params: ProseParams = ProseParams(),
) -> list[Path]:
    """Write documents ``0 .. n_docs - 1`` as JSONL files ``part-00000.jsonl`` ... of
    ``docs_per_file`` lines (``{"id", "text"}``) and the planted reuse to ``truth.jsonl``;
    each file is written to a temporary name and renamed. Returns the corpus files."""
    if docs_per_file < 1:
        raise ConfigError(f"docs_per_file must be positive, got {docs_per_file!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    truth_tmp = out / "truth.jsonl.tmp"
    with open(truth_tmp, "w", encoding="utf-8") as tf:
        for part, lo in enumerate(range(0, n_docs, docs_per_file)):
            path = out / f"part-{part:05d}.jsonl"
            tmp = path.with_name(path.name + ".tmp")
            truth: list[Reuse] = []
            n = min(docs_per_file, n_docs - lo)
            with open(tmp, "w", encoding="utf-8") as f:
                for d in iter_documents(model, n, seed=seed, start=lo, params=params, truth=truth):
                    f.write(json.dumps({"id": d.key, "text": d.text}) + "\n")
            os.replace(tmp, path)
            files.append(path)
            tf.writelines(json.dumps(r.__dict__) + "\n" for r in truth)
    os.replace(truth_tmp, out / "truth.jsonl")
    return files
