"""Evidence for one pair: exact similarity (true chunks, no hashing) and matching passages.

Passages are found from the shared chunks' positions: every window ``i`` of document A whose
sorted chunk also occurs at window ``j`` of B is a match on the diagonal ``i - j``; matches on
one diagonal whose windows are at most ``2 k`` words apart are merged into one passage (so a
copied passage with a word changed here and there stays one passage), and passages on
different diagonals are reported separately (so reordered text is still found and paired).
Offsets are character offsets into each document's text as indexed (``simdask text``).
A passage never covers excluded text (:mod:`.trim`): the shared chunks ``max_df`` leaves out
are listed as excluded text of kind ``common`` beside the index's exclusions.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from simdask.errors import ConfigError
from simdask.evidence.excluded import (
    PairExclusions,
    excluded_marks,
    excluded_windows,
)
from simdask.evidence.nesting import outermost
from simdask.evidence.passage_runs import Passage, run_passages
from simdask.evidence.passages_np import (
    LARGE_CHARS,
    chunk_keys,
    distinct,
    drop_common_keys,
    index_chunk_ids,
    matched_runs,
    word_table,
)
from simdask.evidence.quoted_np import LargeSide, directed_large, exclude_large, quoted_extra
from simdask.evidence.shown_counts import count_shown
from simdask.evidence.trim import common_marks, excluded_words
from simdask.kernels.similarity import containment
from simdask.kernels.words import WORD_PATTERN, normalize, words

__all__ = [
    "PairEvidence",
    "Passage",
    "TextSide",
    "compare_texts",
    "outermost",
    "prepare_side",
    "word_offsets",
]


@dataclass
class PairEvidence:
    """Exact comparison of two texts; similarities in percent."""

    similarity: float
    reverse_similarity: float
    shared: int
    doc_chunks: int
    other_chunks: int
    passages: list[Passage] = field(default_factory=list)
    offsets_exact: bool = True
    #: large texts only: some passages were left out (see :mod:`.passages_np`)
    passages_truncated: bool = False
    #: text left out of the counts, ``(start, end, kind)`` per document (kinds ``template``,
    #: ``quote``, ``bibliography``; :mod:`.excluded`)
    doc_excluded: list[tuple[int, int, str]] = field(default_factory=list)
    other_excluded: list[tuple[int, int, str]] = field(default_factory=list)
    #: quotations left out of their own document only (docs/term.md): A's text found inside
    #: B's quotations (counted for A, not for B), and B's inside A's (counted for B); None:
    #: the rule is off
    doc_quoted_copies: list[Passage] | None = None
    other_quoted_copies: list[Passage] | None = None

    def to_dict(self) -> dict:
        """JSON-ready form."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}  # asdict, without its
        d["passages"] = [dict(vars(p)) for p in self.passages]  # deep copy of each passage
        d["doc_excluded"] = [tuple(x) for x in self.doc_excluded]
        d["other_excluded"] = [tuple(x) for x in self.other_excluded]
        for name in ("doc_quoted_copies", "other_quoted_copies"):
            found = getattr(self, name)
            d[name] = None if found is None else [dict(vars(p)) for p in found]
        return d

    def report(self, doc: str, other: str, hashed_similarity: float) -> dict:
        """The report of ``simdask report --format json``: keys, exact similarities both
        ways, shared chunks, the hashed similarity (percent) and the difference, passages."""
        d = self.to_dict()
        quoted = {}
        if self.doc_quoted_copies is not None:  # the passages inside the other's quotation
            quoted["quoted_copies"] = {
                "doc": d["doc_quoted_copies"],
                "other": d["other_quoted_copies"] or [],
            }
        return {
            "doc": doc,
            "other": other,
            "similarity": self.similarity,
            "reverse_similarity": self.reverse_similarity,
            "shared": self.shared,
            "hashed_similarity": hashed_similarity,
            "difference": hashed_similarity - self.similarity,
            **{
                k: d[k]
                for k in (
                    "doc_chunks",
                    "other_chunks",
                    "offsets_exact",
                    "passages_truncated",
                    "passages",
                )
            },
            "excluded": {
                "doc": [{"start": s, "end": e, "kind": k} for s, e, k in self.doc_excluded],
                "other": [{"start": s, "end": e, "kind": k} for s, e, k in self.other_excluded],
            },
            **quoted,
        }


