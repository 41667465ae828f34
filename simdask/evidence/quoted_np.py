"""Exclusions for a pair of large texts in numpy (:mod:`.passages_np`'s path of
:func:`~simdask.evidence.passages.compare_texts`): the windows the index's exclusions leave
out, and with quotations excluded the rule that a quotation is left out of its own document
only (issue 31 item 4, docs/term.md), on 64-bit window keys instead of word tuples.

A text's windows are keyed (:func:`~.passages_np.chunk_keys`); an excluded window gets
:data:`SENTINEL`, a key no kept window has, so it matches nothing. Its kept keys are U (as
the index counts it); the keys of the windows kept only with its quotations read as its text
(the other exclusions applied) and not in U are Q. Each side counts its U chunks that the
other holds in U or Q: ``S + E`` with ``E(X, Y) = |U(X) ∩ Q(Y)|``, as the small path.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from simdask.evidence.excluded import PairExclusions, excluded_marks, inside_words, window_inside
from simdask.evidence.nesting import outermost
from simdask.evidence.passage_runs import Passage, run_passages
from simdask.evidence.passages_np import distinct, drop_common_keys, matched_runs
from simdask.evidence.trim import excluded_words
from simdask.kernels.exclusions import merge_spans
from simdask.kernels.similarity import containment

__all__ = [
    "SENTINEL",
    "LargeSide",
    "directed_large",
    "exclude_large",
    "quoted_extra",
]

#: the key of an excluded window (never shared: dropped from the distinct kept keys)
SENTINEL = np.uint64(2**64 - 1)


def exclude_large(text, keys, starts, ends, template_keys, k, excl: PairExclusions):
    """``keys`` with excluded windows set to :data:`SENTINEL`, the distinct kept keys, and
    the excluded marks (``(start, end, kind)``). ``template_keys``: the sorted keys of the
    template texts' windows; ``starts``/``ends``: the words' character spans."""
    spans = merge_spans([(s, e) for s, e, _ in excl.spans(text)])
    by_span = window_inside(inside_words(starts, ends, spans), k)[: len(keys)]
    pos = np.searchsorted(template_keys, keys)
    pos[pos == len(template_keys)] = 0
    by_template = (template_keys[pos] == keys) if len(template_keys) else np.zeros(len(keys), bool)
    keys = np.where(by_span | by_template, SENTINEL, keys)
    kept = distinct(keys)
    kept = kept[kept != SENTINEL]
    return keys, kept, excluded_marks(text, starts, ends, by_template, k, excl)


@dataclasses.dataclass(frozen=True)
class LargeSide:
    """One large text with its exclusions applied: ``raw`` (every window's key), ``keys``
    (excluded windows :data:`SENTINEL`), ``kept`` (U: its distinct kept keys), ``bounds``
    (word starts and ends, characters)."""

    text: str
    raw: np.ndarray
    keys: np.ndarray
    kept: np.ndarray
    bounds: tuple[np.ndarray, np.ndarray]


def _quoted(side: LargeSide, template_keys, k: int, excl: PairExclusions) -> np.ndarray:
    """Per window of ``side``: kept with its quotations read as its text (the other
    exclusions applied) and not as it is (bool array)."""
    opened = dataclasses.replace(excl, quotes=False)
    keys, _, _ = exclude_large(side.text, side.raw, *side.bounds, template_keys, k, opened)
    return (keys != SENTINEL) & (side.keys == SENTINEL)


def quoted_extra(
    a: LargeSide, b: LargeSide, template_keys, k: int, excl: PairExclusions
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(extra_a, extra_b, quoted_a, quoted_b)``: A's kept keys held by B only inside its
    quotations (U(A) ∩ Q(B), sorted), B's held by A only inside its quotations, and each
    side's keys with every window but those inside its quotations (Q) set to
    :data:`SENTINEL` (what a copy from inside them is matched against)."""
    q_a, q_b = _quoted(a, template_keys, k, excl), _quoted(b, template_keys, k, excl)
    quoted_a = np.where(q_a, a.raw, SENTINEL)
    quoted_b = np.where(q_b, b.raw, SENTINEL)
    only_a = np.setdiff1d(distinct(a.raw[q_a]), a.kept, assume_unique=True)
    only_b = np.setdiff1d(distinct(b.raw[q_b]), b.kept, assume_unique=True)
    extra_a = np.intersect1d(a.kept, only_b, assume_unique=True)
    extra_b = np.intersect1d(b.kept, only_a, assume_unique=True)
    return extra_a, extra_b, quoted_a, quoted_b


def directed_large(ev: Any, side_a, side_b, extra, common, sizes) -> None:
    """:func:`~.passages.compare_texts`'s rule for quotations on the large path's keys:
    each side's similarity also counts its chunks inside the other's quotations, and the
    passages of those chunks are listed (``doc_quoted_copies``, ``other_quoted_copies``).
    ``ev``: the :class:`~.passages.PairEvidence` of the chunks both sides count; ``extra``
    from :func:`quoted_extra`, ``common`` ``(ids_a, ids_b, filter)`` (the max_df
    filter or None), ``sizes`` ``(k, min_chunks)``; ``ev`` updated in place."""
    k, min_chunks = sizes
    extra_a, extra_b, quoted_a, quoted_b = extra
    ids_a, ids_b, drop = common
    if drop is not None and len(extra_a):
        extra_a = drop_common_keys(side_a.keys, ids_a, extra_a, drop.common_ids)
    if drop is not None and len(extra_b):
        extra_b = drop_common_keys(side_b.keys, ids_b, extra_b, drop.common_ids)
    both = ev.shared  # the chunks both sides count
    ev.shared = both + len(extra_a)
    ev.similarity = containment(ev.shared, ev.doc_chunks)
    ev.reverse_similarity = containment(both + len(extra_b), ev.other_chunks)
    found = []
    for one, two, keys, extra_one, marks in (
        (side_a, side_b, quoted_b, extra_a, (ev.doc_excluded, ev.other_excluded)),
        (side_b, side_a, quoted_a, extra_b, (ev.other_excluded, ev.doc_excluded)),
    ):
        # no excluded word of the copier, none but quoted ones of the quoting side
        ex_one = excluded_words(one.bounds[0], one.bounds[1], marks[0])
        kept_marks = [x for x in marks[1] if x[2] != "quote"]
        ex_two = excluded_words(two.bounds[0], two.bounds[1], kept_marks)
        i0, j0, i1, count, _ = matched_runs(one.keys, keys, extra_one, k, min_chunks)
        runs = zip(i0.tolist(), j0.tolist(), i1.tolist(), count.tolist(), strict=True)
        found.append(
            outermost(run_passages(runs, one.bounds, two.bounds, ex_one, ex_two, k, min_chunks))
        )
    ev.doc_quoted_copies = found[0]
    ev.other_quoted_copies = [
        Passage(p.other_start, p.other_end, p.doc_start, p.doc_end, p.words, p.chunks)
        for p in found[1]
    ]
