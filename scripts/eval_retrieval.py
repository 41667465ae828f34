"""Candidate retrieval on the PAN 2013 text-alignment training corpus (issue 29, item 1).

``python scripts/eval_pan.py --retrieval --corpus PATH [--index DIR] [--write-docs]`` (or this
script directly). One default build of an index over every source and suspicious document of
the corpus (``simdask update`` of a JSONL file written from the corpus, keys ``src/NAME`` and
``susp/NAME``), then:

* **recall** per sub-corpus: the share of the labelled (suspicious, source) pairs whose source
  is among the suspicious document's stored candidate partners
  (:func:`simdask.storage.candidate_store.candidate_partners`) at 10, at max(10, the document's
  labelled sources), 30 and 50; once among all documents, once among the source documents
  (the PAN task's source collection) only;
* **cost**: the build's seconds per stage (the candidates' share) and the content n-gram
  postings beside the sorted-chunk postings of the same run;
* **end to end** (``--end-to-end``): simdask chooses the pairs to align, each suspicious
  document with its ``--top`` best source candidates, aligns them all
  (:func:`simdask.alignment.align`, the pool of scripts/eval_pan.py) and scores the passages
  with PAN's measures against every labelled case: over all chosen pairs (detections on pairs
  the training corpus does not label count against precision), and over the chosen pairs
  that are labelled.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

from simdask import Index, IndexConfig
from simdask.alignment.pan_measures import scores
from simdask.read.candidates import ranked_among
from simdask.storage.candidate_store import candidate_partners, candidate_store, stored_segments

from _benchutil import load_average

SUBS = (
    ("01-no-plagiarism", "negative pairs"),
    ("02-no-obfuscation", "no obfuscation"),
    ("03-random-obfuscation", "random obfuscation"),
    ("04-translation-obfuscation", "cyclic translation"),
    ("05-summary-obfuscation", "summary"),
)
CUTS = ("10", "max(10, labelled)", "30", "50")


def build(corpus: Path, index: Path) -> tuple[Index, dict]:
    """The index of every document of ``corpus`` (built if ``index`` does not exist) and what
    its build measured (seconds per stage, postings of both features)."""
    if (index / "catalog.sqlite").exists():
        idx = Index.open(index)
        stats = json.loads((index / "retrieval-build.json").read_text())
        return idx, stats
    jsonl = index.parent / f"{index.name}-docs.jsonl"
    with open(jsonl, "w", encoding="utf-8") as f:
        for part in ("src", "susp"):
            for path in sorted((corpus / part).iterdir()):
                text = path.read_text(encoding="utf-8", errors="replace")
                f.write(json.dumps({"id": f"{part}/{path.name}", "text": text}) + "\n")
    idx = Index.create(index, IndexConfig(candidates=True))
    load0 = load_average()
    t = time.perf_counter()
    s = idx.update([jsonl])
    wall = time.perf_counter() - t
    store = candidate_store(index)
    segments = (stored_segments(idx.catalog) or {}).items()
    stats = {
        "wall": wall,
        "seconds": s.seconds,
        "postings": idx.stats().get("postings"),
        "candidate_postings": sum(store.counts(g, r)[1] for r, g in segments),
        "documents": s.added,
        "load": f"before {load0}, after {load_average()}",
    }
    (index / "retrieval-build.json").write_text(json.dumps(stats, indent=1))
    jsonl.unlink()
    return idx, stats


def labelled(corpus: Path) -> dict[str, list[tuple[str, str]]]:
    """The (suspicious, source) pairs of each sub-corpus."""
    out = {}
    for sub, _ in SUBS:
        lines = (corpus / sub / "pairs").read_text().split("\n")
        out[sub] = [tuple(ln.split()) for ln in lines if ln.strip()]
    return out


def partner_lists(idx: Index, depth: int = 50) -> tuple[dict[str, list[str]], dict[str, list]]:
    """Each suspicious document's candidate partners by key: all, and sources only."""
    names = {d.doc_id: d.key for d in idx.catalog.documents()}
    susp = [d for d, k in names.items() if k.startswith("susp/")]
    lists = candidate_partners(idx.catalog, susp, depth)
    every = {names[d]: [names[o] for o in lst] for d, lst in lists.items()}
    sources = {k: [o for o in lst if o.startswith("src/")] for k, lst in every.items()}
    return every, sources


