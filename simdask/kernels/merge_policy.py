"""Which segments of a range to merge: a log-structured merge policy (pure; DESIGN §3).

In the manner of tantivy's ``LogMergePolicy`` (and Lucene's ``TieredMergePolicy``): segments
are grouped into *levels* by the logarithm of their size (postings), and a level holding at
least ``min_segments`` segments of similar size is merged into one segment of the next level.
Each merge multiplies the size of the segment holding a posting by at least
``min_segments / 2**level_log_size``, so a posting is rewritten about ``log(N)`` times in its
life (N: the range's postings), not once per run. Segments below ``floor_postings`` all count
as one level (tiny segments are merged eagerly; this adds at most ``floor_postings / smallest
segment`` rewrites). Two further rules: a range with more than ``max_segments`` segments has
its smallest ones merged (bounds the work of a reader), and a range whose tombstoned share of
postings exceeds ``max_dead_fraction`` is merged whole (reclaims the space of deleted and
modified documents).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from simdask.errors import ConfigError, check_keys

__all__ = ["MergePolicy", "plan_merges"]


@dataclass(frozen=True)
class MergePolicy:
    """Settings of :func:`plan_merges` (see the module docstring).

    ``min_segments``: segments of one level that trigger a merge (>= 2).
    ``max_merge``: most segments merged at once (>= ``min_segments``).
    ``level_log_size``: width of a level in log2 of postings (a level spans sizes within a
    factor ``2**level_log_size`` of its largest segment). ``floor_postings``: segments smaller
    than this are on the lowest level. ``max_segments``: a range with more segments has its
    smallest merged. ``max_dead_fraction``: fraction (0..1) of a range's postings hidden by
    tombstones above which the whole range is merged. ``enabled``: False plans no merge
    unless forced.
    """

    min_segments: int = 8
    max_merge: int = 10
    level_log_size: float = 0.75
    floor_postings: int = 65_536
    max_segments: int = 32
    max_dead_fraction: float = 0.25
    enabled: bool = True

    def __post_init__(self) -> None:
        checks = (
            (self.min_segments >= 2, "min_segments must be >= 2", self.min_segments),
            (
                self.max_merge >= self.min_segments,
                "max_merge must be >= min_segments",
                self.max_merge,
            ),
            (self.level_log_size > 0, "level_log_size must be > 0", self.level_log_size),
            (self.floor_postings >= 1, "floor_postings must be >= 1", self.floor_postings),
            (self.max_segments >= 2, "max_segments must be >= 2", self.max_segments),
            (
                0.0 < self.max_dead_fraction <= 1.0,
                "max_dead_fraction must be a fraction in (0, 1]",
                self.max_dead_fraction,
            ),
        )
        for ok, what, value in checks:
            if not ok:
                raise ConfigError(f"merge policy: {what}; got {value!r}")

    def to_dict(self) -> dict[str, Any]:
        """Plain-value form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MergePolicy:
        """Inverse of :meth:`to_dict`; unknown keys are an error."""
        check_keys("MergePolicy", data, (f.name for f in fields(cls)))
        return cls(**data)


def _levels(sizes: Sequence[int], policy: MergePolicy) -> list[list[int]]:
    """Segment indices grouped into levels, largest level first (tantivy's grouping)."""
    order = sorted(range(len(sizes)), key=lambda i: (-sizes[i], i))
    levels: list[list[int]] = []
    top = math.inf
    for i in order:
        log_size = math.log2(max(sizes[i], policy.floor_postings))
        if log_size < top - policy.level_log_size:
            levels.append([])
            top = log_size
        levels[-1].append(i)
    return levels


def plan_merges(
    sizes: Sequence[int],
    dead_fraction: float = 0.0,
    policy: MergePolicy = MergePolicy(),
    force: bool = False,
) -> list[list[int]]:
    """Merges for one range whose segments hold ``sizes`` postings: a list of groups of
    segment indices (each group becomes one segment; groups are disjoint), most urgent first.

    ``dead_fraction``: fraction (0..1) of the range's postings hidden by tombstones.
    ``force``: merge the whole range into one segment if it has more than one segment or any
    dead postings. Empty when nothing is due.
    """
    n = len(sizes)
    if force or (policy.enabled and dead_fraction > policy.max_dead_fraction):
        return [list(range(n))] if n > 1 or (n == 1 and dead_fraction > 0) else []
    if not policy.enabled or n < 2:
        return []
    merges: list[list[int]] = []
    for level in reversed(_levels(sizes, policy)):  # smallest level first: cheapest merges
        level = sorted(level, key=lambda i: (sizes[i], i))
        while len(level) >= policy.min_segments:
            merges.append(sorted(level[: policy.max_merge]))
            level = level[policy.max_merge :]
    if not merges and n > policy.max_segments:
        smallest = sorted(range(n), key=lambda i: (sizes[i], i))
        merges.append(sorted(smallest[: min(policy.max_merge, n - policy.max_segments + 1)]))
    return merges
