"""The web page's document views (issue 29, issue 31 items 9, 10, 15, 16), run on the reader
thread (:class:`~simdask.web.reader.Reader`): a document's page and a checked document's page
with the total first and every source's passages in one view of the text
(:mod:`simdask.evidence.doc_view`, the same HTML as the static site:
:mod:`simdask.evidence.doc_html`), and the batch overview "this term"
(:func:`simdask.read.batch.batch_overview`). HTML fragments come back as
:class:`markupsafe.Markup` (escaped once, by :mod:`simdask.evidence.doc_html`); the
templates escape everything else.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup

from simdask.evidence.doc_html import doc_head_html, doc_text_html
from simdask.evidence.doc_view import NOT_COMPUTED, document_view
from simdask.evidence.pair_view import ViewOptions
from simdask.queries import query_documents
from simdask.read.batch import GROUP_LEVEL, batch_overview
from simdask.read.total_reads import pair_aligned
from simdask.read.undirected_pairs import Pair
from simdask.web.reader import document_pairs

__all__ = ["checked_document", "doc_href", "document_with_view", "term_overview"]


def doc_href(key: str) -> str:
    """The web page of an indexed document."""
    return "/document?" + urlencode({"key": key})


def _report_href(key: str, options: ViewOptions | None):
    """The side-by-side page of ``key`` and a source, with the view's ``min_match``."""
    least = {"min_match": str(options.min_words)} if options and options.min_words else {}

    def report(other: str) -> str:
        return "/report?" + urlencode({"a": key, "b": other, **least})

    return report


def document_with_view(idx, key: str, options: ViewOptions | None = None) -> dict[str, Any]:
    """:func:`~simdask.web.reader.document_pairs` of ``key`` with its view: ``view_head``
    (the total first, its sources) and ``view_text`` (its text with the passages marked);
    each pair row gains ``aligned`` and ``aligned_back``, the percent of ``key`` inside
    passages taken from the other and the reverse (None: the pair was never aligned)."""
    found = document_pairs(idx, key)
    pairs = idx.pair_list(0.0, key)
    wanted = [(key, r["b_key"]) for r in found["pairs"]]
    aligned = pair_aligned(idx.catalog, wanted + [(b, a) for a, b in wanted])
    for r in found["pairs"]:
        r["aligned"] = aligned.get((key, r["b_key"]))
        r["aligned_back"] = aligned.get((r["b_key"], key))
    view = document_view(idx, key, pairs, total=idx.total(key), options=options)
    found["view_head"] = Markup(doc_head_html(view, doc_href, _report_href(key, options)))
    found["view_text"] = Markup(doc_text_html(view))
    return found


def checked_document(
    idx,
    qid: str,
    key: str,
    text: str,
    min_similarity: float = 1.0,
    options: ViewOptions | None = None,
) -> dict[str, Any]:
    """The view of a checked document ``key`` (its ``text``, kept by the server under query
    ``qid``): its matches as ``query`` finds them (``min_similarity`` percent either way),
    its total computed from the passages of its sources (under ``options``), their links."""
    batch = query_documents(idx, [(key, text)], min_similarity)
    pairs = [
        Pair(key, m.key, m.similarity, m.reverse_similarity, m.shared, m.query_chunks, m.doc_chunks)
        for r in batch.results
        for m in r.matches
    ]
    view = document_view(idx, key, pairs, text=text, options=options)
    least = {"min_match": str(options.min_words)} if options and options.min_words else {}

    def report(other: str) -> str:
        return f"/check/{qid}/report?" + urlencode({"query": key, "key": other, **least})

    return {
        "key": key,
        "words": view.words,
        "view_head": Markup(doc_head_html(view, doc_href, report)),
        "view_text": Markup(doc_text_html(view)),
    }


def term_overview(
    idx,
    run: int | None = None,
    folder: str | None = None,
    since: str | None = None,
    until: str | None = None,
    level: float = GROUP_LEVEL,
) -> dict[str, Any]:
    """The batch overview of the "this term" page: ``what`` was selected, ``rows`` (the
    largest total first: ``doc``, ``total`` or None, ``sources``, ``best_source``,
    ``best_share``, ``source_folder``, ``source_date``, ``date``), ``groups`` (lists of keys)
    and their ``level``; ``not_computed``: the sentence for a missing total."""
    batch = batch_overview(
        idx.catalog, run=run, prefix=folder, since=since, until=until, level=level
    )
    return {
        "what": batch.what,
        "rows": [r.to_dict() for r in batch.rows],
        "groups": [list(g) for g in batch.groups],
        "level": batch.level,
        "not_computed": NOT_COMPUTED,
    }
