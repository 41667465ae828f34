"""Banded LSH over MinHash signatures (pure numpy): band keys, the S-curve, tuning, pairs.

A signature of ``b * r`` values is cut into ``b`` bands of ``r`` rows; each band is hashed to a
64-bit *band key* that also mixes in the band's number, so the keys of all bands can live in one
sorted table. Two documents are a candidate pair when they share a band key; a pair of Jaccard
similarity ``s`` is one with probability ``1 - (1 - s**r)**b`` (the S-curve).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from simdask.errors import ConfigError
from simdask.kernels.minhash import EMPTY, MAX_PERMS, signatures

__all__ = [
    "LshParams",
    "band_keys",
    "candidate_pairs",
    "cross_pairs",
    "error_areas",
    "s_curve",
    "tune",
]

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)


@dataclass(frozen=True)
class LshParams:
    """``bands`` bands of ``rows`` rows: signatures of ``bands * rows`` permutations."""

    bands: int
    rows: int

    def __post_init__(self) -> None:
        for name in ("bands", "rows"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ConfigError(f"LSH {name} must be a positive integer, got {v!r}")
        if self.bands * self.rows > MAX_PERMS:
            raise ConfigError(
                f"LSH bands x rows must be at most {MAX_PERMS} permutations, "
                f"got {self.bands}x{self.rows} = {self.bands * self.rows}"
            )

    @property
    def perms(self) -> int:
        """Permutations (signature length)."""
        return self.bands * self.rows

    def __str__(self) -> str:
        return f"{self.bands}x{self.rows}"

    @classmethod
    def parse(cls, text: str) -> LshParams:
        """``"BANDSxROWS"``, e.g. ``"20x5"`` (20 bands of 5 rows)."""
        m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", str(text))
        if not m:
            raise ConfigError(f"LSH setting must be BANDSxROWS such as 20x5, got {text!r}")
        return cls(int(m.group(1)), int(m.group(2)))


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser, in place on a uint64 array."""
    h ^= h >> np.uint64(30)
    h *= _M2
    h ^= h >> np.uint64(27)
    h *= _M3
    h ^= h >> np.uint64(31)
    return h


def band_keys(sigs: np.ndarray, params: LshParams) -> np.ndarray:
    """``(n_docs, bands)`` uint64 band keys of ``(n_docs, bands*rows)`` uint32 signatures.

    Band ``j``'s key hashes ``j`` and its ``rows`` values (equal values give equal keys; unequal
    ones collide with probability about 2**-64). The loop runs over the ``rows`` of a band, each
    step vectorised over all documents and bands.
    """
    sigs = np.asarray(sigs)
    if sigs.ndim != 2 or sigs.shape[1] != params.perms:
        raise ConfigError(
            f"signatures must be (documents, {params.perms}) for {params}, got {sigs.shape}"
        )
    v = sigs.reshape(len(sigs), params.bands, params.rows).astype(np.uint64)
    h = np.broadcast_to(
        (np.arange(params.bands, dtype=np.uint64) + np.uint64(1)) * _M1, v.shape[:2]
    ).copy()
    for j in range(params.rows):
        h ^= v[:, :, j]
        h *= _M1
        _mix(h)
    return h


def s_curve(s: float | np.ndarray, bands: int, rows: int) -> np.ndarray:
    """Probability (fraction) that a pair of Jaccard similarity ``s`` (fraction) becomes a
    candidate: ``1 - (1 - s**rows)**bands``."""
    s = np.asarray(s, dtype=np.float64)
    return 1.0 - (1.0 - s**rows) ** bands


def error_areas(threshold: float, bands: int, rows: int, grid: int = 2001) -> tuple[float, float]:
    """``(false positive, false negative)`` areas of the S-curve: the integral of the candidate
    probability over ``s`` in ``[0, threshold)`` and of its complement over ``[threshold, 1]``
    (trapezoid rule on ``grid`` points per side)."""
    lo = np.linspace(0.0, threshold, grid)
    hi = np.linspace(threshold, 1.0, grid)
    fp = float(np.trapezoid(s_curve(lo, bands, rows), lo))
    fn = float(np.trapezoid(1.0 - s_curve(hi, bands, rows), hi))
    return fp, fn