def ranked_lists(idx: Index, prefix: str, normalise: bool, depth: int = 50) -> dict[str, list[str]]:
    """Each suspicious document's ``depth`` best partners by key, ranked among the documents
    whose key starts with ``prefix`` (``"src/"``: the PAN task's source collection; ``""``:
    every document) from the index's content n-gram segments
    (:func:`simdask.read.candidates.ranked_among`), by the normalised score or the summed
    weights: both rankings from one index, not bounded by the stored depth."""
    names = {d.doc_id: d.key for d in idx.catalog.documents()}
    susp = [d for d, k in names.items() if k.startswith("susp/")]
    lists = ranked_among(idx, susp, prefix, depth, normalise)
    return {names[d]: [names[o] for o, _ in lst] for d, lst in lists.items()}


def recall_table(pairs, lists: dict[str, list[str]]) -> str:
    """Markdown rows: per sub-corpus, the share of pairs whose source is in the top cuts."""
    n_labelled = Counter(s for sub, _ in SUBS[1:] for s, _ in pairs[sub])
    rows = []
    for sub, label in SUBS:
        hits = Counter()
        for susp, src in pairs[sub]:
            lst = lists.get(f"susp/{susp}", [])
            rank = lst.index(f"src/{src}") if f"src/{src}" in lst else 10**9
            for cut, c in zip(CUTS, (10, max(10, n_labelled[susp]), 30, 50), strict=True):
                hits[cut] += rank < c
        n = len(pairs[sub])
        rows.append(
            f"| {label} ({n}) | " + " | ".join(f"{100 * hits[c] / n:.1f} %" for c in CUTS) + " |"
        )
    head = "| sub-corpus (pairs) | " + " | ".join(f"top {c}" for c in CUTS) + " |\n"
    return head + "|---|" + "---|" * len(CUTS) + "\n" + "\n".join(rows) + "\n"


def bound_table(pairs) -> str:
    """How many labelled sources each suspicious document has: the bound on top-10 recall."""
    n_labelled = Counter(s for sub, _ in SUBS[1:] for s, _ in pairs[sub])
    rows = []
    for sub, label in SUBS[1:]:
        over = sum(1 for s, _ in pairs[sub] if n_labelled[s] > 10)
        rows.append(f"| {label} | {over} of {len(pairs[sub])} |")
    return (
        "| sub-corpus | pairs of a suspicious document with more than 10 labelled sources |\n"
        "|---|---|\n" + "\n".join(rows) + "\n"
    )


def end_to_end(pairs, sources: dict[str, list[str]], top: int, cases, align_pairs) -> dict:
    """Align each suspicious document with its ``top`` source candidates (``align_pairs``:
    (suspicious, source) names -> each pair's detections); PAN's measures against ``cases``
    (every labelled case) over all chosen pairs and over the chosen pairs that are labelled,
    the negative pairs chosen and aligned to a passage, and the seconds."""
    chosen = sorted({(k[5:], o[4:]) for k, lst in sources.items() for o in lst[:top]})
    known = {p for sub, _ in SUBS for p in pairs[sub]}
    t0 = time.perf_counter()
    found = align_pairs(chosen)
    seconds = time.perf_counter() - t0
    dets = [d for f in found for d in f]
    dets_known = [d for p, f in zip(chosen, found, strict=True) if p in known for d in f]
    negatives = set(pairs["01-no-plagiarism"])
    flagged_neg = sum(1 for p, f in zip(chosen, found, strict=True) if p in negatives and f)
    return {
        "chosen": len(chosen),
        "chosen_labelled": len(known & set(chosen)),
        "all": scores(cases, dets),
        "labelled": scores(cases, dets_known),
        "negatives_chosen": len(negatives & set(chosen)),
        "negatives_aligned": flagged_neg,
        "negatives": len(negatives),
        "seconds": seconds,
    }
