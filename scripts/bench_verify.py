"""The cost of verifying what is read (issue 30 item 3): the first query of a new process with
each segment file hashed whole, with only the blocks the query reads verified (per-block
checksums, simdask/storage/block_sums.py), and with no content verification, side by side.

Uses the index ``scripts/bench_query.py`` builds (``--data``; build it with
``python scripts/bench_query.py --docs 30000 --build-only --data DIR``, a checkout that writes
block checksums) and its query document. The three modes run the same code in new processes,
alternating: "whole" sets :data:`simdask.storage.verified.WHOLE_LIMIT` above every file (each
file the query opens is hashed whole, the behaviour before block checksums), "blocks" is the
default, "none" replaces the verification by nothing. Each is measured with the shard files in
the OS page cache and after evicting them (``POSIX_FADV_DONTNEED``: every byte read or hashed
comes from the disk). Also reported: the bytes each mode hashed in the first query, the bytes
the query's ``pread`` lookups read, and what the lookups would have hashed with other block
sizes (the blocks covering the bytes read, plus the sidecars, 8 bytes a block).

    python scripts/bench_verify.py --data bench-data/blocks --docs 30000
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from bench_query import _EXTRA, evict, make_query  # the same query document as bench_query.py

from simdask.ingest.synth import generate_corpus
from simdask.storage import block_sums

from _benchutil import load_average, machine, today, write_section

MODES = ("whole", "blocks", "none")
SIZES = (4096, 16384, 65536, 262144)

_PROBE = r"""
import json, sys, time
import numpy as np
import simdask.read.segment_reads as segment_reads
from simdask.storage import block_sums, direct_reads, verified

mode, sizes = sys.argv[3], [int(x) for x in sys.argv[4].split(",")]
reads = []
real = direct_reads.verify_read
if mode == "none":
    segment_reads.verify_problems = lambda root, files, lazy=False: []
if mode == "whole":
    verified.WHOLE_LIMIT = 1 << 62

def record(fd, path, starts, ends):
    reads.append((str(path), list(starts), list(ends)))
    if mode != "none":
        real(fd, path, starts, ends)

direct_reads.verify_read = record
from simdask import Index
from simdask.ingest.sources import read_document
t0 = time.perf_counter()
idx = Index.open(sys.argv[1])
key, text = read_document(sys.argv[2])
first = idx.query(text, 1.0)
t1 = time.perf_counter()
hashed = verified.hashed_bytes()
by_path = {}
for p, s, e in reads:
    by_path.setdefault(p, []).append((s, e))
read_bytes = sum(e - s for p, s, e in reads for s, e in zip(s, e))
would = {}
for b in sizes:
    n = 0
    for p, ranges in by_path.items():
        st = np.concatenate([np.asarray(s, np.int64) for s, _ in ranges])
        en = np.concatenate([np.asarray(e, np.int64) for _, e in ranges])
        n += len(block_sums.block_range(st, en, b)) * b
    would[b] = n
print(json.dumps({"cold": t1 - t0, "hashed": hashed, "read": read_bytes, "would": would,
                  "n_reads": sum(len(s) for _, s, _ in reads),
                  "result": [m.to_dict() for m in first]}))
"""


def _probe(index: Path, qfile: Path, mode: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(index), str(qfile), mode, ",".join(map(str, SIZES))],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def _array_bytes(index: Path) -> int:
    """Bytes of the shards' chunk_keys, offsets and doc_ids data files (what gets sidecars)."""
    names = ("chunk_keys", "offsets", "doc_ids")
    return sum(p.stat().st_size for n in names for p in (index / "shards").rglob(f"{n}/c/0"))


def _measure(index: Path, qfile: Path, repeat: int) -> tuple[dict, dict]:
    """Per (mode, cache) the probes' results: seconds of each run, and the first run's facts."""
    secs: dict[tuple[str, str], list[float]] = {}
    facts: dict[str, dict] = {}
    _probe(index, qfile, "none")  # the shard files into the page cache
    for rep in range(repeat):
        for cache in ("page cache", "cold disk"):
            for mode in MODES:
                if cache == "cold disk":
                    evict(index)
                p = _probe(index, qfile, mode)
                secs.setdefault((mode, cache), []).append(p["cold"])
                facts.setdefault(mode, p)
                print(f"[{rep + 1}/{repeat}] {cache}, {mode}: {p['cold']:.3f} s, {p['hashed']} B")
    results = {json.dumps(f["result"]) for f in facts.values()}
    if len(results) != 1:
        sys.exit("the three modes gave different query results")
    return secs, facts


#: at 1M documents (docs/scale.md): shard bytes, and what a cold query reads with ``pread``
SHARDS_1M, READ_1M = 21.4e9, 50e6


