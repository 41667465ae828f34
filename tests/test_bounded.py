"""Bounded all-pairs work on phrase-rich text (issue 33, simdask/kernels/heavy_bounded.py):
kernels and end-to-end runs against brute force.

The promise tested: in a bounded build with cutoff ``L``, a pair is stored exactly when its
similarity counted over the chunks held by at most ``L`` documents reaches the threshold in
one direction (and the top-k lists take it), and every stored value is the count over all
chunks. Corpora come from the phrase-rich generator (simdask/ingest/phrases.py): many chunks
held by a good part of the documents, planted copied passages.
"""

from __future__ import annotations

import itertools
import random
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask import Index, IndexConfig, RunOptions
from simdask.engine.similarity_stage import stored_heavy
from simdask.errors import ConfigError
from simdask.ingest.phrases import PhraseBank, PhraseParams, iter_phrase_documents
from simdask.ingest.prose import ProseParams
from simdask.kernels.doc_postings import DocPostings, block_keys
from simdask.kernels.heavy import HeavySets, df_histogram, light_work
from simdask.kernels.heavy_bounded import (
    block_candidates,
    bounded_block_rows,
    bounded_cutoff,
    light_evidence,
    range_overlap,
    range_sets,
    set_overlap,
)
from simdask.kernels.postings import build_postings, pack_pairs, sorted_unique
from simdask.kernels.similarity import (
    block_pair_keys,
    count_block_keys,
    count_keys,
    need_counts,
    pair_work,
    plan_blocks,
    row_slices,
    top_k_rows,
)
from simdask.kernels.words import chunks
from simdask.storage.shards import ShardData
from tests.helpers.corpus import stem, write_txt
from tests.test_heavy import brute_rows
from tests.test_similarity_kernels import make_shards

pytestmark = pytest.mark.unit

THRESHOLD, TOP_K = 2.0, 5

# --------------------------------------------------------------------------------------------
# brute force


def bounded_rows(docs, threshold, top_k, cutoff, then=None, new=()):
    """Rows of a bounded build with ``cutoff``: pairs whose light similarity (chunks held by at
    most ``cutoff`` documents) reaches ``threshold`` in one direction, with their count over
    all chunks, over ``threshold``, best ``top_k`` per document (ties by the other's key).

    With ``then`` (the documents when the cutoff was chosen) an incremental history between
    re-bounds: a pair of two documents of ``then`` not in ``new`` keeps its light evidence as
    computed then (with the counts of ``then``); a pair with a document of ``new`` takes it
    with the counts now (docs/design.md, "Bounded all-pairs work")."""
    df = Counter(c for s in docs.values() for c in s)
    light = {c for c, n in df.items() if n <= cutoff}
    old = light
    if then is not None:
        df_then = Counter(c for s in then.values() for c in s)
        old = {c for c, n in df_then.items() if n <= cutoff}
    rows = []
    for a, sa in docs.items():
        for b, sb in docs.items():
            if a == b or not sa or not sb:
                continue
            lit = light if then is None or a in new or b in new else old
            ls = len(sa & sb & lit)
            if not (100.0 * ls / len(sa) >= threshold or 100.0 * ls / len(sb) >= threshold):
                continue
            shared = len(sa & sb)
            if 100.0 * shared / len(sa) >= threshold:
                rows.append((a, b, shared, 100.0 * shared / len(sa)))
    rows.sort(key=lambda r: (r[0], -r[3], r[1]))
    out, seen = [], Counter()
    for r in rows:
        seen[r[0]] += 1
        if seen[r[0]] <= top_k:
            out.append(r)
    return out


