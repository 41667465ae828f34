"""`text_pairs` / `group_pairs` in blocks on a thread pool: the same pairs and estimates for any
number of threads, equal to a brute force that signs every text alone (no blocks, no threads)
and pairs them with Python sets; a corpus of several blocks with near-duplicates across them."""

from __future__ import annotations

import random
from itertools import combinations

import numpy as np
import pytest

from simdask import IndexConfig
from simdask.errors import ConfigError
from simdask.kernels.hashing import window_chunks
from simdask.kernels.lsh_bands import LshParams, band_keys
from simdask.kernels.minhash import EMPTY, signatures_csr
from simdask.read.lsh_search import _TEXT_BLOCK, default_threads, group_pairs, text_pairs

pytestmark = pytest.mark.unit

PARAMS = LshParams.parse("8x2")
CFG = IndexConfig(hash_bits=28)


def _texts(n: int, seed: int = 7) -> list[str]:
    """``n`` texts of 40-80 words from a small vocabulary; every 97th is a near-duplicate
    (a few words replaced) of a text about 1.5 blocks earlier, so pairs cross blocks; a few
    texts have no chunks."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(3000)]
    out: list[str] = []
    for i in range(n):
        src = i - (_TEXT_BLOCK * 3) // 2
        if i % 97 == 0 and src >= 0:
            w = out[src].split()
            for _ in range(1 + i % 3):
                w[rng.randrange(len(w))] = f"zz{rng.randrange(10**6)}"
            out.append(" ".join(w))
        elif i % 211 == 5:
            out.append("too short")
        else:
            out.append(" ".join(rng.choice(vocab) for _ in range(rng.randint(40, 80))))
    return out


def _brute(texts: list[str]) -> dict[tuple[int, int], float]:
    """Every text signed alone; pairs of texts sharing a band key (Python sets), estimate the
    share of equal signature positions."""
    sigs = []
    for t in texts:
        ids, _, _ = window_chunks([t], CFG.k, CFG.hash_bits, CFG.seed)
        sigs.append(signatures_csr(ids, [0, len(ids)], PARAMS.perms, CFG.seed)[0])
    mat = np.array(sigs, dtype=np.uint32)
    keys = band_keys(mat, PARAMS)
    live = [i for i in range(len(texts)) if mat[i, 0] != EMPTY]
    by_key: dict[tuple[int, int], set[int]] = {}
    for i in live:
        for b, k in enumerate(keys[i].tolist()):
            by_key.setdefault((b, k), set()).add(i)
    pairs = {p for group in by_key.values() for p in combinations(sorted(group), 2)}
    return {(i, j): float((mat[i] == mat[j]).mean()) for i, j in pairs}


@pytest.fixture(scope="module")
def texts() -> list[str]:
    out = _texts(_TEXT_BLOCK * 3 + 137)  # four blocks, the last partial
    assert len(out) > 3 * _TEXT_BLOCK
    return out


def test_pairs_equal_for_any_thread_count_and_brute_force(texts):
    one = text_pairs(texts, PARAMS, CFG, threads=1)
    ref = _brute(texts)
    assert {(i, j): e for i, j, e in one} == ref  # exact: the same integer counts / perms
    planted = {(i - (_TEXT_BLOCK * 3) // 2, i) for i in range(len(texts)) if i % 97 == 0}
    planted = {p for p in planted if p[0] >= 0}
    assert planted and planted <= set(ref)  # pairs that cross blocks are found
    for n in (2, 3, 8):
        assert text_pairs(texts, PARAMS, CFG, threads=n) == one  # same order, same floats
    assert text_pairs(texts, PARAMS, CFG) == one  # the default: one thread per CPU
    assert text_pairs(texts, PARAMS, CFG, min_jaccard=0.5, threads=2) == [
        p for p in one if p[2] >= 0.5
    ]


def test_group_pairs_equal_for_any_thread_count(texts):
    half = len(texts) // 2 + 11
    a, b = texts[:half], texts[half:]
    one = group_pairs(a, b, PARAMS, CFG, threads=1)
    ref = {(i, j - half): e for (i, j), e in _brute(texts).items() if i < half <= j}
    assert {(i, j): e for i, j, e in one} == ref
    assert group_pairs(a, b, PARAMS, CFG, threads=2) == one


def test_threads_must_be_positive(texts):
    assert default_threads() >= 1
    with pytest.raises(ConfigError, match="at least 1, got 0"):
        text_pairs(texts[:10], PARAMS, CFG, threads=0)
