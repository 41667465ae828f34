"""The settings of a ``repeats`` run (frozen, validated, ``to_dict``/``from_dict``) and its
methods: apart from :mod:`simdask.engine.repeats_run`, which loads dask, so that the command
line can build its parser and check settings without it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from simdask.errors import ConfigError, check_keys

__all__ = ["METHODS", "RepeatsConfig"]

#: the methods: the location-based two-pass method and the one-pass (sort everything) baseline
METHODS = ("two-pass", "one-pass")


@dataclass(frozen=True)
class RepeatsConfig:
    """Settings of one ``repeats`` run.

    ``n``: words per n-gram (1..64). ``min_count``: least occurrences reported (>= 2).
    ``method``: one of :data:`METHODS`. ``hash_bits``: n-gram hash width, 56..64 bits.
    ``seed``: hash seed. ``batch_bytes``: text bytes per batch task. ``range_bytes``: pass-1
    record bytes aimed at per hash-range task (fixes the number of ranges, a power of two).
    """

    n: int = 8
    min_count: int = 2
    method: str = "two-pass"
    hash_bits: int = 64
    seed: int = 0
    batch_bytes: int = 16_000_000
    range_bytes: int = 64_000_000

    def __post_init__(self) -> None:
        def need(cond: bool, what: str, value: Any) -> None:
            if not cond:
                raise ConfigError(f"{what}, got {value!r}")

        for name in ("n", "min_count", "hash_bits", "seed", "batch_bytes", "range_bytes"):
            value = getattr(self, name)
            need(type(value) is int, f"{name} must be an integer", value)
        need(1 <= self.n <= 64, "n (words per n-gram) must be in 1..64", self.n)
        need(self.min_count >= 2, "min_count must be at least 2", self.min_count)
        need(self.method in METHODS, f"method must be one of {METHODS}", self.method)
        need(56 <= self.hash_bits <= 64, "hash_bits must be in 56..64", self.hash_bits)
        need(self.batch_bytes >= 1, "batch_bytes must be positive", self.batch_bytes)
        need(self.range_bytes >= 1, "range_bytes must be positive", self.range_bytes)

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RepeatsConfig:
        """Build from a dict written by :meth:`to_dict`; unknown keys are an error."""
        check_keys("RepeatsConfig", data, (f.name for f in dataclasses.fields(cls)))
        return cls(**data)
