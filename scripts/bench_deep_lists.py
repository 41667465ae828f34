"""Deletions and modifications on prose indexes: one timed run, for side-by-side comparisons.

Runs one incremental operation in process (a LocalCluster started before the clock) on an
index built from the scale benchmark's prose corpus (``bench_scale.py``'s
``corpus-seed1/part-NNNNN.jsonl``) and prints one JSON line: seconds, documents refilled,
candidate pair counts, shards rewritten and the catalog's size and row counts. Run it with
``PYTHONPATH`` set to the checkout to measure (main, or a branch), alternating, on copies of
the same base::

    python scripts/bench_deep_lists.py INDEX delete --round 0 --changes 100
    python scripts/bench_deep_lists.py INDEX modify --round 0 --changes 100

``delete`` removes ``--changes`` documents ``p<i>`` spread over the base (other ones every
round); ``modify`` replaces as many with their first half plus the start of ``p000000000``
(same key, same source file).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sqlite3
import time
from pathlib import Path

from simdask import Index
from simdask.cluster.connect import connect
from simdask.ingest.sources import list_items, source_id

from _benchutil import banner

PER_FILE = 10_000


def victims(n: int, c: int, r: int, op: str) -> list[int]:
    """Base document numbers spread over ``n`` at ``c`` per eighth, distinct per round and
    operation (give the same ``n`` in every round: the base size, not what deletions left);
    the caller takes the first ``c`` still indexed."""
    step = max(1, n // (c * 8))
    offset = 1 + 2 * r + (op == "delete")
    return [offset + i * step for i in range(n // step)]


def catalog_size(path: Path) -> dict:
    """Bytes of the catalog (database and WAL) and its similarity, reserve and floor rows."""
    db = path / "catalog.sqlite"
    c = sqlite3.connect(str(db))
    tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    rows = {
        t: c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
        for t in ("similarity", "reserve", "floors")
        if t in tables
    }
    c.close()
    size = sum(p.stat().st_size for p in path.glob("catalog.sqlite*"))
    return {"catalog_bytes": size, **{f"{k}_rows": v for k, v in rows.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("index")
    ap.add_argument("op", choices=("delete", "modify", "size"))
    ap.add_argument("--round", type=int, default=0)
    ap.add_argument("--changes", type=int, default=100)
    ap.add_argument(
        "--base", type=int, default=None, help="documents the victims spread over (default: now)"
    )
    ap.add_argument("--corpus", default="/work/data/scale/corpus-seed1")
    args = ap.parse_args()
    print(banner(), flush=True)
    path = Path(args.index)
    if args.op == "size":
        print(json.dumps(catalog_size(path)))
        return
    with Index.open(path) as idx:
        n = idx.catalog.n_documents()
    with Index.open(path) as idx:  # the first ``--changes`` of them still indexed
        spread = victims(args.base or n, args.changes, args.round, args.op)
        known = idx.catalog.known_for([f"p{i:09d}" for i in spread])
    picks = [i for i in spread if f"p{i:09d}" in known][: args.changes]
    with connect(workers=2) as client, Index.open(path) as idx:
        if args.op == "delete":
            kwargs = {"remove": [f"p{i:09d}" for i in picks]}
        else:
            other = idx.text("p000000000")[:2000]
            items = []
            work = path.parent / f"work-{path.name}"
            work.mkdir(exist_ok=True)
            for i in picks:
                key = f"p{i:09d}"
                text = idx.text(key)
                one = work / f"mod-{key}.jsonl"
                one.write_text(
                    json.dumps({"id": key, "text": text[: len(text) // 2] + " " + other}) + "\n"
                )
                part = Path(args.corpus) / f"part-{i // PER_FILE:05d}.jsonl"
                items += [dataclasses.replace(x, source=source_id(part)) for x in list_items([one])]
            kwargs = {"items": items}
        load = os.getloadavg()[0]
        t = time.perf_counter()
        s = idx.update(client=client, **kwargs)
        total = time.perf_counter() - t
    out = {
        "op": args.op,
        "n": n,
        "round": args.round,
        "seconds": round(total, 2),
        "load": load,
        "refilled": s.extra.get("refilled"),
        "candidate_pair_counts": s.extra.get("candidate_pair_counts"),
        "shards_rewritten": s.extra.get("shards_rewritten"),
        "stages": {k: round(v, 2) for k, v in s.seconds.items()},
        "counts": [s.added, s.modified, s.deleted],
        **catalog_size(path),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
