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
from simdask.kernels.candidates import CandidateConfig
from simdask.kernels.content_ngrams import CONTENT_NGRAM, content_words
from simdask.kernels.exclusions import Exclusions, blank_spans
from simdask.storage.candidates import (
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
    sets = feature_sets(idx, cfg)
    df = Counter(f for s in sets.values() for f in s)
    out = {}
    for d, mine in sets.items():
        scores: Counter[int] = Counter()
        for e, theirs in sets.items():
            if e != d:
                for f in mine & theirs:
                    if 2 <= df[f] <= cfg.max_df:
                        scores[e] += round(1000 * math.log((cfg.max_df + 1) / df[f]))
        ranked = sorted((e for e in scores if scores[e] > 0), key=lambda e: (-scores[e], e))
        out[d] = [(e, scores[e]) for e in ranked[: cfg.depth]]
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
    :func:`~simdask.storage.candidates.candidate_partners` reads them first."""
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