def _projection(facts: dict, arrays: int, med: dict) -> str:
    """The paragraph projecting the bytes hashed at 1M documents (bytes hashed ∝ bytes read)."""
    blocks = facts["blocks"]
    ratio = (blocks["hashed"] - arrays * 8 / block_sums.BLOCK_BYTES) / blocks["read"]
    side = SHARDS_1M * 8 / block_sums.BLOCK_BYTES
    per_mib = (med[("blocks", "page cache")] - med[("none", "page cache")]) / (
        blocks["hashed"] / 2**20
    )
    total = ratio * READ_1M + side
    whole_rate = (med[("whole", "page cache")] - med[("none", "page cache")]) / (
        facts["whole"]["hashed"] / 2**20
    )
    return f"""
Per query, "blocks" hashed {ratio:.2f}x the bytes the lookups read (the 4 KiB blocks around
each read; files under 4 MiB and the sidecars whole), at about {per_mib * 1000:.1f} ms per
MiB hashed here (one `pread` per run of blocks, one xxh3 call per block). Projected at 1M
documents (docs/scale.md: {SHARDS_1M / 1e9:.1f} GB of shards, a cold query reads ~50 MB with
`pread`): {ratio:.2f} x 50 MB = {ratio * READ_1M / 1e6:.0f} MB of blocks plus
{side / 1e6:.0f} MB of sidecars (1/512 of the shards, hashed whole at first open), about
{total / 1e6:.0f} MB hashed by the first query of a process (~{total / 2**20 * per_mib:.1f} s
at the rate measured here) instead of {SHARDS_1M / 1e9:.1f} GB with whole-file hashing
(~{SHARDS_1M / 2**20 * whole_rate:.0f} s at the whole-file rate measured here,
{whole_rate * 1000:.1f} ms per MiB); later queries hash only blocks not read before. On a
cold disk the sidecars are also read whole (42 MB, sequential), the blocks mostly with the
pages the query reads anyway. The "cold disk" column evicts the guest's page cache only (the
VM's host may still cache the file), so it understates a real cold disk. The index was
written with 16 KiB sidecars (the first choice) and its sidecars rewritten at 4 KiB (catalog
checksums updated, `simdask check` clean) for this run; the 4-256 KiB rows come from the
ranges the lookups read, not from separate indexes.
Segments without block checksums (written before them; the compressed layout) are still
hashed whole on first open, whatever their size, until `simdask compact` or an update rewrites
them; URL shard stores are not hashed by readers (zstd checksums per chunk), as before.
`simdask check` hashes every file whole, sidecars included.
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default="bench-data/blocks")
    ap.add_argument("--docs", type=int, default=30_000)
    ap.add_argument("--query-words", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default="docs/benchmarks.md")
    args = ap.parse_args()
    data = Path(args.data)
    index = data / "index"
    qfile = data / "query-20-pages.txt"
    if not qfile.exists():  # as bench_query.py writes it (generating the corpus takes a while)
        corpus = generate_corpus(args.docs + _EXTRA, mean_words=1000, seed=7)
        qfile.write_text(make_query(corpus, args.docs, args.query_words), encoding="utf-8")
    secs, facts = _measure(index, qfile, args.repeat)
    med = {k: statistics.median(v) for k, v in secs.items()}
    rows = "\n".join(
        f"| {mode} | {med[(mode, 'page cache')]:.3f} | {med[(mode, 'cold disk')]:.3f} | "
        f"{facts[mode]['hashed'] / 2**20:.1f} |"
        for mode in MODES
    )
    arrays = _array_bytes(index)
    read, n_reads = facts["blocks"]["read"], facts["blocks"]["n_reads"]
    sizes = "\n".join(
        f"| {b // 1024} KiB | {facts['blocks']['would'][str(b)] / 2**20:.1f} | "
        f"{arrays / b * 8 / 2**20:.2f} |"
        for b in SIZES
    )
    shard_mib = sum(f.stat().st_size for f in (index / "shards").rglob("*") if f.is_file()) / 2**20
    body = f"""Machine: {machine()}. Date: {today()}. Load average at the end: {load_average()}.
Index: {args.docs:,} generated documents (bench_query.py's corpus, seed 7), 16 raw shards,
{shard_mib:.0f} MiB of shard files ({arrays / 2**20:.0f} MiB in the chunk_keys, offsets and
doc_ids arrays that have block checksums). Query: the ~{args.query_words:,}-word document of
bench_query.py, the same results in every mode. `Index.open` + the first query in a new
process, medians of {args.repeat} processes per cell, modes alternating.

| verification | first query, page cache (s) | first query, cold disk (s) | MiB hashed |
|---|---|---|---|
{rows}

"whole": every segment file the query opens hashed whole (xxh3-64), as before block
checksums; "blocks": the large arrays verified block by block ({block_sums.BLOCK_BYTES // 1024} KiB blocks, each block a
lookup reads, once per process), their sidecars and the small files hashed whole; "none": no
content check (sizes and metadata only). The query's `pread` lookups read
{read / 2**20:.1f} MiB in {n_reads:,} ranges. Bytes the lookups' blocks would hash by block
size, and the sidecars' bytes (hashed whole at first open):

| block | MiB of blocks hashed | MiB of sidecars |
|---|---|---|
{sizes}
"""
    body += _projection(facts, arrays, med)
    print(body)
    write_section(args.out, "Verifying what is read (bench_verify.py)", body)


if __name__ == "__main__":
    main()