def family_docs(n_families: int, size: int, seed: int, edits: float = 0.04) -> dict[str, str]:
    """Near-duplicate families (issue 32 item 4's template-heavy pages): ``n_families`` base
    texts, each copied ``size`` times with a share ``edits`` of its words replaced; keys
    ``f<family>m<member>``."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(3000)]
    out = {}
    for f in range(n_families):
        base = [rng.choice(words) for _ in range(rng.randint(120, 220))]
        for m in range(size):
            text = [rng.choice(words) if rng.random() < edits else w for w in base]
            out[f"f{f:02d}m{m:02d}"] = " ".join(text)
    return out


def phrase_docs(n: int, seed: int, reuse: float = 0.1):
    """``n`` short phrase-rich documents (a small bank, so that phrases repeat a lot) and the
    planted (source, target) pairs among them."""
    bank = PhraseBank.build(PhraseParams(vocab_words=400, n_phrases=300, seed=seed))
    params = ProseParams(mean_words=120, sigma=0.3, min_words=30, reuse_fraction=reuse)
    truth: list = []
    docs = list(iter_phrase_documents(bank, n, seed=seed, params=params, truth=truth))
    return {d.key: d.text for d in docs}, {(r.source, r.target) for r in truth}


# --------------------------------------------------------------------------------------------
# kernels


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n_docs=st.integers(1, 30),
    n_heavy=st.integers(1, 200),
    step=st.integers(1, 64),
)
def test_set_overlap_equals_brute_force(seed, n_docs, n_heavy, step):
    rng = random.Random(seed)
    sets = {d: set(rng.sample(range(n_heavy), rng.randint(0, n_heavy))) for d in range(n_docs)}
    dfs = np.bincount([r for s in sets.values() for r in s], minlength=n_heavy)
    lists = [
        np.array([d for d in range(n_docs) if r in sets[d]], np.uint32) for r in range(n_heavy)
    ]
    hs = HeavySets.build([(dfs.astype(np.int64), np.concatenate(lists))], n_docs)
    d = np.array([rng.randrange(n_docs) for _ in range(50)], np.int64)
    o = np.array([rng.randrange(n_docs) for _ in range(50)], np.int64)
    want = [len(sets[a] & sets[b]) for a, b in zip(d.tolist(), o.tolist(), strict=True)]
    assert set_overlap(hs, d, o, step=step).tolist() == want
    assert set_overlap(hs, d[:0], o[:0]).tolist() == []


@settings(max_examples=200, deadline=None)
@given(
    dfs=st.lists(st.integers(1, 300), min_size=1, max_size=60),
    per_posting=st.integers(0, 40),
    cutoff=st.one_of(st.none(), st.integers(1, 300)),
    floor=st.sampled_from([0, 1, 1000, 10**5]),
)
def test_bounded_cutoff_against_definition(dfs, per_posting, cutoff, floor):
    values, counts = np.unique(np.array(dfs, np.int64), return_counts=True)
    postings = int((values * counts).sum())
    got = bounded_cutoff(values, counts, postings, cutoff, per_posting, floor)
    budget = max(per_posting * postings, floor)
    assert bounded_cutoff(values, counts, postings, cutoff, None) is None
    if light_work(values, counts, cutoff) <= budget:
        assert got is None
        return
    assert got is not None and got >= 1
    # the light work at the lowered cutoff fits the budget, and no higher df would
    assert light_work(values, counts, got) <= budget or got == 1
    higher = values[values > got]
    assert len(higher) == 0 or light_work(values, counts, int(higher[0])) > budget
    assert cutoff is None or got < cutoff


@given(
    light=st.lists(st.integers(0, 20), min_size=1, max_size=40),
    need=st.lists(st.integers(0, 25), min_size=2, max_size=10),
    data=st.data(),
)
def test_light_evidence_is_either_direction(light, need, data):
    n = len(need)
    d = np.array(
        data.draw(st.lists(st.integers(0, n - 1), min_size=len(light), max_size=len(light)))
    )
    o = np.array(
        data.draw(st.lists(st.integers(0, n - 1), min_size=len(light), max_size=len(light)))
    )
    got = light_evidence(d, o, np.array(light), np.array(need))
    want = [s >= need[a] or s >= need[b] for s, a, b in zip(light, d, o, strict=True)]
    assert got.tolist() == want


def split_shards(docs, cuts, bits=16):
    """The postings of ``docs`` as merged ranges split at the chunk-key ``cuts`` (any split of
    the ``2**bits`` keys into consecutive ranges, empty ones allowed)."""
    pairs = [(c, d) for d, cs in docs.items() for c in cs]
    keys = sorted_unique(
        pack_pairs(
            np.array([c for c, _ in pairs], np.uint32), np.array([d for _, d in pairs], np.uint32)
        )
    )
    bounds = [0, *sorted(cuts), 1 << bits]
    out = []
    for lo, hi in itertools.pairwise(bounds):
        part = keys[(keys >> np.uint64(32) >= lo) & (keys >> np.uint64(32) < hi)]
        out.append(ShardData(lo, hi, *build_postings(part)))
    return out


def bounded_kernel_rows(docs, cutoff, threshold, top_k, cuts=(20000, 40000), budget=150):
    """The all-pairs path of a bounded build, in process, as heavy_stage wires it: light keys
    through ``df <= cutoff``; the heavy sets built per range (local ranks), each block's
    candidates' overlap taken per range and summed."""
    n = len(docs)
    shards = split_shards(docs, cuts)
    n_chunks = np.array([len(docs[i]) for i in range(n)], np.int64)
    sets = [range_sets(s, cutoff, None, n) for s in shards]
    work = sum(pair_work(s, n, cutoff) for s in shards)
    out = []
    for lo, hi in plan_blocks(work, budget):
        cand = block_candidates(
            [block_pair_keys(s, lo, hi, n, cutoff) for s in shards], lo, n_chunks, threshold
        )
        out.append(
            bounded_block_rows(
                cand, [range_overlap(h, cand) for h in sets], n_chunks, threshold, top_k
            )
        )
    rows = top_k_rows(*[np.concatenate([o[i] for o in out]) for i in range(4)], top_k)
    return list(zip(*[x.tolist() for x in rows], strict=True))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n_docs=st.integers(2, 40),
    cutoff=st.integers(1, 8),
    cuts=st.lists(st.integers(0, 1 << 16), max_size=6),
)
def test_range_overlaps_sum_to_the_heavy_overlap(seed, n_docs, cutoff, cuts):
    """For any split of the chunk keys into ranges, the per-range heavy sets' overlaps of any
    pairs sum to the brute-force count of the heavy chunks (df > cutoff) both documents hold."""
    texts, _ = phrase_docs(n_docs, seed % 50)
    docs = _id_sets(texts)
    df = Counter(c for s in docs.values() for c in s)
    shards = split_shards(docs, cuts)
    sets = [range_sets(s, cutoff, None, n_docs) for s in shards]
    assert sum(h.n_heavy for h in sets) == sum(1 for v in df.values() if v > cutoff)
    rng = random.Random(seed)
    d = np.array([rng.randrange(n_docs) for _ in range(80)], np.int64)
    o = np.array([rng.randrange(n_docs) for _ in range(80)], np.int64)
    cand = (d, o, np.zeros(len(d), np.int32))
    got = np.sum([range_overlap(h, cand) for h in sets], axis=0)
    heavy = {c for c, v in df.items() if v > cutoff}
    want = [len(docs[a] & docs[b] & heavy) for a, b in zip(d.tolist(), o.tolist(), strict=True)]
    assert got.tolist() == want
    # no range holds more than its own chunks' postings
    assert [int(h.sizes.sum()) for h in sets] == [
        int(np.diff(s.offsets)[np.diff(s.offsets) > cutoff].sum()) for s in shards
    ]


