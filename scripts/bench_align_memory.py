"""Memory and time of aligning two long texts (issue 28: the aligner's memory is bounded).

Generates two texts of N sentences each (words of a 5,000-word vocabulary, Zipf-like; A ends
with a paraphrased copy of a tenth of B's sentences, every fifth word replaced), aligns them
with :func:`simdask.alignment.align` and prints the peak of Python allocations (tracemalloc:
numpy arrays included) and the CPU and wall seconds. ``--write-docs`` writes the table into
docs/alignment.md.

    python scripts/bench_align_memory.py --sentences 2000 5000 20000 [--write-docs]
"""

from __future__ import annotations

import argparse
import random
import time
import tracemalloc
from pathlib import Path

from simdask.alignment import AlignConfig, align

from _benchutil import load_average, machine, today, write_section


def long_pair(n: int, copied: int, seed: int = 7) -> tuple[str, str, str]:
    """Texts A and B of ``n`` sentences; A ends with ``copied`` paraphrased sentences of B
    (from B's sentence n // 3 on); also the copied text as it stands in A."""
    rng = random.Random(seed)
    vocab = [f"t{k}q" for k in range(5000)]
    weights = [1.0 / (k + 20) for k in range(5000)]

    def book(m: int) -> list[list[str]]:
        return [rng.choices(vocab, weights, k=rng.randint(8, 18)) for _ in range(m)]

    b = book(n)
    copy = [[w if k % 5 else rng.choice(vocab) for k, w in enumerate(s)] for s in b[n // 3 :]]
    a = book(n - copied) + copy[:copied]
    text = [" ".join(" ".join(s).capitalize() + "." for s in t) for t in (a, b)]
    return text[0], text[1], " ".join(" ".join(s).capitalize() + "." for s in copy[:copied])


def measure(n: int, config: AlignConfig) -> tuple[float, float, float, bool]:
    """Peak MB (tracemalloc), CPU and wall seconds of one alignment of two ``n``-sentence
    texts, and whether the copy was found (a passage covering at least 80 % of it)."""
    a, b, copy = long_pair(n, n // 10)
    tracemalloc.start()
    cpu, wall = time.process_time(), time.perf_counter()
    found = align(a, b, config)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    at = a.index(copy)
    covered = sum(max(0, min(p.a_end, at + len(copy)) - max(p.a_start, at)) for p in found)
    return peak, cpu, wall, covered >= 0.8 * len(copy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, nargs="+", default=[2000, 5000, 20000])
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    config = AlignConfig()
    rows = [
        "| sentences (each text) | sentence pairs | peak (MB) | CPU (s) | wall (s) | copy found |"
    ]
    rows.append("|---|---|---|---|---|---|")
    load = load_average()
    for n in args.sentences:
        peak, cpu, wall, ok = measure(n, config)
        rows.append(f"| {n:,} | {n * n:,} | {peak:.0f} | {cpu:.1f} | {wall:.1f} | {ok} |")
        print(rows[-1], flush=True)
    text = "\n".join(rows)
    stamp = f"Block: {config.pair_block:,} sentence pairs (`pair_block`). Load: {load}.\n\n"
    stamp += f"Machine: {machine()}. Date: {today()}."
    print(stamp)
    if args.write_docs:
        docs = Path(__file__).resolve().parent.parent / "docs" / "alignment.md"
        write_section(docs, "Memory: two long texts", text + "\n\n" + stamp)


if __name__ == "__main__":
    main()
