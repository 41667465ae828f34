"""Text alignment on the PAN 2013 text-alignment training corpus (issue 28).

Aligns every pair of the corpus (suspicious document = A, source = B) with
:func:`simdask.alignment.align` in a pool of ``--processes`` processes and scores the passages
with PAN's measures (:mod:`simdask.alignment.pan_measures`) per sub-corpus and over all pairs:
precision, recall, granularity, plagdet, and the share of negative pairs (01-no-plagiarism)
with any detection. Prints a table and the time.

The corpus is not in this repository: it is folder ``data/train_corpus/`` of the public
GitHub repository ``ArijanaBrlek/PlagiarismDetection`` (sub-folders ``01-no-plagiarism`` ..
``05-summary-obfuscation`` with a ``pairs`` file and one XML ground truth per pair; ``src/``
and ``susp/`` with the texts; offsets are code points). Point ``--corpus`` (or the
environment variable ``SIMDASK_PAN_CORPUS``) at that folder; the default is
``pan/data/train_corpus`` under the current directory. The same repository holds Sanchez-Perez
et al.'s detections (``sanchez_perez/04-out``, ``05-out``: PAN XML, one file per pair);
``--known-answer`` scores them with this scorer, which must give their paper's plagdet
(0.88394 translation, 0.57727 summary) to within 0.002; ``--sanchez-perez`` (or
``SIMDASK_PAN_SANCHEZ_PEREZ``) is that folder, by default ``sanchez_perez`` next to the
corpus' ``data`` folder.

    python scripts/eval_pan.py --corpus PATH [--known-answer] [--ablation] [--write-docs]

``--retrieval [--index DIR] [--end-to-end] [--top N]``: the candidate partners instead
(scripts/eval_retrieval.py): recall per sub-corpus, their cost in the build, and simdask
choosing the pairs to align.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import eval_retrieval
from _pan_pool import SUBCORPORA, align_all, read_annotations, read_pairs, read_text, xml_name

from simdask.alignment import AlignConfig, align
from simdask.alignment.pan_measures import PanScores, scores

from _benchutil import load_average, machine, today, write_section

#: issue 28's columns: simdask before this aligner, PAN 2013 baseline, Suchomel et al. 2013,
#: Sanchez-Perez et al. 2014 on this training corpus (their Table 2)
PUBLISHED = {
    "no obfuscation": (0.763, 0.934, 0.818, 0.894),
    "random obfuscation": (0.204, 0.071, 0.753, 0.889),
    "cyclic translation": (0.197, 0.106, 0.675, 0.884),
    "summary": (0.061, 0.045, 0.610, 0.577),
    "all pairs": (0.357, 0.422, 0.745, 0.877),
}
KNOWN = {"04-translation-obfuscation": 0.88394, "05-summary-obfuscation": 0.57727}


def run(corpus: Path, config: AlignConfig, processes: int, limit: int | None, reuse=True):
    """Align every pair; per sub-corpus (cases, detections, negative pairs with a
    detection), the seconds taken and the pool's CPU seconds."""
    work = {sub: read_pairs(corpus, sub, limit) for sub, _ in SUBCORPORA}
    every = [p for sub, _ in SUBCORPORA for p in work[sub]]
    t0 = time.perf_counter()
    found, cpu = align_all(corpus, config, processes, every, reuse)
    seconds = time.perf_counter() - t0
    detections = dict(zip(every, found, strict=True))
    out = {}
    for sub, _ in SUBCORPORA:
        cases = [
            c
            for p in work[sub]
            for c in read_annotations(corpus / sub / xml_name(p), p, "plagiarism")
        ]
        dets = [d for p in work[sub] for d in detections[p]]
        flagged = sum(1 for p in work[sub] if detections[p])
        out[sub] = (cases, dets, flagged, len(work[sub]))
    return out, seconds, cpu


def table(results) -> tuple[list[tuple[str, PanScores]], float]:
    """Scores per sub-corpus with plagiarism and over all pairs; share of negative pairs
    with any detection."""
    rows, all_cases, all_dets = [], [], []
    negative = 0.0
    for sub, label in SUBCORPORA:
        cases, dets, flagged, n = results[sub]
        all_cases += cases
        all_dets += dets
        if not cases:
            negative = flagged / max(n, 1)
            continue
        rows.append((label, scores(cases, dets)))
    rows.append(("all pairs", scores(all_cases, all_dets)))
    return rows, negative


