"""Comparing two indexes by document key (doc IDs may differ where recycling makes them)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from simdask import Index


def postings_by_key(idx: Index) -> dict[int, set[tuple[int, str]]]:
    """Per shard: the set of (chunk ID, document key) postings."""
    names = {d.doc_id: d.key for d in idx.catalog.documents()}
    out = {}
    for s in range(idx.config.shards):
        sh = idx.shard(s)
        df = np.diff(sh.offsets).astype(np.int64)
        chunks = np.repeat(sh.chunk_keys, df)
        out[s] = {(int(c), names[int(d)]) for c, d in zip(chunks, sh.doc_ids, strict=True)}
        # the CSR invariants hold
        assert np.all(np.diff(sh.chunk_keys.astype(np.int64)) > 0)
        for i in range(len(sh.chunk_keys)):
            lst = sh.doc_ids[sh.offsets[i] : sh.offsets[i + 1]]
            assert np.all(np.diff(lst.astype(np.int64)) > 0)
    return out


def documents_by_key(idx: Index) -> set[tuple]:
    return {
        (d.key, d.content_hash, d.n_chunks, d.n_words, d.status) for d in idx.catalog.documents()
    }


def table_by_doc(idx: Index) -> dict[str, list[tuple[float, int, str]]]:
    rows = defaultdict(list)
    for r in idx.pairs():
        rows[r.doc].append((round(r.similarity, 9), r.shared, r.other))
    return rows


def assert_same_similarity(a: Index, b: Index) -> None:
    """Same rows by key; where a top-k list is cut inside a tie, the tied rows may differ."""
    ta, tb = table_by_doc(a), table_by_doc(b)
    assert set(ta) == set(tb), set(ta) ^ set(tb)
    k = a.config.top_k
    for doc, ra in ta.items():
        rb = tb[doc]
        assert sorted(x[:2] for x in ra) == sorted(x[:2] for x in rb), doc
        if len(ra) < k:
            assert set(ra) == set(rb), doc
        else:
            cut = min(x[0] for x in ra)
            assert {x for x in ra if x[0] > cut} == {x for x in rb if x[0] > cut}, doc


def assert_same_index(a: Index, b: Index) -> None:
    """Documents, shard postings and similarity table equal by key."""
    assert documents_by_key(a) == documents_by_key(b)
    assert postings_by_key(a) == postings_by_key(b)
    assert_same_similarity(a, b)
