"""False positives of the aligner on unrelated texts of one vocabulary, and recall of planted
summaries in the same texts (docs/alignment.md, "Unrelated texts of one vocabulary").

Generated text (tests/helpers/zipf_text.py): made-up content words with Zipf frequencies from
vocabularies of several sizes, English function words between them; two texts of one
vocabulary share their frequent content words, as essays on one assignment do, and nothing
else. Per vocabulary size:

- **unrelated, short against long**: a 400-word text against an unrelated 1,800-word one (the
  case of an essay against a thesis, where the summary variant is tried); and **equal**:
  600 words against 600; the share of pairs given any passage;
- **planted summary**: a 1,800-word source, and a text of 350 own words around a summary of a
  600-word section of it (one sentence in three, half its words); the share of pairs with a
  passage over the summary and the share of the passages' characters outside it.

With ``--pan CORPUS`` also the PAN 2013 training corpus' negative pairs (01-no-plagiarism): the
share given any passage. Prints a table; ``--write-docs`` writes it into docs/alignment.md.
Run it with the code to compare on ``PYTHONPATH`` (the numbers "before" were made with the
previous commit's ``simdask``).

    python scripts/eval_align_null.py [--pairs 40] [--pan CORPUS] [--write-docs]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # tests.helpers; simdask from PYTHONPATH when set

from simdask.alignment import AlignConfig, align  # noqa: E402
from tests.helpers.zipf_text import summary_of, vocabulary, zipf_sentences  # noqa: E402

from _benchutil import load_average, machine, today, write_section  # noqa: E402

SIZES = (300, 1000, 3000, 10000)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def unrelated(vocab: list[str], pairs: int, n_a: int, n_b: int, config) -> float:
    """The share of unrelated pairs (``n_a`` against ``n_b`` words) given any passage."""
    hit = 0
    for k in range(pairs):
        a = " ".join(zipf_sentences(n_a, vocab, seed=1000 + 2 * k))
        b = " ".join(zipf_sentences(n_b, vocab, seed=1001 + 2 * k))
        hit += bool(align(a, b, config))
    return hit / pairs


def planted(vocab: list[str], pairs: int, config) -> tuple[float, float]:
    """The share of planted-summary pairs with a passage over the summary, and the share of
    the passages' characters in A outside the summary (all pairs together)."""
    found = outside = inside = 0
    for k in range(pairs):
        source = zipf_sentences(1800, vocab, seed=5000 + k)
        third = len(source) // 3
        section = source[third : 2 * third]
        before = " ".join(zipf_sentences(200, vocab, seed=7000 + k))
        summary = " ".join(summary_of(section, seed=k))
        after = " ".join(zipf_sentences(150, vocab, seed=9000 + k))
        text = f"{before} {summary} {after}"
        at, end = len(before) + 1, len(before) + 1 + len(summary)
        passages = align(text, " ".join(source), config)
        found += any(p.a_start < end and at < p.a_end for p in passages)
        for p in passages:
            overlap = max(0, min(p.a_end, end) - max(p.a_start, at))
            inside += overlap
            outside += p.a_end - p.a_start - overlap
    return found / pairs, outside / max(inside + outside, 1)


def pan_negatives(corpus: Path, config) -> tuple[float, int]:
    """The share of PAN's negative pairs given any passage, and their number."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from _pan_pool import read_pairs, read_text

    pairs = read_pairs(corpus, "01-no-plagiarism", None)
    hit = 0
    for susp, src in pairs:
        a, b = read_text(corpus / "susp" / susp), read_text(corpus / "src" / src)
        hit += bool(align(a, b, config))
    return hit / len(pairs), len(pairs)


def main() -> None:
    """Measure and print (and with ``--write-docs`` write) the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=40, help="pairs per vocabulary size and case")
    ap.add_argument("--pan", type=Path, help="the PAN training corpus folder")
    ap.add_argument("--label", default="this commit", help="the code measured, for the table")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    config = AlignConfig()
    lines = [
        f"Code: {args.label}. Pairs per vocabulary size and case: {args.pairs}.",
        "",
        "| vocabulary (content words) | unrelated 400 vs 1,800 words: any passage "
        "| unrelated 600 vs 600: any passage | planted summary found | planted summary: "
        "passages' text outside it | CPU (s) |",
        "|---|---|---|---|---|---|",
    ]
    load0 = load_average()
    for size in SIZES:
        vocab = vocabulary(size, seed=size)
        c0 = _cpu()
        short = unrelated(vocab, args.pairs, 400, 1800, config)
        equal = unrelated(vocab, args.pairs, 600, 600, config)
        found, elsewhere = planted(vocab, args.pairs, config)
        row = (
            f"| {size:,} | {short:.1%} | {equal:.1%} | {found:.1%} | {elsewhere:.1%} "
            f"| {_cpu() - c0:.1f} |"
        )
        print(row, flush=True)
        lines.append(row)
    if args.pan:
        c0 = _cpu()
        share, n = pan_negatives(args.pan, config)
        line = (
            f"PAN 2013 training corpus, negative pairs given any passage: {share:.1%} of {n} "
            f"({_cpu() - c0:.1f} s of CPU)."
        )
        print(line)
        lines += ["", line]
    lines += ["", f"Load: {load0} before, {load_average()} after.", ""]
    lines += [f"Machine: {machine()}. Date: {today()}.", ""]
    print("\n".join(lines[-5:]))
    if args.write_docs:
        write_section(
            ROOT / "docs" / "alignment.md",
            f"Unrelated texts of one vocabulary ({args.label})",
            "\n".join(lines),
        )


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"{time.perf_counter() - t0:.1f} s")
