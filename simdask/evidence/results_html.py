"""One self-contained HTML page of ``query`` or ``compare`` results (``--html FILE``): one row
per pair with both percentages and their wording, the passages of each pair (as every view
finds them: :mod:`simdask.evidence.pair_view`, the index's exclusions applied) with the
aligned coverage in words, and the documents that could not be compared."""

from __future__ import annotations

import dataclasses
import html
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from simdask.evidence.doc_html import VIEW_CSS, VIEW_JS, doc_view_html
from simdask.evidence.doc_view import document_view
from simdask.evidence.excluded import PairExclusions
from simdask.evidence.pair_view import (
    ViewOptions,
    coverage_sentence,
    index_report,
    passage_label,
    texts_report,
)
from simdask.evidence.summary_text import snippet
from simdask.ingest.sources import read_queries
from simdask.read.undirected_pairs import Pair, counted

__all__ = ["compare_page", "query_page", "render_results_html", "report_lines", "write_page"]

_CSS = (
    "body{font:15px/1.5 system-ui,sans-serif;margin:1.5em;color:#222}"
    "table{border-collapse:collapse}td,th{padding:.15em .8em;border-bottom:1px solid #eee;"
    "text-align:left;vertical-align:top}td.n{text-align:right}details{margin:.2em 0}"
    "q{font-family:Georgia,serif}p.cover{margin:.2em 0;font-weight:600}"
)
#: a passage as a results page lists it: its text, its start and end in A's text
Line = tuple[str, int, int]
#: pairs whose passages are listed (the most similar first)
DETAILED_PAIRS = 100


def render_results_html(
    title: str,
    pairs: Sequence[Pair],
    headers: tuple[str, str],
    notes: Sequence[tuple[str, str]] = (),
    passages: Callable[[Pair], tuple[str | None, list[Line]]] | None = None,
    views: Sequence[str] = (),
) -> str:
    """The page: ``title``, a table of ``pairs`` (columns named by ``headers``: what A and B
    are, e.g. ``("checked document", "indexed document")``), for the first
    :data:`DETAILED_PAIRS` pairs what ``passages(pair)`` gives (None: nothing): a headline
    (the aligned coverage in words, or None) and one ``(text, start, end)`` line per passage
    (``start``, ``end``: its span in A's text, as ``data-start``/``data-end``); then
    ``notes`` as ``(level, message)`` (``error`` or ``note``). ``views``: HTML fragments
    (already escaped) shown first, one per checked document
    (:func:`~simdask.evidence.doc_html.doc_view_html`)."""
    rows = []
    for i, p in enumerate(pairs):
        detail = ""
        if passages is not None and i < DETAILED_PAIRS:
            headline, lines = passages(p)
            items = "".join(
                f"<li data-start={s} data-end={e}>{html.escape(x)}</li>" for x, s, e in lines
            )
            detail = (
                f"<p class=cover>{html.escape(headline)}</p>" if headline is not None else ""
            ) + (
                f"<details><summary>{len(lines)} matching passage{'' if len(lines) == 1 else 's'}"
                f"</summary><ol>{items}</ol>"
                "</details>"
                if lines
                else ""
            )
        rows.append(
            f"<tr><td>{html.escape(p.a_key)}</td><td>{html.escape(p.b_key)}</td>"
            f"<td class=n data-v={p.a_in_b:.6f}>{p.a_in_b:.2f}</td>"
            f"<td class=n data-v={p.b_in_a:.6f}>{p.b_in_a:.2f}</td>"
            f"<td>{html.escape(p.wording)}{detail}</td></tr>"
        )
    a, b = (html.escape(h) for h in headers)
    table = (
        "<table id=results class=sortable><thead><tr>"
        f"<th data-type=text>{a} (A)</th><th data-type=text>{b} (B)</th>"
        "<th data-type=num>% of A in B</th><th data-type=num>% of B in A</th>"
        f"<th>in words</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        if pairs
        else "<p id=no-similar>No similar documents.</p>"
    )
    listed = "".join(
        f"<li class={html.escape(level)}>{html.escape(level)}: {html.escape(msg)}</li>"
        for level, msg in notes
    )
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title><style>{_CSS}{VIEW_CSS}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>{''.join(views)}"
        + (f"<h2>All matches (5-word chunks)</h2>{table}" if views else table)
        + (f"<h2>Not compared</h2><ul id=notes>{listed}</ul>" if notes else "")
        + f"<script>{VIEW_JS}</script></body></html>"
    )


