"""The passages every view of a pair shows (issue 28): one code path for ``report`` (text,
``--html``, ``--format json``), ``query --html``, ``compare --html``, the site's pair and
document pages and ``serve``'s side-by-side view.

A view starts from the exact report of the pair (:func:`simdask.evidence.passages.compare_texts`
through :meth:`Index.report_text <simdask.index.Index.report_text>`: both chunk
containments, the hashed similarity the index holds, the text each side leaves out). By
default its passages are then those of the text aligner (:func:`simdask.alignment.align`):
merged passages robust to paraphrase, each with its kind, and the share of each text's words
they cover. The excluded text of both sides (templates, quotations, reference lists: the
``excluded`` spans of the report, with the shared chunks ``max_df`` leaves out) are passed to
the aligner, so that no passage is reported inside text the similarities do not count; with
quotations excluded, each side's coverage is aligned with its own quotations excluded and
the other's read as text (a quotation is left out of its own document only, docs/term.md).
``ViewOptions(exact_only=True)`` keeps the exact 5-word evidence instead (verbatim matches
only), as every view had it before.

Offsets are code points into each text as given; coverages are percent of each text's words.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from simdask.alignment import (
    AlignConfig,
    align_directed,
    align_prepared,
    aligned_coverage,
    prepare,
)
from simdask.errors import ConfigError, check_keys
from simdask.evidence.excluded import PairExclusions
from simdask.evidence.passages import compare_texts
from simdask.evidence.passages_np import LARGE_CHARS
from simdask.kernels.exclusions import merge_spans
from simdask.kernels.words import WORD_PATTERN
from simdask.read.review import pair_details
from simdask.read.undirected_pairs import pct

__all__ = [
    "ViewOptions",
    "coverage_sentence",
    "index_report",
    "index_settings",
    "texts_report",
    "with_aligned_passages",
]

#: texts longer than this (both together, characters) show the exact evidence: the aligner
#: holds Python objects per sentence and word (a 50 MB pair takes minutes)
ALIGN_MAX_CHARS = LARGE_CHARS
#: decimals of a passage's score in a view (the same in every process)
SCORE_DIGITS = 6
#: ``passages_method`` of a report: the aligner's passages, or the exact 5-word evidence
METHODS = ("aligned", "exact")


@dataclass(frozen=True)
class ViewOptions:
    """What a view shows of a pair. ``exact_only``: the exact 5-word evidence (verbatim
    matches, :func:`~simdask.evidence.passages.compare_texts`) instead of the aligner's
    passages. ``min_words``: matches shorter than this many words (in the first text) are
    ignored: not shown, and not counted in the similarities and coverages of the view (the
    stored similarities, which have no word positions, are unchanged). ``min_chunks``: the exact
    evidence's shortest passage, in shared chunks. ``align``: the aligner's settings (None:
    its defaults)."""

    exact_only: bool = False
    min_words: int = 0
    min_chunks: int = 2
    align: AlignConfig | None = None

    def __post_init__(self) -> None:
        for name in ("min_words", "min_chunks"):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                raise ConfigError(f"{name} must be a whole number >= 0, found {value!r}")
        if type(self.exact_only) is not bool:
            raise ConfigError(f"exact_only must be True or False, found {self.exact_only!r}")
        if self.align is not None and not isinstance(self.align, AlignConfig):
            raise ConfigError(f"align must be an AlignConfig or None, found {self.align!r}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``align`` as its own dict, or None)."""
        d = dataclasses.asdict(self)
        d["align"] = None if self.align is None else self.align.to_dict()
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ViewOptions:
        """Build from :meth:`to_dict`'s form; unknown keys are an error."""
        check_keys("ViewOptions", data, (f.name for f in dataclasses.fields(cls)))
        data = dict(data)
        if data.get("align") is not None:
            data["align"] = AlignConfig.from_dict(data["align"])
        return cls(**data)