def word_offsets(text: str) -> tuple[list[str], list[tuple[int, int]], bool]:
    """The words of ``text`` (as :func:`simdask.kernels.words.words`) with character spans.

    Spans come from matching words in the original text and normalising each; where NFKC
    changes word boundaries (rare: e.g. a fraction sign splitting into digits) the words still
    follow the definition, the spans are those of the original token, and the flag is False.
    """
    out_words: list[str] = []
    spans: list[tuple[int, int]] = []
    for m in WORD_PATTERN.finditer(unicodedata.normalize("NFC", text)):
        for w in WORD_PATTERN.findall(normalize(m.group())):
            out_words.append(w)
            spans.append(m.span())
    reference = words(text)
    if out_words == reference and len(unicodedata.normalize("NFC", text)) == len(text):
        return out_words, spans, True
    # fall back: the definition's words, spans spread over the text proportionally
    n = max(1, len(reference))
    approx = [(len(text) * i // n, len(text) * (i + 1) // n) for i in range(len(reference))]
    return reference, approx, False


def _windows(ws: list[str], k: int) -> list[tuple[str, ...]]:
    return [tuple(sorted(ws[i : i + k])) for i in range(len(ws) - k + 1)]


@dataclass(frozen=True)
class TextSide:
    """What :func:`compare_texts` computes of one text alone: its ``windows`` (sorted words
    of each ``k`` words, in order), ``keep`` (per window: it counts, not excluded), ``kept``
    (the distinct windows that count), ``marks`` (excluded ``(start, end, kind)`` spans),
    ``bounds`` (word starts and ends, characters, int64) and ``exact`` (the offsets are the
    words' own: :func:`word_offsets`)."""

    windows: list[tuple[str, ...]]
    keep: list[bool]
    kept: frozenset[tuple[str, ...]]
    marks: tuple[tuple[int, int, str], ...]
    bounds: tuple[np.ndarray, np.ndarray]
    exact: bool


def prepare_side(text: str, k: int, exclusions: PairExclusions | None) -> TextSide:
    """One text's part of :func:`compare_texts` (``exclusions`` as there: None or active),
    independent of the text it is compared with."""
    ws, spans, exact = word_offsets(text)
    windows = _windows(ws, k)
    keep, marks = _kept(text, spans, windows, k, exclusions)
    kept = frozenset(c for c, kp in zip(windows, keep, strict=True) if kp)
    return TextSide(windows, keep, kept, tuple(marks), _bounds(spans), exact)


def compare_texts(
    a: str,
    b: str,
    k: int = 5,
    min_chunks: int = 2,
    min_words: int = 0,
    large: bool | None = None,
    exclusions: PairExclusions | None = None,
    drop_shared: Callable[[set], set] | None = None,
    cache: Any = None,
    passages: bool = True,
) -> PairEvidence:
    """Exact similarity of ``a`` to ``b`` and back, and their matching passages (those of at
    least ``min_chunks`` shared chunks and ``min_words`` words), ordered by position in ``a``.

    ``min_words`` (``--min-match``): shorter matches are ignored, in the similarities too,
    each direction on its own (:func:`~.shown_counts.count_shown`; ``large`` texts only hide
    them). ``large``: compare in numpy with 64-bit chunk keys and bounded passages
    (:mod:`.passages_np`); None: when both texts are longer than ``LARGE_CHARS`` characters.
    ``exclusions``: the index's exclusions (:mod:`.excluded`): the windows they leave out
    count in neither text nor in any passage, and are listed as excluded text (:func:`_directed`).
    ``drop_shared``: given the shared chunks (sorted word tuples), those to leave out of the
    count and the passages, e.g. chunks held by more than ``max_df`` documents of the index
    (:func:`simdask.read.doc_freq.common_filter`). The numpy path for large texts has no word
    tuples: it needs a filter on chunk IDs, an object with ``common_ids(ids) -> ids``,
    ``hash_bits`` and ``seed`` (what :func:`~simdask.read.doc_freq.common_filter` returns);
    given a plain function there, it raises :class:`~simdask.errors.ConfigError`.
    ``cache``: where each text's own part (:func:`prepare_side`) is kept for the next pair
    (:class:`~simdask.evidence.text_cache.TextCache`; the same answer, computed once).
    ``passages``: False for a view that shows the aligner's passages: none computed (two
    copies of a long text: the cost of the pair), the rest the same; not with ``min_words``.
    """
    _check_passages(passages, min_words)
    if exclusions is not None and not exclusions.active:
        exclusions = None
    if large or (large is None and len(a) + len(b) > LARGE_CHARS):
        if drop_shared is not None and not hasattr(drop_shared, "common_ids"):
            raise ConfigError(
                "texts this large are compared on hashed chunk keys: expected a max_df filter "
                "with common_ids(ids), hash_bits and seed (simdask.read.doc_freq.common_filter), "
                f"found {type(drop_shared).__name__}"
            )
        ev = _compare_large(a, b, k, min_chunks, exclusions, drop_shared, passages)
        ev.passages = [p for p in ev.passages if p.words >= min_words]
        return ev
    side = prepare_side if cache is None else cache.side
    side_a: TextSide = side(a, k, exclusions)
    side_b: TextSide = side(b, k, exclusions)
    ca, cb = side_a.windows, side_b.windows
    marks_a, marks_b = list(side_a.marks), list(side_b.marks)
    set_a, set_b = side_a.kept, side_b.kept
    shared = set(set_a & set_b)
    dropped: set = set()
    if drop_shared is not None and shared:
        shared -= (dropped := drop_shared(shared))
    bounds_a, bounds_b = side_a.bounds, side_b.bounds
    if dropped:  # shown as excluded text of kind "common"
        marks_a = sorted(marks_a + common_marks(_hits(ca, dropped), *bounds_a, k))
        marks_b = sorted(marks_b + common_marks(_hits(cb, dropped), *bounds_b, k))
    ev = PairEvidence(
        similarity=containment(len(shared), len(set_a)),
        reverse_similarity=containment(len(shared), len(set_b)),
        shared=len(shared),
        doc_chunks=len(set_a),
        other_chunks=len(set_b),
        offsets_exact=side_a.exact and side_b.exact,
        doc_excluded=marks_a,
        other_excluded=marks_b,
    )
    if passages:
        runs = _shared_runs(ca, side_a.keep, cb, side_b.keep, shared, k)
        ex_a = excluded_words(*bounds_a, marks_a)
        ex_b = excluded_words(*bounds_b, marks_b)
        found = run_passages(runs, bounds_a, bounds_b, ex_a, ex_b, k, min_chunks)
        ev.passages = [p for p in outermost(found) if p.words >= min_words]
    sides = ((a, side_a), (b, side_b))
    ev, extras = _directed(ev, *sides, shared, (k, min_chunks), exclusions, drop_shared)
    if min_words > 0:  # each direction over the matches shown (quote-aware)
        return count_shown(ev, ((ca, bounds_a), (cb, bounds_b)), shared, extras, k, min_words)
    return ev


def _check_passages(passages: bool, min_words: int) -> None:
    """``min_words`` counts from the passages: it needs them."""
    if not passages and min_words > 0:
        raise ConfigError(
            f"min_words {min_words} counts the shared chunks inside the passages shown: "
            "expected passages=True with it, found passages=False"
        )


def _shared_runs(windows_a, keep_a, windows_b, keep_b, shared: set, k: int) -> list:
    """The diagonal runs ``(i0, j0, i1, n)`` of windows of ``shared`` chunks that both texts
    hold at word ``i`` of A and ``j`` of B (window indexes), those that ``keep_*`` keeps."""
    where_b = defaultdict(list)
    for j, c in enumerate(windows_b):
        if keep_b[j] and c in shared:
            where_b[c].append(j)
    diagonals: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for i, c in enumerate(windows_a):
        for j in where_b.get(c, ()) if keep_a[i] else ():
            diagonals[i - j].append((i, j))
    return [(i0, j0, i1, n) for (i0, j0), (i1, _), n in sorted(_diagonal_runs(diagonals, k))]


def _directed(ev: PairEvidence, side_a, side_b, shared: set, sizes, excl, drop):
    """With ``excl.quotes``, each side's similarity also counts its chunks inside the other's
    quotations (a quotation is left out of its own document only, docs/term.md), and the
    passages of those chunks are listed (``doc_quoted_copies``, ``other_quoted_copies``;
    the passages stay those both sides count). ``side_*``: ``(text, TextSide)``; ``sizes``:
    ``(k, min_chunks)``; ``drop``: the ``max_df`` filter or None. Else ``ev`` as it is.
    Returns ``ev`` and the chunks each side counts inside the other's quotations."""
    if excl is None or not excl.quotes:
        return ev, (set(), set())
    k, min_chunks = sizes
    (a, sd_a), (b, sd_b) = side_a, side_b
    q_a, q_b = _quoted(a, sd_a, k, excl), _quoted(b, sd_b, k, excl)
    extra_a = sd_a.kept & ({c for c, q in zip(sd_b.windows, q_b, strict=True) if q} - sd_b.kept)
    extra_b = sd_b.kept & ({c for c, q in zip(sd_a.windows, q_a, strict=True) if q} - sd_a.kept)
    if drop is not None and (extra_a or extra_b):
        extra_a, extra_b = extra_a - drop(extra_a), extra_b - drop(extra_b)
    ev.shared = len(shared) + len(extra_a)
    ev.similarity = containment(ev.shared, ev.doc_chunks)
    ev.reverse_similarity = containment(len(shared) + len(extra_b), ev.other_chunks)
    marks = (ev.doc_excluded, ev.other_excluded)
    # a passage covers no excluded word of the side it counts for, and none but quoted ones
    # of the quoting side
    ex = [
        excluded_words(sd.bounds[0], sd.bounds[1], m)
        for sd, m in zip((sd_a, sd_b), marks, strict=True)
    ]
    ex_q = [
        excluded_words(sd.bounds[0], sd.bounds[1], [x for x in m if x[2] != "quote"])
        for sd, m in zip((sd_a, sd_b), marks, strict=True)
    ]
    runs = _shared_runs(sd_a.windows, sd_a.keep, sd_b.windows, q_b, extra_a, k)
    found = run_passages(runs, sd_a.bounds, sd_b.bounds, ex[0], ex_q[1], k, min_chunks)
    ev.doc_quoted_copies = outermost(found)
    runs = _shared_runs(sd_b.windows, sd_b.keep, sd_a.windows, q_a, extra_b, k)
    found = run_passages(runs, sd_b.bounds, sd_a.bounds, ex[1], ex_q[0], k, min_chunks)
    ev.other_quoted_copies = [
        Passage(p.other_start, p.other_end, p.doc_start, p.doc_end, p.words, p.chunks)
        for p in outermost(found)
    ]
    return ev, (extra_a, extra_b)


def _quoted(text: str, side: TextSide, k: int, excl: PairExclusions) -> list[bool]:
    """Per window of ``text``: it counts with the text's quotations read as its own text
    (the other exclusions applied) and not as it is: it holds a quoted chunk (Q,
    docs/term.md)."""
    spans = word_offsets(text)[1]  # the word spans (not kept in a TextSide)
    kept, _ = _kept(text, spans, side.windows, k, dataclasses.replace(excl, quotes=False))
    return [q and not kp for q, kp in zip(kept, side.keep, strict=True)]


def _bounds(spans: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Word starts and ends (character offsets) as int64 arrays."""
    return (
        np.array([s for s, _ in spans], dtype=np.int64),
        np.array([e for _, e in spans], dtype=np.int64),
    )


def _hits(windows: list[tuple[str, ...]], chunks: set) -> np.ndarray:
    return np.fromiter((c in chunks for c in windows), dtype=bool, count=len(windows))


def _kept(text: str, spans, windows, k: int, excl: PairExclusions | None):
    """Per window whether it counts, and the excluded marks of ``text``."""
    if excl is None:
        return [True] * len(windows), []
    by_span, by_template = excluded_windows(text, spans, windows, k, excl)
    starts = np.array([s for s, _ in spans], dtype=np.int64)
    ends = np.array([e for _, e in spans], dtype=np.int64)
    marks = excluded_marks(text, starts, ends, by_template, k, excl)
    return (~(by_span | by_template)).tolist(), marks


def _diagonal_runs(diagonals: dict[int, list[tuple[int, int]]], k: int) -> list:
    """Matches on one diagonal at most ``2 k`` windows apart, merged: ``(first, last,
    count)`` per run."""
    runs = []
    for matches in diagonals.values():
        start = prev = matches[0]
        count = 1
        for m in matches[1:]:
            if m[0] - prev[0] <= 2 * k:
                prev, count = m, count + 1
                continue
            runs.append((start, prev, count))
            start = prev = m
            count = 1
        runs.append((start, prev, count))
    return runs


def _compare_large(
    a: str,
    b: str,
    k: int,
    min_chunks: int,
    excl: PairExclusions | None = None,
    common=None,
    passages: bool = True,
) -> PairEvidence:
    """:func:`compare_texts` in numpy (memory about 40 bytes per word, no Python object per
    word or chunk). Excluded windows get a key no kept window has, so they match nothing;
    with quotations excluded, each side also counts its chunks inside the other's quotations
    (:func:`~.quoted_np.directed_large`). ``common``: the max_df filter on chunk IDs (see
    :func:`compare_texts`)."""
    ha, sa0, sa1, exact_a = word_table(a)
    ka = chunk_keys(ha, k)
    ids_a = None if common is None else index_chunk_ids(a, ha, k, common.hash_bits, common.seed)
    del ha
    hb, sb0, sb1, exact_b = word_table(b)
    kb = chunk_keys(hb, k)
    quotes = excl is not None and excl.quotes
    ids_b = (
        None
        if common is None or not quotes
        else index_chunk_ids(b, hb, k, common.hash_bits, common.seed)
    )
    del hb
    marks_a, marks_b = [], []
    tpl = np.zeros(0, np.uint64)
    raw_a, raw_b = ka, kb
    if excl is not None:
        tpl = distinct(
            np.concatenate([tpl] + [chunk_keys(word_table(t)[0], k) for t in excl.templates])
        )
        ka, ua, marks_a = exclude_large(a, ka, sa0, sa1, tpl, k, excl)
        kb, ub, marks_b = exclude_large(b, kb, sb0, sb1, tpl, k, excl)
    else:
        ua, ub = distinct(ka), distinct(kb)
    shared = np.intersect1d(ua, ub, assume_unique=True)
    if ids_a is not None and len(shared):
        before, shared = shared, drop_common_keys(ka, ids_a, shared, common.common_ids)
        dropped = np.setdiff1d(before, shared, assume_unique=True)
        if len(dropped):  # shown as excluded text of kind "common"
            marks_a = sorted(marks_a + common_marks(np.isin(ka, dropped), sa0, sa1, k))
            marks_b = sorted(marks_b + common_marks(np.isin(kb, dropped), sb0, sb1, k))
    ev = PairEvidence(
        similarity=containment(len(shared), len(ua)),
        reverse_similarity=containment(len(shared), len(ub)),
        shared=len(shared),
        doc_chunks=len(ua),
        other_chunks=len(ub),
        offsets_exact=exact_a and exact_b,
        doc_excluded=marks_a,
        other_excluded=marks_b,
    )
    if quotes and excl is not None:  # ``quotes`` says excl is given; narrowed for the checker
        side_a = LargeSide(a, raw_a, ka, ua, (sa0, sa1))
        side_b = LargeSide(b, raw_b, kb, ub, (sb0, sb1))
        extra = quoted_extra(side_a, side_b, tpl, k, excl)
        directed_large(ev, side_a, side_b, extra, (ids_a, ids_b, common), (k, min_chunks))
    del ua, ub
    if not passages:
        return ev
    i0, j0, i1, count, ev.passages_truncated = matched_runs(ka, kb, shared, k, min_chunks)
    runs = zip(i0.tolist(), j0.tolist(), i1.tolist(), count.tolist(), strict=True)
    ex_a, ex_b = excluded_words(sa0, sa1, marks_a), excluded_words(sb0, sb1, marks_b)
    found = run_passages(runs, (sa0, sa1), (sb0, sb1), ex_a, ex_b, k, min_chunks)
    ev.passages = outermost(found)
    return ev