def tune(
    threshold: float,
    perms: int = 128,
    max_fp: float | None = None,
    max_fn: float | None = None,
    fp_weight: float = 0.5,
) -> tuple[LshParams, float, float]:
    """``(params, fp, fn)``: bands and rows with ``bands*rows <= perms`` for a Jaccard
    ``threshold`` (fraction, 0 < t < 1). Without bounds, the pair minimising
    ``fp_weight*fp + (1-fp_weight)*fn`` (the :func:`error_areas`); with ``max_fp`` and/or
    ``max_fn``, the one using fewest permutations among those within both bounds (ties: least
    weighted error). Raises :class:`ConfigError` when none is within the bounds."""
    if not 0.0 < threshold < 1.0:
        raise ConfigError(f"threshold must be a Jaccard fraction in (0, 1), got {threshold!r}")
    if not (isinstance(perms, int) and 1 <= perms <= MAX_PERMS):
        raise ConfigError(f"perms must be an integer in 1..{MAX_PERMS}, got {perms!r}")
    if not 0.0 <= fp_weight <= 1.0:
        raise ConfigError(f"fp_weight must be a fraction in [0, 1], got {fp_weight!r}")
    best: tuple[float, int, int, int, float, float] | None = None
    best_any: tuple[float, int, int, int, float, float] | None = None
    for b in range(1, perms + 1):
        for r in range(1, perms // b + 1):
            fp, fn = error_areas(threshold, b, r, grid=401)
            err = fp_weight * fp + (1 - fp_weight) * fn
            if best_any is None or err < best_any[0]:
                best_any = (err, b * r, b, r, fp, fn)
            ok = (max_fp is None or fp <= max_fp) and (max_fn is None or fn <= max_fn)
            bounded = ok and (max_fp is not None or max_fn is not None)
            # fewest permutations first, then least weighted error
            if bounded and (best is None or (b * r, err) < (best[1], best[0])):
                best = (err, b * r, b, r, fp, fn)
    if best_any is None:  # unreachable: perms >= 1 tries 1 x 1
        raise ConfigError(f"expected a bands x rows within {perms} permutations, found none")
    if max_fp is None and max_fn is None:
        _, _, b, r, _, _ = best_any
    elif best is None:
        _, _, b, r, fp, fn = best_any
        raise ConfigError(
            f"no bands x rows within {perms} permutations has false positive area <= {max_fp} "
            f"and false negative area <= {max_fn} at threshold {threshold}; the best overall, "
            f"{b}x{r}, has {fp:.4f} and {fn:.4f} (allow more --perms or larger bounds)"
        )
    else:
        _, _, b, r, _, _ = best
    fp, fn = error_areas(threshold, b, r)
    return LshParams(b, r), fp, fn


def _run_pairs(sorted_keys: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """Packed ``lo << 32 | hi`` doc pairs of every run of equal keys (unsorted, may repeat)."""
    n = len(sorted_keys)
    if n < 2:
        return np.zeros(0, np.uint64)
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=new[1:])
    run_start = np.flatnonzero(new)
    run_end = np.append(run_start[1:], n)
    end_of = np.repeat(run_end, run_end - run_start)
    later = end_of - 1 - np.arange(n)  # partners after each position in its run
    total = int(later.sum())
    if total == 0:
        return np.zeros(0, np.uint64)
    first = np.repeat(np.arange(n), later)
    base = np.repeat(np.cumsum(later) - later, later)
    second = first + 1 + (np.arange(total) - base)
    a = docs[first].astype(np.uint64)
    b = docs[second].astype(np.uint64)
    return (np.minimum(a, b) << np.uint64(32)) | np.maximum(a, b)


def candidate_pairs(keys: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unordered document pairs ``(a, b)``, ``a < b``, each once, that share a band key.

    ``keys``/``docs``: one entry per (document, band) key, in any order (``docs`` < 2**32).
    Pairs of a document with itself are left out. Memory grows with the number of pairs
    within each run of equal keys (``L*(L-1)/2`` for ``L`` documents sharing a key)."""
    keys = np.asarray(keys, dtype=np.uint64).ravel()
    docs = np.asarray(docs).ravel()
    order = np.lexsort((docs, keys))
    packed = _run_pairs(keys[order], docs[order])
    packed = np.unique(packed)
    a = (packed >> np.uint64(32)).astype(np.int64)
    b = (packed & np.uint64(0xFFFFFFFF)).astype(np.int64)
    keep = a != b
    return a[keep], b[keep]


def cross_pairs(keys_a: np.ndarray, keys_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(i, j)`` of row ``i`` of ``keys_a`` and row ``j`` of ``keys_b`` (both
    ``(n, bands)`` band keys) sharing a band key, each pair once, sorted."""
    na, nb = len(keys_a), len(keys_b)
    ka = np.asarray(keys_a, np.uint64).ravel()
    kb = np.asarray(keys_b, np.uint64).ravel()
    da = np.repeat(np.arange(na), keys_a.shape[1] if na else 0)
    db = np.repeat(np.arange(nb), keys_b.shape[1] if nb else 0)
    order = np.argsort(kb, kind="stable")
    kb, db = kb[order], db[order]
    lo = np.searchsorted(kb, ka, side="left")
    hi = np.searchsorted(kb, ka, side="right")
    cnt = hi - lo
    total = int(cnt.sum())
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    i = np.repeat(da, cnt)
    pos = np.repeat(lo - (np.cumsum(cnt) - cnt), cnt) + np.arange(total)
    j = db[pos]
    packed = np.unique((i.astype(np.uint64) << np.uint64(32)) | j.astype(np.uint64))
    return (packed >> np.uint64(32)).astype(np.int64), (packed & np.uint64(0xFFFFFFFF)).astype(
        np.int64
    )


def is_empty(sigs: np.ndarray) -> np.ndarray:
    """Rows of documents without chunks (no signature, never a candidate)."""
    return np.asarray(sigs)[:, 0] == EMPTY


def batch_lsh(
    chunk_ids: np.ndarray, doc: np.ndarray, n_docs: int, params: LshParams, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """``(signatures, band keys)`` of a batch's ``(chunk ID, doc)`` pairs: ``(n_docs, perms)``
    uint32 and ``(n_docs, bands)`` uint64 (rows of documents without chunks are meaningless;
    :func:`is_empty` finds them)."""

    sigs = signatures(chunk_ids, doc, n_docs, params.perms, seed)
    return sigs, band_keys(sigs, params)
