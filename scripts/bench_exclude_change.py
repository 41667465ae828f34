"""Cost of an exclusion change (issue 16): the affected-only recompute against re-chunking every
document, side by side on the same index and template, alternating repetitions.

    python scripts/bench_exclude_change.py CORPUS.jsonl --docs 3000 --template FILE... \
        [--reps 2] [--workers 2] [--work /work/data/quotes]

Builds one index of the corpus's first ``--docs`` documents, then per template and repetition
copies it twice and runs ``update --exclude TEMPLATE`` on each copy: once as simdask does it
(templates added: only the documents holding a newly excluded chunk are re-chunked, here
whatever their number) and once
with that path switched off (every document re-chunked from its stored text, the earlier
behaviour). Both must end with the same similarity table (checked). Prints one JSON line per
run and the load average.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import time
from pathlib import Path
from unittest import mock

from _benchutil import banner


def subset(corpus: Path, n: int, out: Path) -> Path:
    """The first ``n`` lines of ``corpus`` as a JSONL file in ``out``."""
    path = out / f"{corpus.stem}-{n}.jsonl"
    with open(corpus, encoding="utf-8") as f, open(path, "w", encoding="utf-8") as g:
        g.writelines(itertools.islice(f, n))
    return path


def table(idx) -> list[tuple]:
    return sorted((r.doc, r.other, round(r.similarity, 9), r.shared) for r in idx.pairs())


def one(base: Path, work: Path, template: Path, mode: str, client) -> dict:
    """One ``update --exclude template`` on a copy of ``base``; ``mode``: ``affected`` or
    ``all`` (the affected-only path switched off)."""
    from simdask import Index

    path = work / f"idx-{mode}"
    shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(base, path)
    idx = Index.open(path)
    if mode == "all":  # the affected-only path off
        patch = mock.patch("simdask.write.rechunk.affected_documents", return_value=None)
    else:  # taken for any number of affected documents (not only up to the 2% policy)
        patch = mock.patch("simdask.write.rechunk.AFFECTED_MAX_FRACTION", 1.0)
    with patch:
        t = time.perf_counter()
        s = idx.update(client=client, exclude=[template])
        seconds = time.perf_counter() - t
    return {
        "mode": mode,
        "template": template.name,
        "seconds": round(seconds, 2),
        "rechunked": s.added + s.modified,
        "documents": s.documents,
        "table": table(idx),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("corpus", type=Path)
    p.add_argument("--docs", type=int, default=3000)
    p.add_argument("--template", type=Path, nargs="+", required=True)
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--work", type=Path, default=Path("/work/data/quotes"))
    args = p.parse_args()
    print(banner(), flush=True)
    from distributed import Client, LocalCluster

    from simdask import Index

    args.work.mkdir(parents=True, exist_ok=True)
    src = subset(args.corpus, args.docs, args.work)
    base = args.work / "base"
    shutil.rmtree(base, ignore_errors=True)
    with (
        LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=":0") as lc,
        Client(lc) as client,
    ):
        t = time.perf_counter()
        with Index.create(base) as idx:
            s = idx.update([src], client=client)
        build = round(time.perf_counter() - t, 2)
        print(json.dumps({"build_seconds": build, "documents": s.documents, "load": _load()}))
        for template in args.template:
            for rep in range(args.reps):
                modes = ("affected", "all") if rep % 2 == 0 else ("all", "affected")
                runs = {m: one(base, args.work, template, m, client) for m in modes}
                assert runs["affected"]["table"] == runs["all"]["table"], "tables differ"
                for m in modes:
                    row = {k: v for k, v in runs[m].items() if k != "table"}
                    print(json.dumps({**row, "rep": rep, "load": _load()}), flush=True)
                ratio = runs["all"]["seconds"] / max(runs["affected"]["seconds"], 1e-9)
                print(
                    json.dumps(
                        {"template": template.name, "rep": rep, "all/affected": round(ratio, 2)}
                    )
                )


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
