"""End to end on the PAN 2013 text-alignment training corpus (issue 29): simdask chooses the
pairs to align from its stored candidate partners, the aligner aligns them, and PAN's
measures score the passages against every labelled case.

``python scripts/eval_end_to_end.py --corpus PATH --index DIR --cache FILE [--sources-only
PREFIX | --stored-filtered]`` (the index as scripts/eval_retrieval.py builds it, with
candidates). Steps:

1. every suspicious document's candidates (:data:`DEPTH`): with ``--sources-only PREFIX``
   ranked among the documents whose key starts with PREFIX (``src/``: the PAN task's source
   collection, :func:`simdask.read.candidates.ranked_among`: PAN's definition, the
   suspicious documents are checked against the source collection); with
   ``--stored-filtered`` its stored list (ranked among every document) with the partners
   that are not sources dropped (what this script did before); with neither, its stored
   list as it is: every document is a candidate, and a passage found in a pair of two
   suspicious documents (which copy from a common source) counts as a false positive;
2. **every** such candidate pair and every labelled pair aligned once (the pool of
   scripts/_pan_pool.py, each text prepared once per process), with the longest verbatim
   word run of each pair; kept in ``--cache`` (pickle; pairs not in it are aligned and
   added) so that the rules and pools are compared without aligning again;
3. for each selection rule (:class:`~simdask.kernels.partner_rule.PartnerRule`, and top 10
   and top-R, R = the document's labelled sources, for reference): recall per sub-corpus,
   the pairs it aligns, and plagdet over all labelled cases: *strict* (every passage of a
   chosen pair counts; one in a pair the training corpus does not label is a false
   positive) and with the chosen unlabelled pairs that share a verbatim run of at least N
   words *set aside* (real reuse, labelled only in the held-out part of PAN 2013).
"""

from __future__ import annotations

import argparse
import math
import pickle
import random
import time
from collections import Counter
from pathlib import Path

import numpy as np
from _pan_pool import SUBCORPORA, align_all, read_annotations, read_pairs, xml_name

from simdask import Index
from simdask.alignment import AlignConfig
from simdask.alignment.pan_measures import PanScores, scores
from simdask.kernels.partner_rule import PartnerRule, chosen_count
from simdask.read.candidates import ranked_among
from simdask.storage.aligned_tables import DEFAULT_RULE
from simdask.storage.candidate_store import candidate_scores

from _benchutil import load_average

#: the stored candidates read per document (all the index keeps)
DEPTH = 50


def _file(key: str) -> str:
    """The corpus file name of a key (``src/NAME`` or ``susp/NAME``)."""
    return key.split("/", 1)[1]


def source_lists(index: Path, pool: str | None, filtered: bool) -> dict[str, list[tuple[str, int]]]:
    """Each suspicious document's candidates, best first, as ``(file name, score)``, by
    suspicious file name: ranked among the keys starting with ``pool`` (None: the stored
    lists, among every document; ``filtered``: those lists without the partners that are
    not sources)."""
    with Index.open(index) as idx:
        names = {d.doc_id: d.key for d in idx.catalog.documents()}
        susp = [d for d, k in names.items() if k.startswith("susp/")]
        if pool is not None:
            lists = ranked_among(idx, susp, pool, DEPTH)
        else:
            lists = candidate_scores(idx.catalog, susp, DEPTH)
    keep = (lambda k: k.startswith("src/")) if filtered else (lambda k: True)
    return {
        _file(names[d]): [(_file(names[o]), s) for o, s in lst if keep(names[o])]
        for d, lst in lists.items()
    }


def align_everything(corpus: Path, chosen, labelled, processes: int, cache: Path) -> dict:
    """``{"found": {pair: (detections, longest run)}, "cpu", "wall", "load", "new"}``: every
    candidate and labelled pair aligned (those in ``cache`` read from it; ``new``: how many
    were aligned now, in ``cpu`` / ``wall`` seconds at ``load``)."""
    old = pickle.loads(cache.read_bytes()) if cache.exists() else {"found": {}}
    want = set(chosen) | set(labelled)
    pairs = sorted(want - set(old["found"]))
    load0 = load_average()
    t0 = time.perf_counter()
    found, cpu = align_all(corpus, AlignConfig(), processes, pairs, runs=True) if pairs else ([], 0)
    out = {
        "found": {**old["found"], **dict(zip(pairs, found, strict=True))},
        "cpu": cpu,
        "wall": time.perf_counter() - t0,
        "load": f"before {load0}, after {load_average()}",
        "new": len(pairs),
    }
    if pairs:
        cache.write_bytes(pickle.dumps(out))
    return out


