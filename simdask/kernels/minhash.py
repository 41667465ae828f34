"""MinHash signatures of chunk-ID sets, vectorised over whole batches (pure numpy).

Permutation ``p`` is the strongly universal multiply-add-shift hash of Dietzfelbinger:
``h_p(x) = ((a_p * x + b_p) mod 2**64) >> 32`` for a chunk ID ``x`` (up to 64 bits), with
``a_p`` odd and ``b_p`` drawn from a seeded PCG64 stream (the same coefficients on every
platform). A document's signature holds, per permutation, ``h_p`` of its chunk whose 64-bit
value ``a_p*x + b_p`` is least (ties between distinct chunks are impossible: the map is a
bijection of 64-bit words).

Work is done in blocks of columns of the ``(permutations x chunks)`` matrix, each block a
single ``multiply``/``add`` over the block and one ``np.minimum.reduceat`` over the documents
in it; no Python loop runs per document or per permutation.
"""

from __future__ import annotations

import numpy as np

from simdask.errors import ConfigError

__all__ = [
    "EMPTY",
    "MAX_PERMS",
    "agreement",
    "perm_coeffs",
    "signatures",
    "signatures_csr",
]

#: signature value of a document without chunks (never produced by a chunk: see below)
EMPTY = np.uint32(0xFFFFFFFF)
#: most permutations a signature may have
MAX_PERMS = 1024
#: elements (permutations x chunks) of one work block, 8 MiB of uint64: measured fastest on
#: the 2-core EPYC VM (docs/lsh.md; blocks of 2**16 elements were 3x slower)
_BLOCK_ELEMS = 1 << 20


def perm_coeffs(n_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``(a, b)`` uint64 coefficients of ``n_perm`` permutations for ``seed`` (a odd)."""
    if not (isinstance(n_perm, int) and 1 <= n_perm <= MAX_PERMS):
        raise ConfigError(f"permutations must be an integer in 1..{MAX_PERMS}, got {n_perm!r}")
    rng = np.random.Generator(np.random.PCG64([int(seed) & (2**64 - 1), 0x5EED_4D48]))
    a = rng.integers(0, 2**64, n_perm, dtype=np.uint64, endpoint=False) | np.uint64(1)
    b = rng.integers(0, 2**64, n_perm, dtype=np.uint64, endpoint=False)
    return a, b


def signatures_csr(
    values: np.ndarray, offsets: np.ndarray, n_perm: int, seed: int = 0
) -> np.ndarray:
    """MinHash signatures of documents given as CSR: document ``d`` holds the chunk IDs
    ``values[offsets[d]:offsets[d+1]]`` (integers below 2**64; duplicates allowed).

    Returns ``(n_docs, n_perm)`` uint32; a document without chunks gets :data:`EMPTY` in every
    position. A chunk's value is ``(a*x + b) >> 32`` of the least ``a*x + b``; it can equal
    ``EMPTY`` only with probability 2**-32 per position, which is then ``EMPTY - 1``.

    Work runs over blocks of ``_BLOCK_ELEMS // n_perm`` chunks laid out as a
    ``(permutations, chunks)`` matrix, so that the per-document minimum is a
    ``np.minimum.reduceat`` along contiguous rows; a document straddling two blocks is
    combined with ``np.minimum``.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    n_docs = len(offsets) - 1
    if n_docs < 0 or (n_docs and (offsets[0] != 0 or np.any(np.diff(offsets) < 0))):
        raise ConfigError("offsets must start at 0 and never decrease (CSR of documents)")
    if n_docs and offsets[-1] != len(values):
        raise ConfigError(f"offsets end at {offsets[-1]}, expected len(values) = {len(values)}")
    a, b = perm_coeffs(n_perm, seed)
    if n_docs == 0 or len(values) == 0:
        return np.full((n_docs, n_perm), EMPTY, dtype=np.uint32)
    x = np.asarray(values).astype(np.uint64, copy=False)
    out = np.full((n_perm, n_docs), EMPTY, dtype=np.uint32)  # transposed: see the loop
    rows = max(1, _BLOCK_ELEMS // n_perm)
    buf = np.empty((n_perm, min(rows, len(x))), dtype=np.uint64)
    a_col, b_col, shift = a[:, None], b[:, None], np.uint64(32)
    starts = offsets[:-1]
    nonempty = np.flatnonzero(offsets[1:] > starts)
    ne_starts = starts[nonempty]
    for lo in range(0, len(x), rows):
        hi = min(lo + rows, len(x))
        t = buf[:, : hi - lo]
        np.multiply(a_col, x[None, lo:hi], out=t)
        t += b_col
        # non-empty documents whose chunks meet [lo, hi): the last starting at or before lo on
        i0 = max(int(np.searchsorted(ne_starts, lo, side="right")) - 1, 0)
        i1 = int(np.searchsorted(ne_starts, hi, side="left"))
        docs = nonempty[i0:i1]
        mins = np.minimum.reduceat(t, np.maximum(ne_starts[i0:i1], lo) - lo, axis=1)
        mins >>= shift  # the top 32 bits of the least value are the least top 32 bits
        m32 = mins.astype(np.uint32)
        np.minimum(out[:, docs], m32, out=m32)  # the first and last may straddle blocks
        out[:, docs] = m32
    sig = np.ascontiguousarray(out.T)
    sig[sig == EMPTY] = EMPTY - np.uint32(1)
    sig[offsets[1:] == starts] = EMPTY
    return sig


def _doc_order(doc: np.ndarray, n_docs: int) -> np.ndarray:
    """A permutation grouping ``doc`` (ints in ``0..n_docs-1``) by value: numpy's radix sort
    of 16-bit keys, one pass below 2**16 documents, two (low half, then high half) below
    2**32; ~10x faster than an argsort of int64."""
    if n_docs <= 1 << 16:
        return np.argsort(doc.astype(np.uint16), kind="stable")
    if n_docs > 1 << 32:
        return np.argsort(doc, kind="stable")
    low = np.argsort((doc & 0xFFFF).astype(np.uint16), kind="stable")
    return low[np.argsort((doc[low] >> 16).astype(np.uint16), kind="stable")]


def signatures(
    chunk_ids: np.ndarray, doc: np.ndarray, n_docs: int, n_perm: int, seed: int = 0
) -> np.ndarray:
    """:func:`signatures_csr` of ``(chunk ID, doc)`` pairs in any order, e.g. those of
    :func:`simdask.kernels.hashing.chunk_batch` (sorted by chunk); ``doc`` in ``0..n_docs-1``."""
    doc = np.asarray(doc, dtype=np.int64)
    if len(doc) and (doc.min() < 0 or doc.max() >= n_docs):
        raise ConfigError(f"doc numbers must be in 0..{n_docs - 1}")
    ids = np.asarray(chunk_ids)
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(doc, minlength=n_docs), out=offsets[1:])
    return signatures_csr(ids[_doc_order(doc, n_docs)], offsets, n_perm, seed)


def agreement(sig_a: np.ndarray, sig_b: np.ndarray) -> np.ndarray:
    """Estimated Jaccard similarity (fraction 0..1) of row-aligned signature pairs: the share
    of positions where they agree; 0 where either document has no chunks."""
    sig_a = np.atleast_2d(sig_a)
    sig_b = np.atleast_2d(sig_b)
    est = (sig_a == sig_b).mean(axis=1)
    est[(sig_a[:, 0] == EMPTY) | (sig_b[:, 0] == EMPTY)] = 0.0
    return est
