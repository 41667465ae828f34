"""Shard I/O in the two layouts: raw (one uncompressed zarr chunk per array; local stores) and
compressed (delta + zstd in 1 Mi-element chunks; URL stores, older indexes).

Takes the shards of an existing index (by default the 100k-document index of
``scripts/bench_incremental.py``) and, shard by shard, alternating the layouts, times what a
merge task does with them: write the shard as a new generation (temp dir + rename) and read
it back whole into memory; plus the bytes on disk. Writes the section "Shard layout
(bench_shard_layout.py)" of docs/benchmarks.md.

    python scripts/bench_shard_layout.py --index bench-data/incremental/index
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from simdask import Index
from simdask.storage.backends import open_shard_store
from simdask.storage.shards import encode_shard

from _benchutil import machine, today, write_section


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--index", default="bench-data/incremental/index")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default="docs/benchmarks.md")
    args = ap.parse_args()

    with Index.open(args.index) as idx:
        gens = sorted(idx.catalog.shard_generations().items())
        shards = [idx.store.read(g, s) for s, g in gens]
        n_docs = idx.stats()["documents"]
    postings = sum(d.n_postings for d in shards)
    times: dict[str, dict[str, list[float]]] = {
        k: {"write": [], "read": []} for k in ("raw", "compressed")
    }
    nbytes = {}
    with tempfile.TemporaryDirectory(dir=Path(args.index).parent) as tmp:
        for rep in range(args.repeat):
            for layout in ("raw", "compressed"):
                store = open_shard_store(Path(tmp) / layout)
                t = time.perf_counter()
                total = 0
                for s, data in enumerate(shards):
                    if layout == "raw":
                        total += store.write(rep, s, data)
                    else:  # what a URL store writes, here into a local directory
                        total += store.write_encoded(rep, s, encode_shard(data, compressed=True))
                times[layout]["write"].append(time.perf_counter() - t)
                nbytes[layout] = total
                t = time.perf_counter()
                for s in range(len(shards)):
                    store.read(rep, s)
                times[layout]["read"].append(time.perf_counter() - t)
                shutil.rmtree(Path(tmp) / layout)
                print(
                    f"[{rep + 1}/{args.repeat}] {layout}: write "
                    f"{times[layout]['write'][-1]:.2f} s, read {times[layout]['read'][-1]:.2f} s, "
                    f"{total / 2**30:.2f} GiB"
                )
    med = {k: {op: statistics.median(v) for op, v in d.items()} for k, d in times.items()}
    raw, comp = med["raw"], med["compressed"]
    body = f"""Machine: {machine()}. Date: {today()}.
The {len(shards)} shards of an index of {n_docs:,} generated documents ({postings:,}
postings), each written as a new generation (temp dir + rename) and read back whole, as a
merge task does; all shards in sequence, one process, medians of {args.repeat}, the layouts
alternating.

| | raw (local stores) | compressed (URL stores) | ratio raw/compressed |
|---|---|---|---|
| write all shards, s | {raw["write"]:.2f} | {comp["write"]:.2f} | {raw["write"] / comp["write"]:.2f} |
| read all shards into memory, s | {raw["read"]:.2f} | {comp["read"]:.2f} | {raw["read"] / comp["read"]:.2f} |
| bytes on disk, GiB | {nbytes["raw"] / 2**30:.2f} | {nbytes["compressed"] / 2**30:.2f} | {nbytes["raw"] / nbytes["compressed"]:.2f} |
"""
    print(body)
    write_section(args.out, "Shard layout (bench_shard_layout.py)", body)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
