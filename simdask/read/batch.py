"""A batch overview (issue 31 item 9): the documents of a run, of a folder or of a date range
in one table, sorted by their total (the percent of each found in other documents, issue 29),
each with its best source, the source's folder and the date it was first indexed; and the
groups of documents that share text (connected components of the pairs whose aligned share
is at least a level, as JPlag and Dolos show clusters).

Percentages are 0..100; dates are seconds since the epoch (UTC). A document whose total was
never computed has ``total`` None: it is listed after the others and never shown as 0 %.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simdask.errors import ConfigError
from simdask.read.total_reads import DocTotal, read_totals
from simdask.storage.doc_dates import document_dates, run_documents

__all__ = [
    "BATCH_FIELDS",
    "GROUP_LEVEL",
    "Batch",
    "BatchRow",
    "batch_overview",
    "batch_rows",
    "date_bounds",
    "day",
    "folder_of",
    "select_keys",
    "share_groups",
    "total_edges",
]

#: the columns of ``similar --batch`` (table, CSV, JSONL)
BATCH_FIELDS = (
    "doc",
    "total",
    "sources",
    "best_source",
    "best_share",
    "source_folder",
    "source_date",
    "date",
)
#: the least aligned share (percent, either direction) that puts two documents in one group
GROUP_LEVEL = 10.0


def folder_of(key: str) -> str:
    """The folder part of a key (``"2025/submissions"`` of ``"2025/submissions/smith.docx"``;
    ``""`` for a key without one)."""
    return key.rpartition("/")[0]


def day(when: float | None) -> str:
    """A time (seconds since the epoch) as its UTC date ``YYYY-MM-DD`` (``""`` for None)."""
    if when is None:
        return ""
    return dt.datetime.fromtimestamp(when, dt.timezone.utc).strftime("%Y-%m-%d")


def date_bounds(since: str | None, until: str | None) -> tuple[float | None, float | None]:
    """``(low, high)`` seconds since the epoch of the UTC dates ``since`` (from its start) and
    ``until`` (to its end, inclusive), each ``YYYY-MM-DD`` or None (unbounded); a
    :class:`~simdask.errors.ConfigError` for another form or an empty range."""
    out: list[float | None] = []
    for name, text, extra in (("since", since, 0), ("until", until, 1)):
        if text is None:
            out.append(None)
            continue
        try:
            d = dt.date.fromisoformat(text)
        except ValueError:
            raise ConfigError(f"{name} must be a date YYYY-MM-DD, found {text!r}") from None
        start = dt.datetime(d.year, d.month, d.day, tzinfo=dt.timezone.utc)
        out.append((start + dt.timedelta(days=extra)).timestamp())
    low, high = out
    if low is not None and high is not None and high <= low:
        raise ConfigError(f"the date range is empty: since {since} is after until {until}")
    return low, high


def select_keys(
    dates: Mapping[str, tuple[float, float]],
    prefix: str | None = None,
    low: float | None = None,
    high: float | None = None,
) -> list[str]:
    """The keys of ``dates`` (``{key: (added_at, updated_at)}``) under the folder ``prefix``
    (a key equal to it or starting with ``prefix/``; None: any) and first indexed in
    ``[low, high)`` (None: unbounded), by key."""
    folder = None if prefix is None else prefix.rstrip("/")
    out = []
    for key, (added, _) in dates.items():
        if folder and key != folder and not key.startswith(folder + "/"):
            continue
        if (low is not None and added < low) or (high is not None and added >= high):
            continue
        out.append(key)
    return sorted(out)


@dataclass(frozen=True)
class BatchRow:
    """One document of a batch: ``total`` percent of its words found in other documents
    (None: never computed), in ``sources`` documents; its best source (the largest share;
    None: none), that source's ``best_share`` percent, folder and first-indexed time
    ``source_added``; the document's own first-indexed time ``added``."""

    doc: str
    total: float | None
    sources: int | None
    best_source: str | None
    best_share: float | None
    source_added: float | None
    added: float

    def to_dict(self) -> dict[str, Any]:
        """The row of ``similar --batch`` (:data:`BATCH_FIELDS`; dates ``YYYY-MM-DD``)."""
        return {
            "doc": self.doc,
            "total": self.total,
            "sources": self.sources,
            "best_source": self.best_source,
            "best_share": self.best_share,
            "source_folder": None if self.best_source is None else folder_of(self.best_source),
            "source_date": day(self.source_added) or None,
            "date": day(self.added),
        }

    def table_row(self) -> dict[str, Any]:
        """The row as a table shows it: ``not computed`` for a missing total, blanks for no
        source."""
        d = self.to_dict()
        d["total"] = "not computed" if self.total is None else round(self.total, 1)
        d["best_share"] = "" if self.best_share is None else round(self.best_share, 1)
        for name in ("sources", "best_source", "source_folder", "source_date"):
            d[name] = "" if d[name] is None else d[name]
        return d


