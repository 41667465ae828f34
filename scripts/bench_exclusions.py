"""Cost of exclusions in chunking (issue 16): ``chunk_batch`` plain vs with quotations, the
reference list and a template excluded, on the same generated texts in the same run.

Each document gets a planted quotation every ~300 words and a reference list at its end;
the template is a 400-word text. Times are the best of ``--repeat`` interleaved runs over the corpus
in batches of 500 documents (the chunking tasks' unit); the ratio is what matters. Writes the
section "Exclusions in chunking (bench_exclusions.py)" of docs/benchmarks.md.

    python scripts/bench_exclusions.py --docs 2000
"""

from __future__ import annotations

import argparse
import random
import time

from simdask.ingest.synth import generate_corpus
from simdask.kernels.exclusions import Exclusions, chunk_excluding, template_chunk_ids

from _benchutil import machine, today, write_section


def planted(texts: list[str], seed: int) -> list[str]:
    """The texts with a quotation every ~300 words and a reference list appended."""
    rng = random.Random(seed)
    out = []
    for t in texts:
        ws = t.split()
        parts = []
        for i in range(0, len(ws), 300):
            parts.append(" ".join(ws[i : i + 300]))
            q = rng.randint(5, 40)
            parts.append('"' + " ".join(rng.choices(ws, k=q)) + '"')
        refs = "\n".join(" ".join(rng.choices(ws, k=12)) for _ in range(10))
        out.append(" ".join(parts) + "\n\nReferences\n" + refs + "\n")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default="docs/benchmarks.md")
    args = ap.parse_args()
    corpus = generate_corpus(args.docs, mean_words=1000, seed=5, reuse_fraction=0.0)
    texts = planted([d.text for d in corpus.docs], 5)
    n_words = sum(len(t.split()) for t in texts)
    template = " ".join(texts[0].split()[:400])
    ids = template_chunk_ids([template], 5, 28, 0)
    settings = {
        "plain": None,
        "template": Exclusions(chunk_ids=ids),
        "quotes": Exclusions(quotes=True),
        "quotes + bibliography": Exclusions(quotes=True, bibliography=True),
        "all three": Exclusions(True, True, ids),
    }

    def run(ex):
        for i in range(0, len(texts), 500):
            chunk_excluding(texts[i : i + 500], 5, 28, 0, ex)

    run(None)  # warm-up
    times = {name: float("inf") for name in settings}
    for _ in range(args.repeat):  # interleaved: load from other processes hits all alike
        for name, ex in settings.items():
            t = time.perf_counter()
            run(ex)
            times[name] = min(times[name], time.perf_counter() - t)
    base = times["plain"]
    rows = [(n, s, n_words / s / 1e6, s / base) for n, s in times.items()]
    for name, s, rate, x in rows:
        print(f"{name:24s} {s:7.2f} s  {rate:6.2f} M words/s  x{x:.2f}")
    table = "\n".join(f"| {n} | {s:.2f} | {r:.2f} | {x:.2f} |" for n, s, r, x in rows)
    body = (
        f"`python scripts/bench_exclusions.py --docs {args.docs}`: {args.docs} generated "
        f"documents, {n_words:,} words, a quotation every ~300 words and a 10-line reference "
        "list each, a 400-word template; `chunk_excluding` in batches of 500 documents on one "
        f"core, best of {args.repeat} interleaved runs.\n\n"
        "| exclusions | seconds | M words/s | time vs plain |\n|---|---|---|---|\n"
        f"{table}\n\nMachine: {machine()}; {today()}."
    )
    write_section(args.out, "Exclusions in chunking (bench_exclusions.py)", body)


if __name__ == "__main__":
    main()
