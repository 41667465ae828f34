"""Each document's quoted chunks Q (issue 31 item 4, docs/term.md "Quotations"), in the catalog
table ``quoted_chunks``.

With ``exclude_quotes`` on, a document's U (its chunks outside its quotations) is what the
postings hold; its Q (the chunks only inside its quotations,
:func:`~simdask.kernels.quoted.split_quoted`) is kept here, one blob of sorted chunk IDs a
document (:func:`~simdask.kernels.quoted.encode_ids`), so that the words another document
quotes still count as matchable when a third copies them unquoted. Written in a run's
commit (:class:`QuotedChanges`): rows of the run's new and modified documents replaced, of
deleted ones removed, the whole table replaced by a full build and cleared when the setting
is off. Documents without a quotation (or without chunks of their own) have no row.

Migration: the table is created by the first commit that writes it; the metadata
:data:`QUOTED_META` says it holds every document's Q. An index built with
``exclude_quotes`` before the table existed lacks it, and its next update re-chunks every
document first (:func:`simdask.write.rechunk.plan_exclusions`).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simdask.kernels.quoted import decode_ids
from simdask.storage.sql import connection, insert_values, rows_in

__all__ = [
    "QUOTED_META",
    "QUOTED_SCHEMA",
    "REVERSE_SCHEMA",
    "QuotedChanges",
    "ensure_reverse_table",
    "quoted_problems",
    "quoted_recorded",
    "quoted_sizes",
    "read_quoted",
    "realign_quoting",
    "write_quoted",
]

QUOTED_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS quoted_chunks (doc_id INTEGER PRIMARY KEY, ids BLOB NOT NULL)"
)
#: the reverse count of a directed row where it differs from the row's own: ``doc -> other``
#: holds ``shared`` of ``doc``'s chunks in ``other``, and ``other -> doc`` holds ``reverse``
#: (``S + E(other, doc)``); kept for every pair with ``E > 0`` either way that reaches the
#: threshold either way, so that a view shows both directions of a row stored one way
REVERSE_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS quoted_reverse (doc INTEGER NOT NULL, other INTEGER NOT NULL,"
    " reverse INTEGER NOT NULL, PRIMARY KEY (doc, other)) WITHOUT ROWID"
)
#: catalog metadata: the table holds the Q of every document (written with the rule on)
QUOTED_META = "quoted_chunks"


@dataclass
class QuotedChanges:
    """One run's changes of the tables: ``removed`` doc IDs (deleted or modified) lose their
    row, ``written`` ``{doc_id: blob}`` are inserted; ``replace_all``: every row goes
    first (a full build). ``lists``: the documents whose pairs' reverse counts are replaced
    by ``reverse`` (``doc, other, reverse`` arrays)."""

    removed: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    written: dict[int, bytes] = field(default_factory=dict)
    replace_all: bool = False
    lists: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    reverse: tuple[np.ndarray, np.ndarray, np.ndarray] = field(
        default_factory=lambda: (np.zeros(0, np.int64),) * 3
    )


def ensure_reverse_table(db: Any) -> None:
    """Create the reverse-count table in a catalog written before it existed (empty: every
    row's reverse count is its own)."""
    connection(db).execute(REVERSE_SCHEMA)


def _has_table(c: sqlite3.Connection) -> bool:
    q = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'quoted_chunks'"
    return c.execute(q).fetchone() is not None


def quoted_recorded(db: Any) -> bool:
    """Whether the table holds every document's Q (committed by a run with the rule on)."""
    c = connection(db)
    row = c.execute("SELECT value FROM meta WHERE name = ?", (QUOTED_META,)).fetchone()
    return row is not None


def write_quoted(db: Any, changes: QuotedChanges | None, exclude_quotes: bool) -> None:
    """Apply a run's changes inside its commit; with the setting off (``changes`` None) the
    table is emptied and the metadata removed (a later run with it on writes them again)."""
    c = connection(db)
    if changes is None:
        if not exclude_quotes:
            c.execute("DELETE FROM quoted_reverse")
            if _has_table(c):
                c.execute("DELETE FROM quoted_chunks")
            c.execute("DELETE FROM meta WHERE name = ?", (QUOTED_META,))
        return
    c.execute(QUOTED_SCHEMA)
    if changes.replace_all:
        c.execute("DELETE FROM quoted_chunks")
        c.execute("DELETE FROM quoted_reverse")
    else:
        c.executemany(
            "DELETE FROM quoted_chunks WHERE doc_id = ?",
            ((int(d),) for d in np.asarray(changes.removed).tolist()),
        )
        gone = ((int(d), int(d)) for d in np.asarray(changes.lists).tolist())
        c.executemany("DELETE FROM quoted_reverse WHERE doc = ? OR other = ?", gone)
    cols = [np.asarray(a, np.int64).tolist() for a in changes.reverse]
    insert_values(c, "INSERT OR REPLACE INTO quoted_reverse (doc, other, reverse)", cols)
    c.executemany(
        "INSERT OR REPLACE INTO quoted_chunks (doc_id, ids) VALUES (?, ?)",
        sorted(changes.written.items()),
    )
    c.execute("INSERT OR REPLACE INTO meta (name, value) VALUES (?, '1')", (QUOTED_META,))


def read_quoted(
    db: Any, hash_bits: int, doc_ids: list[int] | None = None
) -> tuple[np.ndarray, list[np.ndarray]]:
    """``(doc IDs, their Q sets)`` stored, by doc ID: every row, or those of ``doc_ids``
    (none when the table does not exist). Chunk IDs uint64, sorted."""
    c = connection(db)
    if not _has_table(c):
        return np.zeros(0, np.int64), []
    if doc_ids is None:
        rows = c.execute("SELECT doc_id, ids FROM quoted_chunks ORDER BY doc_id").fetchall()
    else:
        sql = "SELECT doc_id, ids FROM quoted_chunks WHERE doc_id IN {in}"
        rows = sorted(rows_in(c, sql, [int(d) for d in doc_ids]))
    docs = np.asarray([r[0] for r in rows], np.int64)
    return docs, [decode_ids(r[1], hash_bits) for r in rows]


def _itemsize(hash_bits: int) -> int:
    return 4 if hash_bits <= 32 else 8


def quoted_sizes(db: Any, hash_bits: int) -> dict[int, int]:
    """``{doc_id: |Q|}`` of every stored row (none when the table does not exist)."""
    c = connection(db)
    if not _has_table(c):
        return {}
    q = "SELECT doc_id, length(ids) / ? FROM quoted_chunks"
    return {int(d): int(n) for d, n in c.execute(q, (_itemsize(hash_bits),))}


def quoted_problems(db: Any, hash_bits: int, known: set[int], exclude_quotes: bool) -> list[str]:
    """What is wrong with the table (empty: nothing): rows of unknown doc IDs, blobs that
    are not whole sorted distinct chunk IDs of ``hash_bits`` bits, rows left with the
    setting off, or the setting on and the table not recorded."""
    c = connection(db)
    docs, sets = read_quoted(c, hash_bits)
    out = []
    if not exclude_quotes and len(docs):
        out.append(f"{len(docs)} rows kept although the index does not exclude quotations")
    if exclude_quotes and known and not quoted_recorded(c):
        out.append("the index excludes quotations but its quoted chunks are not recorded")
    unknown = [d for d in docs.tolist() if d not in known]
    if unknown:
        out.append(f"{len(unknown)} rows of doc IDs the catalog does not know, e.g. {unknown[0]}")
    size = _itemsize(hash_bits)
    lengths = c.execute("SELECT doc_id, length(ids) FROM quoted_chunks") if len(docs) else []
    bad = [d for d, n in lengths if n % size]
    top = 2**hash_bits
    unsorted = [d for d, q in zip(docs.tolist(), sets, strict=True) if _bad_set(q, top)]
    for what, ids in (("lengths not whole chunk IDs", bad), ("unsorted or out-of-range", unsorted)):
        if ids:
            out.append(f"{len(ids)} rows with {what}, e.g. doc {ids[0]}")
    return out


def _bad_set(ids: np.ndarray, top: int) -> bool:
    """Whether ``ids`` are not strictly increasing chunk IDs below ``top``."""
    return bool(len(ids) and (np.any(ids[1:] <= ids[:-1]) or int(ids[-1]) >= top))


def realign_quoting(c: sqlite3.Connection) -> set[int]:
    """Aligned pairs (:mod:`~simdask.storage.aligned_tables`) stored before a quotation was
    left out of its own document only (issue 31 item 4, docs/term.md; the meta ``totals``
    without ``"quotes": "own"``): those of documents
    with quoted chunks (the index excludes quotations) are deleted, so that they are aligned
    again, and the meta says so. Returns those documents and their partners (their totals
    change). Inside the caller's transaction."""
    row = c.execute("SELECT value FROM meta WHERE name = 'totals'").fetchone()
    got = json.loads(row[0]) if row else {}
    if got.get("quotes") == "own":
        return set()
    docs = []
    if _has_table(c):
        docs = [int(r[0]) for r in c.execute("SELECT doc_id FROM quoted_chunks WHERE length(ids)")]
    gone = set(rows_in(c, "SELECT a, b FROM aligned_pairs WHERE a IN {in}", docs))
    gone |= set(rows_in(c, "SELECT a, b FROM aligned_pairs WHERE b IN {in}", docs))
    c.executemany("DELETE FROM aligned_pairs WHERE a = ? AND b = ?", sorted(gone))
    got["quotes"] = "own"
    c.execute(
        "INSERT OR REPLACE INTO meta (name, value) VALUES ('totals', ?)",
        (json.dumps(got, sort_keys=True),),
    )
    return {x for p in gone for x in p}
