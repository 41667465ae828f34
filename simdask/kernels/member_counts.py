"""Counting the recomputed documents' pair keys (incremental runs; DESIGN §3, "Incremental
cost"). Pure numpy, no I/O.

The member pair keys of a range (:func:`~simdask.kernels.similarity.member_pair_keys`,
:func:`~simdask.kernels.heavy.member_keys`) are ``i * n_docs + o`` for every posting of the
``i``-th member and every document ``o`` of that chunk's list, grouped by ``i`` (one ascending
run per posting list within a member). The rows task counts them with
:func:`count_member_candidates`: the keys of a member (or a few) span at most ``n_docs``
possible keys, so one ``bincount`` over that range counts them without a sort, and only the
pairs that can give a row (counted twice, or involving a document a single chunk can match)
are returned. :func:`count_member_keys` (all distinct keys, by a stable sort that merges the
ascending runs) is its reference and its fallback for keys not grouped by member.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simdask.kernels.arrays import run_lengths

__all__ = ["count_member_candidates", "count_member_keys", "count_runs"]


def count_runs(parts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys of all ``parts`` (sorted) and how often each occurs (uint32); the same
    as :func:`~simdask.kernels.similarity.count_keys`, sorted with a stable sort that uses the
    parts' ascending runs."""
    keys = np.concatenate(parts) if parts else np.zeros(0, np.uint32)
    keys.sort(kind="stable")
    return run_lengths(keys)


def count_member_keys(
    parts: Sequence[np.ndarray | tuple[np.ndarray, np.ndarray]], mode: str
) -> tuple[np.ndarray, np.ndarray]:
    """Count per-range member keys; ``parts`` holds ``(light keys, heavy keys)`` tuples (or
    plain light keys). Returns sorted distinct keys and their count over all chunks (uint32):
    in ``informative`` mode only keys that occur among the light keys, in ``exact`` mode all.
    The ``exact`` mode sorts the keys once."""
    light = [p[0] if isinstance(p, tuple) else p for p in parts]
    heavy = [p[1] for p in parts if isinstance(p, tuple) and len(p[1])]
    if not heavy:
        return count_runs(light)
    keys, counts = count_runs(light + heavy)
    if mode == "exact":
        return keys, counts
    lk, _ = count_runs(light)
    keep = np.isin(keys, lk, assume_unique=True)
    return keys[keep], counts[keep]


#: possible keys (rows x ``n_docs``) one dense count covers: 2**17 int64 counters, 1 MiB,
#: a size the allocator reuses (no fresh pages per batch) and the caches hold
DENSE_SLOTS = 1 << 17
#: keys per possible key from which a batch of rows is counted densely (else sorted)
DENSE_MIN = 1 / 64


