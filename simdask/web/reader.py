"""The server's read side: one :class:`~simdask.index.Index` opened read-only on one thread.

Every read (queries, documents, reports, statistics) runs on that thread, so the SQLite
connection and the cached shards are used by one thread only, and the event loop never blocks.
Each read sees one committed state from start to end, with that state's settings (a running
update changes nothing a reader sees until it commits, and never waits for a reader; a
rebuild with other settings is followed at the next read). Texts of checked documents are
kept for their pair reports (:class:`QueryStore`), bounded in count and bytes.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from simdask.index import Index
from simdask.kernels.similarity import containment
from simdask.read.snapshots import read_consistent
from simdask.read.total_reads import read_totals
from simdask.read.total_reads import similar_rows as stored_similar_rows
from simdask.storage.reads import document_page, pair_histogram

__all__ = [
    "QueryStore",
    "Reader",
    "document_pairs",
    "search_documents",
    "similar_rows",
    "similarity_histogram",
]

T = TypeVar("T")


class Reader:
    """Runs functions of an open index on its own thread: ``await reader.run(fn, *args)``
    calls ``fn(index, *args)``."""

    def __init__(self, index_path: Path, preload: bool = True):
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="simdask-reader")
        self.index = self._pool.submit(self._open, index_path, preload).result()

    @staticmethod
    def _open(path: Path, preload: bool):
        idx = Index.open(path)
        if preload:
            idx.preload()
        return idx

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(index, *args)`` on the reader thread, all its reads in one committed state
        with that state's settings (:func:`~simdask.read.snapshots.read_consistent`)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._pool, lambda: read_consistent(self.index, fn, *args)
        )

    def close(self) -> None:
        """Close the index and stop the thread."""
        self._pool.submit(self.index.close).result()
        self._pool.shutdown()


class QueryStore:
    """Texts of recently checked documents by query id, for their pair reports: at most
    ``max_queries`` queries and ``max_bytes`` characters, the oldest forgotten first."""

    def __init__(self, max_queries: int = 200, max_bytes: int = 100_000_000):
        self.max_queries = max_queries
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, dict[str, str]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, texts: dict[str, str]) -> str:
        """Keep ``{query key: text}``; returns the new query id."""
        qid = secrets.token_urlsafe(12)
        with self._lock:
            self._items[qid] = texts
            while len(self._items) > self.max_queries or (
                len(self._items) > 1 and self._size() > self.max_bytes
            ):
                self._items.popitem(last=False)
        return qid

    def get(self, qid: str, key: str) -> str | None:
        """The text of query document ``key`` of query ``qid`` (None: unknown or forgotten)."""
        with self._lock:
            return self._items.get(qid, {}).get(key)

    def _size(self) -> int:
        return sum(len(t) for texts in self._items.values() for t in texts.values())


def search_documents(idx, search: str, limit: int = 100, offset: int = 0) -> dict[str, Any]:
    """Documents whose key contains ``search`` (case-insensitive; empty: all), by key:
    ``{"total": n, "documents": [{"key", "words", "chunks", "status", "best", "total"}]}``
    where ``best`` is the highest stored similarity of the document to another (percent)
    and a document's ``total`` the percent of it found in other documents (None: never
    computed, :mod:`simdask.read.total_reads`)."""
    total, rows = document_page(idx.catalog, search, limit, offset)
    found = {t.doc: t.total for t in read_totals(idx.catalog, [r[0] for r in rows])}
    docs = [
        {"key": k, "words": w, "chunks": n, "status": st, "best": b or 0.0, "total": found.get(k)}
        for k, w, n, st, b in rows
    ]
    return {"total": total, "documents": docs}


def similar_rows(idx, key: str) -> dict[str, Any]:
    """A document and its stored matches both ways, as ``simdask similar KEY --format jsonl``
    prints them (``similarity`` = percent of ``key``'s chunks in the other, ``aligned`` =
    percent of ``key`` inside passages taken from the other, ``total``: :mod:`simdask.read.
    totals`) with ``reverse_similarity`` = percent of the other's chunks in ``key``."""
    doc = idx.catalog.document(key)
    back = {r.other: r.reverse_shared for r in idx.similar(key)}  # directed with quotations
    rows = [
        {
            **r,
            "reverse_similarity": containment(back.get(r["other"], r["shared"]), r["other_chunks"]),
        }
        for r in stored_similar_rows(idx, key)
    ]
    info = {"key": doc.key, "words": doc.n_words, "chunks": doc.n_chunks, "status": doc.status}
    return {"document": info, "similar": rows}


def document_pairs(idx, key: str) -> dict[str, Any]:
    """A document and its pairs for the document page: one row per other document, seen from
    ``key`` (``a_in_b``: percent of ``key`` found in the other, ``b_in_a`` the reverse, and
    their wording ``in_words``), whichever direction was stored, the larger first."""
    doc = idx.catalog.document(key)
    info = {"key": doc.key, "words": doc.n_words, "chunks": doc.n_chunks, "status": doc.status}
    return {"document": info, "pairs": [p.table_row() for p in idx.pair_list(0.0, key)]}


def similarity_histogram(idx, bins: int = 10) -> list[int]:
    """Unordered pairs of documents counted in ``bins`` equal ranges of 0..100 percent of
    the larger of their two similarities (a pair stored both ways counts once; in SQL: the
    rows are never loaded)."""
    return pair_histogram(idx.catalog, bins)


def last_errors(idx) -> dict[str, Any]:
    """The last committed run and its per-file errors (key, kind, message), and the
    documents currently not indexed (``failures``: as ``simdask errors``)."""
    last = idx.catalog.last_run()
    errs = idx.catalog.errors_of_run(last["run_id"]) if last else []
    return {
        "run": last,
        "errors": [{"key": k, "kind": kind, "message": m} for k, kind, m in errs],
        "failures": [f.to_dict() for f in idx.failures()],
    }
