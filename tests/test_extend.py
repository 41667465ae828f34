"""The extension's fragment runs (alignment/extend.fragments), in plain Python for speed, equal
the former vectorised form (numpy unique, diff and the barrier comparison) on every input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.alignment.extend import Fragment, fragments, integrate

pytestmark = pytest.mark.unit


def vectorised(index: np.ndarray, gap: int, barriers: np.ndarray) -> list[tuple[int, int]]:
    """The former implementation, the reference."""
    u = np.unique(index)
    if len(u) == 0:
        return []
    cut = (np.diff(u) > gap + 1) | (barriers[u[1:]] != barriers[u[:-1]])
    edges = np.flatnonzero(cut)
    firsts = np.r_[u[0], u[edges + 1]]
    lasts = np.r_[u[edges], u[-1]]
    return list(zip(firsts.tolist(), lasts.tolist(), strict=True))


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 60).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, n - 1), max_size=80),
            st.lists(st.booleans(), min_size=n, max_size=n),
            st.integers(0, 6),
        )
    )
)
def test_fragments_equal_the_vectorised_form(drawn):
    values, is_barrier, gap = drawn
    index = np.array(values, dtype=np.int64)
    barriers = np.cumsum(np.array(is_barrier, dtype=np.int64))
    got = fragments(index, gap, barriers)
    assert got == vectorised(index, gap, barriers)
    assert all(type(a) is int and type(b) is int for a, b in got)


def test_fragments_split_at_gaps_and_barriers():
    barriers = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    index = np.array([0, 1, 1, 3, 4, 5, 9])
    assert fragments(index, 1, barriers) == [(0, 3), (4, 5), (9, 9)]  # barrier before 4
    assert fragments(index, 3, barriers) == [(0, 3), (4, 9)]
    assert fragments(np.array([], dtype=np.int64), 2, barriers) == []


def reference_integrate(seeds, gaps, barriers, similarity, threshold, min_gap, min_seeds, single):
    """The former recursion (numpy masks, every gap level evaluated), the reference."""
    out = []
    inside = lambda v, lo, hi: (v >= lo) & (v <= hi)  # noqa: E731
    for fa in vectorised(seeds[:, 0], gaps[0], barriers[0]):
        s1 = seeds[inside(seeds[:, 0], *fa)]
        if len(s1) < min_seeds:
            continue
        for fb in vectorised(s1[:, 1], gaps[1], barriers[1]):
            s2 = s1[inside(s1[:, 1], *fb)]
            if len(s2) < min_seeds:
                continue
            for fa2 in vectorised(s2[:, 0], gaps[0], barriers[0]):
                s3 = s2[inside(s2[:, 0], *fa2)]
                if len(s3) < min_seeds:
                    continue
                fb2 = (int(s3[:, 1].min()), int(s3[:, 1].max()))
                score = similarity(fa2, fb2)
                if score >= threshold and (len(s3) > 1 or score >= single):
                    out.append(Fragment(*fa2, *fb2, score, s3))
                elif max(gaps) > min_gap:
                    smaller = (max(gaps[0] - 1, min_gap), max(gaps[1] - 1, min_gap))
                    out += reference_integrate(
                        s3, smaller, barriers, similarity, threshold, min_gap, min_seeds, single
                    )
    return out


def box_score(salt: int):
    """A pure similarity of the sentence ranges, in [0, 1): passes and fails mixed, larger
    boxes not favoured, so that every gap level matters."""

    def similarity(ra, rb):
        h = hash((salt, ra, rb)) & 0xFFFF
        return h / 0x10000

    return similarity


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 40).flatmap(
        lambda n: st.tuples(
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, 50)), max_size=60),
            st.lists(st.booleans(), min_size=n, max_size=n),
            st.lists(st.booleans(), min_size=51, max_size=51),
            st.tuples(st.integers(0, 6), st.integers(0, 45)),
            st.integers(0, 3),
            st.integers(1, 3),
            st.floats(0.0, 1.0),
            st.floats(0.0, 1.0),
            st.integers(0, 1000),
            st.booleans(),
        )
    )
)
def test_integrate_equals_the_level_by_level_recursion(drawn):
    pairs, bar_a, bar_b, gaps, min_gap, min_seeds, threshold, single, salt, ordered = drawn
    if ordered:  # as the aligner gives them: sorted, distinct
        pairs = sorted(set(pairs))
    seeds = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    barriers = (np.cumsum(np.array(bar_a, dtype=np.int64)), np.cumsum(np.array(bar_b, np.int64)))
    gaps = (max(gaps[0], min_gap), max(gaps[1], min_gap))
    sim = box_score(salt)
    args = (gaps, barriers, sim, threshold, min_gap, min_seeds, single)
    got = integrate(seeds, *args)
    want = reference_integrate(seeds, *args)
    assert [(f.a_first, f.a_last, f.b_first, f.b_last, f.score) for f in got] == [
        (f.a_first, f.a_last, f.b_first, f.b_last, f.score) for f in want
    ]
    for f, g in zip(got, want, strict=True):
        assert f.seeds.dtype == np.int64 and f.seeds.shape == g.seeds.shape
        assert np.array_equal(f.seeds, g.seeds)
        assert all(type(x) is int for x in (f.a_first, f.a_last, f.b_first, f.b_last))


def test_integrate_skips_the_levels_a_failed_fragment_cannot_split_at():
    # one fragment of 3 seeds, gaps (3, 40): the level-by-level recursion validates it at
    # every level down to the gap at which it splits (B gap 10 between its seeds)
    seeds = np.array([[0, 0], [1, 11], [2, 12]], dtype=np.int64)
    barriers = (np.zeros(3, dtype=np.int64), np.zeros(13, dtype=np.int64))
    calls = []

    def sim(ra, rb):
        calls.append((ra, rb))
        return 0.9 if rb == (11, 12) else 0.1

    got = integrate(seeds, (3, 40), barriers, sim, 0.5, 0, 1, 0.95)
    assert [(f.a_first, f.a_last, f.b_first, f.b_last) for f in got] == [(1, 2, 11, 12)]
    # the whole fragment once, then at B gap 8 (10 > 8 + 1) the two parts; the lone seed
    # (0, 0) fails and is retried only while it can split, never
    assert calls == [((0, 2), (0, 12)), ((0, 0), (0, 0)), ((1, 2), (11, 12))]
    ref_calls = []

    def ref_sim(ra, rb):
        ref_calls.append((ra, rb))
        return sim(ra, rb)

    want = reference_integrate(seeds, (3, 40), barriers, ref_sim, 0.5, 0, 1, 0.95)
    assert [(f.a_first, f.b_first) for f in want] == [(1, 11)]
    assert len(ref_calls) > 30  # every level evaluated again


def test_integrate_equals_the_recursion_on_random_seed_sets():
    # dense random cases (hypothesis favours small ones): many fragments that fail and split
    # a level or more below, barriers in both texts, the summary variant's wide B gaps
    rng = np.random.default_rng(20261128)
    for case in range(600):
        n, nb = int(rng.integers(2, 40)), 51
        k = int(rng.integers(1, 40))
        ab = rng.integers(0, n, k).tolist(), rng.integers(0, nb, k).tolist()
        pairs = set(zip(*ab, strict=True))
        seeds = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
        bars = (np.cumsum(rng.random(n) < 0.1), np.cumsum(rng.random(nb) < 0.1))
        m = int(rng.integers(0, 2))
        gaps = (max(int(rng.integers(0, 6)), m), max(int(rng.integers(0, 45)), m))
        thresholds = (float(rng.random()), int(rng.integers(1, 3)), float(rng.random()))
        args = (gaps, bars, box_score(case), thresholds[0], m, *thresholds[1:])
        got = integrate(seeds, *args)
        want = reference_integrate(seeds, *args)
        assert [(f.a_first, f.a_last, f.b_first, f.b_last, f.score) for f in got] == [
            (f.a_first, f.a_last, f.b_first, f.b_last, f.score) for f in want
        ], case
        assert all(np.array_equal(f.seeds, g.seeds) for f, g in zip(got, want, strict=True))
