"""A teacher's decisions on pairs (issue 31, item 12), in the catalog table ``decisions``.

A decision marks an unordered pair of keys ``reviewed``, ``dismissed`` or ``confirmed``, with a
note and the time it was made. Decisions never change the stored similarities, and runs never
touch them: they are kept across incremental runs, re-chunks and rebuilds, and a decision on
a key that is removed and indexed again applies again. The pair is stored once, its keys in
code-point order. The table is created by the first decision (an index without it has none).

A teacher can also leave one source out of one document (table ``source_exclusions``,
directed: a source the essay cites properly, the student's own earlier work): the document's
total and list of sources leave it out in every view, which says so; the stored similarities
are unchanged, and runs never touch the table either.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from simdask.errors import ConfigError
from simdask.storage.sql import connection

__all__ = [
    "EXCLUSION_SCHEMA",
    "SCHEMA",
    "STATUSES",
    "Decision",
    "SourceExclusion",
    "all_decisions",
    "decision_fields",
    "decisions_by_pair",
    "decisions_for",
    "excluded_by_doc",
    "set_decision",
    "set_source_exclusion",
    "source_exclusions",
]

#: the decisions a pair can be marked with, and ``clear`` to forget one
STATUSES = ("reviewed", "dismissed", "confirmed")

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS decisions (a_key TEXT NOT NULL, b_key TEXT NOT NULL, "
    "status TEXT NOT NULL, note TEXT NOT NULL, marked_at REAL NOT NULL, "
    "PRIMARY KEY (a_key, b_key))"
)


@dataclass(frozen=True)
class Decision:
    """The decision on the pair ``a_key``, ``b_key`` (in code-point order): ``status`` (one
    of :data:`STATUSES`), ``note``, ``marked_at`` (seconds since the epoch)."""

    a_key: str
    b_key: str
    status: str
    note: str
    marked_at: float

    def to_dict(self) -> dict[str, Any]:
        """``{"a_key", "b_key", "status", "note", "marked_at"}``."""
        return {
            "a_key": self.a_key,
            "b_key": self.b_key,
            "status": self.status,
            "note": self.note,
            "marked_at": self.marked_at,
        }


def _ordered(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def set_decision(catalog: Any, a: str, b: str, status: str, note: str, when: float) -> None:
    """Mark the pair ``a``, ``b`` with ``status`` and ``note`` at ``when`` (replacing an
    earlier decision); ``status`` ``clear`` forgets it. Raises :class:`ConfigError` for
    another status or a pair of one key."""
    if status not in (*STATUSES, "clear"):
        raise ConfigError(
            f"expected a decision among {', '.join(STATUSES)} or clear, found {status!r}"
        )
    if a == b:
        raise ConfigError(f"expected two different documents, found {a!r} twice")
    conn = connection(catalog)
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(SCHEMA)
        if status == "clear":
            conn.execute("DELETE FROM decisions WHERE a_key = ? AND b_key = ?", _ordered(a, b))
        else:
            conn.execute(
                "INSERT OR REPLACE INTO decisions VALUES (?, ?, ?, ?, ?)",
                (*_ordered(a, b), status, note, float(when)),
            )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _rows(db: Any, sql: str, args: tuple[Any, ...] = ()) -> list[Decision]:
    try:
        return [Decision(*r) for r in connection(db).execute(sql, args)]
    except sqlite3.OperationalError as e:
        if "no such table" in str(e):
            return []
        raise


def all_decisions(db: Any) -> list[Decision]:
    """Every decision, by pair."""
    return _rows(db, "SELECT * FROM decisions ORDER BY a_key, b_key")


def decisions_for(db: Any, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Decision]:
    """The decisions on ``pairs``, by the pair as given (either order)."""
    wanted = {_ordered(a, b): (a, b) for a, b in pairs}
    if not wanted:
        return {}
    keys = sorted({k for p in wanted for k in p})
    out = {}
    for i in range(0, len(keys), 400):
        part = keys[i : i + 400]
        marks = ",".join("?" * len(part))
        for d in _rows(db, f"SELECT * FROM decisions WHERE a_key IN ({marks})", tuple(part)):
            given = wanted.get((d.a_key, d.b_key))
            if given is not None:
                out[given] = d
    return out


def decisions_by_pair(db: Any) -> dict[tuple[str, str], Decision]:
    """Every decision, by its pair in code-point order (read once: a teacher's decisions are
    few, however many pairs a listing or an export goes through)."""
    return {(d.a_key, d.b_key): d for d in all_decisions(db)}


def decision_fields(
    marks: dict[tuple[str, str], Decision], doc: str, other: str
) -> dict[str, str | None]:
    """``{"decision": status, "note": note}`` of the pair ``doc``, ``other`` (either order)
    in ``marks`` (:func:`decisions_by_pair`); None for a pair without a decision, and for
    an empty note: the fields a pair's exported row carries."""
    d = marks.get(_ordered(doc, other))
    return {
        "decision": None if d is None else d.status,
        "note": None if d is None or not d.note else d.note,
    }


