"""The most widely shared passages of an index (reader side): what a user may want to exclude.

A *heavy* chunk is one held by many documents (its postings list is long). A shared passage is
a run of consecutive chunk positions of a document whose chunks are all heavy, cut where the
documents holding *every* chunk of the run would drop below ``min_documents``; its
``documents`` is the number of documents holding all its chunks (the intersection of their
postings), its text the run's words (normalised, DESIGN §1). Found from the shards' postings
and the stored texts of a few representative documents; nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from simdask.errors import ConfigError
from simdask.kernels.hashing import hash_chunks
from simdask.kernels.ngrams import tokenize

if TYPE_CHECKING:
    from simdask.index import Index

__all__ = ["SharedPassage", "heavy_chunks", "segments", "shared_passages"]

#: heavy chunks looked at per passage asked for
_CHUNKS_PER_PASSAGE = 50


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
    for s in range(idx.config.shards):
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
    postings = heavy_chunks(idx, min_documents, top * _CHUNKS_PER_PASSAGE)
    order = sorted(postings, key=lambda c: (-len(postings[c]), c))
    covered: set[int] = set()
    found: dict[str, SharedPassage] = {}
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
        for first, last, ndocs in segments(ids, postings, min_documents):
            lo, hi = tok.start[first], tok.start[last + cfg.k - 1] + tok.length[last + cfg.k - 1]
            text = tok.buf[lo:hi].tobytes().decode("utf-8")
            old = found.get(text)
            if old is None or old.documents < ndocs:
                found[text] = SharedPassage(text, ndocs, last - first + cfg.k)
    ranked = sorted(found.values(), key=lambda p: (-p.documents, -p.words, p.passage))
    return ranked[:top]
