"""MinHash and LSH kernels against brute force and against the theory they promise:
signatures equal a per-document Python min, the candidate rate follows 1-(1-s^r)^b, Jaccard
estimates are unbiased with the binomial spread, tuning picks the (b, r) brute-force
integration picks."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.config import IndexConfig
from simdask.errors import ConfigError
from simdask.kernels import minhash
from simdask.kernels.lsh_bands import (
    LshParams,
    band_keys,
    candidate_pairs,
    cross_pairs,
    error_areas,
    s_curve,
    tune,
)
from simdask.kernels.minhash import EMPTY, agreement, perm_coeffs, signatures, signatures_csr

pytestmark = pytest.mark.unit


def brute_signature(values: list[int], n_perm: int, seed: int) -> list[int]:
    """Python ints: per permutation, the top 32 bits of the least (a*x + b) mod 2**64."""
    a, b = perm_coeffs(n_perm, seed)
    if not values:
        return [int(EMPTY)] * n_perm
    out = []
    for p in range(n_perm):
        v = min((int(a[p]) * x + int(b[p])) % 2**64 for x in values) >> 32
        out.append(v if v != int(EMPTY) else int(EMPTY) - 1)
    return out


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.lists(st.integers(0, 2**32 - 1), max_size=40), min_size=0, max_size=12),
    n_perm=st.integers(1, 17),
    seed=st.integers(0, 2**64 - 1),
    block=st.sampled_from([1, 7, 64, 1 << 19]),
)
def test_signatures_equal_brute_force(docs, n_perm, seed, block):
    """Any documents (empty ones, duplicates), any block size: documents that straddle
    work blocks are reduced across them."""
    old = minhash._BLOCK_ELEMS
    minhash._BLOCK_ELEMS = block
    try:
        values = np.array([x for d in docs for x in d], dtype=np.uint64)
        offsets = np.cumsum([0] + [len(d) for d in docs])
        got = signatures_csr(values, offsets, n_perm, seed)
    finally:
        minhash._BLOCK_ELEMS = old
    assert got.shape == (len(docs), n_perm)
    assert got.dtype == np.uint32
    for i, d in enumerate(docs):
        assert got[i].tolist() == brute_signature(d, n_perm, seed)


def test_signatures_of_unsorted_pairs_equal_csr():
    rng = np.random.default_rng(5)
    doc = rng.integers(0, 30, 3000)
    ids = rng.integers(0, 2**28, 3000)
    got = signatures(ids, doc, 33, 24, seed=9)  # docs 30..32 have no chunks
    order = np.argsort(doc, kind="stable")
    offsets = np.searchsorted(doc[order], np.arange(34))
    assert np.array_equal(got, signatures_csr(ids[order], offsets, 24, seed=9))
    assert (got[30:] == EMPTY).all()
    assert not (got[:30] == EMPTY).any()
    big = ids.astype(np.uint64) + 2**32  # wider than chunk IDs: the argsort path
    assert np.array_equal(
        signatures(big, doc, 33, 24, seed=9), signatures_csr(big[order], offsets, 24, seed=9)
    )


def test_seed_changes_signatures_and_is_deterministic():
    x = np.arange(100, dtype=np.uint64) * 7919
    off = np.array([0, 100])
    s0 = signatures_csr(x, off, 16, seed=1)
    assert np.array_equal(s0, signatures_csr(x, off, 16, seed=1))
    assert not np.array_equal(s0, signatures_csr(x, off, 16, seed=2))


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.lists(st.integers(0, 2**64 - 1), max_size=30), min_size=0, max_size=10),
    n_perm=st.integers(1, 13),
    seed=st.integers(0, 2**64 - 1),
    block=st.sampled_from([1, 5, 40, 1 << 20]),
)
def test_signatures_of_64_bit_ids_in_any_order_equal_brute_force(docs, n_perm, seed, block):
    """The default 64-bit chunk IDs, given as (chunk, doc) pairs sorted by chunk as the
    chunking tasks give them: grouped by document, reduced across work blocks."""
    pairs = sorted((x, d) for d, ids in enumerate(docs) for x in ids)
    ids = np.array([x for x, _ in pairs], dtype=np.uint64)
    doc = np.array([d for _, d in pairs], dtype=np.int64)
    old = minhash._BLOCK_ELEMS
    minhash._BLOCK_ELEMS = block
    try:
        got = signatures(ids, doc, len(docs), n_perm, seed)
    finally:
        minhash._BLOCK_ELEMS = old
    assert got.shape == (len(docs), n_perm)
    for i, d in enumerate(docs):
        assert got[i].tolist() == brute_signature(d, n_perm, seed)


def test_grouping_of_more_than_65536_documents():
    """Past 2**16 documents the grouping takes two 16-bit radix passes."""
    rng = np.random.default_rng(8)
    n_docs = 70_000
    doc = rng.integers(0, n_docs, 150_000)
    ids = rng.integers(0, 2**64, 150_000, dtype=np.uint64)
    got = signatures(ids, doc, n_docs, 3, seed=4)
    for d in rng.choice(n_docs, 40, replace=False).tolist():
        assert got[d].tolist() == brute_signature(ids[doc == d].tolist(), 3, 4)


_SIG_SCRIPT = """
import hashlib, numpy as np
from simdask.kernels.minhash import signatures
rng = np.random.default_rng(21)
doc = rng.integers(0, 500, 60_000)
ids = rng.integers(0, 2**64, 60_000, dtype=np.uint64)
print(hashlib.sha256(signatures(ids, doc, 500, 100, seed=77).tobytes()).hexdigest())
"""


@pytest.mark.system  # starts a subprocess (the unit tier starts none)
def test_signatures_deterministic_across_processes_and_pinned():
    """Two fresh interpreters give the same signatures; the permutation coefficients are
    pinned (a change of numpy's PCG64 stream would silently change stored signatures)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    runs = [
        subprocess.run([sys.executable, "-c", _SIG_SCRIPT], capture_output=True, text=True, env=env)
        for _ in range(2)
    ]
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    assert runs[0].stdout == runs[1].stdout
    ns: dict = {}
    exec(_SIG_SCRIPT.replace("print(", "out = ("), ns)
    assert ns["out"] == runs[0].stdout.strip()
    a, b = perm_coeffs(4, 7)
    assert [hex(int(v)) for v in a] == [
        "0x3dc3e248fc427dad",
        "0x8c4e8b17b1ca93cb",
        "0x88f5d26097f4131b",
        "0x9100102a16a739b7",
    ]
    assert [hex(int(v)) for v in b] == [
        "0x228dacb21ee7d867",
        "0xe87ce5e2c4a5868d",
        "0x968f2e155ec5cb93",
        "0xf12eb747be56c652",
    ]


