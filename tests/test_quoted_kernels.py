"""Quotations excluded in the checked document only (issue 31 item 4): the pure kernels of
:mod:`simdask.kernels.quoted` against brute force with Python sets (plain-Python chunk IDs,
S + E per direction, the top-k cut)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.kernels.exclusions import Exclusions, quote_spans
from simdask.kernels.hashing import chunk_id
from simdask.kernels.measures import containment
from simdask.kernels.quoted import (
    Lookups,
    add_quoted,
    counted_ids,
    decode_ids,
    directed_counts,
    encode_ids,
    quote_map,
    quoted_rows,
    split_quoted,
)
from simdask.kernels.words import WORD_PATTERN

pytestmark = pytest.mark.unit

K, BITS, SEED = 3, 20, 0


def corpus(seed: int, n: int) -> list[str]:
    """``n`` texts of a small vocabulary; each quotes 0-2 passages of a pool (``"..."``) and
    some copy a pool passage unquoted."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(25)]
    pool = [" ".join(rng.choices(vocab, k=rng.randint(3, 9))) for _ in range(4)]
    texts = []
    for _ in range(n):
        parts = [" ".join(rng.choices(vocab, k=rng.randint(3, 12)))]
        for _ in range(rng.randint(0, 2)):
            parts.append(f'"{rng.choice(pool)}"')
            parts.append(" ".join(rng.choices(vocab, k=rng.randint(0, 5))))
        if rng.random() < 0.4:
            parts.insert(rng.randint(0, len(parts)), rng.choice(pool))
        texts.append(" ".join(p for p in parts if p))
    return texts


def brute_sets(text: str) -> tuple[set[int], set[int]]:
    """U and Q of one text by plain Python: the chunk ID of every window, a window in U when
    one of its words lies outside every quotation, Q = C minus U."""
    spans = quote_spans(text)
    ws = [(m.group(), m.start(), m.end()) for m in WORD_PATTERN.finditer(text)]
    inside = [any(s <= a and b <= e for s, e in spans) for _, a, b in ws]
    if len(ws) < K:  # the chunker takes a short text as one chunk
        c = {chunk_id([w for w, _, _ in ws], BITS)} if ws else set()
        return (set(), c) if ws and all(inside) else (c, set())
    u, c = set(), set()
    for i in range(len(ws) - K + 1):
        cid = chunk_id([w for w, _, _ in ws[i : i + K]], BITS)
        c.add(cid)
        if not all(inside[i : i + K]):
            u.add(cid)
    return u, c - u


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 8))
def test_split_quoted_is_u_and_c_minus_u(seed, n):
    texts = corpus(seed, n)
    sp = split_quoted(texts, K, BITS, SEED, Exclusions(quotes=True))
    for i, t in enumerate(texts):
        u, q = brute_sets(t)
        assert set(sp.u.chunk_ids[sp.u.doc == i].tolist()) == u
        assert sp.q_of(i).tolist() == sorted(q)
        assert int(sp.u.n_chunks[i]) == len(u)


def test_split_quoted_needs_quotes_excluded():
    with pytest.raises(ValueError, match="quotations"):
        split_quoted(["a b c"], K, BITS, SEED, Exclusions(bibliography=True))


@pytest.mark.parametrize("bits", [20, 40])
def test_blob_round_trip(bits):
    ids = np.array([1, 5, 2**19 + 3], np.uint64)
    assert decode_ids(encode_ids(ids, bits), bits).tolist() == ids.tolist()
    assert len(encode_ids(ids, bits)) == 3 * (4 if bits <= 32 else 8)


def sets_of(texts):
    sp = split_quoted(texts, K, BITS, SEED, Exclusions(quotes=True))
    us = [set(sp.u.chunk_ids[sp.u.doc == i].tolist()) for i in range(len(texts))]
    qs = [set(sp.q_of(i).tolist()) for i in range(len(texts))]
    return sp, us, qs