@dataclass(frozen=True)
class Batch:
    """A batch overview: what was selected (``what``, in words), its rows (largest total
    first), its groups (each a sorted tuple of keys, largest first) and their ``level``."""

    what: str
    rows: tuple[BatchRow, ...]
    groups: tuple[tuple[str, ...], ...]
    level: float


def batch_rows(
    keys: Iterable[str],
    totals: Mapping[str, DocTotal],
    dates: Mapping[str, tuple[float, float]],
) -> list[BatchRow]:
    """The rows of the documents ``keys``: their totals (``totals`` by key; absent: never
    computed) and first-indexed times (``dates``), the largest total first, then the
    documents without a total, ties by key."""
    rows = []
    for key in keys:
        t = totals.get(key)
        best = t.sources[0] if t is not None and t.sources else None
        rows.append(
            BatchRow(
                doc=key,
                total=None if t is None else t.total,
                sources=None if t is None else len(t.sources),
                best_source=None if best is None else best.key,
                best_share=None if best is None else best.share,
                source_added=None if best is None else dates.get(best.key, (None,))[0],
                added=dates[key][0],
            )
        )
    return sorted(rows, key=lambda r: (r.total is None, -(r.total or 0.0), r.doc))


def share_groups(
    edges: Iterable[tuple[str, str, float]], level: float, members: Sequence[str] | None = None
) -> list[tuple[str, ...]]:
    """The groups of documents that share text: the connected components (of two or more
    documents) of the graph whose edges are the ``(a, b, share)`` with ``share >= level``
    (percent); with ``members``, only the components holding one of them. Each group is a
    sorted tuple of keys; the largest group first, ties by their first key."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    for a, b, share in edges:
        if share < level or a == b:
            continue
        for x in (a, b):
            parent.setdefault(x, x)
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    comps: dict[str, list[str]] = {}
    for x in parent:
        comps.setdefault(find(x), []).append(x)
    wanted = None if members is None else set(members)
    groups = [
        tuple(sorted(c))
        for c in comps.values()
        if len(c) > 1 and (wanted is None or wanted.intersection(c))
    ]
    return sorted(groups, key=lambda g: (-len(g), g))


def total_edges(totals: Iterable[DocTotal]) -> list[tuple[str, str, float]]:
    """``(doc, source, share)`` of every source of every total: the percent of ``doc`` inside
    passages taken from ``source``."""
    return [(t.doc, s.key, s.share) for t in totals for s in t.sources]


def batch_overview(
    db: Any,
    *,
    run: int | None = None,
    prefix: str | None = None,
    since: str | None = None,
    until: str | None = None,
    level: float = GROUP_LEVEL,
) -> Batch:
    """The overview of a batch of an index's documents (``db``: its catalog, in the caller's
    snapshot): those the committed run ``run`` added or modified (None and no other
    selection: the last run), else all; of them those under the folder ``prefix`` and first
    indexed between the UTC dates ``since`` and ``until`` (``YYYY-MM-DD``, inclusive). The
    groups are those holding a document of the batch, at ``level`` percent."""
    if not 0.0 <= level <= 100.0:  # also false for nan
        raise ConfigError(f"the group level must be a percent in 0..100, found {level!r}")
    dates = document_dates(db)
    low, high = date_bounds(since, until)
    what = []
    keys: Iterable[str] = dates
    if run is not None or (prefix is None and since is None and until is None):
        run_id, keys = run_documents(db, run)
        if run_id is None:
            raise ConfigError(
                "no committed run" + ("" if run is None else f" {run}") + " in the index"
            )
        what.append(f"run {run_id}")
    chosen = select_keys({k: dates[k] for k in keys if k in dates}, prefix, low, high)
    if prefix:
        what.append(f"folder {prefix.rstrip('/')}")
    if since or until:
        what.append(f"first indexed {since or '…'} to {until or '…'}")
    totals = {t.doc: t for t in read_totals(db)}
    rows = batch_rows(chosen, totals, dates)
    groups = share_groups(total_edges(totals.values()), level, chosen)
    return Batch(", ".join(what) or "all documents", tuple(rows), tuple(groups), level)
