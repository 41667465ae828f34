"""Read-only catalog queries that the engine and the web page need, kept in storage so that
no SQL is written outside it. Each takes the catalog (or its SQLite connection,
:func:`simdask.storage.sql.connection`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from simdask.kernels.measures import CONTAINMENT
from simdask.storage.sql import connection, rows_in

__all__ = [
    "chunk_total",
    "document_page",
    "pair_histogram",
    "stored_similarities",
    "text_locations",
]

#: a stored row's reverse similarity (``other -> doc``) from its shared count, in SQL
#: (its reverse count: ``quoted_reverse`` aliased ``q`` where the query joins it, docs/term.md)
REVERSE = CONTAINMENT.sql("COALESCE(q.reverse, s.shared)", "b.n_chunks")


def text_locations(db: Any, doc_ids: Sequence[int]) -> list[tuple[int, str, int, int]]:
    """``(doc_id, text pack, offset, length)`` of the stored text of each of ``doc_ids`` that
    has one (offsets and lengths in bytes of the pack)."""
    return list(
        rows_in(
            db,
            "SELECT doc_id, text_pack, text_offset, text_length FROM documents"
            " WHERE doc_id IN {in} AND text_pack IS NOT NULL",
            [int(d) for d in doc_ids],
        )
    )


def chunk_total(db: Any, doc_ids: Iterable[int]) -> int:
    """The sum of ``|A|`` (distinct chunks) over the committed documents ``doc_ids``."""
    sql = "SELECT COALESCE(SUM(n_chunks), 0) FROM documents WHERE doc_id IN {in}"
    return int(sum(r[0] for r in rows_in(db, sql, [int(d) for d in doc_ids])))


def document_page(
    db: Any, search: str, limit: int, offset: int
) -> tuple[int, list[tuple[Any, ...]]]:
    """Documents whose key contains ``search`` (case-insensitive, taken literally; empty:
    all), by key: ``(total, rows)``, each row ``(key, words, chunks, status, best)`` where
    ``best`` is the document's highest stored similarity to another (percent, None: none)."""
    conn = connection(db)
    like = "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    where = "WHERE key LIKE ? ESCAPE '\\'"
    total = conn.execute(f"SELECT COUNT(*) FROM documents {where}", (like,)).fetchone()[0]
    rows = conn.execute(
        "SELECT d.key, d.n_words, d.n_chunks, d.status,"
        " (SELECT MAX(similarity) FROM similarity s WHERE s.doc = d.doc_id)"
        f" FROM documents d {where} ORDER BY key LIMIT ? OFFSET ?",
        (like, limit, offset),
    ).fetchall()
    return int(total), rows


def pair_histogram(db: Any, bins: int) -> list[int]:
    """Unordered pairs of documents counted in ``bins`` equal ranges of 0..100 percent of the
    larger of their two similarities (a pair stored both ways counts once; the rows are never
    loaded into Python)."""
    rows = (
        connection(db)
        .execute(
            "SELECT MIN(CAST(m * ? / 100.0 AS INTEGER), ?), COUNT(*) FROM ("
            f" SELECT MAX(MAX(s.similarity, {REVERSE})) AS m FROM similarity s"
            " JOIN documents b ON b.doc_id = s.other"
            " LEFT JOIN quoted_reverse q ON q.doc = s.doc AND q.other = s.other"
            " GROUP BY MIN(s.doc, s.other), MAX(s.doc, s.other)) GROUP BY 1",
            (bins, bins - 1),
        )
        .fetchall()
    )
    counts = [0] * bins
    for b, n in rows:
        counts[max(0, int(b))] += n
    return counts


def stored_similarities(db: Any) -> Iterator[tuple[int, int, int, float]]:
    """Every stored similarity row as ``(doc, other, shared, similarity)`` (doc IDs, distinct
    shared chunks, percent), streamed from the catalog in no particular order."""
    yield from connection(db).execute("SELECT doc, other, shared, similarity FROM similarity")
