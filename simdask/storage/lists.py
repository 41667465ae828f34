"""Similarity lists kept deeper than shown: the reserve and floor tables.

Each document's list is ranked by similarity (highest first), then by ``other`` (lowest
first), as :func:`~simdask.kernels.similarity.top_k_rows` ranks it. The ``similarity`` table
holds the first ``top_k`` rows of each list (what every reader shows), ``reserve`` the next
ones down to the stored depth (``top_k + slack``), and ``floors`` per document the key
``(similarity, other)`` of the best partner left out when the list was cut, with the
invariant

    every partner ranking before the floor key is stored (shown or in reserve);

a document without a floor has every partner stored. A deletion or modification removes its
rows and moves reserve rows up (:func:`rebalance`); a list is recomputed only when fewer than
``top_k`` stored rows remain while it has a floor (:func:`refill_candidates`); a new reverse
row enters a list only if it ranks before the floor, and cutting a list to the stored depth
lowers the floor key to the best row cut. So the shown rows are what a full build shows.

An index written before these tables existed (lists cut at ``top_k``, ``slack`` 0) gets its
floors once, before its first incremental run (:func:`ensure_floors`): the last row of every
full list, which keeps today's refill rule for it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import numpy as np

from simdask.config import FORMAT_VERSION
from simdask.storage.sql import connection

__all__ = [
    "FLOORS_META",
    "LIST_SCHEMA",
    "RESERVE_INDEX",
    "RESERVE_INDEX_NAME",
    "ensure_floors",
    "ensure_list_tables",
    "list_problems",
    "rebalance",
    "refill_candidates",
    "reserve_rows",
    "touched_lists",
]

LIST_SCHEMA = """
CREATE TABLE IF NOT EXISTS reserve (
    doc INTEGER NOT NULL,
    other INTEGER NOT NULL,
    shared INTEGER NOT NULL,
    similarity REAL NOT NULL,
    PRIMARY KEY (doc, other)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS floors (
    doc INTEGER PRIMARY KEY,
    similarity REAL NOT NULL,
    other INTEGER NOT NULL
);
"""

#: the reserve table's index of rows *to* a document, by name and statement
RESERVE_INDEX_NAME = "reserve_other"
RESERVE_INDEX = f"CREATE INDEX IF NOT EXISTS {RESERVE_INDEX_NAME} ON reserve (other)"
LIST_SCHEMA += RESERVE_INDEX + ";\n"

#: catalog metadata saying the floors are recorded (a new index, or one migrated)
FLOORS_META = "list_floors"


def _has_table(c: sqlite3.Connection, name: str) -> bool:
    q = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
    return c.execute(q, (name,)).fetchone() is not None


def ensure_list_tables(db: Any) -> None:
    """Create the reserve and floor tables in a catalog written before they existed."""
    c = connection(db)
    if not (_has_table(c, "reserve") and _has_table(c, "floors")):
        c.executescript(LIST_SCHEMA)


def ensure_floors(db: Any, top_k: int) -> bool:
    """Record the floors of an index written before they existed (call under the writer
    lock): the ``top_k``-th row of every list holding ``top_k`` rows, whose lower partners
    may have been cut. One transaction; returns whether it ran."""
    c = connection(db)
    row = c.execute("SELECT value FROM meta WHERE name = ?", (FLOORS_META,)).fetchone()
    if row is not None:
        return False
    c.execute("BEGIN IMMEDIATE")
    try:
        c.execute("DELETE FROM floors")
        c.execute(
            "INSERT INTO floors (doc, similarity, other) SELECT doc, similarity, other FROM ("
            " SELECT doc, other, similarity, ROW_NUMBER() OVER (PARTITION BY doc"
            "  ORDER BY similarity DESC, other ASC) AS rn FROM similarity) WHERE rn = ?",
            (int(top_k),),
        )
        c.execute("INSERT INTO meta (name, value) VALUES (?, '1')", (FLOORS_META,))
        c.execute("UPDATE meta SET value = ? WHERE name = 'format_version'", (str(FORMAT_VERSION),))
        c.execute("COMMIT")
    except BaseException:
        c.execute("ROLLBACK")
        raise
    return True


def refill_candidates(db: Any, changed_table: str, top_k: int) -> np.ndarray:
    """Documents not in the temporary table ``changed_table`` whose stored list (shown or
    reserve) holds a row to one in it, that have a floor, and that keep fewer than ``top_k``
    rows to the others: their shown rows may lack a partner left out, so they are
    recomputed. Sorted doc IDs (uint32)."""
    c = connection(db)
    t = changed_table
    rows = c.execute(
        f"WITH hit AS (SELECT doc FROM similarity WHERE other IN (SELECT id FROM {t})"
        f" UNION SELECT doc FROM reserve WHERE other IN (SELECT id FROM {t}))"
        " SELECT h.doc FROM hit h JOIN floors f ON f.doc = h.doc"
        f" WHERE h.doc NOT IN (SELECT id FROM {t})"
        " AND (SELECT COUNT(*) FROM similarity s WHERE s.doc = h.doc"
        f"  AND s.other NOT IN (SELECT id FROM {t}))"
        " + (SELECT COUNT(*) FROM reserve r WHERE r.doc = h.doc"
        f"  AND r.other NOT IN (SELECT id FROM {t})) < ?",
        (int(top_k),),
    ).fetchall()
    return np.array(sorted(r[0] for r in rows), dtype=np.uint32)


def touched_lists(c: sqlite3.Connection, to_table: str, of_table: str, into: str) -> None:
    """Add to the temporary table ``into`` the documents not in ``of_table`` whose stored
    list holds a row to one in ``to_table`` (they lose it: :func:`rebalance` moves reserve
    rows up)."""
    c.execute(
        f"INSERT OR IGNORE INTO {into} (id) SELECT doc FROM similarity"
        f" WHERE other IN (SELECT id FROM {to_table}) AND doc NOT IN (SELECT id FROM {of_table})"
        f" UNION SELECT doc FROM reserve WHERE other IN (SELECT id FROM {to_table})"
        f" AND doc NOT IN (SELECT id FROM {of_table})"
    )


def rebalance(c: sqlite3.Connection, docs_table: str, top_k: int, depth: int) -> None:
    """Rank again the lists of the documents in ``docs_table`` (rows lost, reverse rows
    gained): rows ranking after the floor go, the first ``top_k`` are shown, the next ones
    down to ``depth`` kept in reserve, and a list longer than ``depth`` is cut with its
    floor set to the best row cut. Only the rows that change place are written (a reserve
    row moving up, a shown row moving down, a row cut): a few per list.

    Only the lists where a row changes place are ranked (:func:`_lists_to_rank`: counted,
    and for a full shown list with reserve rows its worst shown row against its best reserve
    row); the others are in place already. Each statement is driven by the documents of
    ``docs_table``, not by a scan of a whole table: the cost is that of the touched lists."""
    t = docs_table
    c.execute(
        "DELETE FROM similarity WHERE (doc, other) IN (SELECT s.doc, s.other"
        f" FROM {t} CROSS JOIN floors f ON f.doc = {t}.id CROSS JOIN similarity s"
        " ON s.doc = f.doc WHERE s.similarity < f.similarity"
        " OR (s.similarity = f.similarity AND s.other > f.other))"
    )
    _lists_to_rank(c, t, top_k, depth)
    c.execute("DROP TABLE IF EXISTS temp.t_ranked")
    c.execute(
        "CREATE TEMP TABLE t_ranked AS SELECT * FROM ("
        " SELECT doc, other, shared, similarity, src, ROW_NUMBER() OVER (PARTITION BY doc"
        "  ORDER BY similarity DESC, other ASC) AS rn FROM ("
        "  SELECT doc, other, shared, similarity, 0 AS src FROM similarity"
        "   WHERE doc IN (SELECT id FROM temp.t_rank)"
        "  UNION ALL SELECT doc, other, shared, similarity, 1 AS src FROM reserve"
        "   WHERE doc IN (SELECT id FROM temp.t_rank)))"
        " WHERE (src = 0 AND rn > ?) OR (src = 1 AND (rn <= ? OR rn > ?))",
        (int(top_k), int(top_k), int(depth)),
    )
    c.execute("DROP TABLE temp.t_rank")
    c.execute("CREATE INDEX temp.t_ranked_key ON t_ranked (src, doc, other)")
    c.execute(
        "INSERT OR REPLACE INTO floors (doc, similarity, other)"
        " SELECT doc, similarity, other FROM t_ranked WHERE rn = ?",
        (int(depth) + 1,),
    )
    c.execute(
        "INSERT INTO similarity (doc, other, shared, similarity)"
        " SELECT doc, other, shared, similarity FROM t_ranked WHERE src = 1 AND rn <= ?",
        (int(top_k),),
    )
    c.execute(
        "INSERT INTO reserve (doc, other, shared, similarity)"
        " SELECT doc, other, shared, similarity FROM t_ranked WHERE src = 0 AND rn <= ?",
        (int(depth),),
    )
    for table, src in (("similarity", 0), ("reserve", 1)):
        c.execute(
            f"DELETE FROM {table} WHERE doc IN (SELECT doc FROM t_ranked WHERE src = {src})"
            f" AND EXISTS (SELECT 1 FROM t_ranked r WHERE r.src = {src}"
            f" AND r.doc = {table}.doc AND r.other = {table}.other)"
        )
    c.execute("DROP TABLE t_ranked")


def _lists_to_rank(c: sqlite3.Connection, docs_table: str, top_k: int, depth: int) -> None:
    """Fill the temporary table ``t_rank`` with the documents of ``docs_table`` whose list
    has a row out of place: more than ``top_k`` shown rows, more than ``depth`` rows, reserve
    rows beside fewer than ``top_k`` shown ones, or a shown row ranking after a reserve row.
    A list with none of these is what ranking it would give (shown rows ``1..top_k``,
    reserve rows after them, none past ``depth``). Counting the rows and finding a list's
    worst shown and best reserve row read the list without sorting it, several times
    cheaper than the window that ranks it."""
    c.execute("DROP TABLE IF EXISTS temp.t_rank")
    c.execute("CREATE TEMP TABLE t_rank (id INTEGER PRIMARY KEY)")
    c.execute(
        "INSERT INTO temp.t_rank (id) SELECT id FROM ("
        " SELECT t.id AS id,"
        "  (SELECT COUNT(*) FROM similarity s WHERE s.doc = t.id) AS ns,"
        "  (SELECT COUNT(*) FROM reserve r WHERE r.doc = t.id) AS nr"
        f" FROM {docs_table} t)"
        " WHERE ns > :k OR ns + nr > :depth OR (nr > 0 AND (ns < :k"
        "  OR (SELECT similarity, -other FROM similarity WHERE doc = id"
        "      ORDER BY similarity ASC, other DESC LIMIT 1)"
        "   < (SELECT similarity, -other FROM reserve WHERE doc = id"
        "      ORDER BY similarity DESC, other ASC LIMIT 1)))",
        {"k": int(top_k), "depth": int(depth)},
    )


def _ranked_union() -> str:
    """Every stored row of every list, ranked within its document as the lists rank them."""
    return (
        "SELECT doc, other, similarity, src, ROW_NUMBER() OVER (PARTITION BY doc"
        " ORDER BY similarity DESC, other ASC) AS rn FROM ("
        " SELECT doc, other, similarity, 0 AS src FROM similarity"
        " UNION ALL SELECT doc, other, similarity, 1 AS src FROM reserve)"
    )


def list_problems(db: Any, top_k: int, depth: int) -> list[str]:
    """What breaks the invariants of the stored lists (module docstring), one message per
    kind with a count and an example; ``[]`` when they hold. ``depth``: rows stored per
    document, ``top_k`` shown plus the reserve. Reads every row of the similarity and reserve
    tables once more (a window over both: 5.6 s for the 2.8 M rows of a 100k-document index)."""
    c = connection(db)
    if not (_has_table(c, "reserve") and _has_table(c, "floors")):
        return []  # written before the reserve existed: nothing to check yet
    k, d = int(top_k), int(depth)
    checks = [
        (
            f"rows out of place (a shown row ranking after the {k}th of its list, a reserve "
            f"row ranking within the first {k}, or a list longer than {d} rows)",
            f"SELECT doc, other FROM ({_ranked_union()})"
            " WHERE (src = 0 AND rn > ?) OR (src = 1 AND rn <= ?) OR rn > ?",
            (k, k, d),
            "other",
        ),
        (
            "rows both shown and in reserve",
            "SELECT s.doc, s.other FROM similarity s JOIN reserve r"
            " ON r.doc = s.doc AND r.other = s.other",
            (),
            "other",
        ),
        (
            "rows ranking after their document's floor (the best partner left out)",
            "SELECT u.doc, u.other FROM (SELECT doc, other, similarity FROM similarity"
            " UNION ALL SELECT doc, other, similarity FROM reserve) u"
            " JOIN floors f ON f.doc = u.doc WHERE u.similarity < f.similarity"
            " OR (u.similarity = f.similarity AND u.other > f.other)",
            (),
            "other",
        ),
        (
            f"documents with a floor showing fewer than {k} rows (partners left out while "
            "the list has room)",
            "SELECT f.doc, (SELECT COUNT(*) FROM similarity s WHERE s.doc = f.doc) AS n"
            " FROM floors f WHERE n < ?",
            (k,),
            "rows shown",
        ),
    ]
    problems = []
    for what, query, args, second in checks:
        cte = f"WITH q(a, b) AS ({query})"
        n = c.execute(f"{cte} SELECT COUNT(*) FROM q", args).fetchone()[0]
        if n:
            a, b = c.execute(f"{cte} SELECT a, b FROM q ORDER BY a, b LIMIT 1", args).fetchone()
            problems.append(f"{n} {what}, e.g. doc {a}, {second} {b}")
    return problems


def reserve_rows(db: Any) -> Iterator[tuple[Any, ...]]:
    """Every reserve row as ``(doc, other, shared, similarity)`` (doc IDs, distinct shared
    chunks, percent), streamed in no particular order; none in an index without the table."""
    c = connection(db)
    if _has_table(c, "reserve"):
        yield from c.execute("SELECT doc, other, shared, similarity FROM reserve")
