"""Reading the aligned totals of an index (issue 29 item 2): one frozen :class:`DocTotal`
per document that has a total, with its sources, and the aligned coverage of stored pairs.

Percentages throughout (0..100): ``total`` is the percent of a document's words inside
passages found in any other document, a source's ``share`` the percent inside passages taken
from that source, ``aligned`` of a pair the percent of ``doc`` inside passages taken from
``other``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from simdask.storage.sql import connection
from simdask.storage.totals import aligned_shares, stored_totals, totals_status

__all__ = ["TOTAL_FIELDS", "DocTotal", "TotalSource", "pair_aligned", "read_totals", "status"]

#: the columns of ``simdask totals`` as a table and CSV
TOTAL_FIELDS = ("doc", "total", "words", "sources")


@dataclass(frozen=True)
class TotalSource:
    """One source of a document's total: its ``key`` and ``share``, the percent (0..100) of
    the document's words inside passages taken from it."""

    key: str
    share: float

    def to_dict(self) -> dict[str, Any]:
        """``{"key", "share"}``."""
        return {"key": self.key, "share": self.share}


@dataclass(frozen=True)
class DocTotal:
    """A document's total: ``doc`` (its key), ``total`` (percent 0..100 of its ``words``
    inside passages found in any other document: the union over the sources) and
    ``sources``, largest share first."""

    doc: str
    total: float
    words: int
    sources: tuple[TotalSource, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"doc", "total", "words", "sources": [{"key", "share"}, ...]}``."""
        return {
            "doc": self.doc,
            "total": self.total,
            "words": self.words,
            "sources": [s.to_dict() for s in self.sources],
        }

    def table_row(self) -> dict[str, Any]:
        """The row of the table and CSV: sources as ``key share%; ...``."""
        shown = "; ".join(f"{s.key} {s.share:.1f}%" for s in self.sources)
        return {
            "doc": self.doc,
            "total": round(self.total, 2),
            "words": self.words,
            "sources": shown,
        }


def read_totals(db: Any, keys: Iterable[str] | None = None) -> list[DocTotal]:
    """The :class:`DocTotal` of every document with a total (or of those of ``keys`` that
    have one), by key; ``db``: the catalog or its connection, in the caller's snapshot."""
    conn = connection(db)
    return [
        DocTotal(key, 100.0 * total, words, tuple(TotalSource(k, 100.0 * s) for k, s in src))
        for key, words, total, src in stored_totals(conn, keys)
    ]


def pair_aligned(db: Any, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], float]:
    """``(doc, other) -> aligned``: the percent of ``doc``'s words inside passages taken from
    ``other``, for each pair (keys) that is aligned; absent: not aligned."""
    conn = connection(db)
    return {p: 100.0 * s for p, s in aligned_shares(conn, pairs).items()}


def status(db: Any) -> dict[str, Any]:
    """``{"documents", "tracked", "top", "scope"}`` (see
    :func:`simdask.storage.totals.totals_status`)."""
    return totals_status(connection(db))
