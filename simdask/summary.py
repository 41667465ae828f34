"""What the API returns: the summary of a run and the matches of a query."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["QueryMatch", "RunSummary"]


@dataclass(frozen=True)
class QueryMatch:
    """An indexed document sharing chunks with a query text.

    ``similarity``: percent of the query's chunks found in the document; ``reverse_similarity``:
    percent of the document's chunks found in the query.
    """

    key: str
    similarity: float
    reverse_similarity: float
    shared: int
    query_chunks: int
    doc_chunks: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dict(self.__dict__)


@dataclass
class RunSummary:
    """What one update did: documents added, modified, deleted, unchanged, failed (per-file
    errors, including duplicate keys; too-short documents are indexed and counted apart),
    similarity rows written, seconds per stage, the generation committed."""

    run_id: int
    generation: int
    added: int
    modified: int
    deleted: int
    unchanged: int
    failed: int
    too_short: int
    similarity_rows: int
    skipped_chunks: int
    words: int
    documents: int = 0
    index_bytes: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    errors: list[tuple[str, str, str]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (errors as ``[key, kind, message]`` lists)."""
        d = dict(self.__dict__)
        d["errors"] = [list(e) for e in self.errors]
        return d