def _id_sets(texts):
    ids: dict = {}
    return {
        i: {ids.setdefault(c, len(ids)) for c in chunks(texts[k])}
        for i, k in enumerate(sorted(texts))
    }


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n_docs=st.integers(2, 60),
    cutoff=st.integers(1, 12),
    threshold=st.sampled_from([1.0, 2.0, 5.0, 12.5]),
    top_k=st.integers(1, 6),
    cuts=st.lists(st.integers(0, 1 << 16), max_size=5),
)
def test_bounded_block_rows_equal_brute_force(seed, n_docs, cutoff, threshold, top_k, cuts):
    texts, _ = phrase_docs(n_docs, seed % 50)
    docs = _id_sets(texts)
    want = bounded_rows(docs, threshold, top_k, cutoff)
    assert bounded_kernel_rows(docs, cutoff, threshold, top_k, cuts) == [
        (a, b, s, pytest.approx(v)) for a, b, s, v in want
    ]


def test_the_rule_drops_set_phrase_pairs_and_keeps_copies():
    """On phrase-rich text the bound matters: the bounded rows are a strict subset of the rows
    over all chunks, every kept value equal to its exact one."""
    texts, _ = phrase_docs(60, 3)
    docs = _id_sets(texts)
    full = {(a, b): (s, v) for a, b, s, v in brute_rows(docs, THRESHOLD, 10**6)}
    bounded = bounded_kernel_rows(docs, 4, THRESHOLD, 10**6)
    assert 0 < len(bounded) < len(full)
    assert all(full[(a, b)] == (s, pytest.approx(v)) for a, b, s, v in bounded)


