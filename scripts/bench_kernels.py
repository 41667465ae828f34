"""Micro-measurements behind the design choices quoted in docstrings and docs/benchmarks.md.

Each is measured side by side in one process (ratios), medians of ``--repeat`` runs:

- ``np.sort`` throughput of uint64 and uint32 keys (M keys/s);
- the first touch of freshly allocated memory (s per GiB), against touching it again;
- sorting concatenated sorted runs (as :func:`~simdask.kernels.postings.remap_docs` sees
  them): timsort (``kind="stable"``) against the default quicksort;
- adding up (key, count) partials: ``np.sort`` of the repeated keys (as
  :func:`~simdask.kernels.similarity.sum_pair_counts` does) against a stable argsort of the
  keys with the counts carried along;
- the delta filter of the compressed shard layout (``chunk_keys``, ``offsets``): bytes and
  encode + decode seconds with and without it (zstd level 1, 1 Mi-element chunks);
- text packs: zstd level 1 against zlib level 6 (MB/s, ratio) on generated text;
- the worker malloc settings (``WORKER_MALLOC_ENV``): the same chunking work in two new
  processes, with and without them.

Writes the section "Kernels (bench_kernels.py)" of docs/benchmarks.md.

    python scripts/bench_kernels.py
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import zlib

import numpy as np

from _benchutil import machine, today, write_section


def best(fn, repeat: int) -> float:
    """Median seconds of ``fn()`` over ``repeat`` runs."""
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def sort_rates(n: int, repeat: int) -> dict[str, float]:
    rng = np.random.default_rng(1)
    a64 = rng.integers(0, 2**63, n, dtype=np.uint64)
    a32 = rng.integers(0, 2**32, n, dtype=np.uint32)
    return {
        "uint64": n / best(lambda: np.sort(a64), repeat) / 1e6,
        "uint32": n / best(lambda: np.sort(a32), repeat) / 1e6,
    }


def first_touch(gib: float, repeat: int) -> dict[str, float]:
    n = int(gib * 2**30) // 8
    fresh, again = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        a = np.empty(n, np.uint64)
        a.fill(1)  # first touch: the pages are mapped now
        fresh.append(time.perf_counter() - t)
        t = time.perf_counter()
        a.fill(2)
        again.append(time.perf_counter() - t)
        del a
    return {"fresh": statistics.median(fresh) / gib, "again": statistics.median(again) / gib}


def sorted_runs(n: int, runs: int, repeat: int) -> dict[str, float]:
    rng = np.random.default_rng(2)
    parts = [np.sort(rng.integers(0, 2**63, n // runs, dtype=np.uint64)) for _ in range(runs)]
    keys = np.concatenate(parts)
    return {
        "quicksort": best(lambda: np.sort(keys), repeat),
        "timsort": best(lambda: np.sort(keys, kind="stable"), repeat),
    }


def partial_sums(n: int, repeat: int) -> dict[str, float]:
    rng = np.random.default_rng(3)
    keys = rng.integers(0, n // 4, n, dtype=np.uint64)
    counts = rng.integers(1, 4, n).astype(np.uint32)

    def repeated():
        np.sort(np.repeat(keys, counts.astype(np.int64)))

    def carried():
        order = np.argsort(keys, kind="stable")
        keys[order], counts[order]

    return {
        "np.sort of repeated keys": best(repeated, repeat),
        "stable argsort": best(carried, repeat),
    }


def delta_codec(n_keys: int, repeat: int) -> dict[str, dict[str, float]]:
    from numcodecs import Delta, Zstd

    rng = np.random.default_rng(4)
    keys = np.sort(rng.choice(2**28 // 16, n_keys, replace=False)).astype(np.uint32)
    df = np.minimum(rng.zipf(1.5, n_keys), 10_000).astype(np.uint64)
    offsets = np.concatenate([[0], np.cumsum(df)]).astype(np.uint64)
    zstd = Zstd(level=1)
    out = {}
    for name, arr in (("chunk_keys", keys), ("offsets", offsets)):
        chunks = [arr[i : i + 2**20] for i in range(0, len(arr), 2**20)]
        delta = Delta(dtype=arr.dtype.str)
        for label, filt in (("delta+zstd", delta), ("zstd", None)):

            def roundtrip(filt=filt, chunks=chunks):
                enc = [zstd.encode(filt.encode(c) if filt else c) for c in chunks]
                for e in enc:
                    d = zstd.decode(e)
                    if filt:
                        filt.decode(d)
                return sum(len(e) for e in enc)

            size = roundtrip()
            out[f"{name} {label}"] = {"MB": size / 1e6, "s": best(roundtrip, repeat)}
        out[f"{name} raw"] = {"MB": arr.nbytes / 1e6, "s": 0.0}
    return out


def text_codecs(repeat: int) -> dict[str, dict[str, float]]:
    from numcodecs import Zstd

    from simdask.ingest.synth import generate_corpus

    corpus = generate_corpus(400, mean_words=1000, seed=5)
    data = "\n".join(d.text for d in corpus.docs).encode()
    zstd = Zstd(level=1)
    out = {}
    for label, enc in (("zstd-1", zstd.encode), ("zlib-6", lambda b: zlib.compress(b, 6))):
        size = len(enc(data))
        secs = best(lambda enc=enc: enc(data), repeat)
        out[label] = {"MB/s": len(data) / secs / 1e6, "ratio": len(data) / size}
    out["input MB"] = {"MB/s": 0.0, "ratio": len(data) / 1e6}
    return out


_MALLOC_PROBE = """
import json, time
from simdask.ingest.synth import generate_corpus
from simdask.kernels.hashing import chunk_batch
texts = [d.text for d in generate_corpus(1500, mean_words=800, seed=6).docs]
t = time.perf_counter()
for _ in range(3):
    for i in range(0, len(texts), 500):
        chunk_batch(texts[i:i + 500], 5, 28, 0)
