"""PAN's measures (Potthast et al., COLING 2010) on small cases computed by hand."""

from __future__ import annotations

from math import log2

import pytest

from simdask.alignment.pan_measures import (
    Annotation,
    granularity,
    macro_precision,
    macro_recall,
    plagdet,
    scores,
)

pytestmark = pytest.mark.unit

P1, P2 = ("susp-1", "src-1"), ("susp-2", "src-2")


def test_partial_detection():
    # case: A [0, 100) and B [0, 100): 200 characters
    # detection: A [50, 150) and B [0, 100): 200 characters
    # recall: A 50 + B 100 of the case's 200 = 0.75
    # precision: A 50 + B 100 of the detection's 200 = 0.75
    # granularity 1; plagdet = F1 0.75 / log2(2) = 0.75
    cases = [Annotation(P1, 0, 100, 0, 100)]
    dets = [Annotation(P1, 50, 150, 0, 100)]
    s = scores(cases, dets)
    assert s.recall == pytest.approx(0.75)
    assert s.precision == pytest.approx(0.75)
    assert s.granularity == 1.0
    assert s.plagdet == pytest.approx(0.75)


def test_split_detection_granularity():
    # one case A [0, 100) B [0, 100); two detections A [0, 40) B [0, 40), A [60, 100) B [60, 100)
    # recall (40 + 40 + 40 + 40) / 200 = 0.8; precision: both wholly inside = 1
    # granularity 2 detections / 1 detected case = 2
    # F1 = 2 * 0.8 * 1 / 1.8 = 0.888..., plagdet = 0.888... / log2(3) = 0.56083
    cases = [Annotation(P1, 0, 100, 0, 100)]
    dets = [Annotation(P1, 0, 40, 0, 40), Annotation(P1, 60, 100, 60, 100)]
    s = scores(cases, dets)
    assert s.recall == pytest.approx(0.8)
    assert s.precision == pytest.approx(1.0)
    assert s.granularity == 2.0
    assert s.plagdet == pytest.approx(0.56083, abs=1e-5)


def test_overlapping_detections_are_counted_once():
    # detections A [0, 60) B [0, 100) and A [40, 100) B [0, 100) on case A [0, 100) B [0, 100)
    # recall: union A [0, 100) + B [0, 100) = 200 / 200 = 1 (the overlap [40, 60) counts once)
    # precision 1 and 1; granularity 2; plagdet = 1 / log2(3) = 0.63093
    cases = [Annotation(P1, 0, 100, 0, 100)]
    dets = [Annotation(P1, 0, 60, 0, 100), Annotation(P1, 40, 100, 0, 100)]
    s = scores(cases, dets)
    assert (s.recall, s.precision, s.granularity) == (1.0, 1.0, 2.0)
    assert s.plagdet == pytest.approx(1 / log2(3))


def test_a_detection_must_overlap_the_case_in_both_documents():
    # overlaps the case in A but not in B: it detects nothing
    # recall 0, precision 0 (none of its characters lie in a case it detects), granularity 1
    cases = [Annotation(P1, 0, 100, 0, 100)]
    dets = [Annotation(P1, 0, 100, 200, 300)]
    assert macro_recall(cases, dets) == 0.0
    assert macro_precision(cases, dets) == 0.0
    assert granularity(cases, dets) == 1.0
    assert scores(cases, dets).plagdet == 0.0


def test_pairs_are_kept_apart_and_false_positives_count():
    # case 1 in pair 1 found exactly; case 2 in pair 1 missed; a detection in pair 2 (no case)
    # recall (1 + 0) / 2 = 0.5; precision (1 + 0) / 2 = 0.5; granularity 1; plagdet 0.5
    cases = [Annotation(P1, 0, 100, 0, 50), Annotation(P1, 500, 600, 300, 400)]
    dets = [Annotation(P1, 0, 100, 0, 50), Annotation(P2, 500, 600, 300, 400)]
    s = scores(cases, dets)
    assert (s.recall, s.precision, s.granularity) == (0.5, 0.5, 1.0)
    assert s.plagdet == pytest.approx(0.5)


def test_precision_is_macro_averaged_over_detections():
    # case A [0, 100) B [0, 100); detection 1 A [0, 100) B [0, 100) (precision 1), detection 2
    # A [90, 190) B [90, 190) (precision (10 + 10) / 200 = 0.1): precision (1 + 0.1) / 2 = 0.55
    # recall: union covers the case = 1; granularity 2
    cases = [Annotation(P1, 0, 100, 0, 100)]
    dets = [Annotation(P1, 0, 100, 0, 100), Annotation(P1, 90, 190, 90, 190)]
    assert macro_precision(cases, dets) == pytest.approx(0.55)
    assert macro_recall(cases, dets) == 1.0
    assert granularity(cases, dets) == 2.0


def test_empty_sets():
    # neither cases nor detections: recall and precision 1; only one of them: 0
    assert scores([], []) == (1.0, 1.0, 1.0, 1.0)
    case = [Annotation(P1, 0, 10, 0, 10)]
    assert macro_recall(case, []) == 0.0 and macro_precision(case, []) == 0.0
    assert macro_recall([], case) == 0.0
    assert plagdet(0.0, 0.0, 1.0) == 0.0


def test_plagdet_formula():
    # F1 of 0.5 and 1.0 is 2/3; granularity 1.5: divided by log2(2.5) = 1.32193 -> 0.50431
    assert plagdet(0.5, 1.0, 1.5) == pytest.approx(0.50431, abs=1e-5)
