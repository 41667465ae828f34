"""``|A|`` (distinct chunk IDs) of every document by doc ID, kept in the catalog as one
little-endian uint32 array, so that a run or a query reads it in one step instead of a row per
document, and a commit changes only the entries of the documents it changes.

The table ``chunk_table`` has one row: the ``generation`` the array belongs to, its ``length``
(doc IDs ``0 .. length-1``; 0 for a free ID) and ``data``, a BLOB with room to grow (at least
``4 * length`` bytes; grown by doubling). Each commit (step ``commit.chunk_table``, inside the
run's transaction) writes the entries of the documents it adds, modifies or deletes in place
(SQLite incremental BLOB I/O: the pages holding them) and records the new generation. When the
recorded generation is not the catalog's previous one (an index written before this table, or
committed by an older simdask), the array is rebuilt from the ``documents`` table, so it never
disagrees with it.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterable

import numpy as np

__all__ = ["CHUNK_TABLE", "read_chunk_table", "update_chunk_table"]

#: the catalog table (created by the first commit that writes it)
CHUNK_TABLE = (
    "CREATE TABLE IF NOT EXISTS chunk_table (id INTEGER PRIMARY KEY CHECK (id = 0),"
    " generation INTEGER NOT NULL, length INTEGER NOT NULL, data BLOB NOT NULL)"
)
_DTYPE = np.dtype("<u4")
#: a commit changing more entries than length / this rewrites the whole array
_REWRITE_SHARE = 16


def _from_documents(c: sqlite3.Connection) -> np.ndarray:
    """The array built from the ``documents`` table (one row per document)."""
    rows = c.execute("SELECT doc_id, n_chunks FROM documents").fetchall()
    arr = np.array(rows, dtype=np.int64).reshape(-1, 2)
    out = np.zeros(int(arr[:, 0].max()) + 1 if len(arr) else 0, dtype=np.int64)
    out[arr[:, 0]] = arr[:, 1]
    return out


def _stored(c: sqlite3.Connection) -> tuple[int, int, int] | None:
    """``(generation, length, capacity in bytes)`` of the stored array, None if none."""
    try:
        row = c.execute(
            "SELECT generation, length, length(data) FROM chunk_table WHERE id = 0"
        ).fetchone()
    except sqlite3.OperationalError:  # no such table: an index written before it
        return None
    return None if row is None else (int(row[0]), int(row[1]), int(row[2]))


def read_chunk_table(c: sqlite3.Connection, generation: int) -> np.ndarray:
    """``|A|`` by doc ID (int64; 0 for free IDs) as of the committed ``generation``: the stored
    array (one BLOB read of ``4 * documents`` bytes) or, if it belongs to another generation,
    rebuilt from the ``documents`` table."""
    stored = _stored(c)
    if stored is None or stored[0] != generation:
        return _from_documents(c)
    n_bytes = stored[1] * _DTYPE.itemsize
    if sys.version_info >= (3, 11):
        with c.blobopen("chunk_table", "data", 0, readonly=True) as blob:
            data = blob.read(n_bytes)
    else:  # no incremental BLOB I/O before Python 3.11
        row = c.execute("SELECT substr(data, 1, ?) FROM chunk_table WHERE id = 0", (n_bytes,))
        data = row.fetchone()[0]
    return np.frombuffer(data, dtype=_DTYPE).astype(np.int64)


def _write_whole(c: sqlite3.Connection, arr: np.ndarray, generation: int) -> None:
    """Store ``arr`` whole, with room for twice as many documents."""
    data = np.zeros(max(2 * len(arr), 1024), dtype=_DTYPE)
    data[: len(arr)] = arr
    c.execute(
        "INSERT OR REPLACE INTO chunk_table (id, generation, length, data) VALUES (0, ?, ?, ?)",
        (int(generation), len(arr), data.tobytes()),
    )


def update_chunk_table(
    c: sqlite3.Connection,
    previous: int,
    generation: int,
    changes: Iterable[tuple[int, int]],
    replace_all: bool,
) -> None:
    """Inside a commit (after its document rows are written): set ``|A|`` of the changed
    documents ``(doc_id, n_chunks)`` (0 for a deleted one) and record ``generation``.
    ``previous``: the generation the stored array must belong to for an in-place update;
    otherwise, or with ``replace_all``, the array is rebuilt from the ``documents`` table."""
    c.execute(CHUNK_TABLE)
    stored = _stored(c)
    changed = np.array(sorted(dict(changes).items()), dtype=np.int64).reshape(-1, 2)
    if replace_all or stored is None or stored[0] != previous:
        _write_whole(c, _from_documents(c), generation)
        return
    _, length, capacity = stored
    new_length = max(length, int(changed[:, 0].max()) + 1 if len(changed) else 0)
    whole = new_length * _DTYPE.itemsize > capacity or len(changed) * _REWRITE_SHARE > new_length
    if whole or sys.version_info < (3, 11):  # no incremental BLOB I/O before Python 3.11
        arr = np.zeros(new_length, dtype=np.int64)
        arr[:length] = read_chunk_table(c, previous)
        arr[changed[:, 0]] = changed[:, 1]
        _write_whole(c, arr, generation)
        return
    with c.blobopen("chunk_table", "data", 0) as blob:  # Python >= 3.11 here
        for d, n in changed.tolist():
            blob.seek(d * _DTYPE.itemsize)
            blob.write(np.array([n], dtype=_DTYPE).tobytes())
    c.execute(
        "UPDATE chunk_table SET generation = ?, length = ? WHERE id = 0",
        (int(generation), new_length),
    )