print(json.dumps(time.perf_counter() - t))
"""


def malloc_settings(repeat: int) -> dict[str, float]:
    from simdask.cluster.connect import WORKER_MALLOC_ENV

    base = {k: v for k, v in os.environ.items() if k not in WORKER_MALLOC_ENV}
    times: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(repeat):  # alternating, new processes
        for label, env in (("with", {**base, **WORKER_MALLOC_ENV}), ("without", base)):
            out = subprocess.run(
                [sys.executable, "-c", _MALLOC_PROBE], env=env, capture_output=True, text=True
            )
            times[label].append(json.loads(out.stdout))
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--keys", type=int, default=20_000_000, help="keys per sort measurement")
    ap.add_argument("--gib", type=float, default=1.0, help="GiB for the first-touch measurement")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default="docs/benchmarks.md")
    args = ap.parse_args()
    r = args.repeat
    sorts = sort_rates(args.keys, r)
    touch = first_touch(args.gib, r)
    runs = sorted_runs(args.keys, 8, r)
    sums = partial_sums(args.keys // 2, r)
    delta = delta_codec(5_000_000, r)
    texts = text_codecs(r)
    mal = malloc_settings(r)
    rows = "\n".join(
        f"| {k} | {v['MB']:.1f} | {v['s']:.3f} |" for k, v in delta.items() if not k.endswith("raw")
    )
    raw = ", ".join(
        f"{k.split()[0]} {v['MB']:.1f} MB" for k, v in delta.items() if k.endswith("raw")
    )
    body = f"""
Machine: {machine()}. Date: {today()}. Medians of {r} runs, side by side in one process
(the malloc measurement: alternating new processes).

- `np.sort`, {args.keys / 1e6:.0f} M random keys: uint64 **{sorts["uint64"]:.1f} M keys/s**,
  uint32 **{sorts["uint32"]:.1f} M keys/s**.
- First touch of freshly allocated memory: **{touch["fresh"]:.2f} s per GiB** (writing the
  same pages again: {touch["again"]:.2f} s per GiB).
- {args.keys / 1e6:.0f} M uint64 keys as 8 concatenated sorted runs (what `remap_docs`
  sorts): quicksort {runs["quicksort"]:.2f} s, timsort {runs["timsort"]:.2f} s: timsort
  takes **{runs["timsort"] / runs["quicksort"]:.2f}x** the time of quicksort.
- Adding up {args.keys / 2e6:.0f} M (key, count) partials (`sum_pair_counts`): `np.sort` of
  the repeated keys {sums["np.sort of repeated keys"]:.2f} s, a stable argsort of the keys
  with the counts carried along {sums["stable argsort"]:.2f} s:
  **{sums["stable argsort"] / sums["np.sort of repeated keys"]:.1f}x**.
- Text packs, {texts["input MB"]["ratio"]:.1f} MB of generated text: zstd level 1
  **{texts["zstd-1"]["MB/s"]:.0f} MB/s** (ratio {texts["zstd-1"]["ratio"]:.2f}), zlib level 6
  {texts["zlib-6"]["MB/s"]:.0f} MB/s (ratio {texts["zlib-6"]["ratio"]:.2f}):
  **{texts["zstd-1"]["MB/s"] / texts["zlib-6"]["MB/s"]:.1f}x** faster.
- Chunking 1,500 generated documents three times in a new process (as chunk tasks do), with
  the worker malloc settings (`WORKER_MALLOC_ENV`) {mal["with"]:.2f} s, without
  {mal["without"]:.2f} s: **{mal["without"] / mal["with"]:.2f}x**.

The compressed shard layout's delta filter, a synthetic shard of 5,000,000 distinct chunk IDs
(Zipf document counts), zstd level 1 in 1 Mi-element chunks ({raw} uncompressed):

| array, codec | MB | encode + decode, s |
|---|---|---|
{rows}
"""
    print(body)
    write_section(args.out, "Kernels (bench_kernels.py)", body)


if __name__ == "__main__":
    main()
