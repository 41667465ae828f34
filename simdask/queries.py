"""Querying an index with documents read from files, folders and JSONL files.

:func:`query_files` reads the query documents (:func:`~simdask.ingest.sources.read_queries`),
compares the readable ones against the index in one :meth:`Index.query_many
<simdask.index.Index.query_many>` and returns, per document, its matches and whether it was too
short to have any chunk; the documents that could not be read are returned apart, so that a
caller reports them and still prints the others. Read-only: no lock, no cluster, no dask.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simdask.errors import ConfigError, ExtractionError
from simdask.ingest.sources import read_queries
from simdask.kernels.words import words
from simdask.read.undirected_pairs import counted
from simdask.summary import QueryMatch

if TYPE_CHECKING:
    from simdask.index import Index

__all__ = [
    "NOTE_KINDS",
    "QueryBatch",
    "QueryResult",
    "batch_summary",
    "query_documents",
    "query_files",
]

#: per-document errors of a check that are notes, not errors: the document was read but has
#: nothing to compare (too few words; a scanned PDF without a text layer)
NOTE_KINDS = frozenset({"too_short", "image_only"})


@dataclass(frozen=True)
class QueryResult:
    """One query document: its key, its matches (best first), ``too_short``: it has fewer
    words than the index's chunk length ``k``, hence no chunk and no match, and ``passed``:
    how many documents passed the least similarity (more than ``len(matches)`` when the
    matches were cut to the ``top`` ones)."""

    key: str
    matches: list[QueryMatch]
    too_short: bool
    passed: int = 0


@dataclass(frozen=True)
class QueryBatch:
    """What :func:`query_files` found: ``results`` of the readable documents in input order,
    ``unreadable`` the documents that could not be read (each error names its document), ``k``
    the index's words per chunk."""

    results: list[QueryResult]
    unreadable: list[ExtractionError]
    k: int


def query_files(
    index: Index,
    paths: Iterable[str | os.PathLike],
    min_similarity: float = 0.0,
    top: int | None = None,
) -> QueryBatch:
    """Compare the documents of ``paths`` (files, folders, ``.jsonl`` files) against ``index``.

    A match is kept when its similarity in either direction is at least ``min_similarity``
    percent; of those, the ``top`` with the largest similarity either way (None: as many as
    the index stores per document, its ``top_k``; 0: all; see
    :meth:`~simdask.index.Index.query_top`). A document that cannot be read does not stop the
    others: it is returned in :attr:`QueryBatch.unreadable`.
    """
    return query_documents(index, read_queries(paths), min_similarity, top)


def query_documents(
    index: Index,
    docs: list[tuple[str, str | ExtractionError]],
    min_similarity: float = 0.0,
    top: int | None = None,
) -> QueryBatch:
    """:func:`query_files` for documents already read (as
    :func:`~simdask.ingest.sources.read_queries` returns them: ``(key, text or error)``)."""
    good = [(key, text) for key, text in docs if isinstance(text, str)]
    k = index.config.k
    if top is None:
        top = index.config.top_k
    if top < 0:
        raise ConfigError(f"expected top >= 0 (0: every match), found {top}")
    found = index.query_top([text for _, text in good], min_similarity, top or None)
    results = [
        # a match means at least one chunk, so at least k words: count words only without one
        QueryResult(key, matches, not matches and len(words(text)) < k, passed)
        for (key, text), (matches, passed) in zip(good, found, strict=True)
    ]
    bad = [text for _, text in docs if not isinstance(text, str)]
    return QueryBatch(results, bad, k)


def batch_summary(sent: int, batch: QueryBatch) -> str:
    """What a check did, in words: ``"6 documents sent: 2 compared, 4 unreadable; 3 matches"``
    (``sent``: the documents sent; those not compared for a note's reason, too short or a
    scanned PDF, are counted apart: ``"1 not compared (see the notes)"``)."""
    notes = sum(1 for r in batch.results if r.too_short)
    notes += sum(1 for e in batch.unreadable if e.kind in NOTE_KINDS)
    bad = sum(1 for e in batch.unreadable if e.kind not in NOTE_KINDS)
    compared = len(batch.results) - sum(1 for r in batch.results if r.too_short)
    parts = [f"{compared:,} compared"]
    if notes:
        parts.append(f"{notes:,} not compared (see the notes)")
    if bad:
        parts.append(f"{bad:,} unreadable")
    matches = sum(len(r.matches) for r in batch.results)
    return (
        f"{counted(sent, 'document')} sent: {', '.join(parts)}; "
        f"{counted(matches, 'match', 'matches')}"
    )
