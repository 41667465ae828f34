"""Reading the aligned totals of an index (issue 29 item 2): one frozen :class:`DocTotal`
per document that has a total, with its sources, and the aligned coverage of stored pairs.

Percentages throughout (0..100): ``total`` is the percent of a document's words inside
passages found in any other document, a source's ``share`` the percent inside passages taken
from that source, ``aligned`` of a pair the percent of ``doc`` inside passages taken from
``other``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from simdask.alignment import align_prepared, prepare
from simdask.alignment.segment import word_spans
from simdask.errors import ConfigError
from simdask.kernels.aligned_totals import (
    covered_words,
    doc_total,
    excluded_text,
    word_intervals,
)
from simdask.kernels.words import chunks
from simdask.storage.aligned_reads import (
    aligned_shares,
    source_intervals,
    stored_totals,
    totals_status,
)
from simdask.storage.decisions import decision_fields, decisions_by_pair, excluded_by_doc
from simdask.storage.sql import connection

__all__ = [
    "SORTS",
    "TOTAL_FIELDS",
    "DocTotal",
    "TotalSource",
    "pair_aligned",
    "query_rows",
    "query_total",
    "read_totals",
    "similar_rows",
    "sort_rows",
    "source_spans",
    "status",
]

#: what ``similar`` and ``query`` sort by (``--sort``), largest first
SORTS = ("similarity", "aligned", "total")

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
    ``sources``, largest share first; ``excluded``: the sources the teacher left out of this
    document (``simdask mark DOC SOURCE --exclude-source``), counted in neither."""

    doc: str
    total: float
    words: int
    sources: tuple[TotalSource, ...]
    excluded: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """``{"doc", "total", "words", "sources": [{"key", "share"}, ...],
        "excluded_sources": [key, ...]}``."""
        return {
            "doc": self.doc,
            "total": self.total,
            "words": self.words,
            "sources": [s.to_dict() for s in self.sources],
            "excluded_sources": list(self.excluded),
        }

    def table_row(self) -> dict[str, Any]:
        """The row of the table and CSV: sources as ``key share%; ...``."""
        shown = "; ".join(f"{s.key} {s.share:.1f}%" for s in self.sources)
        if self.excluded:
            shown += f" (excluded by the teacher: {', '.join(self.excluded)})"
        return {
            "doc": self.doc,
            "total": round(self.total, 2),
            "words": self.words,
            "sources": shown,
        }


def read_totals(db: Any, keys: Iterable[str] | None = None) -> list[DocTotal]:
    """The :class:`DocTotal` of every document with a total (or of those of ``keys`` that
    have one), by key; ``db``: the catalog or its connection, in the caller's snapshot. A
    source the teacher left out of a document is in neither its total nor its sources
    (:attr:`DocTotal.excluded` names it)."""
    conn = connection(db)
    rows = stored_totals(conn, keys)
    left_out = excluded_by_doc(conn, [r[0] for r in rows])
    out = []
    for key, words, total, src in rows:
        gone = left_out.get(key, frozenset())
        if gone:  # the union again, without the sources the teacher left out
            kept = [iv for k, iv in source_intervals(conn, key) if k not in gone]
            total = covered_words(kept) / words if words else 0.0
            src = [(k, s) for k, s in src if k not in gone]
        sources = tuple(TotalSource(k, 100.0 * s) for k, s in src)
        out.append(DocTotal(key, 100.0 * total, words, sources, tuple(sorted(gone))))
    return out


def pair_aligned(db: Any, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], float]:
    """``(doc, other) -> aligned``: the percent of ``doc``'s words inside passages taken from
    ``other``, for each pair (keys) that is aligned; absent: not aligned."""
    conn = connection(db)
    return {p: 100.0 * s for p, s in aligned_shares(conn, pairs).items()}


def status(db: Any) -> dict[str, Any]:
    """``{"documents", "tracked", "top", "rule", "scope"}`` (see
    :func:`simdask.storage.aligned_reads.totals_status`)."""
    return totals_status(connection(db))


def sort_rows(
    rows: list[dict], sort: str = "similarity", min_total: float | None = None
) -> list[dict]:
    """``rows`` (dicts with ``similarity``, ``aligned`` and ``total``, percent or None)
    without those whose ``total`` is below ``min_total`` (or None, when it is given), sorted
    by ``sort`` (:data:`SORTS`), largest first, rows without a value last, ties as given."""
    if sort not in SORTS:
        raise ConfigError(f"sort must be one of {', '.join(SORTS)}, found {sort!r}")
    if min_total is not None:
        rows = [r for r in rows if r.get("total") is not None and r["total"] >= min_total]
    return sorted(rows, key=lambda r: (r.get(sort) is None, -(r.get(sort) or 0.0)))