def brute_lists(us, qs, max_df, threshold, depth, with_e=True):
    """Every directed row ``x -> y`` by ``S + E`` (``E = 0`` when not ``with_e``), counting
    chunks held by at most ``max_df`` documents' U; each list cut to ``depth`` rows."""
    df: dict[int, int] = {}
    for u in us:
        for c in u:
            df[c] = df.get(c, 0) + 1
    counted = {c for c, f in df.items() if max_df is None or f <= max_df}
    rows = {}
    for x, ux in enumerate(us):
        found = []
        for y in range(len(us)):
            if y == x:
                continue
            s = len(ux & us[y] & counted)
            e = len(ux & qs[y] & counted) if with_e else 0
            sim = containment(s + e, len(ux))
            if s + e > 0 and sim >= threshold:
                found.append((-sim, y, s + e))
        rows[x] = [(y, sh) for _, y, sh in sorted(found)[:depth]]
    return rows


def as_lists(rows) -> dict[int, list[tuple[int, int]]]:
    out: dict[int, list[tuple[int, int]]] = {}
    for d, o, s, _ in zip(*(a.tolist() for a in rows), strict=True):
        out.setdefault(d, []).append((o, s))
    return out


def kernel_lists(sp, us, qs, max_df, threshold, depth):
    """The rule through the kernels: the engine's lists by S (brute force, ``depth`` deep),
    E from the Q map, S of the pairs with E > 0 from the U postings, :func:`add_quoted`."""
    n = len(us)
    engine = brute_lists(us, qs, max_df, threshold, depth, with_e=False)
    d, o, s = [], [], []
    for x, lst in engine.items():
        for y, sh in lst:
            d.append(x), o.append(y), s.append(sh)
    n_chunks = np.array([len(u) for u in us], np.int64)
    sim = np.asarray(containment(np.array(s, np.int64), n_chunks[np.array(d, np.int64)]))
    rows = (np.array(d, np.int64), np.array(o, np.int64), np.array(s, np.int64), sim)
    u_chunks, u_docs = sp.u.chunk_ids.astype(np.uint64), sp.u.doc.astype(np.int64)
    _, inv, df = np.unique(u_chunks, return_inverse=True, return_counts=True)
    keep = np.isin(u_chunks, counted_ids(u_chunks, df[inv], max_df))
    qc, qd = quote_map(np.arange(n), [np.array(sorted(q), np.uint64) for q in qs])
    ex, ey, e = directed_counts(u_chunks[keep], u_docs[keep], qc, qd)
    sx, sy, sc = directed_counts(u_chunks[keep], u_docs[keep], u_chunks[keep], u_docs[keep])
    s_of = dict(zip(zip(sx.tolist(), sy.tolist(), strict=True), sc.tolist(), strict=True))
    ps = np.array([s_of.get(p, 0) for p in zip(ex.tolist(), ey.tolist(), strict=True)], np.int64)
    out = add_quoted(rows, (ex, ey, ps, e), n_chunks, threshold, np.arange(n), depth)
    return as_lists(out)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 10**6),
    st.integers(2, 14),
    st.sampled_from([None, 2, 4]),
    st.sampled_from([0.0, 10.0, 30.0]),
    st.integers(1, 4),
)
def test_directed_lists_are_s_plus_e_cut_at_depth(seed, n, max_df, threshold, depth):
    texts = corpus(seed, n)
    sp, us, qs = sets_of(texts)
    want = brute_lists(us, qs, max_df, threshold, depth)
    got = kernel_lists(sp, us, qs, max_df, threshold, depth)
    assert {x: lst for x, lst in want.items() if lst} == got


def test_the_issue_example_unquoted_copy_is_found_in_the_quoting_document():
    """A quotes a passage correctly, B copies it unquoted: B's row in A holds the passage
    (B's share), A's own share leaves its quotation out (A has no row in B)."""
    passage = "the quick brown fox jumps over the lazy dog again"
    a = f'my own words about foxes "{passage}" and more of mine here'
    b = f"different text entirely {passage} then something else"
    sp, us, qs = sets_of([a, b])
    got = kernel_lists(sp, us, qs, None, 10.0, 5)
    passage_chunks = len(passage.split()) - K + 1
    assert got[1][0][0] == 0 and got[1][0][1] >= passage_chunks
    assert 0 not in got or all(s < passage_chunks for _, s in got[0])
    assert len(us[0] & us[1]) < passage_chunks  # today's rule (quotes out of both) misses it