#: a source a teacher left out of one document's total (``simdask mark DOC SOURCE
#: --exclude-source``): directed, the document first
EXCLUSION_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS source_exclusions (doc_key TEXT NOT NULL, "
    "source_key TEXT NOT NULL, note TEXT NOT NULL, marked_at REAL NOT NULL, "
    "PRIMARY KEY (doc_key, source_key))"
)


@dataclass(frozen=True)
class SourceExclusion:
    """Document ``doc_key`` has ``source_key`` left out of its total and sources by the
    teacher (a source it cites properly, the student's own earlier work), with a ``note``,
    at ``marked_at`` (seconds since the epoch)."""

    doc_key: str
    source_key: str
    note: str
    marked_at: float

    def to_dict(self) -> dict[str, Any]:
        """``{"doc_key", "source_key", "note", "marked_at"}``."""
        return {
            "doc_key": self.doc_key,
            "source_key": self.source_key,
            "note": self.note,
            "marked_at": self.marked_at,
        }


def set_source_exclusion(
    catalog: Any, doc: str, source: str, excluded: bool, note: str, when: float
) -> None:
    """Leave ``source`` out of document ``doc``'s total and sources (``excluded``), or take
    that back (not ``excluded``). The stored similarities never change. Raises
    :class:`ConfigError` for a document excluded from itself."""
    if doc == source:
        raise ConfigError(f"expected a source other than the document, found {doc!r} twice")
    conn = connection(catalog)
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(EXCLUSION_SCHEMA)
        if excluded:
            conn.execute(
                "INSERT OR REPLACE INTO source_exclusions VALUES (?, ?, ?, ?)",
                (doc, source, note, float(when)),
            )
        else:
            conn.execute(
                "DELETE FROM source_exclusions WHERE doc_key = ? AND source_key = ?",
                (doc, source),
            )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def source_exclusions(db: Any, docs: Iterable[str] | None = None) -> list[SourceExclusion]:
    """The sources left out of documents' totals (of ``docs``, or all), by document and
    source; an index without the table has none."""
    sql = "SELECT * FROM source_exclusions"
    order = " ORDER BY doc_key, source_key"
    rows: list[Any] = []
    try:
        if docs is None:
            rows = list(connection(db).execute(sql + order))
        else:
            keys = sorted(set(docs))
            for i in range(0, len(keys), 400):
                part = keys[i : i + 400]
                marks = ",".join("?" * len(part))
                rows += connection(db).execute(f"{sql} WHERE doc_key IN ({marks}){order}", part)
    except sqlite3.OperationalError as e:
        if "no such table" in str(e):
            return []
        raise
    return [SourceExclusion(*r) for r in rows]


def excluded_by_doc(db: Any, docs: Iterable[str] | None = None) -> dict[str, frozenset[str]]:
    """``doc key -> the source keys left out of it`` (documents with none are absent)."""
    out: dict[str, set[str]] = {}
    for x in source_exclusions(db, docs):
        out.setdefault(x.doc_key, set()).add(x.source_key)
    return {k: frozenset(v) for k, v in out.items()}
