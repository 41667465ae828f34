"""The heavy-only search on collapsed heavy sets (kernels/heavy_search) against brute force:
chunk groups held by exactly the same documents, documents with the same heavy set, documents
made only of boilerplate, ties at the k-th place broken by the lowest document ID."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.kernels.heavy import HeavySets, heavy_postings, search_docs
from simdask.kernels.heavy_search import HeavyGroups, heavy_only_rows
from tests.test_similarity_kernels import make_shards

pytestmark = pytest.mark.unit


def block_corpus(n_docs: int, seed: int, n_blocks: int = 6) -> dict[int, set[int]]:
    """Chunk sets built from boilerplate blocks (each a run of chunks always held together,
    so that they form one group), with many documents of exactly the same blocks (ties), some
    made only of boilerplate, and a few chunks of their own."""
    rng = random.Random(seed)
    ids = rng.sample(range(1024), 1024)
    blocks, at = [], 0
    for _ in range(n_blocks):
        size = rng.choice([1, 1, 2, 5, 9, 40])
        blocks.append(set(ids[at : at + size]))
        at += size
    pool = ids[at:]
    layouts = [frozenset(rng.sample(range(n_blocks), rng.randint(1, n_blocks))) for _ in range(4)]
    docs = {}
    for d in range(n_docs):
        lay = (
            rng.choice(layouts)
            if rng.random() < 0.7
            else frozenset(b for b in range(n_blocks) if rng.random() < 0.5)
        )
        s = set().union(*(blocks[b] for b in lay)) if lay else set()
        if rng.random() < 0.6:  # else: boilerplate only
            s |= set(rng.sample(pool, rng.randint(1, 30)))
        docs[d] = s
    return docs


def bits_of(docs, cutoff):
    shards = make_shards(docs, 2)
    n = len(docs)
    return HeavySets.build([heavy_postings(s, cutoff) for s in shards], n).bits()


def heavy_ids(docs, cutoff):
    df = Counter(c for s in docs.values() for c in s)
    return {c for c, k in df.items() if k > cutoff}


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10**6), n_docs=st.integers(1, 40), cutoff=st.sampled_from([0, 2, 6]))
def test_groups_give_every_overlap(seed, n_docs, cutoff):
    docs = block_corpus(n_docs, seed)
    bits = bits_of(docs, cutoff)
    g = HeavyGroups.build(bits)
    heavy = heavy_ids(docs, cutoff)
    rows = bits.docs.tolist()
    assert sum(g.mult) == len(rows)
    assert g.sizes[g.set_of].tolist() == [len(docs[d] & heavy) for d in rows]
    over = (g.left @ g.right.T).astype(np.int64)[np.ix_(g.set_of, g.set_of)]
    want = [[len(docs[a] & docs[b] & heavy) for b in rows] for a in rows]
    assert over.tolist() == want
    # a group is exactly a set of chunks held by the same documents: no two columns alike
    assert len({tuple(c) for c in g.right.T.tolist()}) == g.right.shape[1]
    holders = {frozenset(d for d in rows if c in docs[d]) for c in heavy}
    assert g.right.shape[1] == len(holders)


def brute(docs, heavy, queries, threshold, top_k):
    out = []
    for q in queries:
        mine = []
        for o, so in docs.items():
            s = len(docs[q] & so & heavy)
            if o != q and s and 100.0 * s / len(docs[q]) >= threshold:
                mine.append((q, o, s, 100.0 * s / len(docs[q])))
        mine.sort(key=lambda r: (-r[2], r[1]))
        out += mine[:top_k]
    return out


@settings(max_examples=120, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n_docs=st.integers(2, 45),
    cutoff=st.sampled_from([0, 1, 3, 8]),
    threshold=st.sampled_from([0.5, 1.0, 100 / 7, 50.0, 100.0]),
    top_k=st.integers(1, 6),
    cells=st.sampled_from([1, 7, 60, 1 << 22]),
)
def test_heavy_only_rows_equal_brute_force(seed, n_docs, cutoff, threshold, top_k, cells):
    docs = block_corpus(n_docs, seed)
    bits = bits_of(docs, cutoff)
    n_chunks = np.array([len(docs[d]) for d in range(n_docs)], np.int64)
    q = search_docs(bits.sizes, n_chunks, threshold)
    got = heavy_only_rows(bits, q, n_chunks, threshold, top_k, cells)
    want = brute(docs, heavy_ids(docs, cutoff), q.tolist(), threshold, top_k)
    assert list(zip(*[x.tolist() for x in got], strict=True)) == want


def test_ties_at_the_kth_place_go_to_the_lowest_ids():
    """Twenty documents of the same boilerplate (one block of 5 chunks held together) and
    nothing else: each has 19 partners at 100 %; with top_k 3 they are the 3 lowest IDs other
    than itself, whatever order the groups and sets come in."""
    block = set(range(100, 105))
    docs = {d: set(block) for d in range(20)}
    docs[20] = set(range(200, 230)) | {100}  # shares one chunk: below the others
    bits = bits_of(docs, 2)
    g = HeavyGroups.build(bits)
    assert g.right.shape == (2, 2) and sorted(g.mult.tolist()) == [1, 20]
    n_chunks = np.array([len(docs[d]) for d in range(21)], np.int64)
    q = np.array([0, 1, 7, 19, 20])
    got = heavy_only_rows(bits, q, n_chunks, 1.0, 3, groups=g)
    rows = list(zip(got[0].tolist(), got[1].tolist(), got[2].tolist(), strict=True))
    assert rows == [
        (0, 1, 5), (0, 2, 5), (0, 3, 5),
        (1, 0, 5), (1, 2, 5), (1, 3, 5),
        (7, 0, 5), (7, 1, 5), (7, 2, 5),
        (19, 0, 5), (19, 1, 5), (19, 2, 5),
        (20, 0, 1), (20, 1, 1), (20, 2, 1),
    ]  # fmt: skip