def format_table(rows, negative: float) -> str:
    """Markdown table with the published columns."""
    head = (
        "| sub-corpus | precision | recall | granularity | **plagdet** | simdask before | "
        "PAN 2013 baseline | Suchomel 2013 | Sanchez-Perez 2014 |\n|---|---|---|---|---|---|---|---|---|\n"
    )
    body = "".join(
        f"| {label} | {s.precision:.3f} | {s.recall:.3f} | {s.granularity:.3f} | "
        f"**{s.plagdet:.3f}** | " + " | ".join(f"{x:.3f}" for x in PUBLISHED[label]) + " |\n"
        for label, s in rows
    )
    return head + body + f"\nNegative pairs (01-no-plagiarism) with any detection: {negative:.1%}\n"


def known_answer(corpus: Path, sp_dir: Path) -> str:
    """Sanchez-Perez et al.'s detections scored by this scorer against their paper."""
    lines = [
        "| sub-corpus | P | R | gran | plagdet (this scorer) | paper | difference |",
        "|---|---|---|---|---|---|---|",
    ]
    for sub, paper in KNOWN.items():
        out_dir = sp_dir / f"{sub[:2]}-out"
        pairs = read_pairs(corpus, sub, None)
        cases = [
            c for p in pairs for c in read_annotations(corpus / sub / xml_name(p), p, "plagiarism")
        ]
        dets = [
            d
            for p in pairs
            for d in read_annotations(out_dir / xml_name(p), p, "detected-plagiarism")
        ]
        s = scores(cases, dets)
        lines.append(
            f"| {sub} | {s.precision:.5f} | {s.recall:.5f} | {s.granularity:.5f} | {s.plagdet:.5f} | "
            f"{paper:.5f} | {s.plagdet - paper:+.5f} |"
        )
    return "\n".join(lines) + "\n"


def _pages(paths: list[Path], chars: int) -> str:
    text = ""
    for path in paths:
        text += read_text(path) + "\n\n"
        if len(text) >= chars:
            break
    return text[:chars]


def thesis_timing(corpus: Path, repeats: int = 9) -> str:
    """Seconds to align a 20-page thesis (60,000 characters, about 10,000 words: suspicious
    documents joined, 3,000 characters of a source planted in its middle) against one
    typical source document and against a 20-page source (sources joined), in this process
    (median and best of ``repeats``)."""
    susp = sorted((corpus / "susp").iterdir())
    src = sorted((corpus / "src").iterdir())
    big = _pages(src[1:], 60_000)
    thesis = _pages(susp, 60_000)
    thesis = thesis[:30_000] + big[10_000:13_000] + thesis[30_000:57_000]
    lines = []
    for label, other in (("a source document", read_text(src[0])), ("a 20-page source", big)):
        times, cpu = [], []
        for _ in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            align(thesis, other)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        times.sort()
        cpu.sort()
        lines.append(
            f"- 20-page thesis ({len(thesis):,} characters) against {label} "
            f"({len(other):,} characters): wall median {times[len(times) // 2] * 1000:.0f} ms "
            f"(best {times[0] * 1000:.0f} ms), CPU median {cpu[len(cpu) // 2] * 1000:.0f} ms "
            f"(best {cpu[0] * 1000:.0f} ms)"
        )
    return "\n".join(lines) + f"\n\nLoad: {load_average()}.\n"


#: each switched from its default in turn
ABLATION = (
    ("sentence_seeds", "sentence seeds (tf-isf cosine + Dice)"),
    ("chunk_seeds", "exact sorted 5-word chunk seeds"),
    ("stopword_seeds", "stop-word 8-gram seeds"),
    ("trim", "trimming to mutually best seeds"),
    ("join_passages", "joining in-order neighbours"),
)


def ablation_rows(config: AlignConfig) -> list[tuple[str, dict]]:
    """(label, change) for the defaults and each feature of :data:`ABLATION` switched."""
    rows = [("defaults", {})]
    for name, label in ABLATION:
        on = getattr(config, name)
        rows.append((f"{'without' if on else 'with'} {label}", {name: not on}))
    return rows


def prepare_speedup(corpus: Path, config: AlignConfig, processes: int, limit: int | None) -> str:
    """Every pair aligned twice, each text prepared once per pair (as before) and once per
    process (:func:`simdask.alignment.prepare`, kept while among the last
    :data:`CACHE_TEXTS`): the CPU seconds of each, whether the detections are identical,
    and the scores (which must not change)."""
    load0 = load_average()
    per_pair, wall_pair, cpu_pair = run(corpus, config, processes, limit, reuse=False)
    once, wall_once, cpu_once = run(corpus, config, processes, limit, reuse=True)
    n = sum(r[3] for r in once.values())
    rows, negative = table(once)
    return (
        "| texts prepared | pairs | CPU (s) | ms a pair | wall (s) |\n|---|---|---|---|---|\n"
        f"| once per pair (before) | {n:,} | {cpu_pair:.1f} | {1000 * cpu_pair / n:.2f} | "
        f"{wall_pair:.1f} |\n"
        f"| once per process | {n:,} | {cpu_once:.1f} | {1000 * cpu_once / n:.2f} | "
        f"{wall_once:.1f} |\n\n"
        f"CPU saved: {1 - cpu_once / cpu_pair:.1%} ({cpu_pair / cpu_once:.2f}x); detections "
        f"identical: {per_pair == once}. {processes} processes; load before {load0}, after "
        f"{load_average()}. Scores (texts prepared once):\n\n" + format_table(rows, negative)
    )