def test_directed_counts_brute_force():
    rng = np.random.default_rng(3)
    src_ids = rng.integers(0, 30, 200).astype(np.uint64)
    src_doc = rng.integers(0, 6, 200)
    pairs = sorted(set(zip(src_doc.tolist(), src_ids.tolist(), strict=True)))
    sd = np.array([p[0] for p in pairs], np.int64)
    si = np.array([p[1] for p in pairs], np.uint64)
    mc, md = quote_map(np.arange(8), [rng.choice(30, 7, replace=False) for _ in range(8)])
    x, y, c = directed_counts(si, sd, mc, md)
    held = {d: set(mc[md == d].tolist()) for d in range(8)}
    own = {d: set(si[sd == d].tolist()) for d in range(6)}
    want = {(a, b): len(own[a] & held[b]) for a in own for b in held if a != b and own[a] & held[b]}
    assert dict(zip(zip(x.tolist(), y.tolist(), strict=True), c.tolist(), strict=True)) == want


def lookups(us, qs, lists) -> Lookups:
    """The reads of one run (by Python sets): the list documents' U and Q, the U holders of
    their chunks, the Q map of every document."""

    def pairs(sets, docs):
        got = [(c, d) for d in docs for c in sorted(sets[d])]
        return (np.array([c for c, _ in got], np.uint64), np.array([d for _, d in got], np.int64))

    def holders(chunks):
        got = sorted((c, d) for d, u in enumerate(us) for c in u if c in chunks)
        return (np.array([c for c, _ in got], np.uint64), np.array([d for _, d in got], np.int64))

    uc, ud = pairs(us, lists)
    qc, qd = pairs(qs, lists)
    qmap = quote_map(np.arange(len(qs)), [np.array(sorted(q), np.uint64) for q in qs])
    hold_u, hold_q = holders(set(uc.tolist())), holders(set(qc.tolist()))
    return Lookups(np.array(lists, np.int64), uc, ud, qc, qd, hold_u, hold_q, qmap)


def engine_rows(us, qs, lists, max_df, threshold, depth):
    """What the similarity stage gives by S: the lists of ``lists`` ``depth`` deep and every
    reverse row ``o -> l`` (``o`` not a list document) at the threshold."""
    by_s = brute_lists(us, qs, max_df, threshold, len(us), with_e=False)
    d, o, s = [], [], []
    for x, lst in by_s.items():
        for y, sh in lst[:depth] if x in lists else [(y, sh) for y, sh in lst if y in lists]:
            d.append(x), o.append(y), s.append(sh)
    n_chunks = np.array([len(u) for u in us], np.int64)
    sim = np.asarray(containment(np.array(s, np.int64), n_chunks[np.array(d, np.int64)]))
    return (np.array(d, np.int64), np.array(o, np.int64), np.array(s, np.int64), sim), n_chunks


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 10**6),
    st.integers(2, 14),
    st.sampled_from([None, 2, 4]),
    st.sampled_from([0.0, 10.0, 30.0]),
    st.integers(1, 4),
    st.floats(0.0, 1.0),
)
def test_a_run_correction_is_exact_for_its_lists_and_reverse_rows(
    seed, n, max_df, threshold, depth, share
):
    """The lists a run recomputes (all, or some: an incremental run; deleted documents have
    no sets) are S + E cut at depth; every row from another document to one of them is there
    with S + E when at the threshold."""
    texts = corpus(seed, n)
    rng = random.Random(seed)
    _, us, qs = sets_of(texts)
    for d in rng.sample(range(n), n // 4):  # deleted
        us[d], qs[d] = set(), set()
    lists = sorted(d for d in range(n) if us[d] and rng.random() < share)
    rows, n_chunks = engine_rows(us, qs, set(lists), max_df, threshold, depth)
    got = as_lists(quoted_rows(rows, lookups(us, qs, lists), n_chunks, threshold, depth, max_df))
    want = brute_lists(us, qs, max_df, threshold, len(us))
    for x in range(n):
        mine = want.get(x, [])
        if x in lists:
            assert got.get(x, []) == mine[:depth]
        else:
            # rows to other lists come unranked (the commit ranks those lists)
            assert sorted(got.get(x, [])) == sorted((y, s) for y, s in mine if y in lists)