def test_bad_inputs_are_config_errors():
    with pytest.raises(ConfigError, match="offsets end at 3"):
        signatures_csr(np.arange(4), np.array([0, 3]), 4)
    with pytest.raises(ConfigError, match="permutations"):
        perm_coeffs(0, 0)
    with pytest.raises(ConfigError, match="BANDSxROWS"):
        LshParams.parse("20-5")
    with pytest.raises(ConfigError, match="at most 1024"):
        LshParams(100, 11)
    with pytest.raises(ConfigError, match="BANDSxROWS"):
        IndexConfig(lsh="five")
    assert IndexConfig(lsh=" 20X5").lsh == "20x5"
    assert IndexConfig.from_dict(IndexConfig(lsh="4x3").to_dict()).lsh_params == LshParams(4, 3)
    assert IndexConfig.from_dict({"k": 5}).lsh is None  # configs stored before the LSH mode


def pair_sets(s_values, n_pairs: int, size: int, rng, bits: int = 32):
    """CSR of ``2 * n_pairs`` documents per target similarity: pairs (A, B) of ``size``
    distinct chunk IDs sharing ``m`` of them; returns (values, offsets, exact Jaccard per
    pair). IDs are distinct across the whole corpus (a bijective scramble of a counter)."""
    vals, lens, exact = [], [], []
    counter = 0
    for s in s_values:
        m = round(2 * size * s / (1 + s))
        for _ in range(n_pairs):
            ids = np.arange(counter, counter + 2 * size - m, dtype=np.uint64)
            ids = ids * np.uint64(0x9E3779B97F4A7C15 if bits == 64 else 0x9E3779B1)
            ids = ids if bits == 64 else ids % np.uint64(2**32)
            counter += 2 * size - m
            ids = ids[rng.permutation(len(ids))]
            shared, rest = ids[:m], ids[m:]
            vals += [shared, rest[: size - m], shared, rest[size - m :]]
            lens += [size, size]
            exact.append(m / (2 * size - m))
    return np.concatenate(vals), np.cumsum([0, *lens]), np.array(exact)


@pytest.mark.parametrize("bands,rows", [(20, 5), (10, 10), (50, 2), (9, 13), (4, 2)])
def test_candidate_rate_follows_the_s_curve(bands, rows):
    """For pairs of known Jaccard s, the share that shares a band key is 1-(1-s^r)^b within
    four binomial standard deviations."""
    rng = np.random.default_rng(bands * 100 + rows)
    params = LshParams(bands, rows)
    n = 1200
    vals, offs, exact = pair_sets([0.3, 0.5, 0.7, 0.8, 0.9], n, 150, rng)
    keys = band_keys(signatures_csr(vals, offs, params.perms, seed=rows), params)
    hit = (keys[0::2] == keys[1::2]).any(axis=1)
    for s in np.unique(exact):
        mine = exact == s
        p = float(s_curve(s, bands, rows))
        sd = math.sqrt(p * (1 - p) / mine.sum())
        assert abs(hit[mine].mean() - p) <= 4 * sd + 2e-3, (s, hit[mine].mean(), p)