def similar_rows(
    index: Any,
    key: str | None = None,
    min_similarity: float = 0.0,
    sort: str = "similarity",
    min_total: float | None = None,
) -> list[dict]:
    """The stored directed similarity rows (of ``key``, or all) as ``similar --format
    jsonl`` prints them: each with ``aligned`` (percent of ``doc`` inside passages taken
    from ``other``; None: the pair is not aligned), ``total`` (``doc``'s total; None:
    none) and ``source_excluded`` (the teacher left ``other`` out of ``doc``'s total:
    ``simdask mark DOC SOURCE --exclude-source``; the similarity is the stored one), then
    the pair's ``decision`` and ``note`` (``simdask mark``; None: none), filtered and sorted
    by :func:`sort_rows`. Call inside a snapshot."""
    rows = index.similar(key, min_similarity) if key else index.pairs(min_similarity)
    aligned = pair_aligned(index.catalog, [(r.doc, r.other) for r in rows])
    totals = {t.doc: t.total for t in read_totals(index.catalog, {r.doc for r in rows})}
    left_out = excluded_by_doc(index.catalog, {r.doc for r in rows})
    marks = decisions_by_pair(index.catalog)
    out = []
    for r in rows:
        d = r.to_dict()
        head = {k: d.pop(k) for k in ("doc", "other", "similarity")}
        extra = {
            "aligned": aligned.get((r.doc, r.other)),
            "total": totals.get(r.doc),
            "source_excluded": r.other in left_out.get(r.doc, ()),
            **decision_fields(marks, r.doc, r.other),
        }
        out.append({**head, **extra, **d})
    return sort_rows(out, sort, min_total)


def query_total(
    index: Any, name: str, text: str, matches: Sequence[Any], top: int = 5
) -> tuple[DocTotal, dict[str, float]]:
    """The aligned total of a text that is not in the index (named ``name``): the text
    aligned with the stored texts of its ``top`` candidates (``matches``: its
    :class:`~simdask.summary.QueryMatch` es, best first by shared chunks, ties by key), under
    the index's exclusions, in this process; with quotations excluded, those of ``text``
    only (a source's quotation copied without quotation marks counts for the text).
    Returns the total and ``key -> aligned`` (percent of the text inside passages taken from
    that document) per candidate."""
    cfg = index.config
    tpl = frozenset(c for t in index.templates() for c in chunks(t.text, cfg.k))

    def excl(t: str, quotes: bool) -> list[tuple[int, int]]:
        return excluded_text(t, quotes, cfg.exclude_bibliography, tpl, cfg.k)

    best = sorted(matches, key=lambda m: (-m.shared, m.key))[: max(top, 0)]
    starts, ends, _ = word_spans(text)
    mine = excl(text, cfg.exclude_quotes)
    # a quotation is left out of its own document only (docs/term.md): the text's own
    # quotations are excluded, the source's are text the query may have copied
    ready = prepare(text, None, mine)  # once for every candidate (as align() would each time)
    by_source = {}
    for i, m in enumerate(best):
        other = index.text(m.key)
        found = align_prepared(ready, prepare(other, None, excl(other, False)))
        by_source[i] = word_intervals(starts, ends, [(p.a_start, p.a_end) for p in found])
    total, ranked = doc_total(len(starts), by_source)
    sources = tuple(TotalSource(best[i].key, 100.0 * s) for i, s in ranked)
    shares = {best[i].key: 100.0 * s for i, s in ranked}
    aligned = {m.key: shares.get(m.key, 0.0) for m in best}
    return DocTotal(name, 100.0 * total, len(starts), sources), aligned


def query_rows(
    index: Any,
    rows: list[dict],
    texts: dict[str, str],
    top: int = 5,
    sort: str = "similarity",
    min_total: float | None = None,
) -> tuple[list[dict], list[DocTotal]]:
    """``query``'s rows (dicts with ``query`` and ``key``) each with ``aligned`` (percent of
    the query inside passages taken from ``key``; None: not among its ``top`` candidates)
    and ``total`` (the query's), filtered and sorted by :func:`sort_rows`; and each query's
    :class:`DocTotal` (``texts``: query name -> text)."""
    by_query: dict[str, list[Any]] = {}
    for r in rows:
        by_query.setdefault(r["query"], []).append(r)
    totals, out = [], []
    for name, mine in by_query.items():
        matches = [_Match(r["key"], int(r["shared"])) for r in mine]
        total, aligned = query_total(index, name, texts[name], matches, top)
        totals.append(total)
        out += [{**r, "aligned": aligned.get(r["key"]), "total": total.total} for r in mine]
    return sort_rows(out, sort, min_total), totals


@dataclass(frozen=True)
class _Match:
    """What :func:`query_total` reads of a match: its key and shared chunk count."""

    key: str
    shared: int


def source_spans(db: Any, key: str, text: str) -> list[tuple[str, list[tuple[int, int]]]]:
    """Where each source of the total of document ``key`` lies in its ``text`` (the stored
    text, :meth:`Index.text <simdask.index.Index.text>`): ``(source key, [(start, end),
    ...])`` code-point spans, one per run of words taken from that source, largest share
    first (a view colours each source; runs of two sources may overlap). ``[]``: no total."""
    starts, ends, _ = word_spans(text)
    out = []
    for src, iv in source_intervals(connection(db), key):
        spans = [(int(starts[i]), int(ends[j - 1])) for i, j in iv.tolist() if j > i]
        out.append((src, spans))
    return out
