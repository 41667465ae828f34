"""Looking chunk IDs up in a large sorted key array through a sparse sample of it (issue 14).

A binary search of ~6,000 chunk IDs in a range's ``chunk_keys`` (5.6 M keys, 45 MB at
100,000 documents) misses the CPU caches and the TLB at nearly every one of its last ~12
steps. With ``sample = keys[::step]`` held in memory (1/``step`` of the keys; cached with a
kept segment map, :mod:`simdask.storage.kept_maps`), each ID is first placed in its window of
``step`` keys by a search in the small sample, then found inside that window: the big array
is touched at ``log2(step)`` places of one or two pages. Pure numpy, no I/O.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SAMPLE_STEP", "find_keys_sampled", "key_sample"]

#: keys per sample entry (a power of two): a window of 1 KiB of uint64 keys
SAMPLE_STEP = 128


def key_sample(keys: np.ndarray, step: int = SAMPLE_STEP) -> np.ndarray:
    """Every ``step``-th key of the sorted ``keys`` (a copy in memory: ``keys[::step]``)."""
    return np.array(keys[::step])


def find_keys_sampled(
    keys: np.ndarray, sample: np.ndarray, step: int, ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Which of ``ids`` are in the sorted ``keys``, and where, as
    :func:`~simdask.kernels.postings.find_keys` gives them: ``(ids present, their positions
    in keys as int64)``. ``sample`` must be :func:`key_sample` ``(keys, step)``, ``step`` a
    power of two."""
    if step & (step - 1) or step < 1:
        raise ValueError(f"step must be a power of two, found {step}")
    n = len(keys)
    ids = np.asarray(ids)
    # window j holds keys[j*step : (j+1)*step]: sample[j] <= id < sample[j+1]
    j = np.searchsorted(sample, ids, side="right").astype(np.int64) - 1
    inside = j >= 0  # an ID below keys[0] is absent
    ids, j = ids[inside], j[inside]
    # q: the last position < id, found by binary lifting from just before the window
    q = j * step - 1
    h = step // 2
    while h >= 1:
        at = q + h
        ok = at < n
        np.minimum(at, n - 1, out=at)
        ok &= keys[at] < ids
        q += ok * h
        h //= 2
    pos = q + 1  # first position >= id, or the window's end when every key is below it
    pos = np.minimum(pos, n - 1) if n else pos
    hit = keys[pos] == ids if n else np.zeros(len(ids), bool)
    return ids[hit], pos[hit].astype(np.int64)