# --------------------------------------------------------------------------------------------
# end to end through Index on a LocalCluster


def _build(path, texts, client, src, **config):
    cfg = IndexConfig(hash_bits=32, shards=3, top_k=TOP_K, threshold=THRESHOLD, **config)
    idx = Index.create(path, cfg)
    idx.update([write_txt(texts, src)], client=client, options=RunOptions(block_pairs=400))
    return idx


def _rows(idx):
    return sorted((stem(r.doc), stem(r.other), r.shared, r.similarity) for r in idx.pairs())


def _key_sets(texts):
    return {k: set(chunks(t)) for k, t in texts.items()}


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["auto", "informative"])
def test_bounded_build_equals_brute_force(tmp_path, client, mode):
    texts, planted = phrase_docs(90, 1)
    idx = _build(
        tmp_path / "i", texts, client, tmp_path / "d", light_budget=1, light_floor=0,
        similarity_mode=mode,
    )  # fmt: skip
    h = idx.stats()["heavy"]
    assert h["bounded"] is True and h["mode"] == "informative"
    assert h["pair_work_light"] <= 1 * idx.stats()["postings"] < h["pair_work_all"]
    want = sorted(bounded_rows(_key_sets(texts), THRESHOLD, TOP_K, h["cutoff"]))
    assert _rows(idx) == [(a, b, s, pytest.approx(v)) for a, b, s, v in want]
    # every planted copy is found (its light chunks alone reach the threshold)
    pairs = {(a, b) for a, b, _, _ in _rows(idx)}
    assert planted and all((s, t) in pairs or (t, s) in pairs for s, t in planted)
    assert "bounded" in idx.stats()["similarity_mode"]
    # not bounded: the budget None, a fixed cutoff or the exact mode count as before
    for extra in ({"light_budget": None}, {"heavy_df": h["cutoff"]}, {"light_floor": 10**9}):
        other = _build(tmp_path / f"o{len(extra)}{next(iter(extra))}", texts, client,
                       tmp_path / "d", similarity_mode=mode, **extra)  # fmt: skip
        assert not other.stats()["heavy"].get("bounded")


