"""Issue 31 item 4 on the numpy path for large texts (over ``LARGE_CHARS`` characters
together): with ``--exclude-quotes`` each direction counts its chunks inside the other's
quotations (a quotation is left out of its own document only), as the word-tuple path does,
and lists those passages. ``LARGE_CHARS`` is made small, so that ``compare_texts`` takes the
large path on its own, and each answer is compared with the normal path's and with the
planted passages."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.evidence import passages as passages_mod
from simdask.evidence.excluded import PairExclusions
from simdask.evidence.passages import compare_texts
from simdask.kernels.features import SORTED_CHUNK
from simdask.kernels.words import chunks

pytestmark = pytest.mark.unit

K = 5


def own(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def texts(ls: int, lp: int, lr: int, noise: int, seed: int) -> tuple[str, str]:
    """A shares S with B unquoted, quotes P (which B copies unquoted) and copies R unquoted
    from inside B's quotation; ``noise`` words of a small common vocabulary around them.
    ASCII (the large path's word offsets are exact only for ASCII text)."""
    rng = random.Random(seed)

    def filler(n: int) -> str:
        return " ".join(rng.choices([f"c{i}" for i in range(12)], k=n))

    s, p, r = own("s", ls), own("p", lp), own("r", lr)
    a = f'{own("a", 10)} {filler(noise)} {s} {own("b", 7)} "{p}" {filler(noise)} {r} x'
    b = f'{own("e", 3)} {p} {own("f", 11)} {filler(noise)} "{r}" {own("g", 4)} {s} {filler(9)}'
    return a, b


class Common:
    """A ``max_df`` filter as :func:`~simdask.read.doc_freq.common_filter` gives it: the
    chunks of ``texts`` holding the word ``word`` are "held by too many documents"."""

    hash_bits, seed = 64, 0

    def __init__(self, word: str, texts: tuple[str, ...]):
        self.chunks = {c for t in texts for c in chunks(t, K) if word in c}
        self.ids = {SORTED_CHUNK.feature_id(c, self.hash_bits, self.seed) for c in self.chunks}

    def __call__(self, shared: set) -> set:
        return shared & self.chunks

    def common_ids(self, ids: np.ndarray) -> np.ndarray:
        return np.array(sorted(set(np.asarray(ids).tolist()) & self.ids), np.uint64)


def evidence(ev) -> tuple:
    return (
        ev.similarity,
        ev.reverse_similarity,
        ev.shared,
        ev.doc_chunks,
        ev.other_chunks,
        sorted(ev.passages, key=lambda p: (p.doc_start, p.other_start)),
        sorted(ev.doc_quoted_copies or [], key=lambda p: (p.doc_start, p.other_start)),
        sorted(ev.other_quoted_copies or [], key=lambda p: (p.doc_start, p.other_start)),
        sorted(ev.doc_excluded),
        sorted(ev.other_excluded),
    )


length = st.one_of(st.just(0), st.integers(K + 1, 40))


@settings(max_examples=60, deadline=None)
@given(
    length,
    length,
    length,
    st.integers(0, 30),
    st.integers(0, 1000),
    st.booleans(),
    st.booleans(),
    st.sampled_from([None, "c3", "p2", "s4"]),
)
def test_the_large_path_counts_each_direction_as_the_normal_path(
    ls, lp, lr, noise, seed, bibliography, template, common_word
):
    a, b = texts(ls, lp, lr, noise, seed)
    if bibliography:  # a reference list, left out of both directions
        a += "\nReferences\n" + own("ref", 12)
        b += "\nReferences\n" + own("ref", 12)
    excl = PairExclusions(
        quotes=True, bibliography=bibliography, templates=(own("f", 11),) * template
    )
    small = Common(common_word, (a, b)) if common_word else None
    want = compare_texts(a, b, K, exclusions=excl, drop_shared=small, large=False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(passages_mod, "LARGE_CHARS", 10)  # every pair here takes the large path
        got = compare_texts(a, b, K, exclusions=excl, drop_shared=small)
    assert evidence(got) == evidence(want)
    if noise == 0 and common_word in (None, "c3"):  # the planted passages: R for A, P for B
        assert [p.words for p in got.doc_quoted_copies] == ([lr] if lr else [])
        assert [p.words for p in got.other_quoted_copies] == ([lp] if lp else [])


def test_the_large_path_counts_the_planted_copies_per_direction(monkeypatch):
    """Planted passages: R (inside B's quotation) counts for A, P (inside A's) for B
    (the large path counted neither before: both sides' quotations out)."""
    a, b = texts(20, 30, 15, 0, 1)
    monkeypatch.setattr(passages_mod, "LARGE_CHARS", 10)
    got = compare_texts(a, b, K, exclusions=PairExclusions(quotes=True))
    assert got.shared == (20 - K + 1) + (15 - K + 1)  # S and R, inside B's quotation
    assert got.reverse_similarity == pytest.approx(
        100.0 * ((20 - K + 1) + (30 - K + 1)) / got.other_chunks
    )
    assert [p.words for p in got.doc_quoted_copies] == [15]
    assert [p.words for p in got.other_quoted_copies] == [30]