@pytest.mark.parametrize("bits", [32, 64])
def test_estimates_unbiased_with_binomial_spread(bits):
    """Estimate - exact Jaccard: mean ~ 0 (within 4 standard errors) and, scaled by the
    binomial sd sqrt(J(1-J)/P), variance ~ 1; for 32- and 64-bit chunk IDs (the pairs span
    many work blocks)."""
    rng = np.random.default_rng(11)
    perms = 128
    vals, offs, exact = pair_sets(np.linspace(0.05, 0.95, 10), 300, 120, rng, bits)
    sig = signatures_csr(vals, offs, perms, seed=3)
    est = agreement(sig[0::2], sig[1::2])
    sd = np.sqrt(exact * (1 - exact) / perms)
    z = (est - exact) / sd
    assert abs(z.mean()) <= 4 / math.sqrt(len(z))
    assert 0.88 <= z.var() <= 1.12, z.var()
    for s in np.unique(exact):  # no bias at any similarity either
        mine = exact == s
        assert abs((est - exact)[mine].mean()) <= 4 * sd[mine][0] / math.sqrt(mine.sum())


def brute_candidates(keys: np.ndarray) -> set[tuple[int, int]]:
    buckets = defaultdict(set)
    for d in range(keys.shape[0]):
        for k in keys[d].tolist():
            buckets[k].add(d)
    return {(a, b) for docs in buckets.values() for a in docs for b in docs if a < b}


@settings(max_examples=40, deadline=None)
@given(
    n_docs=st.integers(0, 40),
    bands=st.integers(1, 6),
    key_range=st.integers(1, 50),
    seed=st.integers(0, 1000),
)
def test_candidate_pairs_equal_brute_force(n_docs, bands, key_range, seed):
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, key_range, (n_docs, bands)).astype(np.uint64)
    docs = np.repeat(np.arange(n_docs), bands)
    perm = rng.permutation(len(docs))  # any order
    a, b = candidate_pairs(keys.ravel()[perm], docs[perm])
    got = list(zip(a.tolist(), b.tolist(), strict=True))
    assert len(got) == len(set(got))
    assert set(got) == brute_candidates(keys)


@settings(max_examples=30, deadline=None)
@given(na=st.integers(0, 25), nb=st.integers(0, 25), seed=st.integers(0, 1000))
def test_cross_pairs_equal_brute_force(na, nb, seed):
    rng = np.random.default_rng(seed)
    ka = rng.integers(0, 30, (na, 3)).astype(np.uint64)
    kb = rng.integers(0, 30, (nb, 3)).astype(np.uint64)
    i, j = cross_pairs(ka, kb)
    ref = {
        (x, y) for x in range(na) for y in range(nb) if set(ka[x].tolist()) & set(kb[y].tolist())
    }
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == sorted(ref)


def test_band_keys_depend_on_band_and_every_row():
    params = LshParams(3, 4)
    sig = np.zeros((4, 12), np.uint32)
    sig[1, 5] = 1  # band 1, row 1 differs
    sig[2, 11] = 7  # band 2, last row differs
    sig[3, :4] = sig[3, 4:8] = 9  # equal values in two bands
    k = band_keys(sig, params)
    assert (k[0] == k[1]).tolist() == [True, False, True]
    assert (k[0] == k[2]).tolist() == [True, True, False]
    assert k[3, 0] != k[3, 1]  # band number is mixed in


def quad_areas(t: float, b: int, r: int) -> tuple[float, float]:
    from scipy.integrate import quad

    fp = quad(lambda s: 1 - (1 - s**r) ** b, 0, t)[0]
    fn = quad(lambda s: (1 - s**r) ** b, t, 1)[0]
    return fp, fn


@pytest.mark.parametrize("t,perms", [(0.5, 64), (0.8, 128), (0.9, 100), (0.3, 40)])
def test_tune_matches_brute_force_integration(t, perms):
    params, fp, fn = tune(t, perms)
    errs = {
        (b, r): 0.5 * sum(quad_areas(t, b, r))
        for b in range(1, perms + 1)
        for r in range(1, perms // b + 1)
    }
    best = min(errs.values())
    assert params.perms <= perms
    assert errs[(params.bands, params.rows)] <= best + 1e-5
    qfp, qfn = quad_areas(t, params.bands, params.rows)
    assert fp == pytest.approx(qfp, abs=1e-5) and fn == pytest.approx(qfn, abs=1e-5)
    # sensible: the S-curve's steep part sits around the threshold
    assert abs((1 / params.bands) ** (1 / params.rows) - t) < 0.1


def test_tune_with_bounds_takes_fewest_permutations_within_them():
    params, fp, fn = tune(0.7, 128, max_fp=0.05, max_fn=0.05)
    assert fp <= 0.05 and fn <= 0.05
    for b in range(1, 129):
        for r in range(1, 128 // b + 1):
            if b * r < params.perms:
                f, n = quad_areas(0.7, b, r)
                assert f > 0.05 - 1e-4 or n > 0.05 - 1e-4, (b, r)
    with pytest.raises(ConfigError, match="no bands x rows within 8 permutations"):
        tune(0.7, 8, max_fp=0.001, max_fn=0.001)


def test_error_areas_of_a_step_like_curve():
    fp, fn = error_areas(0.5, 1, 1)  # P(s) = s
    assert fp == pytest.approx(0.125, abs=1e-6)
    assert fn == pytest.approx(0.125, abs=1e-6)
