"""End to end on the PAN 2013 text-alignment training corpus (issue 29): simdask chooses the
pairs to align from its stored candidate partners, the aligner aligns them, and PAN's
measures score the passages against every labelled case.

``python scripts/eval_end_to_end.py --corpus PATH --index DIR --cache FILE`` (the index as
scripts/eval_retrieval.py builds it, with candidates). Steps:

1. every suspicious document's stored candidates (:func:`~simdask.storage.candidates.
   candidate_scores`), filtered to the source documents (the PAN task's source collection);
2. **every** such (suspicious, source) candidate pair and every labelled pair aligned once
   (the pool of scripts/_pan_pool.py, each text prepared once per process), with the
   longest verbatim word run of each pair; kept in ``--cache`` (pickle) so that the rules
   are compared without aligning again;
3. for each selection rule (:class:`~simdask.kernels.partner_rule.PartnerRule`, and top 10
   and top-R, R = the document's labelled sources, for reference): recall per sub-corpus,
   the pairs it aligns, and plagdet over all labelled cases: *strict* (every passage of a
   chosen pair counts; one in a pair the training corpus does not label is a false
   positive) and with the chosen unlabelled pairs that share a verbatim run of at least N
   words *set aside* (real reuse, labelled only in the held-out part of PAN 2013).
"""

from __future__ import annotations

import argparse
import pickle
import time
from collections import Counter
from pathlib import Path

import numpy as np
from _pan_pool import SUBCORPORA, align_all, read_annotations, read_pairs, xml_name

from simdask import Index
from simdask.alignment import AlignConfig
from simdask.alignment.pan_measures import scores
from simdask.kernels.partner_rule import PartnerRule, chosen_count
from simdask.storage.candidates import candidate_scores

from _benchutil import load_average

#: the stored candidates read per document (all the index keeps)
DEPTH = 50


def source_lists(index: Path) -> dict[str, list[tuple[str, int]]]:
    """Each suspicious document's stored candidates among the sources, best first, as
    ``(source file name, score)``, by suspicious file name."""
    with Index.open(index) as idx:
        names = {d.doc_id: d.key for d in idx.catalog.documents()}
        susp = [d for d, k in names.items() if k.startswith("susp/")]
        lists = candidate_scores(idx.catalog, susp, DEPTH)
    return {
        names[d][5:]: [(names[o][4:], s) for o, s in lst if names[o].startswith("src/")]
        for d, lst in lists.items()
    }


def align_everything(corpus: Path, lists, labelled, processes: int, cache: Path) -> dict:
    """``{"found": {pair: (detections, longest run)}, "cpu", "wall", "load"}``: every
    candidate and labelled pair aligned (read from ``cache`` when it exists)."""
    if cache.exists():
        return pickle.loads(cache.read_bytes())
    pairs = sorted({(d, o) for d, lst in lists.items() for o, _ in lst} | set(labelled))
    load0 = load_average()
    t0 = time.perf_counter()
    found, cpu = align_all(corpus, AlignConfig(), processes, pairs, runs=True)
    out = {
        "found": dict(zip(pairs, found, strict=True)),
        "cpu": cpu,
        "wall": time.perf_counter() - t0,
        "load": f"before {load0}, after {load_average()}",
    }
    cache.write_bytes(pickle.dumps(out))
    return out


#: the rules compared: (label, rule); a fixed top k is ``PartnerRule(0, k, k)``
RULES = (
    ("top 10", PartnerRule(0.0, 10, 10)),
    ("top 5", PartnerRule(0.0, 5, 5)),
    ("score >= 0.5 x best, at most 30", PartnerRule(0.5, 30, 1)),
    ("score >= 0.2 x best, at most 30", PartnerRule(0.2, 30, 1)),
    ("score >= 0.1 x best, at most 30", PartnerRule(0.1, 30, 1)),
    ("score >= 0.05 x best, at most 50", PartnerRule(0.05, 50, 1)),
    ("every stored candidate (at most 50)", PartnerRule(0.0, 50, 50)),
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


def evaluate(chosen, pairs, found, cases, run_words: int) -> dict:
    """Recall per sub-corpus, negatives chosen and aligned, pairs aligned, plagdet strict,
    with unlabelled pairs sharing a verbatim run of ``run_words`` set aside, and over the
    chosen labelled pairs only."""
    known = {p for ps in pairs.values() for p in ps}
    recall = {sub: sum(1 for p in ps if p in chosen) / len(ps) for sub, ps in pairs.items() if ps}
    negatives = set(pairs["01-no-plagiarism"])
    strict = [d for p in chosen for d in found[p][0]]
    aside = {p for p in chosen - known if found[p][1] >= run_words}
    kept = [d for p in chosen - aside for d in found[p][0]]
    fp = [d for p in chosen - known for d in found[p][0]]
    fp_aside = [d for p in aside for d in found[p][0]]
    return {
        "recall": recall,
        "pairs": len(chosen),
        "negatives_chosen": len(negatives & chosen),
        "negatives_aligned": sum(1 for p in negatives & chosen if found[p][0]),
        "strict": scores(cases, strict),
        "aside": scores(cases, kept),
        "labelled": scores(cases, [d for p in chosen & known for d in found[p][0]]),
        "unlabelled_with_passages": sum(1 for p in chosen - known if found[p][0]),
        "unlabelled_aside_with_passages": sum(1 for p in aside if found[p][0]),
        "fp_chars": sum(d.a_end - d.a_start for d in fp),
        "fp_chars_aside": sum(d.a_end - d.a_start for d in fp_aside),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--processes", type=int, default=2)
    args = ap.parse_args()
    lists = source_lists(args.index)
    pairs = {sub: read_pairs(args.corpus, sub, None) for sub, _ in SUBCORPORA}
    labelled = [p for ps in pairs.values() for p in ps]
    got = align_everything(args.corpus, lists, labelled, args.processes, args.cache)
    print(
        f"{len(got['found']):,} pairs aligned in {got['wall']:.0f} s, {got['cpu']:.0f} s CPU "
        f"({got['load']})",
        flush=True,
    )
    found = got["found"]
    cases = [
        c
        for sub, _ in SUBCORPORA
        for p in pairs[sub]
        for c in read_annotations(args.corpus / sub / xml_name(p), p, "plagiarism")
    ]
    n_labelled = Counter(s for sub, _ in SUBCORPORA[1:] for s, _ in pairs[sub])
    given = scores(cases, [d for p in labelled for d in found[p][0]])
    print(tables(lists, pairs, found, cases, n_labelled, given))


def _row(label: str, e: dict, s) -> str:
    return (
        f"| {label} | {e['pairs']:,} | {s.precision:.3f} | {s.recall:.3f} | "
        f"{s.granularity:.3f} | {s.plagdet:.3f} |"
    )


def tables(lists, pairs, found, cases, n_labelled, given) -> str:
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
    for label, rule in (*RULES, ("top R, R = labelled sources (reference)", None)):
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
