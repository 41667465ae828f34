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

__all__ = [
    "SAMPLE_STEP",
    "coalesce_ranges",
    "find_keys_sampled",
    "key_sample",
    "sample_windows",
    "window_positions",
]

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


def sample_windows(
    sample: np.ndarray, step: int, n: int, ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where the sorted ``ids`` can be in a sorted key array of ``n`` keys whose every
    ``step``-th key is ``sample``: ``(ids not below keys[0], window starts, window lengths)``,
    one window per distinct window (``keys[w * step : (w + 1) * step]``), ascending. The
    windows' keys concatenated are sorted, so :func:`~simdask.kernels.postings.find_keys`
    on them finds every ID that the whole array holds (:func:`window_positions` maps the
    positions back)."""
    ids = np.asarray(ids)
    j = np.searchsorted(sample, ids, side="right").astype(np.int64) - 1
    inside = j >= 0
    w = np.unique(j[inside])
    starts = w * step
    return ids[inside], starts, np.minimum(step, n - starts)


def window_positions(starts: np.ndarray, lengths: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Positions in the whole key array of the positions ``at`` in the concatenated windows
    (``starts``, ``lengths`` of :func:`sample_windows`), int64."""
    first = np.zeros(len(lengths), np.int64)
    np.cumsum(lengths[:-1], out=first[1:])
    r = np.searchsorted(first, at, side="right") - 1
    return (starts[r] + (at - first[r])).astype(np.int64)


def coalesce_ranges(
    starts: np.ndarray, lengths: np.ndarray, max_gap: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Element ranges ``[starts[i], starts[i] + lengths[i])`` (``starts`` ascending) grouped
    into reads: ``(read starts, read ends, first)``, int64, where a range joins the read
    before it when it begins at most ``max_gap`` elements after that read's end, and
    ``first[i]`` is where range ``i`` begins in the reads' elements concatenated. Fewer,
    slightly larger reads: a gap of a few KiB costs less than a system call."""
    starts = np.asarray(starts, np.int64)
    ends = starts + np.asarray(lengths, np.int64)
    if not len(starts):
        z = np.zeros(0, np.int64)
        return z, z, z
    reach = np.maximum.accumulate(ends)
    new = np.ones(len(starts), bool)
    new[1:] = starts[1:] > reach[:-1] + max_gap
    heads = np.flatnonzero(new)
    run = np.cumsum(new) - 1
    r_start = starts[heads]
    r_end = np.maximum.reduceat(ends, heads)
    base = np.zeros(len(heads), np.int64)
    np.cumsum((r_end - r_start)[:-1], out=base[1:])
    return r_start, r_end, base[run] + (starts - r_start[run])