def report_lines(rep: dict, text_a: str) -> tuple[str | None, list[Line]]:
    """A pair's report (:mod:`simdask.evidence.pair_view`) as a results page lists it: the
    aligned coverage in words (None for the exact evidence) and one ``(text, start, end)``
    line per passage."""
    return coverage_sentence(rep), [
        (
            f"{passage_label(q)}: “{snippet(text_a, q['doc_start'], q['doc_end'])}”",
            q["doc_start"],
            q["doc_end"],
        )
        for q in rep["passages"]
    ]


def query_page(
    index,
    pairs: list[Pair],
    texts: dict[str, str],
    notes: Sequence[tuple[str, str]],
    options: ViewOptions | None = None,
    excluded: dict[str, frozenset[str]] | None = None,
) -> str:
    """The page of ``query --html``: ``pairs`` (a checked document as A, an indexed one as
    B), each with its passages under the index's exclusions and ``max_df``; ``texts``: the
    checked documents' texts by key; ``excluded``: per checked document, the sources left
    out of its view and total (:func:`~simdask.read.query_sources.query_exclusions`). A pair
    shown in a checked document's view and in the table is aligned once."""
    excluded = excluded or {}

    reports: dict[tuple[str, str], dict] = {}  # each pair aligned once: view and table

    def passages(p: Pair) -> tuple[str | None, list[Line]]:
        a = texts[p.a_key]
        rep = reports.get((p.a_key, p.b_key))
        if rep is None:
            rep = index_report(index, p.a_key, p.b_key, text=a, options=options)
        return report_lines(rep, a)

    views = []
    for key, text in texts.items():
        own = [p for p in pairs if p.a_key == key]
        if own:
            gone = excluded.get(key, frozenset())
            view = document_view(
                index, key, own, text=text, options=options, reports=reports, excluded=gone
            )
            views.append(f"<section class=checked>{doc_view_html(view)}</section>")
    title = f"simdask query: {counted(len(texts), 'checked document')} against {index.path}"
    if options is not None and options.min_words:  # the table counts as the views do
        pairs = _recounted(index, pairs, texts, options, reports)
        title += f"; matches shorter than {options.min_words} words left out"
    # a checked document's own share found in each source first (what a teacher reads)
    ordered = sorted(pairs, key=lambda p: (-p.a_in_b, -p.b_in_a, p.a_key, p.b_key))
    return render_results_html(
        title, ordered, ("checked document", "indexed document"), notes, passages, views
    )


def _recounted(index, pairs: list[Pair], texts, options: ViewOptions, reports) -> list[Pair]:
    """``pairs`` with both percentages as the view counts them (``options.min_words``: the
    long matches only, each direction on its own): from the views' reports where made, else
    from the exact report (the same counts, no alignment)."""
    exact = dataclasses.replace(options, exact_only=True)
    out = []
    for p in pairs:
        rep = reports.get((p.a_key, p.b_key))
        if rep is None:
            rep = index_report(index, p.a_key, p.b_key, text=texts[p.a_key], options=exact)
        out.append(
            Pair(
                p.a_key,
                p.b_key,
                rep["similarity"],
                rep["reverse_similarity"],
                rep["shared"],
                rep["doc_chunks"],
                rep["other_chunks"],
            )
        )
    return out


def compare_page(
    groups: tuple[str, str],
    pairs: list[Pair],
    notes: Sequence[tuple[str, str]],
    k: int = 5,
    exclusions: PairExclusions | None = None,
    options: ViewOptions | None = None,
) -> str:
    """The page of ``compare --html``: the groups' documents (``groups``: the two sources)
    are read again for the passages of the first :data:`DETAILED_PAIRS` pairs; the
    comparison's ``exclusions`` apply to them."""
    texts_a, texts_b = {}, {}
    if pairs:
        wanted_a = {p.a_key for p in pairs[:DETAILED_PAIRS]}
        wanted_b = {p.b_key for p in pairs[:DETAILED_PAIRS]}
        texts_a = {key: t for key, t in read_queries([groups[0]]) if key in wanted_a}
        texts_b = {key: t for key, t in read_queries([groups[1]]) if key in wanted_b}

    def passages(p: Pair) -> tuple[str | None, list[Line]]:
        a, b = texts_a.get(p.a_key), texts_b.get(p.b_key)
        if not isinstance(a, str) or not isinstance(b, str):
            return None, []
        return report_lines(texts_report(p.a_key, a, p.b_key, b, k, exclusions, options), a)

    title = f"simdask compare: {groups[0]} (A) and {groups[1]} (B)"
    if options is not None and options.min_words:  # the pairs were counted the same way
        title += f"; matches shorter than {options.min_words} words left out"
    return render_results_html(title, pairs, ("group A", "group B"), notes, passages)


def write_page(path: str | os.PathLike, text: str) -> None:
    """Write an HTML page atomically (a temporary file beside it, then replace)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