def _overrides(items: list[str]) -> dict:
    out = {}
    for item in items:
        key, _, value = item.partition("=")
        default = getattr(AlignConfig(), key)
        out[key] = (value == "true") if isinstance(default, bool) else type(default)(value)
    return out


def ranking_tables(idx, pairs) -> str:
    """Recall ranked among the sources (PAN's pool, not bounded by the stored depth) and
    among all documents, by the summed weights (before) and the normalised score (after),
    from one index; with the CPU seconds of each ranking."""
    out = ""
    for pool, prefix in (("the source documents", "src/"), ("all documents", "")):
        for label, norm in (("summed weights (before)", False), ("normalised (after)", True)):
            t = time.process_time()
            lists = eval_retrieval.ranked_lists(idx, prefix, norm)
            cpu = time.process_time() - t
            out += (
                f"\nRanked among {pool} from the segments, score: {label}; {cpu:.1f} CPU s "
                f"for {len(lists):,} documents:\n\n" + eval_retrieval.recall_table(pairs, lists)
            )
    return out


def retrieval(args, config: AlignConfig, docs: Path, stamp: str) -> None:
    """``--retrieval``: scripts/eval_retrieval.py on the corpus; the section of docs."""
    index = args.index or Path("pan-retrieval-index")
    idx, build = eval_retrieval.build(args.corpus, index)
    pairs = eval_retrieval.labelled(args.corpus)
    every, sources = eval_retrieval.partner_lists(idx)
    sec = build["seconds"]
    engine = sum(v for k, v in sec.items() if k not in ("scan", "commit", "candidates", "total"))
    text = (
        "Candidate recall, among all documents:\n\n"
        + eval_retrieval.recall_table(pairs, every)
        + "\nAmong the source documents only (the PAN task's source collection):\n\n"
        + eval_retrieval.recall_table(pairs, sources)
        + ranking_tables(idx, pairs)
        + "\nThe bound: a labelled pair of a suspicious document with more than 10 labelled "
        "sources cannot all be in its top 10:\n\n"
        + eval_retrieval.bound_table(pairs)
        + f"\nCost, one default build of {build['documents']:,} documents "
        f"({build['wall']:.0f} s wall, load {build['load']}): content n-gram postings "
        f"{build['candidate_postings']:,} beside {build['postings']:,} sorted-chunk postings "
        f"({build['candidate_postings'] / build['postings']:.2f}x); candidates "
        f"{sec.get('candidates', 0):.1f} s beside {engine:.1f} s of the chunk, merge and "
        f"similarity stages ({sec.get('candidates', 0) / engine:.2f}x).\n"
    )
    print(text, flush=True)
    if args.end_to_end:
        if args.limit:  # the first LIMIT suspicious documents, and only their pairs
            sources = {k: sources[k] for k in sorted(sources)[: args.limit]}
            names = {k[5:] for k in sources}
            pairs = {sub: [p for p in ps if p[0] in names] for sub, ps in pairs.items()}
        cases = [
            c
            for sub, _ in SUBCORPORA
            for p in pairs[sub]
            for c in read_annotations(args.corpus / sub / xml_name(p), p, "plagiarism")
        ]

        def align_pairs(chosen):
            return align_all(args.corpus, config, args.processes, chosen)[0]

        e = eval_retrieval.end_to_end(pairs, sources, args.top, cases, align_pairs)
        given = [p for sub, _ in SUBCORPORA for p in pairs[sub]]
        base = scores(cases, [d for f in align_pairs(given) for d in f])
        lines = [
            f"End to end{f' (the first {args.limit} suspicious documents)' if args.limit else ''}: "
            f"each suspicious document aligned with its top {args.top} source "
            f"candidates, {e['chosen']:,} pairs ({e['chosen_labelled']:,} of them labelled), "
            f"in {e['seconds']:.0f} s with {args.processes} processes:",
            "",
            "| pairs scored | precision | recall | granularity | plagdet |",
            "|---|---|---|---|---|",
        ]
        for label, key in (("all chosen pairs", "all"), ("chosen labelled pairs", "labelled")):
            s = e[key]
            lines.append(
                f"| {label} | {s.precision:.3f} | {s.recall:.3f} | {s.granularity:.3f} | "
                f"{s.plagdet:.3f} |"
            )
        lines.append(
            f"| the {len(given):,} given (labelled) pairs | {base.precision:.3f} | "
            f"{base.recall:.3f} | {base.granularity:.3f} | {base.plagdet:.3f} |"
        )
        lines.append(
            f"\nNegative pairs chosen: {e['negatives_chosen']} of {e['negatives']}; aligned to "
            f"a passage: {e['negatives_aligned']} ({e['negatives_aligned'] / e['negatives']:.1%})."
        )
        text += "\n" + "\n".join(lines) + "\n"
        print("\n".join(lines), flush=True)
    if args.write_docs:
        write_section(
            docs, "Retrieval: candidate partners on the PAN training corpus", text + "\n" + stamp
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_corpus = os.environ.get("SIMDASK_PAN_CORPUS", "pan/data/train_corpus")
    ap.add_argument("--corpus", type=Path, default=Path(default_corpus))
    ap.add_argument("--sanchez-perez", type=Path, default=None)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="pairs per sub-corpus (tuning)")
    ap.add_argument("--set", nargs="*", default=[], help="AlignConfig overrides KEY=VALUE")
    ap.add_argument("--known-answer", action="store_true")
    ap.add_argument("--ablation", action="store_true")
    ap.add_argument("--thesis", action="store_true", help="time a 20-page thesis pair")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument(
        "--prepare-speedup",
        action="store_true",
        help="align every pair with texts prepared per pair and per process: CPU of each",
    )
    ap.add_argument("--retrieval", action="store_true", help="candidate partners instead")
    ap.add_argument("--index", type=Path, default=None, help="--retrieval: the index folder")
    ap.add_argument("--end-to-end", action="store_true", help="--retrieval: align the chosen")
    ap.add_argument("--top", type=int, default=10, help="--end-to-end: candidates per document")
    args = ap.parse_args()
    sp_env = os.environ.get("SIMDASK_PAN_SANCHEZ_PEREZ")
    sp_dir = args.sanchez_perez or (
        Path(sp_env) if sp_env else args.corpus.parent.parent / "sanchez_perez"
    )
    config = AlignConfig().replace(**_overrides(args.set))
    docs = Path(__file__).resolve().parents[1] / "docs" / "alignment.md"
    stamp = f"Machine: {machine()}. Date: {today()}."
    if args.retrieval:
        retrieval(args, config, docs, stamp)
        return
    if args.known_answer:
        text = known_answer(args.corpus, sp_dir)
        print(text)
        if args.write_docs:
            write_section(
                docs,
                "Known answer: the scorer on Sanchez-Perez et al.'s output",
                text + "\n" + stamp,
            )
    if args.thesis:
        text = thesis_timing(args.corpus)
        print(text)
        if args.write_docs:
            write_section(docs, "Speed: one long pair", text + "\n" + stamp)
    if args.prepare_speedup:
        text = prepare_speedup(args.corpus, config, args.processes, args.limit)
        print(text)
        if args.write_docs and args.limit is None:
            write_section(docs, "Speed: each text prepared once", text + "\n" + stamp)
        return
    load0 = load_average()
    results, seconds, cpu = run(args.corpus, config, args.processes, args.limit)
    rows, negative = table(results)
    n_pairs = sum(r[3] for r in results.values())
    timing = (
        f"{n_pairs} pairs aligned in {seconds:.1f} s with {args.processes} processes "
        f"({n_pairs / seconds:.1f} pairs/s; {cpu:.1f} s of CPU in the pool, "
        f"{1000 * cpu / n_pairs:.1f} ms a pair); load before {load0}, after {load_average()}."
    )
    text = format_table(rows, negative)
    print(text)
    print(timing)
    if args.write_docs and args.limit is None:  # a sample never replaces the full table
        write_section(
            docs, "Results on the PAN 2013 training corpus", text + "\n" + timing + "\n\n" + stamp
        )
    if args.ablation:
        lines = [
            "| configuration | "
            + " | ".join(label for label, _ in rows)
            + " | negatives flagged |",
            "|---|" + "---|" * (len(rows) + 1),
        ]
        for label, change in ablation_rows(config):
            res, *_ = run(args.corpus, config.replace(**change), args.processes, args.limit)
            ab_rows, ab_neg = table(res)
            lines.append(
                f"| {label} | "
                + " | ".join(f"{s.plagdet:.3f}" for _, s in ab_rows)
                + f" | {ab_neg:.1%} |"
            )
            print(lines[-1], flush=True)
        sample = f"the first {args.limit} pairs of each sub-corpus" if args.limit else "all pairs"
        text = (
            f"Plagdet per sub-corpus ({sample}) with each feature switched from its default:\n\n"
            + "\n".join(lines)
            + "\n"
        )
        print(text)
        if args.write_docs:
            write_section(docs, "Ablation: what each feature adds", text + "\n" + stamp)


if __name__ == "__main__":
    main()
