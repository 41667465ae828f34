"""What a full build's commit spends on the similarity rows (issue 32 item 1, session 14).

Reads the similarity rows of an existing index's catalog (read-only) and writes them into a
fresh catalog-like SQLite file the ways a commit could, timing each step in wall and CPU
seconds of this process (CPU: user + system, every thread):

* ``values``: the commit's full-build path (``storage/commit._insert_rows``): rows
  sorted by ``(doc, other)`` inserted from Python values (multi-row ``VALUES`` statements,
  ``storage/sql.insert_values``) into the empty ``WITHOUT ROWID``
  table, ``_ROWS_PER_PASS`` at a time, then the index on ``other`` built once; with SQLite's
  sorter threads 0 (the default) and 2 (``PRAGMA threads``);
* ``attached``: rows written beforehand into a file of their own (as workers could write
  them per range), then one ``INSERT INTO ... SELECT ... ORDER BY doc, other`` from the
  attached file and the index built once: the client no longer turns rows into Python
  values.

The catalog is in WAL mode with ``synchronous=FULL`` and a 256 MiB page cache, as in a
commit. One JSON line per variant and step is printed:

    python scripts/bench_similarity_commit.py INDEX/catalog.sqlite --tmp DIR
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import time
from pathlib import Path

import numpy as np

from simdask.storage.sql import insert_values

from _benchutil import banner

_SCHEMA = (
    "CREATE TABLE similarity (doc INTEGER NOT NULL, other INTEGER NOT NULL,"
    " shared INTEGER NOT NULL, similarity REAL NOT NULL, PRIMARY KEY (doc, other))"
    " WITHOUT ROWID"
)
_INDEX = "CREATE INDEX similarity_other ON similarity (other)"
_PASS = 1 << 20  # rows turned into Python values at a time, as the commit does


def _clock() -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) now."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return time.perf_counter(), r.ru_utime + r.ru_stime


def _read_rows(catalog: Path) -> tuple[np.ndarray, ...]:
    """The catalog's similarity rows as arrays ``doc, other, shared, similarity``, sorted by
    ``(doc, other)``."""
    c = sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)
    try:
        q = "SELECT doc, other, shared, similarity FROM similarity ORDER BY doc, other"
        rows = np.array(c.execute(q).fetchall(), dtype=np.float64).reshape(-1, 4)
    finally:
        c.close()
    return (*(rows[:, i].astype(np.int64) for i in range(3)), rows[:, 3])


def _fresh(path: Path) -> sqlite3.Connection:
    """A new catalog-like file at ``path`` holding the empty similarity table."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    d = sqlite3.connect(path, isolation_level=None)
    d.execute("PRAGMA journal_mode=WAL")
    d.execute("PRAGMA synchronous=FULL")
    d.execute("PRAGMA cache_size=-262144")
    d.execute(_SCHEMA)
    return d


def _insert(d: sqlite3.Connection, cols: tuple[np.ndarray, ...]) -> None:
    """The commit's insert (``_insert_sorted``): multi-row ``VALUES`` statements."""
    head = "INSERT INTO similarity (doc, other, shared, similarity)"
    for i in range(0, len(cols[0]), _PASS):
        insert_values(d, head, [a[i : i + _PASS].tolist() for a in cols])


def _steps(d: sqlite3.Connection, load, variant: str, rows: int) -> list[dict]:
    """Run ``load(d)`` then the index and the COMMIT in one transaction, timing each."""
    out = []
    d.execute("BEGIN")
    for step, fn in (
        ("insert", load),
        ("index", lambda c: c.execute(_INDEX)),
        ("commit", lambda c: c.execute("COMMIT")),
    ):
        w0, c0 = _clock()
        fn(d)
        w1, c1 = _clock()
        out.append(
            {"variant": variant, "step": step, "rows": rows, "wall_s": round(w1 - w0, 3)}
            | {"cpu_s": round(c1 - c0, 3), "cpu_us_per_row": round(1e6 * (c1 - c0) / rows, 3)}
        )
    return out


def main() -> None:
    """Measure and print (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("catalog", type=Path, help="an index's catalog.sqlite (read only)")
    ap.add_argument("--tmp", type=Path, required=True, help="folder for the scratch files")
    args = ap.parse_args()
    args.tmp.mkdir(parents=True, exist_ok=True)
    print(banner(), flush=True)
    cols = _read_rows(args.catalog)
    n = len(cols[0])
    results = []
    for threads in (0, 2):
        d = _fresh(args.tmp / f"values-{threads}.sqlite")
        d.execute(f"PRAGMA threads = {threads}")
        results += _steps(d, lambda c: _insert(c, cols), f"values threads={threads}", n)
        d.close()
    part = _fresh(args.tmp / "part.sqlite")
    part.execute("BEGIN")
    _insert(part, cols)
    part.execute("COMMIT")
    part.close()
    d = _fresh(args.tmp / "attached.sqlite")
    d.execute("ATTACH ? AS p", (str(args.tmp / "part.sqlite"),))
    copy = "INSERT INTO main.similarity SELECT * FROM p.similarity ORDER BY doc, other"
    results += _steps(d, lambda c: c.execute(copy), "attached", n)
    d.close()
    load = os.getloadavg()[0]
    for r in results:
        print(json.dumps(r | {"load_1min": round(load, 1)}), flush=True)
    for f in args.tmp.glob("*.sqlite*"):
        f.unlink()


if __name__ == "__main__":
    main()
