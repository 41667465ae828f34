"""A passage of text A taken from text B."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simdask.errors import ConfigError

__all__ = ["KINDS", "Passage"]

#: the kinds of passage: copied word for word, reworded, or condensed from a longer source
KINDS = ("verbatim", "paraphrased", "summarised")


@dataclass(frozen=True)
class Passage:
    """``[a_start, a_end)`` of text A taken from ``[b_start, b_end)`` of text B (code-point
    offsets into the texts as given); ``kind`` is one of :data:`KINDS`; ``score`` (0..1) is
    the cosine similarity of the two spans' term vectors."""

    a_start: int
    a_end: int
    b_start: int
    b_end: int
    kind: str
    score: float

    def __post_init__(self) -> None:
        if not (0 <= self.a_start <= self.a_end and 0 <= self.b_start <= self.b_end):
            raise ConfigError(
                "a passage needs 0 <= start <= end on both sides, got "
                f"A [{self.a_start}, {self.a_end}), B [{self.b_start}, {self.b_end})"
            )
        if self.kind not in KINDS:
            raise ConfigError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if not 0.0 <= self.score <= 1.0:
            raise ConfigError(f"score must be in [0, 1], got {self.score}")

    def to_dict(self) -> dict[str, Any]:
        """The passage as a JSON-ready dict (the six fields)."""
        return {
            "a_start": self.a_start,
            "a_end": self.a_end,
            "b_start": self.b_start,
            "b_end": self.b_end,
            "kind": self.kind,
            "score": self.score,
        }
