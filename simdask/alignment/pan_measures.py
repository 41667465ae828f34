"""PAN's plagiarism-detection measures (Potthast, Stein, Barrón-Cedeño and Rosso, "An
Evaluation Framework for Plagiarism Detection", COLING 2010; as used for text alignment at
PAN 2013): macro-averaged precision and recall over the characters of both documents,
granularity and plagdet.

A case (ground truth) or a detection is an :class:`Annotation`: a document pair (any
hashable key, e.g. ``("susp-1.txt", "src-9.txt")``) and a character span in each document.
A detection *detects* a case when both belong to the same pair and they overlap in A and in
B. Then, with ``s`` a case's characters in both documents and ``R_s`` the detections of it:

- recall = mean over cases of ``|s ∩ ∪R_s| / |s|``;
- precision = the same with the roles swapped (mean over detections of the share of their
  characters inside the cases they detect);
- granularity = mean over detected cases of ``|R_s|`` (1 when no case is detected);
- plagdet = F1 / log2(1 + granularity).

With neither cases nor detections recall and precision are 1; with only one of them, 0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence
from math import log2
from typing import NamedTuple

__all__ = [
    "Annotation",
    "PanScores",
    "granularity",
    "macro_precision",
    "macro_recall",
    "plagdet",
    "scores",
]


class Annotation(NamedTuple):
    """A case or detection: ``[a_start, a_end)`` of document A (suspicious) and
    ``[b_start, b_end)`` of document B (source) of the pair ``pair`` (characters)."""

    pair: Hashable
    a_start: int
    a_end: int
    b_start: int
    b_end: int


class PanScores(NamedTuple):
    """Precision, recall, granularity and plagdet of a set of detections."""

    precision: float
    recall: float
    granularity: float
    plagdet: float


def _overlaps(x: Annotation, y: Annotation) -> bool:
    return (
        x.a_start < y.a_end and y.a_start < x.a_end and x.b_start < y.b_end and y.b_start < x.b_end
    )


def _covered(start: int, end: int, spans: list[tuple[int, int]]) -> int:
    """Characters of ``[start, end)`` inside the union of ``spans``."""
    total, reach = 0, start
    for s, e in sorted(spans):
        s, e = max(s, reach), min(e, end)
        if e > s:
            total += e - s
            reach = e
    return total


def _detections_of(
    cases: Sequence[Annotation], detections: Sequence[Annotation]
) -> list[list[Annotation]]:
    by_pair: dict[Hashable, list[Annotation]] = defaultdict(list)
    for d in detections:
        by_pair[d.pair].append(d)
    return [[d for d in by_pair.get(c.pair, ()) if _overlaps(c, d)] for c in cases]


def macro_recall(cases: Sequence[Annotation], detections: Sequence[Annotation]) -> float:
    """Mean over ``cases`` of the share of their characters (A and B together) that the
    detections detecting them cover (0..1)."""
    if not cases and not detections:
        return 1.0
    if not cases or not detections:
        return 0.0
    total = 0.0
    for case, found in zip(cases, _detections_of(cases, detections), strict=True):
        size = (case.a_end - case.a_start) + (case.b_end - case.b_start)
        if not found or size <= 0:
            continue
        hit = _covered(case.a_start, case.a_end, [(d.a_start, d.a_end) for d in found])
        hit += _covered(case.b_start, case.b_end, [(d.b_start, d.b_end) for d in found])
        total += hit / size
    return total / len(cases)


def macro_precision(cases: Sequence[Annotation], detections: Sequence[Annotation]) -> float:
    """Mean over ``detections`` of the share of their characters inside the cases they
    detect (0..1): :func:`macro_recall` with the roles swapped."""
    return macro_recall(detections, cases)


def granularity(cases: Sequence[Annotation], detections: Sequence[Annotation]) -> float:
    """Mean number of detections per detected case (>= 1; 1 when none is detected)."""
    counts = [len(found) for found in _detections_of(cases, detections) if found]
    return sum(counts) / len(counts) if counts else 1.0


def plagdet(precision: float, recall: float, gran: float) -> float:
    """F1 of ``precision`` and ``recall`` divided by ``log2(1 + gran)``."""
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall) / log2(1 + gran)


def scores(cases: Sequence[Annotation], detections: Sequence[Annotation]) -> PanScores:
    """All four measures of ``detections`` against ``cases``."""
    p = macro_precision(cases, detections)
    r = macro_recall(cases, detections)
    g = granularity(cases, detections)
    return PanScores(p, r, g, plagdet(p, r, g))
