"""Reads of the aligned pairs and per-document totals that
:mod:`simdask.storage.aligned_tables` keeps in the catalog (issue 29 item 2): the stored
totals and their sources, the aligned shares of pairs, the computation's status and the word
intervals each source covers. An index without the tables reads as "no totals yet"."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

import numpy as np

from simdask.kernels.aligned_totals import intervals_from_bytes
from simdask.storage.aligned_tables import totals_meta
from simdask.storage.sql import rows_in

__all__ = ["aligned_shares", "source_intervals", "stored_totals", "totals_status"]


def _has_tables(c: sqlite3.Connection) -> bool:
    row = c.execute("SELECT 1 FROM sqlite_master WHERE name = 'doc_totals'").fetchone()
    return row is not None


def stored_totals(
    c: sqlite3.Connection, keys: Iterable[str] | None = None
) -> list[tuple[str, int, float, list[tuple[str, float]]]]:
    """``(key, words, total, [(source key, share), ...])`` of the tracked documents (all, or
    those of ``keys`` that are tracked), by key; shares and totals 0..1, sources largest
    first. An index without totals gives ``[]``."""
    if not _has_tables(c):
        return []
    sql = (
        "SELECT t.doc, d.key, t.words, t.total FROM doc_totals t"
        " JOIN documents d ON d.doc_id = t.doc"
    )
    rows = (
        list(c.execute(sql))
        if keys is None
        else list(rows_in(c, sql + " WHERE d.key IN {in}", list(keys)))
    )
    src: dict[int, list[tuple[str, float]]] = {int(r[0]): [] for r in rows}
    got = rows_in(
        c,
        "SELECT s.doc, d.key, s.share FROM total_sources s"
        " JOIN documents d ON d.doc_id = s.source WHERE s.doc IN {in}",
        list(src),
    )
    for doc, key, share in got:
        src[int(doc)].append((str(key), float(share)))
    out = []
    for doc, key, words, total in sorted(rows, key=lambda r: r[1]):
        ranked = sorted(src[int(doc)], key=lambda t: (-t[1], t[0]))
        out.append((str(key), int(words), float(total), ranked))
    return out


def aligned_shares(
    c: sqlite3.Connection, pairs: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], float]:
    """``(doc key, other key) -> share`` (0..1) of ``doc``'s words inside the passages taken
    from ``other``, for each of ``pairs`` that is aligned (absent: not aligned)."""
    want = list(dict.fromkeys(pairs))
    if not want or not _has_tables(c):
        return {}
    keys = sorted({k for p in want for k in p})
    ids = dict(rows_in(c, "SELECT key, doc_id FROM documents WHERE key IN {in}", keys))
    by_id: dict[tuple[int, int], tuple[str, str]] = {}
    for a, b in want:
        if a in ids and b in ids:
            by_id[(int(ids[a]), int(ids[b]))] = (a, b)
    out: dict[tuple[str, str], float] = {}
    lows = sorted({min(x, y) for x, y in by_id})
    sql = "SELECT a, b, a_share, b_share FROM aligned_pairs WHERE a IN {in}"
    for a, b, sa, sb in rows_in(c, sql, lows):
        for (x, y), share in (((a, b), sa), ((b, a), sb)):
            if (x, y) in by_id:
                out[by_id[(x, y)]] = float(share)
    return out


def totals_status(c: sqlite3.Connection) -> dict[str, Any]:
    """``{"documents", "tracked", "top", "rule", "scope"}``: how many documents have a
    total, of how many, and the stored settings (``rule`` as a dict)."""
    n = int(c.execute("SELECT COUNT(*) FROM documents").fetchone()[0])
    tracked = 0
    if _has_tables(c):
        tracked = int(c.execute("SELECT COUNT(*) FROM doc_totals").fetchone()[0])
    meta = totals_meta(c)
    return {"documents": n, "tracked": tracked, **meta, "rule": meta["rule"].to_dict()}


def source_intervals(c: sqlite3.Connection, key: str) -> list[tuple[str, np.ndarray]]:
    """``(source key, word intervals)`` of each source of the total of document ``key``
    (largest share first): the words of ``key`` inside passages taken from that source, as
    ``(m, 2)`` intervals over the aligner's words of its text. ``[]``: no total, or none."""
    if not _has_tables(c):
        return []
    row = c.execute("SELECT doc_id FROM documents WHERE key = ?", (key,)).fetchone()
    if row is None:
        return []
    doc = int(row[0])
    sources = c.execute(
        "SELECT s.source, d.key FROM total_sources s JOIN documents d ON d.doc_id = s.source"
        " WHERE s.doc = ? ORDER BY s.share DESC, d.key",
        (doc,),
    ).fetchall()
    out = []
    for src, src_key in sources:
        a, b = min(doc, int(src)), max(doc, int(src))
        got = c.execute(
            "SELECT a_spans, b_spans FROM aligned_pairs WHERE a = ? AND b = ?", (a, b)
        ).fetchone()
        if got is not None:
            out.append((str(src_key), intervals_from_bytes(got[0] if doc == a else got[1])))
    return out