#: the rules compared: (label, rule); a fixed top k is ``PartnerRule(0, k, k)``
RULES = (
    ("top 10", PartnerRule(0.0, 10, 10)),
    ("top 5", PartnerRule(0.0, 5, 5)),
    ("totals' default: score >= 0.1 x best, 5 to 10", DEFAULT_RULE),
    ("score >= 0.2 x best, at most 30", PartnerRule(0.2, 30, 1)),
    ("score >= 0.1 x best, at most 30", PartnerRule(0.1, 30, 1)),
    ("score >= 0.05 x best, at most 50", PartnerRule(0.05, 50, 1)),
)
#: a chosen unlabelled pair sharing a verbatim run of at least this many words is set aside
RUN_WORDS = (50, 25)


def choose(lists, rule: PartnerRule | None, n_labelled: Counter) -> set[tuple[str, str]]:
    """The (suspicious, source) pairs ``rule`` chooses from each document's list (None: its
    top R, R = the document's labelled sources: a reference, not a rule)."""
    out = set()
    for d, lst in lists.items():
        if rule is None:
            n = n_labelled[d]
        else:
            n = chosen_count(np.array([s for _, s in lst], dtype=np.int64), rule)
        out.update((d, o) for o, _ in lst[:n])
    return out


def ss_rate(found) -> float:
    """Detections a pair of two suspicious documents gets, on average over those aligned."""
    got = [len(v[0]) for p, v in found.items() if p[1].startswith("suspicious")]
    return sum(got) / len(got) if got else 0.0


def _with_extra(s, n: int, extra: float):
    """PAN scores ``s`` of ``n`` detections with ``extra`` (estimated) detections more that
    detect no case: precision is a mean over detections, recall and granularity stay."""
    if extra <= 0:
        return s
    p = s.precision * n / (n + extra)
    f1 = 2 * p * s.recall / (p + s.recall) if p + s.recall else 0.0
    return PanScores(p, s.recall, s.granularity, f1 / math.log2(1 + s.granularity))


def evaluate(chosen, pairs, found, cases, run_words: int) -> dict:
    """Recall per sub-corpus, negatives chosen and aligned, pairs aligned, plagdet strict,
    with unlabelled pairs sharing a verbatim run of ``run_words`` set aside, and over the
    chosen labelled pairs only."""
    known = {p for ps in pairs.values() for p in ps}
    recall = {sub: sum(1 for p in ps if p in chosen) / len(ps) for sub, ps in pairs.items() if ps}
    unsampled = {p for p in chosen if p not in found}  # pairs of two suspicious documents
    n_chosen = len(chosen)
    chosen = chosen - unsampled
    negatives = set(pairs["01-no-plagiarism"])
    strict = [d for p in chosen for d in found[p][0]]
    aside = {p for p in chosen - known if found[p][1] >= run_words}
    kept = [d for p in chosen - aside for d in found[p][0]]
    fp = [d for p in chosen - known for d in found[p][0]]
    fp_aside = [d for p in aside for d in found[p][0]]
    return {
        "recall": recall,
        "pairs": n_chosen,
        "negatives_chosen": len(negatives & chosen),
        "negatives_aligned": sum(1 for p in negatives & chosen if found[p][0]),
        "strict": _with_extra(scores(cases, strict), len(strict), len(unsampled) * ss_rate(found)),
        "aside": scores(cases, kept),
        "labelled": scores(cases, [d for p in chosen & known for d in found[p][0]]),
        "unlabelled_with_passages": sum(1 for p in chosen - known if found[p][0]),
        "unlabelled_aside_with_passages": sum(1 for p in aside if found[p][0]),
        "fp_chars": sum(d.a_end - d.a_start for d in fp),
        "fp_chars_aside": sum(d.a_end - d.a_start for d in fp_aside),
    }


