"""The candidate partners an index must hold, by brute force over its stored texts: each
document's content n-grams in plain Python (stop words dropped, stems, sorted windows, one
hash each), the score a Counter of integer idf weights, each list cut to ``depth`` by score
descending then ``other`` doc ID ascending. Doc IDs are each index's own (as
:mod:`tests.helpers.compare` does for the similarity rows)."""

from __future__ import annotations

import math
import sqlite3
from collections import Counter

from simdask import Index
from simdask.kernels.candidate_scores import CandidateConfig
from simdask.kernels.content_ngrams import CONTENT_NGRAM, content_words
from simdask.kernels.exclusions import Exclusions, blank_spans
from simdask.storage.candidate_store import (
    candidate_partners,
    ensure_candidate_tables,
    stored_candidate_config,
)


def feature_sets(idx: Index, cfg: CandidateConfig) -> dict[int, set[int]]:
    """Each document's content n-gram IDs from its stored text, in plain Python."""
    excl = Exclusions(idx.config.exclude_quotes, idx.config.exclude_bibliography)
    out = {}
    for d in idx.catalog.documents():
        text = idx.text(d.key)
        if excl.active:
            text = blank_spans(text, excl.spans(text))
        w = content_words(text)
        n = cfg.ngram
        out[d.doc_id] = {
            CONTENT_NGRAM.feature_id(w[i : i + n], cfg.hash_bits, cfg.seed)
            for i in range(len(w) - n + 1)
        }
    return out


def expected_candidates(idx: Index) -> dict[int, list[tuple[int, int]]]:
    """doc ID -> ``[(other, score)]`` best first, the lists the contract asks of ``idx``
    (none without its ``candidates`` setting)."""
    if not idx.config.candidates:
        return {d.doc_id: [] for d in idx.catalog.documents()}
    cfg = stored_candidate_config(idx.catalog) or CandidateConfig()
    return brute_lists(
        feature_sets(idx, cfg),
        sorted(d.doc_id for d in idx.catalog.documents()),
        cfg.max_df,
        cfg.depth,
        cfg.normalise,
    )


def brute_lists(
    sets: dict[int, set[int]], targets, max_df: int, depth: int, normalise: bool
) -> dict[int, list[tuple[int, int]]]:
    """Each target's top partners in plain Python: the sum of round(1000 ln((max_df+1)/df))
    over shared features of 2 <= df <= max_df, or (``normalise``) that sum divided by the
    square roots of both documents' weight masses (the sum of their features' weights),
    times 10**9, rounded half to even; by score descending, then doc ID."""
    df = Counter(f for s in sets.values() for f in s)

    def weight(f: int) -> int:
        return round(1000 * math.log((max_df + 1) / df[f])) if 2 <= df[f] <= max_df else 0

    mass = {d: sum(weight(f) for f in s) for d, s in sets.items()}
    out = {}
    for d in targets:
        scores: Counter[int] = Counter()
        for e, theirs in sets.items():
            if e != d:
                for f in sets[d] & theirs:
                    scores[e] += weight(f)
        if normalise:
            for e in scores:
                den = math.sqrt(mass[d]) * math.sqrt(mass[e])
                scores[e] = round(10**9 * scores[e] / den) if den else 0
        ranked = sorted((e for e in scores if scores[e] > 0), key=lambda e: (-scores[e], e))
        out[d] = [(e, scores[e]) for e in ranked[:depth]]
    return out


def stored_candidates(idx: Index) -> dict[int, list[tuple[int, int]]]:
    """doc ID -> ``[(other, score)]`` as stored, by rank."""
    out: dict[int, list[tuple[int, int]]] = {d.doc_id: [] for d in idx.catalog.documents()}
    ensure_candidate_tables(idx.catalog)  # an index no run has written candidates to yet
    q = "SELECT doc, other, score FROM candidates ORDER BY doc, rank"
    for d, o, s in idx.catalog.conn.execute(q):
        out.setdefault(d, []).append((o, s))
    return out


def assert_contract_candidates(idx: Index) -> None:
    """The stored candidates of ``idx`` are exactly the brute force's (no tie forgiven), and
    :func:`~simdask.storage.candidate_store.candidate_partners` reads them first."""
    got, want = stored_candidates(idx), expected_candidates(idx)
    assert got == want
    stored = stored_candidate_config(idx.catalog) is not None
    assert stored == idx.config.candidates or not (stored or want)  # a run with no documents
    docs = sorted(want)
    partners = candidate_partners(idx.catalog, docs, 3)
    for d in docs:
        assert partners[d][: min(3, len(want[d]))] == [o for o, _ in want[d][:3]]


def by_key(idx: Index) -> dict[str, list[tuple[str, int]]]:
    names = {d.doc_id: d.key for d in idx.catalog.documents()}
    return {names[d]: [(names[o], s) for o, s in r] for d, r in stored_candidates(idx).items()}


def small_catalog() -> sqlite3.Connection:
    """An in-memory catalog with the tables the candidate store reads (meta, similarity,
    documents) and documents 1..7 keyed ``k1``..``k7``."""
    c = sqlite3.connect(":memory:")
    c.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    c.execute(
        "CREATE TABLE similarity (doc INTEGER, other INTEGER, shared INTEGER, similarity REAL)"
    )
    c.execute("CREATE TABLE documents (doc_id INTEGER PRIMARY KEY, key TEXT)")
    c.executemany("INSERT INTO documents VALUES (?, ?)", [(i, f"k{i}") for i in range(1, 8)])
    return c
