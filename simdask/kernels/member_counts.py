"""Counting the recomputed documents' pair keys (incremental runs; DESIGN §3, "Incremental
cost"). Pure numpy, no I/O.

The member pair keys of a range (:func:`~simdask.kernels.similarity.member_pair_keys`,
:func:`~simdask.kernels.heavy.member_keys`) are emitted posting list by posting list: for each
posting of a member, ``position * n_docs + o`` for every document ``o`` of that chunk's list,
so a range's keys are long ascending runs (a list's doc IDs ascend; a run's new documents,
appended to a list by :func:`~simdask.storage.segments.add_delta`, have the highest IDs).
A stable sort (timsort for 32-bit integers) merges such runs instead of sorting from scratch:
about 2.5x faster than the default quicksort on the 1.6 M keys of 100 documents added to a
100,000-document index, and the key count is what grows with the base.
"""

from __future__ import annotations

import numpy as np

from simdask.kernels.arrays import run_lengths

__all__ = ["count_member_keys", "count_runs"]


def count_runs(parts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys of all ``parts`` (sorted) and how often each occurs (uint32); the same
    as :func:`~simdask.kernels.similarity.count_keys`, sorted with a stable sort that uses the
    parts' ascending runs."""
    keys = np.concatenate(parts) if parts else np.zeros(0, np.uint32)
    keys.sort(kind="stable")
    return run_lengths(keys)


def count_member_keys(parts: list, mode: str) -> tuple[np.ndarray, np.ndarray]:
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
