"""How many of a document's ranked candidate partners to align (issue 29): a rule that adapts
to the document instead of a fixed top k. A document copied from one source has one strong
candidate and a tail of topical neighbours; a document copied from twenty has twenty strong
ones. The rule keeps the candidates whose score is at least ``floor`` times the document's
best score (and at least ``min_score``), at least ``least`` and at most ``cap`` of them.

Pure numpy: no I/O. Scores are the stored retrieval scores (:mod:`simdask.kernels.candidate_scores`:
summed integer weights of shared content n-grams), best first.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from simdask.errors import ConfigError, check_keys

__all__ = ["PartnerRule", "chosen_count"]


@dataclass(frozen=True)
class PartnerRule:
    """Which ranked candidates of a document are aligned: those scoring at least ``floor``
    (0..1) times its best candidate's score and at least ``min_score`` (score units), but
    never fewer than ``least`` (the best ones, whatever their score) nor more than ``cap``.
    ``PartnerRule(floor=0, cap=k, least=k)`` is a fixed top ``k``."""

    floor: float = 0.1
    cap: int = 30
    least: int = 1
    min_score: int = 0

    def __post_init__(self) -> None:
        f = self.floor
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0.0 <= f <= 1.0:
            raise ConfigError(f"expected floor a number in 0..1, found {f!r}")
        for name, lo, hi in (
            ("cap", 1, 10_000),
            ("least", 0, 10_000),
            ("min_score", 0, 1 << 62),
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
                raise ConfigError(f"expected {name} an integer in {lo}..{hi}, found {value!r}")
        if self.least > self.cap:
            raise ConfigError(f"expected least <= cap ({self.cap}), found least {self.least}")

    def to_dict(self) -> dict[str, Any]:
        """The rule as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PartnerRule:
        """The rule of :meth:`to_dict`; unknown keys raise :class:`ConfigError`."""
        check_keys("PartnerRule", data, [f.name for f in dataclasses.fields(cls)])
        return cls(**data)


def chosen_count(scores: np.ndarray, rule: PartnerRule) -> int:
    """How many of the first candidates of a document ``rule`` aligns: ``scores`` are its
    candidates' scores, best first (non-increasing; any numeric dtype). The chosen ones
    are always a prefix of the ranking."""
    s = np.asarray(scores, dtype=np.float64)
    if len(s) == 0:
        return 0
    if len(s) > 1 and bool(np.any(s[1:] > s[:-1])):
        raise ConfigError("expected candidate scores best first (non-increasing), found a rise")
    bar = max(rule.floor * float(s[0]), float(rule.min_score))
    passing = int(np.searchsorted(-s, -bar, side="right"))  # scores >= bar: a prefix
    return min(len(s), rule.cap, max(passing, rule.least))