def count_member_candidates(
    parts: Sequence[np.ndarray | tuple[np.ndarray, np.ndarray]],
    n_docs: int,
    n_rows: int,
    mode: str,
    single_rows: np.ndarray | None = None,
    single_docs: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The candidate pairs of :func:`count_member_keys`, counted densely where the keys are.

    ``parts`` as :func:`count_member_keys` takes them, keys ``i * n_docs + o`` with ``i <
    n_rows``, each array grouped by ascending ``i`` (as
    :func:`~simdask.kernels.similarity.member_pair_keys` emits them; any other order is
    detected and counted by sorting). Returns, sorted, the keys :func:`count_member_keys`
    returns whose count is at least 2, or 1 with ``single_rows[i]`` or ``single_docs[o]``
    (bool arrays; None: all False) — the pairs
    :func:`~simdask.kernels.similarity.candidate_mask` keeps — and their counts (uint32).

    Rows are taken in batches of about :data:`DENSE_SLOTS` possible keys: one ``bincount``
    over a batch's key range and one pass over its counters (no sort), or a sort when it
    holds fewer than :data:`DENSE_MIN` keys per possible key. The dense cost is ~1-2 ns per
    possible key (``n_rows * n_docs``), the sort's ~20 ns per key: on 100 documents added to
    a 100,000-document index (1.4 M keys, 14 % of the possible keys) 15 ms at load 9 against
    45-50 ms for :func:`count_member_keys` and the candidate test at load 3-6.
    """
    n_docs = max(1, int(n_docs))
    light = [np.asarray(p[0] if isinstance(p, tuple) else p) for p in parts]
    heavy = [np.asarray(p[1]) for p in parts if isinstance(p, tuple) and len(p[1])]
    bounds = [_row_bounds(p, n_rows, n_docs) for p in light + heavy]
    if any(b is None for b in bounds):  # not grouped by row: count by sorting
        return _candidates(*count_member_keys(parts, mode), n_docs, single_rows, single_docs)
    known = [b for b in bounds if b is not None]
    lb, hb = known[: len(light)], known[len(light) :]
    step = max(1, DENSE_SLOTS // n_docs)
    single_ids = np.zeros(0, np.int64) if single_docs is None else np.flatnonzero(single_docs)
    keys: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    for a in range(0, n_rows, step):
        b = min(n_rows, a + step)
        lo, hi = a * n_docs, b * n_docs
        xl = _batch(light, lb, a, b)
        xh = _batch(heavy, hb, a, b)
        if not (_within(xl, lo, hi) and _within(xh, lo, hi)):  # not grouped: sort them all
            k, c = count_member_keys(parts, mode)
            return _candidates(k, c, n_docs, single_rows, single_docs)
        if len(xl) == 0 and (mode != "exact" or len(xh) == 0):
            continue
        if len(xl) + len(xh) < DENSE_MIN * (hi - lo):
            k, c = _candidates(
                *count_member_keys([(xl, xh)], mode), n_docs, single_rows, single_docs
            )
        else:
            k, c = _dense(xl, xh, lo, hi, n_docs, mode, a, single_rows, single_ids)
        keys.append(k)
        counts.append(c)
    if not keys:
        return np.zeros(0, np.uint32), np.zeros(0, np.uint32)
    return np.concatenate(keys), np.concatenate(counts)


def _row_bounds(p: np.ndarray, n_rows: int, n_docs: int) -> np.ndarray | None:
    """Where each row's keys start in ``p`` (``n_rows + 1`` positions; None if they do not
    ascend). The binary search finds the change of ``key < i * n_docs`` along ``p``, which
    changes once when ``p`` is grouped by row; as ``p`` may not be, each batch's keys are
    checked to lie in its range when it is counted (:func:`_within`)."""
    edges = np.arange(n_rows + 1, dtype=np.uint64) * np.uint64(n_docs)
    at = np.searchsorted(p, np.minimum(edges, 2**32 - 1).astype(np.uint32))
    at[0], at[-1] = 0, len(p)
    return None if np.any(np.diff(at) < 0) else at


def _within(x: np.ndarray, lo: int, hi: int) -> bool:
    """Whether every key of ``x`` lies in ``lo..hi-1``."""
    return len(x) == 0 or (int(x.min()) >= lo and int(x.max()) < hi)


def _batch(parts: list[np.ndarray], bounds: list[np.ndarray], a: int, b: int) -> np.ndarray:
    """The keys of rows ``a..b-1`` of all ``parts``."""
    xs = [p[int(bd[a]) : int(bd[b])] for p, bd in zip(parts, bounds, strict=True)]
    return np.concatenate(xs) if xs else np.zeros(0, np.uint32)


def _dense(
    xl: np.ndarray,
    xh: np.ndarray,
    lo: int,
    hi: int,
    n_docs: int,
    mode: str,
    a: int,
    single_rows: np.ndarray | None,
    single_ids: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Candidates of one batch of rows ``a..`` (keys ``lo..hi-1``) by ``bincount``: one pass
    over the counters for ``count >= 2``, the few single-chunk rows and documents apart."""
    c = np.bincount(xl - np.uint32(lo), minlength=hi - lo)
    light = None
    if len(xh):
        light = c > 0 if mode != "exact" else None
        c += np.bincount(xh - np.uint32(lo), minlength=hi - lo)
    keep = c >= 2
    rows = (hi - lo) // n_docs
    if single_rows is not None:
        for r in np.flatnonzero(single_rows[a : a + rows]).tolist():
            keep[r * n_docs : (r + 1) * n_docs] = c[r * n_docs : (r + 1) * n_docs] > 0
    if len(single_ids):
        at = (np.arange(rows, dtype=np.int64)[:, None] * n_docs + single_ids).ravel()
        keep[at] |= c[at] > 0
    if light is not None:
        keep &= light
    k = np.flatnonzero(keep)
    return (k + lo).astype(np.uint32), c[k].astype(np.uint32)


def _candidates(
    keys: np.ndarray,
    counts: np.ndarray,
    n_docs: int,
    single_rows: np.ndarray | None,
    single_docs: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """The sorted ``(keys, counts)`` at least 2, or with a single row or document."""
    keep = counts >= 2
    if single_rows is not None:
        keep |= single_rows[keys // np.uint32(n_docs)]
    if single_docs is not None:
        keep |= single_docs[keys % np.uint32(n_docs)]
    return keys[keep], counts[keep]