def _excluded_spans(rep: dict, side: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` spans a report lists as excluded on ``side`` (``doc``/``other``)."""
    return [(x["start"], x["end"]) for x in (rep.get("excluded") or {}).get(side, [])]


def _words(text: str, start: int, end: int) -> int:
    return sum(1 for _ in WORD_PATTERN.finditer(text, start, end))


def _open_spans(rep: dict, side: str) -> list[tuple[int, int]] | None:
    """``side``'s excluded spans without its quotations, merged: what the other side's
    direction reads of it (a quotation is left out of its own document only, docs/term.md);
    None when none of its excluded text is a quotation (quotations not excluded, or none)."""
    marks = (rep.get("excluded") or {}).get(side, [])
    if not any(x["kind"] == "quote" for x in marks):
        return None
    return merge_spans([(x["start"], x["end"]) for x in marks if x["kind"] != "quote"])


def _directed(text_a: str, text_b: str, rep: dict, opts: ViewOptions, cache: Any):
    """The aligner's passages of the pair: ``(both, for A, for B)``, those that neither
    side's excluded text holds (the passages shown) and those counted for each side, with
    its own quotations excluded and the other's read as text
    (:func:`~simdask.alignment.align_directed`; all three the same list when neither text
    has a quotation excluded)."""
    cfg = opts.align or AlignConfig()

    def prepared(text: str, spans: list[tuple[int, int]]):
        return prepare(text, cfg, spans) if cache is None else cache.aligned(text, cfg, spans)

    pa = prepared(text_a, merge_spans(_excluded_spans(rep, "doc")))
    pb = prepared(text_b, merge_spans(_excluded_spans(rep, "other")))
    both = align_prepared(pa, pb, cfg)
    open_a, open_b = _open_spans(rep, "doc"), _open_spans(rep, "other")
    if open_a is None and open_b is None:
        return both, both, both
    a_open = None if open_a is None else prepared(text_a, open_a)
    b_open = None if open_b is None else prepared(text_b, open_b)
    return (both, *align_directed(pa, pb, cfg, a_open, b_open, both))


def with_aligned_passages(
    rep: dict, text_a: str, text_b: str, options: ViewOptions | None = None, cache: Any = None
) -> dict:
    """The exact report ``rep`` of ``text_a`` (``rep["doc"]``) and ``text_b``
    (``rep["other"]``) with the aligner's passages in place of the exact ones.

    The aligner is given the text ``rep`` lists as excluded (the index's exclusions and the
    shared chunks ``max_df`` leaves out, kind ``common``) as excluded text. Each passage is
    ``{doc_start, doc_end, other_start, other_end, words, other_words, kind, score}``
    (offsets in code points, ``words`` in ``text_a``, ``other_words`` in ``text_b``);
    ``aligned_coverage`` gives the percent of each text's words inside the passages counted
    for it (those of at least ``options.min_words`` words in ``text_a``: shorter matches are
    ignored, in the percentages too), ``min_words`` that length and ``passages_method`` is
    ``"aligned"``. With quotations excluded (kind ``quote`` in ``rep``'s excluded text) a
    quotation is left out of its own document only: the passages shown are those both sides
    count, each side's coverage is over the passages aligned with its own quotations
    excluded and the other's read as text (docs/term.md), and ``counted_spans`` (``{doc,
    other}``: ``[start, end]`` code points in each text) lists those passages when they
    differ from the ones shown. ``cache``: a :class:`~simdask.evidence.text_cache.TextCache`
    keeping each text's preparation for the aligner (the same passages).
    """
    opts = options or ViewOptions()
    both, for_a, for_b = _directed(text_a, text_b, rep, opts, cache)

    def long_enough(found: list) -> list[tuple[Any, int]]:
        sized = [(p, _words(text_a, p.a_start, p.a_end)) for p in found]
        return [(p, n) for p, n in sized if n >= opts.min_words]

    sized = long_enough(both)
    counted_a = [p for p, _ in sized] if for_a is both else [p for p, _ in long_enough(for_a)]
    counted_b = [p for p, _ in sized] if for_b is both else [p for p, _ in long_enough(for_b)]
    share_a = aligned_coverage(counted_a, text_a, text_b)[0]
    share_b = aligned_coverage(counted_b, text_a, text_b)[1]
    passages = []
    for p, n in sized:
        passages.append(
            {
                "doc_start": p.a_start,
                "doc_end": p.a_end,
                "other_start": p.b_start,
                "other_end": p.b_end,
                "words": n,
                "other_words": _words(text_b, p.b_start, p.b_end),
                "kind": p.kind,
                "score": round(p.score, SCORE_DIGITS),
            }
        )
    out = dict(rep)
    out.update(
        passages=passages,
        passages_method="aligned",
        passages_truncated=False,
        min_words=opts.min_words,
        aligned_coverage={"doc": 100.0 * share_a, "other": 100.0 * share_b},
    )
    if for_a is not both or for_b is not both:
        out["counted_spans"] = {
            "doc": [[p.a_start, p.a_end] for p in counted_a],
            "other": [[p.b_start, p.b_end] for p in counted_b],
        }
    return out


def _exact(rep: dict, chars: int = 0, min_words: int = 0) -> dict:
    """``rep`` with the exact evidence's method; ``chars``: the pair's size when it was too
    large for the aligner (said in ``passages_note``); ``min_words``: the view's shortest
    match (given only when not 0)."""
    out = {**rep, "passages_method": "exact"}
    if min_words:
        out["min_words"] = min_words
    if chars > ALIGN_MAX_CHARS:
        out["passages_note"] = (
            f"the texts are too large to align ({chars:,} characters together, at most "
            f"{ALIGN_MAX_CHARS:,}): the passages are exact 5-word matches"
        )
    return out


def _too_large(a: str, b: str) -> int:
    """The pair's size in characters when it is over :data:`ALIGN_MAX_CHARS`, else 0."""
    n = len(a) + len(b)
    return n if n > ALIGN_MAX_CHARS else 0


def index_settings(index) -> dict:
    """The index settings a view of a pair applies, for the evidence: ``k`` (words per
    chunk), ``max_df``, ``exclude_quotes``, ``exclude_bibliography`` and the names of the
    ``excluded_templates``."""
    cfg = index.config
    return {
        "k": cfg.k,
        "max_df": cfg.max_df,
        "exclude_quotes": cfg.exclude_quotes,
        "exclude_bibliography": cfg.exclude_bibliography,
        "excluded_templates": [t.name for t in index.templates()],
    }


def index_report(
    index,
    key: str,
    other: str,
    *,
    text: str | None = None,
    other_text: str | None = None,
    options: ViewOptions | None = None,
    cache: Any = None,
) -> dict:
    """The report of a pair as every view of an index shows it: ``key`` and ``other`` are
    documents of ``index``, or names of the texts ``text`` / ``other_text`` when given (a
    checked document, a file that is not indexed). The index's exclusions and ``max_df``
    apply (:meth:`Index.report_text <simdask.index.Index.report_text>`); the passages are
    the aligner's (:func:`with_aligned_passages`) unless ``options.exact_only`` or the
    texts are together longer than :data:`ALIGN_MAX_CHARS` (then ``passages_note`` says
    so); ``review``: when each document was first indexed and its file modified, and the
    decision kept on the pair (:func:`simdask.read.review.pair_details`); ``settings``: the
    index's settings the view applied (:func:`index_settings`). ``cache``: a
    :class:`~simdask.evidence.text_cache.TextCache` keeping each text's own part for the next
    pair (the same report)."""
    opts = options or ViewOptions()
    a = index.text(key) if text is None else text
    b = index.text(other) if other_text is None else other_text
    hashed = None  # a checked text: computed from both texts' hashed chunks
    if text is None and other_text is None:  # two indexed documents: as Index.report
        hashed = {r.other: r.similarity for r in index.similar(key)}.get(other)
    aligned = not opts.exact_only and not _too_large(a, b)
    rep = index.report_text(
        key,
        a,
        other,
        opts.min_chunks,
        hashed,
        min_words=opts.min_words,
        other_text=b,
        cache=cache,
        # the aligner's passages replace the exact ones: not computed unless min_words
        # counts from them (two copies of a long licence: 100 s of nested passages)
        passages=not aligned or opts.min_words > 0,
    )
    rep["review"] = pair_details(index.catalog, [(key, other)])[0]  # dates, decision
    rep["settings"] = index_settings(index)
    if opts.exact_only or not aligned:  # the note only when the aligner was wanted
        return _exact(rep, 0 if opts.exact_only else _too_large(a, b), opts.min_words)
    return with_aligned_passages(rep, a, b, opts, cache)


def texts_report(
    key: str,
    text: str,
    other: str,
    other_text: str,
    k: int = 5,
    exclusions: PairExclusions | None = None,
    options: ViewOptions | None = None,
) -> dict:
    """The report of two texts without an index (``compare --html``): exact containment
    under ``exclusions``, the aligner's passages unless ``options.exact_only``."""
    opts = options or ViewOptions()
    ev = compare_texts(text, other_text, k, opts.min_chunks, opts.min_words, exclusions=exclusions)
    rep = ev.report(key, other, ev.similarity)
    if opts.exact_only or _too_large(text, other_text):
        return _exact(rep, _too_large(text, other_text), opts.min_words)
    return with_aligned_passages(rep, text, other_text, opts)


def coverage_sentence(rep: dict) -> str | None:
    """The aligned coverage in a teacher's words: ``"62 % of smith.docx lies in passages
    taken from jones.odt; they make up 30 % of jones.odt"`` (None for the exact evidence)."""
    cov = rep.get("aligned_coverage")
    if cov is None:
        return None
    a, b = rep["doc"], rep["other"]
    return (
        f"{pct(cov['doc'])} of {a} lies in passages taken from {b}; "
        f"they make up {pct(cov['other'])} of {b}"
    )


def passage_label(p: dict) -> str:
    """``"paraphrased, 120 words"`` (the exact evidence: ``"120 words"``)."""
    kind = p.get("kind")
    return f"{kind}, {p['words']} words" if kind else f"{p['words']} words"
