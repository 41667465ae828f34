"""heavy_hold / heavy_overlap / light_candidates (kernels/heavy_overlap.py) against brute force
with Python sets, and the candidate path of the member rows against today's heavy keys and
brute force (issue 14: the heavy overlap of candidate pairs only)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from simdask import Index, IndexConfig, RunOptions
from simdask.engine.heavy_candidates import (
    candidate_rows_task,
    candidates_task,
    held_emit,
    held_light,
    held_overlap,
)
from simdask.engine.similarity_stage import member_rows_task
from simdask.kernels.heavy import member_keys
from simdask.kernels.heavy_overlap import heavy_hold, heavy_overlap
from simdask.kernels.postings import ShardData
from simdask.kernels.words import chunks
from tests.helpers.corpus import stem, write_txt
from tests.test_heavy import brute_rows, light_set, reference_rows, template_texts, templated_corpus
from tests.test_similarity_kernels import make_shards

pytestmark = pytest.mark.unit


def heavy_ids(docs, cutoff, max_df=None):
    """The chunks with ``cutoff < df <= max_df``."""
    df = Counter(c for s in docs.values() for c in s)
    return {c for c, k in df.items() if k > cutoff and (max_df is None or k <= max_df)}


def brute_overlap(docs, heavy, pairs):
    """``|A ∩ B ∩ heavy|`` per pair."""
    return [len(docs[a] & docs[b] & heavy) for a, b in pairs]


def shuffled(shard: ShardData, seed: int) -> ShardData:
    """``shard`` with each posting list in a random order (as a run's delta leaves them,
    appended to the base lists: storage.segments.add_delta)."""
    rng = np.random.default_rng(seed)
    doc_ids = shard.doc_ids.copy()
    for a, b in zip(shard.offsets[:-1].tolist(), shard.offsets[1:].tolist(), strict=True):
        rng.shuffle(doc_ids[a:b])
    return ShardData(shard.lo, shard.hi, shard.chunk_keys, shard.offsets, doc_ids)


# chunk IDs < 60 (many shared) or < 400 (with cutoff 0, over 64 held chunks in a range: several
# bitset words)
docs_st = (
    st.sampled_from([60, 400])
    .flatmap(
        lambda top: st.dictionaries(
            st.integers(0, 39),
            st.sets(st.integers(0, top - 1), max_size=25),
            min_size=2,
            max_size=40,
        )
    )
    .map(lambda d: {i: d.get(i, set()) for i in range(max(d) + 1)})
)


@settings(max_examples=150, deadline=None)
@given(
    docs=docs_st,
    data=st.data(),
    cutoff=st.sampled_from([0, 0, 1, 2, 4, 6]),
    max_df=st.sampled_from([None, 4, 8, 1000]),
    n_shards=st.integers(1, 4),
    step=st.sampled_from([1, 3, 1 << 22]),
    shuffle=st.booleans(),
    bits=st.sampled_from([0, 1 << 26]),
)
def test_heavy_overlap_equals_brute_force(
    docs, data, cutoff, max_df, n_shards, step, shuffle, bits
):
    """Any candidate pairs, any block (rows offset by ``row_lo``), any lookup step, posting
    lists sorted or not: the overlaps summed over ranges are the shared heavy chunks, and each
    range names a candidate once. Both ways: bitsets (``bits``) and binary searches (0)."""
    n = len(docs)
    shards = make_shards(docs, n_shards)
    if shuffle:
        shards = [shuffled(s, i) for i, s in enumerate(shards)]
    members = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=8)))
    block_lo = data.draw(st.integers(0, len(members) - 1))
    block = members[block_lo:]
    pairs = data.draw(
        st.lists(st.tuples(st.sampled_from(block), st.integers(0, n - 1)), max_size=60)
    )
    pairs = sorted(set(pairs), key=lambda p: (block.index(p[0]), p[1]))
    keys = np.array([block.index(r) * n + o for r, o in pairs], np.uint32)
    got = np.zeros(len(pairs), np.int64)
    words = 0
    for s in shards:
        hold = heavy_hold(s, np.array(members, np.uint32), cutoff, max_df)
        if len(hold.lists):
            words = max(words, int(hold.lists[-1] >> np.uint64(32)) // 64 + 1)
        assert hold.offsets[-1] == len(hold.chunks) and np.all(np.diff(hold.lists) > 0)
        idx, ov = heavy_overlap(hold, keys, n, block_lo, step, bits)
        assert len(np.unique(idx)) == len(idx) and np.all(ov > 0)
        got[idx] += ov
        perm = np.random.default_rng(len(keys)).permutation(len(keys))  # any order: the same
        pidx, pov = heavy_overlap(hold, keys[perm], n, block_lo, step, bits)
        moved = sorted(zip(perm[pidx].tolist(), pov.tolist(), strict=True))
        assert moved == list(zip(idx.tolist(), ov.tolist(), strict=True))
    assert got.tolist() == brute_overlap(docs, heavy_ids(docs, cutoff, max_df), pairs)
    event(f"bitset words {min(words, 2)}")


def test_heavy_overlap_over_several_bitset_words():
    """Members holding 300 heavy chunks in one range (5 words a bitset): bitsets, searches
    and brute force agree."""
    rng = np.random.default_rng(4)
    docs = {
        d: set(rng.choice(300, int(rng.integers(1, 200)), replace=False).tolist())
        for d in range(30)
    }
    docs[0] = set(range(300))
    (shard,) = make_shards(docs, 1)
    members = np.array([0, 3, 8], np.uint32)
    hold = heavy_hold(shard, members, cutoff=1)
    assert int(hold.lists[-1] >> np.uint64(32)) + 1 > 256
    pairs = [(r, o) for r in members.tolist() for o in range(30) if o != r]
    keys = np.array([members.tolist().index(r) * 30 + o for r, o in pairs], np.uint32)
    want = brute_overlap(docs, heavy_ids(docs, 1), pairs)
    for bits in (0, 1 << 26):
        idx, ov = heavy_overlap(hold, keys, 30, bits_bytes=bits)
        got = np.zeros(len(pairs), np.int64)
        got[idx] = ov
        assert got.tolist() == want


def test_heavy_hold_holds_the_members_heavy_lists():
    docs = {0: {1, 2, 3}, 1: {1, 2}, 2: {1, 3}, 3: {1, 2, 9}, 4: {9}}
    (shard,) = make_shards(docs, 1)
    hold = heavy_hold(shard, np.array([0, 4], np.uint32), cutoff=2)  # heavy: 1 (df 4), 2 (3)
    assert hold.sizes.tolist() == [2, 0]  # member 4 holds only light chunk 9
    lists = {(int(k >> np.uint64(32)), int(k & np.uint64(0xFFFFFFFF))) for k in hold.lists}
    assert lists == {(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 3)}
    assert heavy_hold(shard, np.array([0], np.uint32), cutoff=2, max_df=3).sizes.tolist() == [1]


def candidate_path_rows(docs, block, cutoff, threshold, top_k, n_shards, max_df=None):
    """The four steps of engine/heavy_candidates, in process, on ranges of ``docs``."""
    n = len(docs)
    shards = make_shards(docs, n_shards)
    n_chunks = np.array([len(docs[i]) for i in range(n)], np.int64)
    held = [held_emit(s, block, n, max_df, cutoff) for s in shards]
    cand = candidates_task([held_light(h) for h in held], len(block), n)
    ov = [held_overlap(h, cand, n) for h in held]
    return candidate_rows_task(cand, ov, block, n_chunks, block, block, threshold, top_k)


def as_rows(rows):
    return list(zip(*[x.tolist() for x in rows], strict=True))


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    cutoff=st.sampled_from([0, 1, 2, 5, 100]),
    members=st.sets(st.integers(0, 29), min_size=1, max_size=8),
    threshold=st.sampled_from([1.0, 10.0, 25.0, 100.0]),
    n_shards=st.integers(1, 4),
)
def test_candidate_rows_equal_heavy_keys_and_brute_force(
    seed, cutoff, members, threshold, n_shards
):
    """Forward and reverse rows of the candidate path are those of counting the heavy keys
    (informative mode) and, forward, those of brute force over pairs sharing a light chunk."""
    docs = templated_corpus(30, seed)
    n = len(docs)
    block = np.array(sorted(members), np.uint32)
    n_chunks = np.array([len(docs[i]) for i in range(n)], np.int64)
    fwd, rev = candidate_path_rows(docs, block, cutoff, threshold, 4, n_shards)
    shards = make_shards(docs, n_shards)
    parts = [member_keys(s, block, n, None, cutoff) for s in shards]
    want_f, want_r = member_rows_task(
        parts, block, n_chunks, block, block, threshold, 4, "informative"
    )
    assert as_rows(fwd) == as_rows(want_f)
    assert as_rows(rev) == as_rows(want_r)
    ref = brute_rows(docs, threshold, 4, light_set(docs, cutoff))
    assert as_rows(fwd) == [r for r in ref if r[0] in members]


def test_candidate_rows_count_heavy_chunks():
    """A corpus where heavy chunks decide rows: without the heavy overlap the shared counts
    and so the rows differ (the test fails if the overlap is left out or miscounted)."""
    docs = templated_corpus(30, seed=11)
    block = np.array([0, 1, 2, 4, 9], np.uint32)
    fwd, _ = candidate_path_rows(docs, block, 2, 1.0, 100, 3)
    ref = [r for r in brute_rows(docs, 1.0, 100, light_set(docs, 2)) if r[0] in block.tolist()]
    assert as_rows(fwd) == ref
    heavy = heavy_ids(docs, 2)
    assert sum(len(docs[a] & docs[b] & heavy) > 0 for a, b, _, _ in ref) >= 10


# --------------------------------------------------------------------------------------------
# end to end through Index on a LocalCluster


@pytest.mark.integration
@pytest.mark.parametrize("max_df", [None, 9], ids=["all", "max_df"])
@pytest.mark.parametrize("fuse_members", [1000, 0], ids=["delta", "member-blocks"])
def test_incremental_informative_equals_full_build_and_brute_force(
    tmp_path, client, fuse_members, max_df
):
    """``informative`` with a small ``heavy_df``, so that heavy chunks carry much of the
    shared counts: runs adding, modifying and removing documents (through delta segments, or
    merged ranges and member blocks) give the recomputed documents the rows of a full build of
    the final corpus and of brute force over the pairs sharing a light chunk, and every stored
    value is exact. (Rows of documents not recomputed are kept as they were, also when a chunk
    they share became heavy since: the informative mode's rule, not compared here.) With
    ``max_df`` (chunks held by more documents not counted; runs recompute the holders of a
    chunk crossing it, through merged ranges) the rows are compared with the full build."""
    texts = template_texts(60, seed=8)
    keys = sorted(texts)
    cfg = IndexConfig(
        hash_bits=32,
        shards=3,
        top_k=5,
        threshold=2.0,
        similarity_mode="informative",
        heavy_df=3,
        max_df=max_df,
    )
    opts = RunOptions(fuse_members=fuse_members, block_pairs=500)
    idx = Index.create(tmp_path / "i", cfg)
    src = tmp_path / "docs"
    idx.update([write_txt({k: texts[k] for k in keys[:40]}, src)], client=client, options=opts)
    write_txt(texts, src)  # 20 added
    assert idx.update([src], client=client, options=opts).added == 20
    recomputed = set(keys[40:])
    check_rows(idx, texts, recomputed, client, tmp_path / "f1")
    for k, other in ((keys[3], keys[50]), (keys[11], keys[2]), (keys[45], keys[30])):  # modified
        texts[k] = texts[other] + " and then something else entirely"
        (src / f"{k}.txt").write_text(texts[k])
    for k in (keys[5], keys[44]):  # removed
        del texts[k]
        (src / f"{k}.txt").unlink()
    s = idx.update([src], client=client, options=opts, delete_missing=True)
    assert (s.modified, s.deleted) == (3, 2)
    assert s.extra["heavy"] == {"mode": "informative", "cutoff": 3}
    check_rows(idx, texts, {keys[3], keys[11], keys[45]}, client, tmp_path / "f2")


def check_rows(idx, texts, recomputed, client, path):
    """The rows of the ``recomputed`` documents are a full build's and (without ``max_df``)
    brute force's, every stored value is exact, and heavy chunks carry much of the shared
    counts."""
    got = sorted((stem(r.doc), stem(r.other), r.shared, r.similarity) for r in idx.pairs())
    mine = [r for r in got if r[0] in recomputed]
    full = Index.create(path, idx.config)
    full.update([write_txt(texts, path / "docs")], client=client)
    built = sorted((stem(r.doc), stem(r.other), r.shared, r.similarity) for r in full.pairs())
    assert [r for r in built if r[0] in recomputed] == mine
    if idx.config.max_df is not None:
        assert len(mine) >= 3
        return
    sets = {k: set(chunks(t)) for k, t in texts.items()}
    exact = {(a, b): (s, sim) for a, b, s, sim in brute_rows(sets, 2.0, 10**6)}
    assert all(exact[a, b] == (s, sim) for a, b, s, sim in got)
    want = [r for r in reference_rows(texts, 2.0, 5, 3, "informative") if r[0] in recomputed]
    assert mine == sorted(want) and len(mine) >= len(recomputed) // 2
    heavy = {c for c, n in Counter(c for x in sets.values() for c in x).items() if n > 3}
    through = [len(sets[a] & sets[b] & heavy) for a, b, _, _ in mine]
    assert sum(h > 0 for h in through) >= len(mine) // 2
    assert any(2 * h > s for h, (_, _, s, _) in zip(through, mine, strict=True))
