"""Heavy chunks (issue 13): kernels and end-to-end runs against brute-force Counters/sets.

Corpora are built to have heavy chunks: template paragraphs shared by most documents,
documents made only of boilerplate, ties at the k-th place and similarities exactly at the
threshold. ``exact`` mode must equal counting over all chunks; ``informative`` must equal it
on every pair sharing at least one light chunk and hold nothing else.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask import Index, IndexConfig, RunOptions
from simdask.engine.similarity_stage import block_rows_task, member_rows_task
from simdask.errors import ConfigError
from simdask.kernels.heavy import (
    HeavySets,
    choose_cutoff,
    df_histogram,
    heavy_postings,
    light_work,
    member_keys,
    merge_histograms,
    merge_rows,
    pair_overlap,
    search_docs,
    still_open,
)
from simdask.kernels.heavy_search import heavy_only_rows
from simdask.kernels.member_counts import count_member_keys
from simdask.kernels.similarity import block_pair_keys, pair_work, plan_blocks, top_k_rows
from simdask.kernels.words import chunks
from tests.helpers.corpus import stem, write_txt
from tests.test_similarity_kernels import make_shards

pytestmark = pytest.mark.unit

# --------------------------------------------------------------------------------------------
# brute force


def brute_rows(docs, threshold, top_k, light=None):
    """Rows over all chunks; with ``light`` (a set of chunk IDs) only pairs sharing one."""
    rows = []
    for a, sa in docs.items():
        for b, sb in docs.items():
            if a == b or not sa:
                continue
            shared = sa & sb
            if not shared or (light is not None and not shared & light):
                continue
            sim = 100.0 * len(shared) / len(sa)
            if sim >= threshold:
                rows.append((a, b, len(shared), sim))
    rows.sort(key=lambda r: (r[0], -r[3], r[1]))
    out, seen = [], Counter()
    for r in rows:
        seen[r[0]] += 1
        if seen[r[0]] <= top_k:
            out.append(r)
    return out


def light_set(docs, cutoff):
    df = Counter(c for s in docs.values() for c in s)
    return {c for c, n in df.items() if cutoff is None or n <= cutoff}


def templated_corpus(n_docs: int, seed: int) -> dict[int, set[int]]:
    """Chunk sets (IDs < 1024) with three template paragraphs in most documents, some
    documents made only of boilerplate, exact duplicates (ties) and copied passages."""
    rng = random.Random(seed)
    ids = rng.sample(range(1024), 1024)
    templates = [set(ids[0:12]), set(ids[12:20]), set(ids[20:23])]
    pool = ids[23:]
    docs: dict[int, set[int]] = {}
    for d in range(n_docs):
        s: set[int] = set()
        for t in templates:
            if rng.random() < 0.7:
                s |= t
        kind = rng.random()
        if kind < 0.15:  # boilerplate only
            s = s or set(templates[2])
        elif kind < 0.25 and d >= 2:  # duplicate of an earlier document: ties
            s = set(docs[rng.randrange(d)])
        else:
            s |= set(rng.sample(pool, rng.randint(1, 40)))
            if d and rng.random() < 0.4:
                src = sorted(docs[rng.randrange(d)])
                s |= set(src[: max(1, len(src) // 3)])
        docs[d] = s
    docs[n_docs - 1] = set()  # too short
    return docs


# --------------------------------------------------------------------------------------------
# kernels


def kernel_rows(docs, cutoff, mode, threshold, top_k, n_shards=3, budget=200):
    """The all-pairs path of the similarity stage, in process."""
    n = len(docs)
    shards = make_shards(docs, n_shards)
    n_chunks = np.array([len(docs[i]) for i in range(n)], np.int64)
    bits = None
    if cutoff is not None:
        bits = HeavySets.build([heavy_postings(s, cutoff) for s in shards], n).bits()
    work = sum(pair_work(s, n, cutoff) for s in shards)
    out = [
        block_rows_task(
            [block_pair_keys(s, lo, hi, n, cutoff) for s in shards],
            lo,
            n_chunks,
            threshold,
            top_k,
            bits,
        )
        for lo, hi in plan_blocks(work, budget)
    ]
    rows = top_k_rows(*[np.concatenate([o[i] for o in out]) for i in range(4)], top_k)
    if bits is not None and mode == "exact":
        q = search_docs(bits.sizes, n_chunks, threshold)
        q = still_open(q, rows, bits.sizes, n_chunks, top_k)
        rows = merge_rows(rows, heavy_only_rows(bits, q, n_chunks, threshold, top_k, 7), top_k)
    return list(zip(*[x.tolist() for x in rows], strict=True))


@pytest.mark.parametrize("cutoff", [None, 0, 1, 2, 5, 20, 10**6])
@pytest.mark.parametrize("mode", ["exact", "informative"])
@pytest.mark.parametrize("threshold", [1.0, 12.5, 50.0, 100.0])
def test_all_pairs_rows_equal_brute_force(cutoff, mode, threshold):
    docs = templated_corpus(60, seed=1)
    for top_k in (3, 1000):
        got = kernel_rows(docs, cutoff, mode, threshold, top_k)
        light = light_set(docs, cutoff) if mode == "informative" else None
        assert got == brute_rows(docs, threshold, top_k, light)


def test_corpus_has_heavy_chunks_ties_and_boilerplate_documents():
    docs = templated_corpus(60, seed=1)
    df = Counter(c for s in docs.values() for c in s)
    assert sum(1 for n in df.values() if n > 20) >= 12
    assert any(s and all(df[c] > 20 for c in s) for s in docs.values())  # boilerplate only
    rows = brute_rows(docs, 1.0, 10**6)
    sims = Counter((a, sim) for a, _, _, sim in rows)
    assert max(sims.values()) >= 3  # ties
    # informative leaves out some heavy-only pairs here, so the modes are really different
    assert len(brute_rows(docs, 1.0, 10**6, light_set(docs, 5))) < len(rows)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n_docs=st.integers(2, 40),
    cutoff=st.sampled_from([None, 0, 2, 3, 8]),
    mode=st.sampled_from(["exact", "informative"]),
    threshold=st.sampled_from([0.5, 1.0, 100 / 12, 25.0, 100.0]),
    top_k=st.integers(1, 6),
    budget=st.integers(1, 500),
    n_shards=st.integers(1, 4),
)
def test_all_pairs_property(seed, n_docs, cutoff, mode, threshold, top_k, budget, n_shards):
    docs = templated_corpus(n_docs, seed)
    got = kernel_rows(docs, cutoff, mode, threshold, top_k, n_shards, budget)
    light = light_set(docs, cutoff) if mode == "informative" else None
    assert got == brute_rows(docs, threshold, top_k, light)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), cutoff=st.integers(0, 10), n_shards=st.integers(1, 4))
def test_heavy_sets_bits_and_overlap_equal_brute_force(seed, cutoff, n_shards):
    docs = templated_corpus(30, seed)
    n = len(docs)
    shards = make_shards(docs, n_shards)
    df = Counter(c for s in docs.values() for c in s)
    heavy = sorted(c for c, k in df.items() if k > cutoff)
    hs = HeavySets.build([heavy_postings(s, cutoff) for s in shards], n)
    assert hs.n_heavy == len(heavy)
    rank = {c: i for i, c in enumerate(heavy)}  # shard order is key order
    for d in range(n):
        got = hs.ranks[hs.offsets[d] : hs.offsets[d + 1]].tolist()
        assert got == sorted(rank[c] for c in docs[d] if c in rank)
    bits = hs.bits()
    d, o = np.meshgrid(np.arange(n), np.arange(n))
    ov = pair_overlap(bits, d.ravel(), o.ravel())
    ref = [len(docs[a] & docs[b] & set(heavy)) for a, b in zip(d.ravel(), o.ravel(), strict=True)]
    assert ov.tolist() == ref


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    cutoff=st.sampled_from([0, 2, 4]),
    threshold=st.sampled_from([1.0, 100 / 8, 50.0, 100.0]),
    top_k=st.integers(1, 5),
)
def test_heavy_only_rows_equal_brute_force(seed, cutoff, threshold, top_k):
    docs = templated_corpus(25, seed)
    n = len(docs)
    shards = make_shards(docs, 2)
    n_chunks = np.array([len(docs[i]) for i in range(n)], np.int64)
    bits = HeavySets.build([heavy_postings(s, cutoff) for s in shards], n).bits()
    heavy = set(heavy_postings_ids(docs, cutoff))
    q = search_docs(bits.sizes, n_chunks, threshold)
    ref_q = [
        d for d in range(n) if docs[d] and 100.0 * len(docs[d] & heavy) / len(docs[d]) >= threshold
    ]
    assert q.tolist() == [d for d in ref_q if docs[d] & heavy]
    got = heavy_only_rows(bits, q, n_chunks, threshold, top_k, cells=5)
    only = {d: docs[d] & heavy for d in docs}
    ref = [r for r in brute_rows(only, 0.0, 10**6) if 100.0 * r[2] / len(docs[r[0]]) >= threshold]
    ref = [(a, b, s, 100.0 * s / len(docs[a])) for a, b, s, _ in ref]
    ref.sort(key=lambda r: (r[0], -r[3], r[1]))
    keep, seen = [], Counter()
    for r in ref:
        seen[r[0]] += 1
        if seen[r[0]] <= top_k:
            keep.append(r)
    assert list(zip(*[x.tolist() for x in got], strict=True)) == keep


def heavy_postings_ids(docs, cutoff):
    df = Counter(c for s in docs.values() for c in s)
    return [c for c, k in df.items() if k > cutoff]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    cutoff=st.sampled_from([None, 0, 2, 5]),
    mode=st.sampled_from(["exact", "informative"]),
    members=st.sets(st.integers(0, 29), min_size=1, max_size=6),
    threshold=st.sampled_from([1.0, 25.0, 100.0]),
)
def test_member_rows_equal_brute_force(seed, cutoff, mode, members, threshold):
    docs = templated_corpus(30, seed)
    n = len(docs)
    shards = make_shards(docs, 3)
    n_chunks = np.array([len(docs[i]) for i in range(n)], np.int64)
    block = np.array(sorted(members), np.uint32)
    parts = [member_keys(s, block, n, None, cutoff) for s in shards]
    for keys in (k for p in parts for k in p):  # grouped by member (counted densely)
        assert np.all(np.diff((keys // n).astype(np.int64)) >= 0)
    fwd, _rev = member_rows_task(
        parts,
        block,
        n_chunks,
        changed=block,
        members=block,
        threshold=threshold,
        top_k=4,
        mode=mode,
    )
    light = light_set(docs, cutoff) if mode == "informative" else None
    ref = brute_rows(docs, threshold, 4, light)
    assert list(zip(*[x.tolist() for x in fwd], strict=True)) == [r for r in ref if r[0] in members]


def test_member_reverse_rows_are_exact():
    docs = templated_corpus(30, seed=5)
    n = len(docs)
    shards = make_shards(docs, 2)
    n_chunks = np.array([len(docs[i]) for i in range(n)], np.int64)
    block = np.array([1, 3, 7], np.uint32)  # 3 and 7: boilerplate only
    for mode in ("exact", "informative"):
        _, rev = member_rows_task(
            [member_keys(s, block, n, None, 4) for s in shards],
            block,
            n_chunks,
            changed=block,
            members=block,
            threshold=1.0,
            top_k=4,
            mode=mode,
        )
        light = light_set(docs, 4) if mode == "informative" else None
        ref = {
            (a, b): (s, sim)
            for a, b, s, sim in brute_rows(docs, 1.0, 10**6, light)
            if b in (1, 3, 7) and a not in (1, 3, 7)
        }
        got = {(a, b): (s, sim) for a, b, s, sim in zip(*[x.tolist() for x in rev], strict=True)}
        assert got == ref and len(ref) >= 8


def test_still_open_skips_only_full_lists_above_the_bound():
    # doc 0: |A| = 10, 2 heavy chunks -> bound 20 %; doc 1: bound 50 %
    sizes = np.array([2, 5, 0])
    n_chunks = np.array([10, 10, 10])
    rows = (np.array([0, 0, 1, 1]), np.array([1, 2, 0, 2]), 0, np.array([30.0, 25.0, 50.0, 60.0]))
    assert still_open([0, 1], rows, sizes, n_chunks, 2).tolist() == [1]  # 50 is not > 50
    assert still_open([0, 1], rows, sizes, n_chunks, 3).tolist() == [0, 1]  # lists not full
    rows = (np.array([0, 0]), np.array([1, 2]), 0, np.array([30.0, 20.0]))
    assert still_open([0], rows, sizes, n_chunks, 2).tolist() == [0]  # 20 ties the bound


def test_count_member_keys_modes():
    light = np.array([5, 7, 7], np.uint32)
    heavy = np.array([5, 9, 9], np.uint32)
    k, c = count_member_keys([(light, heavy)], "informative")
    assert (k.tolist(), c.tolist()) == ([5, 7], [2, 2])
    k, c = count_member_keys([(light, heavy)], "exact")
    assert (k.tolist(), c.tolist()) == ([5, 7, 9], [2, 2, 2])
    k, c = count_member_keys([light], "informative")
    assert (k.tolist(), c.tolist()) == ([5, 7], [1, 2])


def test_merge_rows_keeps_the_larger_count():
    a = (np.array([0, 0]), np.array([1, 2]), np.array([5, 1]), np.array([50.0, 10.0]))
    b = (np.array([0, 1]), np.array([1, 0]), np.array([3, 2]), np.array([30.0, 20.0]))
    got = merge_rows(a, b, 10)
    assert list(zip(*[x.tolist() for x in got], strict=True)) == [
        (0, 1, 5, 50.0),
        (0, 2, 1, 10.0),
        (1, 0, 2, 20.0),
    ]


# --------------------------------------------------------------------------------------------
# cutoff choice


@settings(max_examples=200, deadline=None)
@given(
    dfs=st.lists(st.integers(1, 400), min_size=0, max_size=60),
    per_posting=st.sampled_from([0.5, 2, 8, 32]),
    max_heavy=st.integers(0, 20),
)
def test_choose_cutoff_against_definition(dfs, per_posting, max_heavy):
    values, counts = merge_histograms([(np.array(dfs, np.int64), np.ones(len(dfs), np.int64))])
    postings = sum(dfs)
    got = choose_cutoff(values, counts, postings, max_heavy=max_heavy, work_per_posting=per_posting)
    budget = per_posting * postings
    total = sum(d * (d - 1) // 2 for d in dfs)
    assert light_work(values, counts, None) == total
    if total <= budget:
        assert got is None
        return
    cands = sorted(set(dfs))
    by_work = max([h for h in cands if light_work(values, counts, h) <= budget], default=1)
    by_count = min(h for h in cands if sum(d > h for d in dfs) <= max_heavy)
    assert got == max(1, min(by_work, by_count))
    assert choose_cutoff(values, counts, postings, fixed=7) == 7


def test_df_histogram_and_merge():
    docs = {0: {1, 2, 3}, 1: {1, 2}, 2: {1}, 3: {900}}
    shards = make_shards(docs, 2)
    parts = [df_histogram(s) for s in shards]
    v, c = merge_histograms(parts)
    assert (v.tolist(), c.tolist()) == ([1, 2, 3], [2, 1, 1])
    v, c = merge_histograms([df_histogram(s, 2) for s in shards])
    assert (v.tolist(), c.tolist()) == ([1, 2], [2, 1])
    assert light_work(*merge_histograms(parts), 2) == 1


# --------------------------------------------------------------------------------------------
# end to end through Index on a LocalCluster


def template_texts(n_docs: int, seed: int) -> dict[str, str]:
    """Texts with licence/template paragraphs in most documents, boilerplate-only documents,
    exact duplicates and copied passages (distinct random words otherwise)."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(3000)]
    templates = [" ".join(rng.choices(vocab[:50], k=n)) for n in (40, 25, 12)]
    docs: dict[str, str] = {}
    for i in range(n_docs):
        parts = [t for t in templates if rng.random() < 0.75]
        r = rng.random()
        if r < 0.15:
            text = " ".join(parts or templates[2:])
        elif r < 0.25 and docs:
            text = docs[rng.choice(sorted(docs))]
        else:
            own = " ".join(rng.choices(vocab, k=rng.randint(10, 150)))
            if docs and rng.random() < 0.4:
                src = docs[rng.choice(sorted(docs))].split()
                own += " " + " ".join(src[: len(src) // 2])
            parts.insert(rng.randrange(len(parts) + 1), own)
            text = " . ".join(parts)
        docs[f"t{i:03d}"] = text
    return docs


def reference_rows(texts, threshold, top_k, heavy_df, mode):
    sets = {k: set(chunks(t)) for k, t in texts.items()}
    light = light_set(sets, heavy_df) if mode == "informative" else None
    return brute_rows(sets, threshold, top_k, light)


@pytest.mark.integration
@pytest.mark.parametrize(
    "heavy_df,mode",
    [(0, "exact"), (0, "informative"), (4, "exact"), (4, "informative"), (None, "informative")],
)
def test_index_equals_brute_force(tmp_path, client, heavy_df, mode):
    texts = template_texts(70, seed=2)
    cfg = IndexConfig(
        hash_bits=32, shards=3, top_k=5, similarity_mode=mode, heavy_df=heavy_df, threshold=2.0
    )
    idx = Index.create(tmp_path / "i", cfg)
    idx.update(
        [write_txt(texts, tmp_path / "docs")], client=client, options=RunOptions(block_pairs=500)
    )
    got = sorted((stem(r.doc), stem(r.other), r.shared, r.similarity) for r in idx.pairs())
    want = reference_rows(texts, 2.0, 5, heavy_df, mode)
    # the stored table is sorted by (doc, other) here; compare as sets of exact rows
    assert set(got) == set(want) and len(got) == len(want)
    heavy = idx.stats()["heavy"]
    assert heavy["mode"] == mode and heavy["cutoff"] == heavy_df
    if heavy_df is not None:
        assert heavy["heavy_chunks"] > 0 and heavy["heavy_only_docs"] > 0
        assert heavy["heavy_only_searched"] == (mode == "exact")
        assert heavy["pair_work_light"] < heavy["pair_work_all"]


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["exact", "informative"])
@pytest.mark.parametrize("fuse_members", [1000, 0], ids=["fused", "member-blocks"])
def test_incremental_keeps_cutoff_and_exact_counts(tmp_path, client, mode, fuse_members):
    texts = template_texts(60, seed=4)
    keys = sorted(texts)
    first = {k: texts[k] for k in keys[:45]}
    cfg = IndexConfig(hash_bits=32, shards=3, top_k=5, similarity_mode=mode, threshold=2.0)
    idx = Index.create(tmp_path / "i", cfg.replace(heavy_df=6))
    src = tmp_path / "docs"
    idx.update([write_txt(first, src)], client=client)
    write_txt(texts, src)
    summary = idx.update([src], client=client, options=RunOptions(fuse_members=fuse_members))
    assert ("merge+similarity" in summary.seconds) == (fuse_members > 0)
    assert summary.extra["heavy"] == {"mode": mode, "cutoff": 6}
    assert idx.stats()["heavy"]["cutoff"] == 6
    got = {(stem(r.doc), stem(r.other)): (r.shared, r.similarity) for r in idx.pairs()}
    sets = {k: set(chunks(t)) for k, t in texts.items()}
    exact = {(a, b): (s, sim) for a, b, s, sim in brute_rows(sets, 2.0, 10**6)}
    for pair, value in got.items():  # every stored value is the exact one
        assert exact[pair] == value
    if mode == "exact":
        assert set(got) == {(a, b) for a, b, _, _ in reference_rows(texts, 2.0, 5, 6, mode)}


def test_stored_cutoff_and_config():
    from simdask.engine.similarity_stage import stored_cutoff

    cfg = IndexConfig()
    assert stored_cutoff(None, cfg) is None
    assert stored_cutoff({"extra": {"heavy": {"cutoff": 37}}}, cfg) == 37
    assert stored_cutoff({"extra": {}}, cfg) is None
    assert stored_cutoff({"extra": {"heavy": {"cutoff": 37}}}, cfg.replace(heavy_df=5)) == 5
    assert (
        IndexConfig.from_dict(cfg.replace(similarity_mode="exact").to_dict()).similarity_mode
        == "exact"
    )
    for bad in ({"similarity_mode": "fast"}, {"heavy_df": -1}, {"max_heavy": 1.5}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            cfg.replace(**bad)


def test_heavy_stats_serialised_in_run_stats():
    from simdask.summary import HeavyStats, RunStats

    assert "heavy" not in RunStats().extra()
    stats = RunStats(heavy=HeavyStats("exact", None))
    assert stats.extra()["heavy"] == {"mode": "exact", "cutoff": None}
    stats.heavy = HeavyStats("informative", 9, heavy_chunks=3, heavy_only_searched=False)
    stats.heavy.seconds = {"heavy_sets": 0.5}
    assert stats.extra()["heavy"] == {
        "mode": "informative",
        "cutoff": 9,
        "heavy_chunks": 3,
        "heavy_only_searched": False,
        "seconds": {"heavy_sets": 0.5},
    }
