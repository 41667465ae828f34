"""What issue 31's run-time additions cost (docs/term.md): the checks of a run's sources
before it starts (keys another source gives, sources inside or holding an indexed folder),
the notes after its commit (identical copies, first-indexed dates), and the run summary's
look for a passage most documents share (``boilerplate_hint``), on indexes of N essays of
generated prose (each with a 60-word assignment sheet), built with in-process workers.

    PYTHONPATH=. python scripts/bench_term.py [N ...]     # default 1000 5000
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from scripts._benchutil import machine, today
from simdask import Index, IndexConfig
from simdask.ingest.sources import list_items
from simdask.read.boilerplate_passages import boilerplate_hint
from simdask.write.collisions import checked_items
from tests.helpers.documents import prose

SHEET = prose(60, seed=900)


def one(n: int, root: Path) -> dict[str, float]:
    """Seconds of each step on an index of ``n`` essays."""
    src = root / "2026" / "submissions"
    src.mkdir(parents=True)
    for i in range(n):
        (src / f"e{i:06d}.txt").write_text(f"{SHEET} {prose(250, seed=i)}\n")
    with Index.create(root / "idx", IndexConfig(shards=4)) as idx:
        t = time.perf_counter()
        run = idx.update([src])
        build = time.perf_counter() - t
        notes = run.seconds.get("total", 0.0)
        t = time.perf_counter()
        listed = list_items([src])
        listing = time.perf_counter() - t
        t = time.perf_counter()
        items = checked_items(idx.catalog, [src])
        check = time.perf_counter() - t
        t = time.perf_counter()
        with idx.snapshot():
            hint = boilerplate_hint(idx)
        look = time.perf_counter() - t
    assert hint is not None and f"of {n} documents" in hint, hint
    assert len(items) == len(listed) == n
    return {
        "build": build,
        "run_total": notes,
        "listing": listing,
        "check_sources": check,
        "boilerplate_hint": look,
    }


def main(sizes: list[int]) -> None:
    rows = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as d:
            r = one(n, Path(d))
        rows.append((n, r))
        print(n, {k: round(v, 3) for k, v in r.items()}, flush=True)
    out = [
        f"Measured {today()} on {machine()} (shared with other jobs; load in the text).",
        "",
        "| essays | build (s) | listing alone (s) | listing + checks (s) | boilerplate hint (s) |",
        "|---:|---:|---:|---:|---:|",
    ]
    out += [
        f"| {n:,} | {r['build']:.1f} | {r['listing']:.3f} | {r['check_sources']:.3f} "
        f"| {r['boilerplate_hint']:.3f} |"
        for n, r in rows
    ]
    print("\n".join(out))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 5000])
