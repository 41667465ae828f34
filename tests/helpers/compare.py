"""Comparing two indexes by document key (doc IDs may differ where recycling makes them).

The similarity table is checked exactly: each index's stored rows must be, per document, the
rows a brute-force count over its own postings gives (chunks held by more than ``max_df``
documents left out, similarity ``100 * shared / |A|`` >= ``threshold``), cut to ``top_k`` by
the documented order — similarity descending, then ``other`` doc ID ascending. The doc IDs
are each index's own, so an incremental index whose recycled IDs differ from a full build's
is held to the same contract without forgiving ties.

"Equal to a full build" compares what readers see: the ``similarity`` table (each list's
first ``top_k`` rows). The ``reserve`` rows below them (``slack``, :mod:`simdask.storage.lists`)
may differ after deletions (an incremental list keeps fewer until it is refilled); their
invariant is checked against brute force in tests/test_deep_lists.py.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from simdask import Index
from simdask.storage.quoted_chunks import read_quoted
from tests.helpers.candidates import assert_contract_candidates, by_key


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


def expected_table(idx: Index, top_k: int | None = None) -> dict[str, list[tuple]]:
    """The rows the contract asks of ``idx``, counted by brute force (Python Counters) from
    its shards' posting lists, in its own doc IDs, best first (``top_k``: another cut than
    the index's)."""
    cfg = idx.config
    top_k = cfg.top_k if top_k is None else top_k
    docs = idx.catalog.documents()
    names = {d.doc_id: d.key for d in docs}
    size = {d.doc_id: d.n_chunks for d in docs}
    shared: Counter = Counter()
    for s in range(cfg.shards):
        sh = idx.shard(s)
        for i in range(len(sh.chunk_keys)):
            holders = [int(x) for x in sh.doc_ids[sh.offsets[i] : sh.offsets[i + 1]]]
            if cfg.max_df is not None and len(holders) > cfg.max_df:
                continue
            for a in holders:
                for b in holders:
                    if a != b:
                        shared[a, b] += 1
    if cfg.exclude_quotes:  # counted in the checked document's direction (docs/term.md)
        shared += quoted_extra(idx)
    rows = defaultdict(list)
    for (a, b), n in shared.items():
        sim = 100.0 * n / size[a]
        if sim >= cfg.threshold:
            rows[a].append((sim, n, b))
    out = {}
    for a, lst in rows.items():
        lst.sort(key=lambda x: (-x[0], x[2]))  # the contract: similarity desc, other ID asc
        out[names[a]] = [(round(sim, 9), n, names[b]) for sim, n, b in lst[:top_k]]
    return out


def quoted_extra(idx: Index) -> Counter:
    """``E(a, b)`` of every pair by brute force (Python sets): the chunks of ``a``'s postings
    (its U; held by at most ``max_df`` documents) in ``b``'s stored quoted chunks (its Q)."""
    cfg = idx.config
    u: defaultdict[int, set[int]] = defaultdict(set)
    for s in range(cfg.shards):
        sh = idx.shard(s)
        for i in range(len(sh.chunk_keys)):
            holders = [int(x) for x in sh.doc_ids[sh.offsets[i] : sh.offsets[i + 1]]]
            if cfg.max_df is None or len(holders) <= cfg.max_df:
                for a in holders:
                    u[a].add(int(sh.chunk_keys[i]))
    docs, sets = read_quoted(idx.catalog, cfg.hash_bits)
    extra: Counter = Counter()
    for b, q in zip(docs.tolist(), sets, strict=True):
        qs = set(q.tolist())
        for a, ua in u.items():
            n = len(ua & qs)
            if a != b and n:
                extra[a, b] = n
    return extra


def quoted_by_key(idx: Index) -> dict[str, list[int]]:
    """Every stored quoted-chunk set (Q) by document key."""
    names = {d.doc_id: d.key for d in idx.catalog.documents()}
    docs, sets = read_quoted(idx.catalog, idx.config.hash_bits)
    return {names[d]: q.tolist() for d, q in zip(docs.tolist(), sets, strict=True)}


def assert_contract_rows(idx: Index) -> None:
    """The stored rows of ``idx`` are exactly :func:`expected_table` (no tie forgiven)."""
    got = {d: sorted(r) for d, r in table_by_doc(idx).items()}
    want = {d: sorted(r) for d, r in expected_table(idx).items()}
    assert set(got) == set(want), set(got) ^ set(want)
    for doc, rows in want.items():
        assert got[doc] == rows, (doc, got[doc], rows)


def assert_same_similarity(a: Index, b: Index) -> None:
    """Both indexes hold exactly the rows the contract asks of each; where their doc IDs agree
    (no recycling made them differ) the tables are equal row for row."""
    assert_contract_rows(a)
    assert_contract_rows(b)
    ids_a = {d.key: d.doc_id for d in a.catalog.documents()}
    ids_b = {d.key: d.doc_id for d in b.catalog.documents()}
    if ids_a == ids_b:
        assert table_by_doc(a) == table_by_doc(b)


def assert_same_index(a: Index, b: Index) -> None:
    """Documents, shard postings and similarity table equal by key; each index's |A| array
    (kept in place by the commits) agrees with its documents table."""
    for idx in (a, b):
        rows = idx.catalog.chunk_counts()
        table = idx.catalog.chunk_table()
        assert {d: int(n) for d, n in enumerate(table.tolist()) if n} == {
            d: n for d, n in rows.items() if n
        }
        assert len(table) >= max(rows, default=-1) + 1
    assert documents_by_key(a) == documents_by_key(b)
    assert postings_by_key(a) == postings_by_key(b)
    assert quoted_by_key(a) == quoted_by_key(b)
    assert_same_similarity(a, b)
    assert_same_candidates(a, b)


def assert_same_candidates(a: Index, b: Index) -> None:
    """Both indexes hold exactly the candidate lists the contract asks of each
    (:mod:`tests.helpers.candidates`); where their doc IDs agree, equal row for row."""
    assert_contract_candidates(a)
    assert_contract_candidates(b)
    ids_a = {d.key: d.doc_id for d in a.catalog.documents()}
    ids_b = {d.key: d.doc_id for d in b.catalog.documents()}
    if ids_a == ids_b:
        assert by_key(a) == by_key(b)
