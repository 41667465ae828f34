"""One document with all its sources (issue 29, issue 31 items 10 and 16): what every view of a
document shows first, its **total** (the percent of its words inside passages found in other
documents), then each source with its share (the percent of the document inside passages
taken from it), largest first, and the passages of every source in one view of its text.

The passages of each source are those of the pair's view (:func:`~simdask.evidence.pair_view.
index_report`: the aligner's, under the index's exclusions): one code path for the passages of
a pair and of a document. The total of an indexed document is the stored one
(:meth:`Index.total <simdask.index.Index.total>`; ``totals --compute`` stores it); a document
without one says so (``total`` None), never 0 %. A checked document (``query``, the web check)
is not stored: its total is computed here from the same passages, as the union over its
sources (``total_from="view"``).

Offsets are code points of the document's text; percentages 0..100.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from simdask.alignment.coverage import word_share
from simdask.evidence.pair_view import ViewOptions, index_report
from simdask.kernels.words import WORD_PATTERN
from simdask.read.total_reads import DocTotal
from simdask.read.undirected_pairs import Pair, pct
from simdask.storage.decisions import excluded_by_doc
from simdask.storage.doc_dates import dates_of

__all__ = [
    "MAX_SOURCES",
    "NOT_COMPUTED",
    "DocView",
    "SourceView",
    "document_view",
    "total_sentence",
    "view_sources",
]

#: sources shown in one view of a text (one colour each)
MAX_SOURCES = 8
#: what a view says of an indexed document whose total was never computed
NOT_COMPUTED = "total not computed — run `simdask totals INDEX --compute`"


@dataclass(frozen=True)
class SourceView:
    """One source of a document in a view: its ``key``; ``share`` the percent of the
    document inside passages taken from it (the stored share, or the view's coverage);
    ``back`` the percent of the source inside them; ``a_in_b``/``b_in_a`` the chunk
    containment both ways (the index's measure); ``passages`` the pair's passages
    (``doc_start``, ``doc_end``, ``words``, ``kind``...: :func:`index_report`);
    ``excluded`` the ``(start, end, kind)`` spans of the document left out; ``quoted`` (with
    ``--exclude-quotes``) the passages of the document copied from inside the source's
    quotation (``quoted`` ``"from-quote"``: counted for the document) and those inside the
    document's own quotation that the source copies (``"quoted"``: not counted for it), each
    ``{doc_start, doc_end, words, quoted}``; ``first_indexed`` and ``modified``: when the
    source was first indexed and its file last modified (seconds since the epoch; None:
    unknown), "who was first"; ``counted`` (with ``--exclude-quotes``, when it differs from
    the passages) the ``(start, end)`` spans of the document counted for this source: the
    aligner's passages with its own quotations excluded and the source's read as text
    (docs/term.md)."""

    key: str
    share: float | None
    back: float | None
    a_in_b: float | None
    b_in_a: float | None
    passages: tuple[dict, ...]
    excluded: tuple[tuple[int, int, str], ...]
    quoted: tuple[dict, ...] = ()
    first_indexed: float | None = None
    modified: float | None = None
    counted: tuple[tuple[int, int], ...] | None = None

    def counted_spans(self) -> list[tuple[int, int]]:
        """The ``(start, end)`` spans of the document counted for this source (a quotation
        is left out of its own document only): ``counted`` when given, else its passages
        and those it copies from inside the source's quotation (``"from-quote"``)."""
        if self.counted is not None:
            return list(self.counted)
        spans = [(p["doc_start"], p["doc_end"]) for p in self.passages]
        return spans + [
            (p["doc_start"], p["doc_end"]) for p in self.quoted if p["quoted"] == "from-quote"
        ]


@dataclass(frozen=True)
class DocView:
    """A document and its sources: ``key``, ``words``; ``total`` percent (None: never
    computed), ``total_from`` ``"stored"`` or ``"view"`` (computed from the passages shown)
    or None; ``sources`` largest share first (at most :data:`MAX_SOURCES`); ``more`` how
    many further sources the view leaves out (of a stored total: counted in it; of a total
    computed in the view: further matches by chunks, not aligned); ``text`` (None: no stored
    text; then no passages were looked for); ``excluded_sources``: the sources the teacher
    left out of this document (``simdask mark DOC SOURCE --exclude-source``), in neither
    its total nor ``sources``; ``min_words``: matches shorter than this many words are left
    out of the passages and of the total and shares, then computed in the view
    (``--min-match``; 0: none); ``first_indexed`` and ``modified``: the document's dates as
    its sources' (None: unknown, and for a checked document)."""

    key: str
    words: int
    total: float | None
    total_from: str | None
    sources: tuple[SourceView, ...]
    more: int
    text: str | None
    excluded_sources: tuple[str, ...] = ()
    min_words: int = 0
    first_indexed: float | None = None
    modified: float | None = None

    def passages(self) -> list[tuple[int, int, int, dict]]:
        """Every passage of every source as ``(start, end, source number, passage)``, in text
        order (where sources overlap, each keeps its own span); the passages inside a
        quotation (:attr:`SourceView.quoted`) among them."""
        out = [
            (p["doc_start"], p["doc_end"], i, p)
            for i, s in enumerate(self.sources)
            for p in s.passages + s.quoted
        ]
        return sorted(out, key=lambda t: (t[0], t[1], t[2]))

    def excluded(self) -> list[tuple[int, int, str]]:
        """The document's excluded spans as any of its sources' reports gives them, sorted."""
        return sorted({x for s in self.sources for x in s.excluded})


def total_sentence(view: DocView) -> str:
    """The headline in a teacher's words: ``"71 % of late/quinn.docx is found in 3 other
    documents"``; ``"No passage of … is found in another document"``; or :data:`NOT_COMPUTED`
    prefixed by the key. A total computed in the view counts the sources whose passages it
    found; a stored one every source of the total."""
    if view.total is None:
        return f"{view.key}: {NOT_COMPUTED}"
    if view.total_from == "view":  # only the sources aligned in this view count
        n = sum(1 for s in view.sources if (s.share or 0.0) > 0)
    else:
        n = len(view.sources) + view.more
    if view.total <= 0 or n == 0:
        return f"No passage of {view.key} is found in another document"
    others = "1 other document" if n == 1 else f"{n} other documents"
    return f"{pct(view.total)} of {view.key} is found in {others}"


def _source(
    index, key: str, other: str, text: str | None, share, pair, options, report: Callable, reports
) -> SourceView:
    """One source's view: the pair's report (the one code path for passages), taken from
    ``reports`` when made before, else made by ``report`` and kept there."""
    rep = reports.get((key, other))
    if rep is None:
        rep = reports[(key, other)] = report(index, key, other, text=text, options=options)
    cov = rep.get("aligned_coverage")
    excl = tuple((x["start"], x["end"], x["kind"]) for x in rep["excluded"]["doc"])
    return SourceView(
        key=other,
        share=share if share is not None else (None if cov is None else cov["doc"]),
        back=None if cov is None else cov["other"],
        a_in_b=rep.get("similarity", None if pair is None else pair.a_in_b),
        b_in_a=rep.get("reverse_similarity", None if pair is None else pair.b_in_a),
        passages=tuple(rep["passages"]),
        excluded=excl,
        quoted=_quoted(rep),
        counted=_counted(rep),
    )


def _counted(rep: dict) -> tuple[tuple[int, int], ...] | None:
    """The spans of the document counted for the source when they differ from the passages
    shown (``counted_spans`` of an aligned report: :func:`~simdask.evidence.pair_view.
    with_aligned_passages`), else None."""
    found = rep.get("counted_spans")
    return None if found is None else tuple((int(a), int(b)) for a, b in found["doc"])


def _quoted(rep: dict) -> tuple[dict, ...]:
    """The pair report's passages inside a quotation (``quoted_copies``), on the document's
    side: those it copies from the source's quotation, and those of its own quotation the
    source copies (:attr:`SourceView.quoted`)."""
    found = rep.get("quoted_copies") or {}
    return tuple(
        {"doc_start": p["doc_start"], "doc_end": p["doc_end"], "words": p["words"], "quoted": q}
        for side, q in (("doc", "from-quote"), ("other", "quoted"))
        for p in found.get(side) or ()
    )


def document_view(
    index,
    key: str,
    pairs: Sequence[Pair],
    *,
    text: str | None = None,
    total: DocTotal | None = None,
    options: ViewOptions | None = None,
    report: Callable[..., dict] = index_report,
    reports: dict[tuple[str, str], dict] | None = None,
    excluded: frozenset[str] | None = None,
) -> DocView:
    """The view of document ``key`` of ``index`` (or, with ``text``, of a checked document of that
    name that is not stored). ``pairs``: its stored pairs seen from it (``a_key`` = ``key``).
    Its sources are those of its stored ``total`` (None: it has none; then its pairs, largest
    share of it first), at most :data:`MAX_SOURCES`, each with the pair's passages; a checked
    document's total is computed from them, and so is every document's when
    ``options.min_words`` leaves short matches out (the stored total counts them). The sources
    the teacher left out of ``key`` are not among them (``excluded_sources`` names them).
    ``report``: the pairs' reports, :func:`~simdask.evidence.pair_view.index_report` or one with
    its signature that gives the same answer (the static site's, computing a pair of texts
    once). ``reports``: the pair reports (``report`` with the same ``options`` and ``text``) by
    ``(key, other)`` already made; the view adds those it makes, so that a page showing the same
    pairs again (a results table) aligns each pair once. ``excluded``: the sources left out
    (None: those the teacher left out of ``key``; a checked text:
    :mod:`simdask.read.query_sources`)."""
    own = {p.b_key: p for p in pairs}
    gone = excluded
    if gone is None:
        gone = excluded_by_doc(index.catalog, [key]).get(key, frozenset())
    chosen = _chosen(pairs, total, gone)
    body = text if text is not None else _stored_text(index, key)
    shown = chosen[:MAX_SOURCES] if body is not None else []
    made = {} if reports is None else reports
    least = 0 if options is None else options.min_words
    if least:  # short matches left out: the view's shares, not the stored ones
        shown = [(o, None) for o, _ in shown]
    sources = [_source(index, key, o, text, s, own.get(o), options, report, made) for o, s in shown]
    if total is None and text is None:
        # an indexed document without a stored total: its sources by the view's share
        sources.sort(key=lambda s: (-(s.share or 0.0), s.key))
    words = total.words if total is not None else _words(index, key, text)
    value, origin = (total.total, "stored") if total is not None else (None, None)
    if body is not None and (text is not None or least):  # the total of the passages shown
        sources = [_own_share(s, body) for s in sources]
        spans = [span for s in sources for span in s.counted_spans()]
        value, origin = 100.0 * word_share(body, spans), "view"
        sources.sort(key=lambda s: (-(s.share or 0.0), s.key))
    more = max(0, len(chosen) - len(shown))
    dates = dates_of(index.catalog, [key, *(s.key for s in sources)])
    sources = [_with_dates(s, dates) for s in sources]
    first, modified = dates.get(key, (None, None)) if text is None else (None, None)
    return DocView(  # a checked text is not indexed: no dates of its own
        key,
        words,
        value,
        origin,
        tuple(sources),
        more,
        body,
        tuple(sorted(gone)),
        least,
        first_indexed=first,
        modified=modified,
    )


def _with_dates(source: SourceView, dates: dict[str, tuple[float, float | None]]) -> SourceView:
    """``source`` with when it was first indexed and its file modified, from ``dates``
    (:func:`~simdask.storage.doc_dates.dates_of`; None: unknown)."""
    first, modified = dates.get(source.key, (None, None))
    return dataclasses.replace(source, first_indexed=first, modified=modified)


def _own_share(source: SourceView, text: str) -> SourceView:
    """``source`` with its share computed from its passages when it has none (the exact
    evidence has no aligned coverage): the percent of ``text``'s words inside those counted
    for it (:meth:`SourceView.counted_spans`)."""
    if source.share is not None:
        return source
    return dataclasses.replace(source, share=100.0 * word_share(text, source.counted_spans()))


def _chosen(pairs: Sequence[Pair], total: DocTotal | None, gone) -> list[tuple[str, float | None]]:
    """A document's sources, ``(key, share)``: its stored total's (``share`` the stored
    one), else its pairs by the share of it found in each (``share`` None) less those in
    ``gone``."""
    if total is not None:  # read_totals leaves the excluded sources out
        return [(s.key, s.share) for s in total.sources]
    ranked = sorted(pairs, key=lambda p: (-p.a_in_b, p.b_key))
    return [(p.b_key, None) for p in ranked if p.b_key not in gone]


def view_sources(
    index, key: str, pairs: Sequence[Pair], total: DocTotal | None, excluded=frozenset()
) -> list[str]:
    """The sources whose pair reports :func:`document_view` of the indexed document ``key``
    makes (the same arguments; ``excluded``: the sources the teacher left out of it, as
    :func:`~simdask.storage.decisions.excluded_by_doc` gives them), in its order, without
    making any: what a caller computes ahead (the static site, on all cores)."""
    if _stored_text_missing(index, key):
        return []
    return [o for o, _ in _chosen(pairs, total, excluded)[:MAX_SOURCES]]


def _stored_text_missing(index, key: str) -> bool:
    return index.catalog.document(key).text_pack is None


def _stored_text(index, key: str) -> str | None:
    """The stored text of an indexed document (None: the index keeps none)."""
    if index.catalog.document(key).text_pack is None:
        return None
    return index.text(key)


def _words(index, key: str, text: str | None) -> int:
    """The words of a document: a checked text's (as the aligner counts them), else the
    catalog's count."""
    if text is not None:
        return sum(1 for _ in WORD_PATTERN.finditer(text))
    return index.catalog.document(key).n_words