@pytest.mark.integration
@pytest.mark.parametrize("fuse_members", [1000, 0], ids=["fused", "member-blocks"])
def test_incremental_runs_keep_the_bound(tmp_path, client, fuse_members):
    texts, _ = phrase_docs(80, 2)
    keys = sorted(texts)
    first = {k: texts[k] for k in keys[:60]}
    src = tmp_path / "d"
    idx = _build(tmp_path / "i", first, client, src, light_budget=1, light_floor=0)
    built = idx.stats()["heavy"]
    assert built["bounded"] and built["bound_docs"] == 60
    cutoff = built["cutoff"]
    opts = RunOptions(fuse_members=fuse_members)
    # added documents push chunks over the cutoff: their other holders are not recomputed
    write_txt(texts, src)
    then, now = _key_sets(first), _key_sets(texts)
    df0 = Counter(c for s in then.values() for c in s)
    df1 = Counter(c for s in now.values() for c in s)
    assert any(df0[c] <= cutoff < n for c, n in df1.items() if c in df0)  # some crossed
    summary = idx.update([src], client=client, options=opts)
    assert ("merge+similarity" in summary.seconds) == (fuse_members > 0)
    assert not summary.stats.df_crossed and not summary.stats.refilled  # None: no max_df
    kept = idx.stats()["heavy"]
    assert kept["bounded"] and kept["cutoff"] == cutoff and kept["bound_docs"] == 60
    new = {stem(k) for k in keys[60:]}
    want = sorted(bounded_rows(now, THRESHOLD, TOP_K, cutoff, then, new))
    assert _rows(idx) == [(a, b, s, pytest.approx(v)) for a, b, s, v in want]
    # deletions and an edit: every stored value exact, the edited list as computed now
    for k in keys[5:25]:
        (src / f"{k}.txt").unlink()
        del texts[k]
    texts[keys[0]] = texts[keys[0]][: len(texts[keys[0]]) // 2]
    write_txt(texts, src)
    idx.update([src], client=client, options=opts, delete_missing=True)
    now = _key_sets(texts)
    rows = _rows(idx)
    assert all(s == len(now[a] & now[b]) for a, b, s, _ in rows)
    assert all(v == pytest.approx(100.0 * s / len(now[a])) for a, _, s, v in rows)
    edited = stem(keys[0])
    fresh = sorted(r for r in bounded_rows(now, THRESHOLD, TOP_K, cutoff) if r[0] == edited)
    assert [r for r in rows if r[0] == edited] == [
        (a, b, s, pytest.approx(v)) for a, b, s, v in fresh
    ]


@pytest.mark.integration
def test_an_add_to_near_duplicate_families_writes_what_changes(tmp_path, client):
    """Issue 32 item 4 on a bounded index: adding a few near-duplicates moves the family
    chunks' counts over the cutoff; the add writes a small multiple of the rows that differ
    between the index before and after (not the families' whole lists again), costs less
    pair work than the build, and its rows are the incremental statement's."""
    texts = family_docs(8, 9, seed=4)
    keys = sorted(texts)
    added = [k for k in keys if k.endswith("m08")][:3]
    first = {k: t for k, t in texts.items() if k not in added}
    src = tmp_path / "d"
    cfg = {"light_budget": 1, "light_floor": 0}
    idx = _build(tmp_path / "i", first, client, src, **cfg)
    built = idx.stats()["heavy"]
    assert built["bounded"]
    cutoff = built["cutoff"]
    before = set(_rows(idx))
    build_work = idx.catalog.last_run()["summary"]["extra"]["candidate_pair_counts"]
    write_txt(texts, src)
    then, now = _key_sets(first), _key_sets(texts)
    df0 = Counter(c for s in then.values() for c in s)
    crossed = [c for c, n in Counter(c for s in now.values() for c in s).items()
               if df0[c] <= cutoff < n and df0[c] > 0]  # fmt: skip
    assert crossed  # the add moves family chunks over the cutoff
    summary = idx.update([src], client=client)
    after = set(_rows(idx))
    changed = len(before ^ after)
    assert 0 < summary.similarity_rows <= 2 * changed
    assert summary.extra["candidate_pair_counts"] <= build_work
    new = {stem(k) for k in added}
    want = bounded_rows(now, THRESHOLD, TOP_K, cutoff, then, new)
    assert sorted(after) == sorted((a, b, s, pytest.approx(v)) for a, b, s, v in want)


@pytest.mark.integration
def test_a_bounded_index_that_doubles_is_bounded_again(tmp_path, client):
    """Amortised re-bounds: once the index has grown to twice the documents its cutoff was
    chosen for, the run recomputes every list with a cutoff chosen again, as a full build of
    the same documents would."""
    texts, _ = phrase_docs(130, 2)
    keys = sorted(texts)
    first = {k: texts[k] for k in keys[:60]}
    src = tmp_path / "d"
    idx = _build(tmp_path / "i", first, client, src, light_budget=1, light_floor=0)
    assert idx.stats()["heavy"]["bounded"] and idx.stats()["heavy"]["bound_docs"] == 60
    write_txt({k: texts[k] for k in keys[:119]}, src)  # 119 < 2 x 60: kept
    idx.update([src], client=client)
    h = idx.stats()["heavy"]
    assert h["bound_docs"] == 60 and not h.get("rebound")
    write_txt(texts, src)  # 130 >= 2 x 60: re-bound
    idx.update([src], client=client)
    h = idx.stats()["heavy"]
    assert h["bounded"] and h["rebound"] and h["bound_docs"] == 130
    ref = _build(tmp_path / "r", texts, client, tmp_path / "d2", light_budget=1, light_floor=0)
    assert h["cutoff"] == ref.stats()["heavy"]["cutoff"]
    assert _rows(idx) == _rows(ref)


def test_stored_heavy_keeps_a_bounded_build():
    last = {"extra": {"heavy": {"mode": "informative", "cutoff": 7, "bounded": True}}}
    for mode in ("auto", "informative"):
        h = stored_heavy(last, IndexConfig(similarity_mode=mode))
        assert (h.mode, h.cutoff, h.bounded) == ("informative", 7, True)
    assert not stored_heavy(last, IndexConfig(similarity_mode="exact")).bounded
    assert not stored_heavy({"extra": {"heavy": {"cutoff": 7}}}, IndexConfig()).bounded


def test_light_budget_config():
    assert IndexConfig().light_budget == 4 and IndexConfig().light_floor == 5 * 10**8
    assert IndexConfig.from_dict(IndexConfig(light_budget=None).to_dict()).light_budget is None
    for bad in (-1, 1.5, "4"):
        with pytest.raises(ConfigError, match="light_budget"):
            IndexConfig(light_budget=bad)


def test_df_histogram_of_phrase_text_has_a_mid_band():
    """The generator gives the workload: most pair work sits in chunks of mid df."""
    texts, _ = phrase_docs(120, 0, reuse=0.0)
    docs = _id_sets(texts)
    values, counts = df_histogram(make_shards(docs, 1, bits=16)[0])
    work = counts * values * (values - 1) // 2
    mid = (values >= 5) & (values <= 60)
    assert work[mid].sum() > 0.5 * work.sum()


# --------------------------------------------------------------------------------------------
# sub-blocks (worker memory at 1M, issue 33): a block counted by sub-blocks of whole rows


def _sorted_parts(rng, n_rows, n_docs, n_parts, max_per_row):
    """Pair keys ``i * n_docs + o`` in ``n_parts`` parts, rows ascending in each part (as the
    all-pairs emission gives them), unsorted within a row, with repeats across parts."""
    parts = []
    for _ in range(n_parts):
        rows = []
        for i in range(n_rows):
            k = int(rng.integers(0, max_per_row + 1))
            o = rng.integers(0, n_docs, k)
            rows.append((i * n_docs + o).astype(np.uint32))
        parts.append(np.concatenate(rows) if rows else np.zeros(0, np.uint32))
    return parts


@settings(max_examples=120, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n_rows=st.integers(1, 40),
    n_docs=st.integers(1, 50),
    n_parts=st.integers(1, 5),
    max_per_row=st.integers(0, 30),
    max_keys=st.integers(1, 400),
)
def test_row_slices_count_exactly_the_block(seed, n_rows, n_docs, n_parts, max_per_row, max_keys):
    """Sub-blocks of whole rows: every key in exactly one, no sub-block over ``max_keys``
    keys unless it is a single row, and their counts, concatenated, are the block's counts."""
    rng = np.random.default_rng(seed)
    parts = _sorted_parts(rng, n_rows, n_docs, n_parts, max_per_row)
    subs = row_slices(parts, n_docs, max_keys)
    whole = count_keys([p for p in parts if len(p)])
    got = [count_block_keys(s, n_docs) for s in subs]
    keys = np.concatenate([g[0] for g in got]) if got else np.zeros(0, np.uint32)
    counts = np.concatenate([g[1] for g in got]) if got else np.zeros(0, np.uint32)
    assert keys.tolist() == whole[0].tolist()
    assert counts.tolist() == whole[1].tolist()
    for s in subs:
        n = sum(len(p) for p in s)
        rows = np.unique(np.concatenate(s) // n_docs) if n else []
        assert n <= max_keys or len(rows) == 1
    # rows never straddle two sub-blocks
    row_sets = [set((np.concatenate(s) // n_docs).tolist()) for s in subs if sum(map(len, s))]
    assert sum(len(r) for r in row_sets) == len(set().union(*row_sets)) if row_sets else True
    if sum(len(p) for p in parts) > max_keys and max_per_row * n_parts <= max_keys:
        assert len(subs) > 1  # the block was cut


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n_docs=st.integers(2, 60),
    cutoff=st.integers(1, 12),
    threshold=st.sampled_from([1.0, 2.0, 5.0, 12.5]),
    sub_keys=st.integers(1, 300),
)
def test_block_candidates_by_sub_blocks_equal_the_whole_block(
    seed, n_docs, cutoff, threshold, sub_keys
):
    """The candidates of a block counted by sub-blocks of ``sub_keys`` keys are exactly those
    of the whole block counted at once, on the all-pairs emission of phrase-rich documents."""
    texts, _ = phrase_docs(n_docs, seed % 50)
    docs = _id_sets(texts)
    shards = split_shards(docs, (20000, 40000))
    n_chunks = np.array([len(docs[i]) for i in range(n_docs)], np.int64)
    views = [DocPostings.build(s, n_docs, cutoff) for s in shards]
    rng = random.Random(seed)
    lo = rng.randrange(n_docs)
    hi = rng.randrange(lo + 1, n_docs + 1)
    parts = [block_keys(v, lo, hi, n_docs) for v in views]
    whole = block_candidates(parts, lo, n_chunks, threshold, sub_keys=1 << 30)
    cut = block_candidates(parts, lo, n_chunks, threshold, sub_keys=sub_keys)
    assert [c.tolist() for c in cut] == [c.tolist() for c in whole]
    # and against brute force: every pair of the block whose light count reaches `need`
    df = Counter(c for s in docs.values() for c in s)
    light = {c for c, v in df.items() if v <= cutoff}
    need = need_counts(n_chunks, threshold)
    want = sorted(
        (a, b, len(docs[a] & docs[b] & light))
        for a in range(lo, hi)
        for b in range(a + 1, n_docs)
        if docs[a] & docs[b] & light and len(docs[a] & docs[b] & light) >= min(need[a], need[b])
    )
    assert sorted(zip(*[c.tolist() for c in cut], strict=True)) == want


@pytest.mark.integration
def test_views_and_range_sets_report_their_size_without_any_registration():
    """A worker sizes the blocks' views and a bounded build's range sets by their arrays even
    when no module registered a Dask ``sizeof`` for them (a worker imports only what its
    tasks name): sized at ~50 bytes, the scheduler ran their readers on the other worker and
    each view and set was copied to both (issue 33, worker memory at 1M)."""
    code = (
        "import sys, numpy as np\n"
        "from dask.sizeof import sizeof\n"
        "from simdask.kernels.doc_postings import DocPostings\n"
        "from simdask.kernels.heavy import HeavySets\n"
        "assert 'simdask.engine.similarity_stage' not in sys.modules\n"
        "n = 10**6\n"
        "dp = DocPostings(np.zeros(n, np.uint32), np.zeros(11, np.uint32),"
        " np.zeros(n, np.uint32), np.zeros(n, np.uint8))\n"
        "hs = HeavySets(np.zeros(n + 1, np.int64), np.zeros(n, np.uint16), 5)\n"
        "print(sizeof(dp) - dp.nbytes, sizeof(hs) - hs.offsets.nbytes - hs.ranks.nbytes)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    extra = [int(x) for x in out.stdout.split()]
    assert all(0 <= x <= 1000 for x in extra), out.stdout
