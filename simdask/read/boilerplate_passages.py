"""The most widely shared passages of an index (reader side): what a user may want to exclude.

A *heavy* chunk is one held by many documents (its postings list is long). A shared passage is
a run of consecutive chunk positions of a document whose chunks are all heavy, cut where the
documents holding *every* chunk of the run would drop below ``min_documents``; its
``documents`` is the number of documents holding all its chunks (the intersection of their
postings), its text the run's words (normalised, DESIGN §1). Found from the shards' postings
and the stored texts of a few representative documents; nothing is written.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from simdask.errors import ConfigError, SourceError
from simdask.kernels.hashing import hash_chunks
from simdask.kernels.ngrams import tokenize

if TYPE_CHECKING:
    from simdask.index import Index

__all__ = [
    "SharedPassage",
    "boilerplate_hint",
    "heavy_chunks",
    "holders_of",
    "once",
    "save_passages",
    "segments",
    "shared_passages",
    "trim_ends",
]

#: heavy chunks looked at per passage asked for
_CHUNKS_PER_PASSAGE = 50
#: ... for at least this many passages, so that a small ``top`` still sees a long passage whole
_LEAST_TOP = 20
#: a run's summary looks for a passage held by most documents only in indexes of at most
#: this many documents (it reads every shard's list lengths: a teacher's archive, not a corpus)
HINT_MAX_DOCUMENTS = 20_000
#: ... and only in indexes of at least this many documents
HINT_MIN_DOCUMENTS = 3
#: ... for a passage of at least this many words (shorter ones are set phrases)
HINT_MIN_WORDS = 20


@dataclass(frozen=True)
class SharedPassage:
    """A passage (normalised words joined by spaces) held by ``documents`` documents."""

    passage: str
    documents: int
    words: int

    def to_dict(self) -> dict[str, Any]:
        """``{"passage", "documents", "words"}``."""
        return {"passage": self.passage, "documents": self.documents, "words": self.words}


def heavy_chunks(idx: Index, min_documents: int, limit: int) -> dict[int, np.ndarray]:
    """``{chunk ID: sorted doc IDs}`` of the ``limit`` chunks held by the most documents (at
    least ``min_documents``); ties broken by chunk ID."""
    keys: list[np.ndarray] = []
    dfs: list[np.ndarray] = []
    where: list[tuple[int, int]] = []
    for s in range(idx.config.ranges):
        sd = idx.shard(s)
        df = np.diff(sd.offsets.astype(np.int64))
        sel = np.flatnonzero(df >= min_documents)
        keys.append(sd.chunk_keys[sel].astype(np.uint64))
        dfs.append(df[sel])
        where.extend((s, int(i)) for i in sel.tolist())
    if not where:
        return {}
    key, df = np.concatenate(keys), np.concatenate(dfs)
    best = np.lexsort((key, -df))[:limit]
    out = {}
    for i in best.tolist():
        s, j = where[i]
        sd = idx.shard(s)
        out[int(key[i])] = np.asarray(sd.doc_ids[int(sd.offsets[j]) : int(sd.offsets[j + 1])])
    return out


def segments(
    ids: np.ndarray, postings: dict[int, np.ndarray], min_documents: int
) -> list[tuple[int, int, int]]:
    """Shared runs of one document: ``(first chunk position, last position, documents)``.

    ``ids``: the document's chunk IDs in window order. A run grows over consecutive heavy
    positions while the documents holding all its chunks stay at least ``min_documents``.
    """
    out: list[tuple[int, int, int]] = []
    start, inter = -1, None
    for p, c in enumerate(ids.tolist()):
        post = postings.get(c)
        if post is not None and inter is not None:
            both = np.intersect1d(inter, post, assume_unique=True)
            if len(both) >= min_documents:
                inter = both
                continue
        if inter is not None:
            out.append((start, p - 1, len(inter)))
        start, inter = (p, post) if post is not None else (-1, None)
    if inter is not None:
        out.append((start, len(ids) - 1, len(inter)))
    return out


def shared_passages(idx: Index, top: int = 50, min_documents: int = 2) -> list[SharedPassage]:
    """The ``top`` passages held by the most documents, most documents first (then longest).

    Each heavy chunk not yet covered sends its first holder's stored text through
    :func:`segments`; equal passages found in several documents are reported once.
    """
    if top < 1 or min_documents < 2:
        raise ConfigError(f"expected top >= 1 and min_documents >= 2, got {top}, {min_documents}")
    cfg = idx.config
    postings = heavy_chunks(idx, min_documents, max(top, _LEAST_TOP) * _CHUNKS_PER_PASSAGE)
    order = sorted(postings, key=lambda c: (-len(postings[c]), c))
    covered: set[int] = set()
    found: dict[str, tuple[SharedPassage, frozenset]] = {}
    for c in order:
        if c in covered:
            continue
        doc = int(postings[c][0])
        key = idx.catalog.keys_of([doc]).get(doc)
        if key is None:
            covered.add(c)
            continue
        tok = tokenize([idx.text(key)], cfg.seed)
        ids, _ = hash_chunks(tok.hashes, tok.word_offsets, cfg.k, cfg.hash_bits, cfg.seed)
        ids = ids.astype(np.uint64)
        covered.update(set(ids.tolist()) & postings.keys())
        covered.add(c)
        for seg in segments(ids, postings, min_documents):
            first, last = trim_ends(ids, seg[0], seg[1], postings)
            ndocs = len(holders_of(ids[first : last + 1], postings))
            lo, hi = tok.start[first], tok.start[last + cfg.k - 1] + tok.length[last + cfg.k - 1]
            text = tok.buf[lo:hi].tobytes().decode("utf-8")
            old = found.get(text)
            if old is None or old[0].documents < ndocs:
                chunks = frozenset(ids[first : last + 1].tolist())
                found[text] = (SharedPassage(text, ndocs, last - first + cfg.k), chunks)
    return once(found.values())[:top]


def trim_ends(ids: np.ndarray, first: int, last: int, postings: dict[int, np.ndarray]) -> tuple:
    """The run ``first..last`` (chunk positions of ``ids``) without the ends held by fewer
    documents than most of it: the words a few documents put before or after a template
    (``Dear reader`` in two of them) are not part of the passage the others hold. An end is
    dropped while its chunk's document count is below the run's median count."""
    df = np.array([len(postings[c]) for c in ids[first : last + 1].tolist()])
    middle = np.median(df)
    i, j = 0, len(df) - 1
    while i < j and df[i] < middle:
        i += 1
    while j > i and df[j] < middle:
        j -= 1
    return first + i, first + j


def holders_of(chunks: np.ndarray, postings: dict[int, np.ndarray]) -> np.ndarray:
    """Sorted doc IDs holding every one of ``chunks`` (all in ``postings``)."""
    out = postings[int(chunks[0])]
    for c in chunks[1:].tolist():
        out = np.intersect1d(out, postings[c], assume_unique=True)
    return out


def once(found: Iterable[tuple[SharedPassage, frozenset]]) -> list[SharedPassage]:
    """The passages, most documents first (then longest, then by text), each chunk in one
    passage only: a passage sharing a chunk with one listed before it is the same passage
    seen from another document (a word more or less at an end) and is left out."""
    ranked = sorted(found, key=lambda f: (-f[0].documents, -f[0].words, f[0].passage))
    taken: set[int] = set()
    out = []
    for passage, chunks in ranked:
        if taken.isdisjoint(chunks):
            out.append(passage)
            taken |= chunks
    return out


def boilerplate_hint(idx: Index) -> str | None:
    """What a run's summary says when a passage of at least :data:`HINT_MIN_WORDS` words is
    held by more than half of the documents (at least :data:`HINT_MIN_DOCUMENTS`; indexes
    of at most :data:`HINT_MAX_DOCUMENTS` documents): how many hold it, its first words, and
    how to exclude it. None otherwise."""
    n = idx.catalog.n_documents(limit=HINT_MAX_DOCUMENTS + 1)
    if not HINT_MIN_DOCUMENTS <= n <= HINT_MAX_DOCUMENTS:
        return None
    found = shared_passages(idx, top=10, min_documents=max(HINT_MIN_DOCUMENTS, n // 2 + 1))
    long = [p for p in found if p.words >= HINT_MIN_WORDS]
    if not long:
        return None
    p = long[0]
    start = " ".join(p.passage.split()[:12])
    return (
        f"a passage of {p.words} words is shared by {p.documents} of {n} documents "
        f'("{start} ..."): a template or assignment sheet? `simdask boilerplate INDEX '
        "--save template.txt` writes the shared passages to a file; `simdask update INDEX "
        "--exclude template.txt` then leaves them out of every count"
    )


def save_passages(passages: Iterable[SharedPassage], path: str | os.PathLike) -> None:
    """Write the passages to ``path`` as plain UTF-8 text, one passage a paragraph (a blank
    line between them): a template file for ``simdask update INDEX --exclude FILE``, which
    excludes the same chunks (the passages are in the words simdask compares). Raises
    :class:`SourceError` when the file cannot be written."""
    text = "\n\n".join(p.passage for p in passages) + "\n"
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise SourceError(
            f"cannot write the passages to {path}: expected a writable file, found: "
            f"{e.strerror or e}"
        ) from e