def _inside(start: int, end: int, spans) -> int:
    """Characters of ``[start, end)`` inside the (sorted or not) ``spans`` (assumed disjoint)."""
    return sum(max(0, min(end, b) - max(start, a)) for a, b in spans)


def origin_table(chosen, pairs, found, cases, run_words: int = 50) -> str:
    """Where the passages of the chosen unlabelled pairs sharing a verbatim run of at least
    ``run_words`` words lie: on the suspicious side, inside a case labelled with another
    source (the same text in two sources: source-source reuse or duplicate sources), partly,
    or outside every labelled case of the document (text copied from this source that the
    training labels do not cover); and whether the source side lies inside a case where
    that source is labelled for another suspicious document. Markdown."""
    known = {p for ps in pairs.values() for p in ps}
    by_susp: dict = {}
    by_src: dict = {}
    for c in cases:
        by_susp.setdefault(c.pair[0], []).append((c.a_start, c.a_end))
        by_src.setdefault(c.pair[1], []).append((c.b_start, c.b_end))
    count: Counter = Counter()
    for p in sorted(chosen - known):
        if p not in found:  # a pair of two suspicious documents left out of the sample
            continue
        dets, run = found[p]
        if not dets or run < run_words:
            continue
        count["pairs"] += 1
        total = sum(d.a_end - d.a_start for d in dets)
        inside = sum(_inside(d.a_start, d.a_end, by_susp.get(p[0], ())) for d in dets)
        where = "mostly inside" if inside >= total / 2 else "partly inside" if inside else "outside"
        count[where] += 1
        b_total = sum(d.b_end - d.b_start for d in dets)
        b_in = sum(_inside(d.b_start, d.b_end, by_src.get(p[1], ())) for d in dets)
        if where == "outside":
            count["outside, source side in a case of another document"] += b_in >= b_total / 2
            count["outside, a source never labelled"] += p[1] not in by_src
    n = max(count["pairs"], 1)
    rows = [
        ("suspicious side mostly inside a case labelled with another source", "mostly inside"),
        ("suspicious side partly inside such a case", "partly inside"),
        ("suspicious side outside every labelled case of the document", "outside"),
        (
            "... of which the source side lies in a case where this source is labelled for "
            "another suspicious document",
            "outside, source side in a case of another document",
        ),
        ("... of which the source is never a labelled source", "outside, a source never labelled"),
    ]
    out = [
        f"| chosen unlabelled pairs with a passage and a verbatim run >= {run_words} words "
        f"({count['pairs']:,}) | pairs | share |",
        "|---|---|---|",
    ]
    out += [f"| {label} | {count[k]:,} | {count[k] / n:.1%} |" for label, k in rows]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument(
        "--sources-only",
        metavar="PREFIX",
        default=None,
        help="rank each suspicious document's candidates among the keys starting with PREFIX "
        "(src/: PAN's source collection)",
    )
    ap.add_argument(
        "--stored-filtered",
        action="store_true",
        help="the stored lists (among every document) without the partners that are not sources",
    )
    ap.add_argument("--count-only", action="store_true", help="print the pairs to align, stop")
    ap.add_argument("--max-cap", type=int, default=50, help="only the rules aligning at most N")
    ap.add_argument(
        "--ss-sample",
        type=int,
        default=0,
        metavar="N",
        help="align only N (random, seeded) of the chosen pairs of two suspicious documents; "
        "strict precision counts the others' detections at the sample's mean (0: align all)",
    )
    args = ap.parse_args()
    lists = source_lists(args.index, args.sources_only, args.stored_filtered)
    pairs = {sub: read_pairs(args.corpus, sub, None) for sub, _ in SUBCORPORA}
    labelled = [p for ps in pairs.values() for p in ps]
    n_labelled = Counter(s for sub, _ in SUBCORPORA[1:] for s, _ in pairs[sub])
    rules = [(label, r) for label, r in RULES if r.cap <= args.max_cap]
    chosen = set().union(*(choose(lists, r, n_labelled) for r in (*(r for _, r in rules), None)))
    ss = sorted(p for p in chosen if p[1].startswith("suspicious"))
    if args.ss_sample and len(ss) > args.ss_sample:
        chosen -= set(ss) - set(random.Random(0).sample(ss, args.ss_sample))
    if args.count_only:
        old = pickle.loads(args.cache.read_bytes())["found"] if args.cache.exists() else {}
        print(f"{len(chosen | set(labelled)):,} pairs, {len(chosen - set(old)):,} not cached")
        return
    got = align_everything(args.corpus, chosen, labelled, args.processes, args.cache)
    pool = (
        f"ranked among {args.sources_only}"
        if args.sources_only is not None
        else "stored lists filtered to sources"
        if args.stored_filtered
        else "stored lists (every document)"
    )
    print(
        f"candidates: {pool}; {got['new']:,} pairs aligned now in {got['wall']:.0f} s, "
        f"{got['cpu']:.0f} s CPU ({got['load']}); {len(got['found']):,} in the cache",
        flush=True,
    )
    found = got["found"]
    cases = [
        c
        for sub, _ in SUBCORPORA
        for p in pairs[sub]
        for c in read_annotations(args.corpus / sub / xml_name(p), p, "plagiarism")
    ]
    given = scores(cases, [d for p in labelled for d in found[p][0]])
    print(tables(lists, pairs, found, cases, n_labelled, given, rules))
    print(origin_table(choose(lists, rules[-1][1], n_labelled), pairs, found, cases))


def _row(label: str, e: dict, s) -> str:
    return (
        f"| {label} | {e['pairs']:,} | {s.precision:.3f} | {s.recall:.3f} | "
        f"{s.granularity:.3f} | {s.plagdet:.3f} |"
    )


def tables(lists, pairs, found, cases, n_labelled, given, rules=RULES) -> str:
    """The recall table (per rule: recall per sub-corpus, pairs aligned, negatives) and the
    plagdet table (strict, set aside, labelled only) as markdown."""
    recall = [
        "| rule | no obfuscation | random | translation | summary | pairs aligned | "
        "negatives chosen / aligned |",
        "|---|---|---|---|---|---|---|",
    ]
    plag = [
        "| rule, pairs scored | pairs | precision | recall | granularity | plagdet |",
        "|---|---|---|---|---|---|",
    ]
    reuse = [
        "| rule | unlabelled pairs with a passage | of them sharing a verbatim run of >= 50 "
        "/ >= 25 words | their passages' characters (suspicious side) set aside at 50 / 25 |",
        "|---|---|---|---|",
    ]
    for label, rule in (*rules, ("top R, R = labelled sources (reference)", None)):
        chosen = choose(lists, rule, n_labelled)
        e50, e25 = (evaluate(chosen, pairs, found, cases, n) for n in RUN_WORDS)
        r = e50["recall"]
        recall.append(
            f"| {label} | "
            + " | ".join(f"{100 * r[sub]:.1f} %" for sub, _ in SUBCORPORA[1:])
            + f" | {e50['pairs']:,} ({e50['pairs'] / len(lists):.1f} a document) | "
            f"{e50['negatives_chosen']} / {e50['negatives_aligned']} |"
        )
        plag.append(_row(f"{label}: strict (all chosen pairs)", e50, e50["strict"]))
        plag.append(_row(f"{label}: run >= 50 words set aside", e50, e50["aside"]))
        plag.append(_row(f"{label}: run >= 25 words set aside", e25, e25["aside"]))
        plag.append(_row(f"{label}: chosen labelled pairs only", e50, e50["labelled"]))
        n_fp = e50["unlabelled_with_passages"]
        reuse.append(
            f"| {label} | {n_fp:,} | {e50['unlabelled_aside_with_passages']:,} / "
            f"{e25['unlabelled_aside_with_passages']:,} | "
            f"{e50['fp_chars_aside'] / max(e50['fp_chars'], 1):.1%} / "
            f"{e25['fp_chars_aside'] / max(e25['fp_chars'], 1):.1%} of "
            f"{e50['fp_chars']:,} |"
        )
    n_given = sum(len(ps) for ps in pairs.values())
    plag.append(
        f"| the {n_given:,} given (labelled) pairs | {n_given:,} | {given.precision:.3f} | "
        f"{given.recall:.3f} | {given.granularity:.3f} | {given.plagdet:.3f} |"
    )
    return "\n".join(recall) + "\n\n" + "\n".join(plag) + "\n\n" + "\n".join(reuse) + "\n"


if __name__ == "__main__":
    main()
