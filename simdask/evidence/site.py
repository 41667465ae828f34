"""A static HTML site to browse an index: documents (searchable), each document's matches,
pair reports, and the similarity histogram of the base on the front page."""

from __future__ import annotations

import html
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from simdask.errors import ConfigError, DocumentNotFoundError
from simdask.evidence.doc_html import (
    VIEW_CSS,
    VIEW_JS,
    doc_head_html,
    doc_text_html,
    number_cell,
    sort_header,
)
from simdask.evidence.doc_view import NOT_COMPUTED, document_view, view_sources
from simdask.evidence.pair_view import ViewOptions
from simdask.evidence.report_html import render_pair_html
from simdask.evidence.site_data import write_site_data
from simdask.evidence.site_pages import (
    NOT_EXPORTED,
    doc_body,
    failed_table,
    index_info,
    pairs_table,
)
from simdask.evidence.site_pair_page import pair_page_body
from simdask.evidence.site_pool import compute_reports, default_workers
from simdask.evidence.site_reports import SiteReports
from simdask.evidence.text_cache import TextCache
from simdask.progress import Callback
from simdask.read.total_reads import pair_aligned
from simdask.storage.decisions import excluded_by_doc

__all__ = ["PER_DOCUMENT", "SiteLimits", "export_site", "histogram_bars", "histogram_svg"]

#: pairs in the front page's table of the most similar pairs
TOP_PAIRS = 200
#: pair pages by default: each document's most similar partners (issue 31 item 7)
PER_DOCUMENT = 3

_CSS = (
    "body{font:15px/1.5 system-ui,sans-serif;margin:1.5em;color:#222}"
    "table{border-collapse:collapse}td,th{padding:.15em .8em;border-bottom:1px solid #eee;"
    "text-align:left}td.n{text-align:right}a.report{white-space:nowrap}"
    "input{font-size:1em;padding:.3em;width:20em}"
    ".text{white-space:pre-wrap;font-family:Georgia,serif;max-width:50em}" + VIEW_CSS
)


def _page(title: str, body: str) -> str:
    return (
        f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{html.escape(title)}"
        f"</title><style>{_CSS}</style></head><body>{body}<script>{VIEW_JS}</script>"
        "</body></html>"
    )


def histogram_svg(similarities: list[float], bins: int = 10, width: int = 600) -> str:
    """An inline SVG bar chart of similarities (percent) in ``bins`` equal ranges of 0..100."""
    counts = [0] * bins
    for s in similarities:
        counts[min(bins - 1, int(s * bins / 100.0))] += 1
    return histogram_bars(counts, width)


def histogram_bars(counts: list[int], width: int = 600) -> str:
    """The SVG bar chart of pair counts per equal similarity range of 0..100 percent."""
    bins = len(counts)
    top = max(counts) or 1
    bw, h = width // bins, 160
    bars = []
    for i, c in enumerate(counts):
        bh = int(h * c / top)
        lo, hi = i * 100 // bins, (i + 1) * 100 // bins
        bars.append(
            f'<rect x="{i * bw + 2}" y="{h - bh}" width="{bw - 4}" height="{bh}" fill="#4a7bd0"'
            f' data-count="{c}"><title>{lo}-{hi} %: {c} pairs</title></rect>'
            f'<text x="{i * bw + bw // 2}" y="{h + 14}" font-size="11" text-anchor="middle">'
            f"{lo}-{hi}</text>"
            f'<text x="{i * bw + bw // 2}" y="{max(12, h - bh - 3)}" font-size="11"'
            f' text-anchor="middle">{c}</text>'
        )
    return (
        f'<svg id="histogram" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h + 20}"'
        f' role="img" aria-label="similarity histogram">{"".join(bars)}</svg>'
    )


@dataclass(frozen=True)
class SiteLimits:
    """Which pair pages a site gets: stored pairs at least ``min_similarity`` percent
    similar (the higher direction); with ``per_document``, a pair only if it is among the
    ``per_document`` most similar pairs of one of its two documents (by default
    :data:`PER_DOCUMENT`: the site's size grows with the documents, not the stored pairs);
    at most ``max_pairs`` in all (None: no cap), the most similar first; ``pairs``: only these
    pairs of keys (None: all stored). :meth:`everything`: a page for every stored pair."""

    min_similarity: float = 0.0
    max_pairs: int | None = 20_000
    per_document: int | None = PER_DOCUMENT
    pairs: tuple[tuple[str, str], ...] | None = None

    def __post_init__(self) -> None:
        for name in ("max_pairs", "per_document"):
            value = getattr(self, name)
            if value is not None and (type(value) is not int or value < 0):
                raise ConfigError(f"{name} must be a whole number >= 0 or None, found {value!r}")

    @classmethod
    def chosen(
        cls,
        min_similarity: float = 0.0,
        max_pairs: int | None = 20_000,
        per_document: int | None = None,
        pairs: tuple[tuple[str, str], ...] | None = None,
        all_pairs: bool = False,
    ) -> SiteLimits:
        """The limits ``export-html`` asks for: ``all_pairs``, every stored pair (of
        ``pairs`` when given); ``per_document`` None: :data:`PER_DOCUMENT`, or every pair
        listed in ``pairs``."""
        if all_pairs:
            return cls(min_similarity, None, None, pairs)
        if per_document is None and pairs is None:
            per_document = PER_DOCUMENT
        return cls(min_similarity, max_pairs, per_document, pairs)

    @classmethod
    def everything(cls, min_similarity: float = 0.0) -> SiteLimits:
        """A pair page for every stored pair at least ``min_similarity`` similar
        (``--all-pairs``)."""
        return cls(min_similarity, max_pairs=None, per_document=None)


def export_site(
    index,
    outdir: str | os.PathLike,
    min_similarity: float = 0.0,
    max_pairs: int = 20_000,
    callback: Callback | None = None,
    limits: SiteLimits | None = None,
    options: ViewOptions | None = None,
    workers: int | None = None,
    cache: bool = True,
) -> dict[str, int]:
    """Write the site into ``outdir``: ``index.html``, ``docs/<doc id>.html`` (each document
    with the passages of all its sources marked), one ``pairs/<a>-<b>.html`` side-by-side
    page per chosen pair (``limits``; without it, ``min_similarity`` and ``max_pairs`` as
    :class:`SiteLimits`, so each document's :data:`PER_DOCUMENT` best partners), and
    ``pair.html``, where every other stored pair links (``#<a>-<b>``): it shows the pair's
    exact passages side by side, computed in the browser from ``data/``
    (:mod:`~simdask.evidence.site_data`), and the command that writes its full page.
    Returns counts: ``documents``, ``pairs`` (pages written), ``pairs_skipped`` (stored
    pairs at least ``min_similarity`` similar without a page), ``reports_computed`` (pairs
    of texts aligned), ``data_texts`` and ``data_bytes`` (the distinct texts in ``data/``
    and the bytes of all of it). Passages are found as every view finds
    them (:func:`~simdask.evidence.pair_view.index_report` with ``options``: the aligner's,
    or the exact evidence), under the index's exclusions, each pair of texts once
    (:class:`~simdask.evidence.site_reports.SiteReports`), first all of them on ``workers``
    processes (None: one per core; 1: this process alone;
    :func:`~simdask.evidence.site_pool.compute_reports`), each text's own part once per
    process (``cache``; False: computed for each pair, the same site).

    The front page and the document pages are written first (so the site is usable at once),
    then the pair pages, most similar first, each file atomically. An interrupt
    (``KeyboardInterrupt``) during the pair pages rewrites the document pages to link only
    the pages written, then propagates: the site stays usable.
    """
    cb = callback or Callback()
    lim = limits or SiteLimits(min_similarity, max_pairs)
    out = Path(outdir)
    (out / "docs").mkdir(parents=True, exist_ok=True)
    (out / "pairs").mkdir(exist_ok=True)
    docs = index.catalog.documents()
    by_key = {d.key: d for d in docs}
    rows = index.pair_list()  # unordered pairs, each once, the larger similarity first
    chosen, candidates = _choose_pairs(rows, by_key, lim)
    reports = SiteReports(index, options, TextCache() if cache else None)
    by_id = {d.doc_id: d for d in docs}
    matches, totals = _matches(rows), {t.doc: t for t in index.totals()}
    needed = _needed(
        index, docs, matches, totals, [(by_id[a].key, by_id[b].key) for a, b in chosen]
    )
    compute_reports(index, reports, needed, default_workers() if workers is None else workers, cb)
    data = write_site_data(index, out, docs, reports.options)
    _write(out / NOT_EXPORTED, _page("simdask: a pair side by side", pair_page_body()))
    _write_pages(index, out, docs, rows, set(chosen), cb, reports)
    cb.stage("pairs", len(chosen))
    written: set[tuple[int, int]] = set()
    try:
        for a, b in chosen:
            ka, kb = by_id[a].key, by_id[b].key
            rep = reports.known(ka, kb) or reports.known(kb, ka)  # a document page's
            rep = rep or reports(index, ka, kb, options=reports.options)
            page = render_pair_html(rep, index.text(rep["doc"]), index.text(rep["other"]))
            _write(out / "pairs" / f"{a}-{b}.html", page)
            written.add((a, b))
            cb.advance(1)
    except KeyboardInterrupt:
        _write_pages(index, out, docs, rows, written, Callback(), reports)
        raise
    finally:
        cb.end_stage()
    return {
        "documents": len(docs),
        "pairs": len(chosen),
        "pairs_skipped": candidates - len(chosen),
        "reports_computed": reports.computed,
        "data_texts": data["texts"],
        "data_bytes": data["bytes"],
    }


def _matches(rows) -> dict[str, list]:
    """Each document's stored pairs, seen from it (``a_key``: it), the larger first."""
    out = defaultdict(list)
    for r in rows:
        out[r.a_key].append(r)
        out[r.b_key].append(r.swapped())
    return out


def _needed(index, docs, matches, totals, pairs) -> list[tuple[str, str]]:
    """The pair reports ``(key, other)`` the site's pages show: each document page's
    sources (:func:`~simdask.evidence.doc_view.view_sources`), then the pair pages
    (``pairs``, keys) whose report no document page has, either way round."""
    gone = excluded_by_doc(index.catalog, [d.key for d in docs])
    out = []
    for d in docs:
        srcs = view_sources(
            index, d.key, matches.get(d.key, []), totals.get(d.key), gone.get(d.key, frozenset())
        )
        out += [(d.key, o) for o in srcs]
    shown = set(out)
    out += [(a, b) for a, b in pairs if (a, b) not in shown and (b, a) not in shown]
    return out


def _choose_pairs(rows, by_key, lim: SiteLimits) -> tuple[list[tuple[int, int]], int]:
    """The pairs (doc IDs, smaller first) to write reports for, most similar first, and how
    many pairs passed ``min_similarity`` (and the pair list) before the count limits."""
    listed = None
    if lim.pairs is not None:
        listed = set()
        for ka, kb in lim.pairs:
            for k in (ka, kb):
                if k not in by_key:
                    raise DocumentNotFoundError(f"no document with key {k!r} in the index")
            listed.add(tuple(sorted((by_key[ka].doc_id, by_key[kb].doc_id))))
    best: dict[tuple[int, int], float] = {}
    for r in rows:
        pair = tuple(sorted((by_key[r.a_key].doc_id, by_key[r.b_key].doc_id)))
        if r.larger >= lim.min_similarity and (listed is None or pair in listed):
            best[pair] = r.larger
    order = sorted(best, key=lambda p: (-best[p], p))
    if lim.per_document is not None:
        taken: dict[int, int] = defaultdict(int)
        kept = []
        for a, b in order:  # most similar first: each document's best come first
            if taken[a] < lim.per_document or taken[b] < lim.per_document:
                kept.append((a, b))
            taken[a] += 1
            taken[b] += 1
        order = kept
    return (order if lim.max_pairs is None else order[: lim.max_pairs]), len(best)


def _write(path: Path, text: str) -> None:
    """Write ``text`` atomically (temporary file, then replace)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _write_pages(
    index, out: Path, docs, rows, linked: set, cb: Callback, reports: SiteReports
) -> None:
    """The document pages (linking the reports in ``linked``), then the front page."""
    matches = _matches(rows)  # each document's pairs, seen from it, the larger first
    ids = {d.key: d.doc_id for d in docs}
    totals = {t.doc: t for t in index.totals()}
    aligned = pair_aligned(index.catalog, [k for r in rows for k in _both(r)])
    cb.stage("documents", len(docs))
    for d in docs:
        pairs = matches.get(d.key, [])
        view = document_view(
            index, d.key, pairs, total=totals.get(d.key), options=reports.options, report=reports
        )
        parts = (doc_head_html(view, *_links(ids, d.doc_id, linked)), doc_text_html(view))
        body = doc_body(d, pairs, ids, linked, parts, aligned)
        _write(out / "docs" / f"{d.doc_id}.html", _page(d.key, body))
        cb.advance(1)
    cb.end_stage()
    top = {k: max((r.a_in_b for r in v), default=0.0) for k, v in matches.items()}
    failures = index.failures()
    n_failed = sum(1 for f in failures if not f.indexed)
    shown = rows[:TOP_PAIRS]
    body = (
        f"<h1>simdask: {len(docs)} documents, {len(rows)} similar pairs</h1>"
        + "<h2>Documents, the most found elsewhere first</h2>"
        + _documents_table(docs, totals, top, ids)
        + index_info(index.catalog.last_run(), index.config.to_dict())
        + f"<h2>The {len(shown)} most similar pairs (5-word chunks)</h2>"
        + (
            pairs_table(shown, ids, linked, "", "top-pairs", aligned)
            if shown
            else "<p id=no-pairs>No similar documents: no two documents share enough text.</p>"
        )
        + f"<p id=pages-written>{_pages_written(len(linked), len(rows))}</p>"
        + f"<h2>Files not indexed ({n_failed}) and too short to compare</h2>"
        + failed_table(failures)
        + "<h2>Similarity of the pairs (percent, the larger of the two)</h2>"
        + histogram_svg([r.larger for r in rows])
    )
    _write(out / "index.html", _page("simdask index", body))


def _pages_written(written: int, stored: int) -> str:
    """How many pairs have a side-by-side page, and what the others link to."""
    pages = "1 pair page" if written == 1 else f"{written:,} pair pages"
    rest = stored - written
    if rest <= 0:
        return f"{pages} written (side by side): every stored pair."
    others = "the other stored pair links" if rest == 1 else f"the other {rest:,} stored pairs link"
    return (
        f"{pages} written (side by side); {others} to {NOT_EXPORTED}, which shows its "
        "exact passages side by side, computed in the browser (export-html --all-pairs "
        "writes every pair's page)."
    )


def _both(p) -> tuple[tuple[str, str], tuple[str, str]]:
    return (p.a_key, p.b_key), (p.b_key, p.a_key)


def _links(ids: dict[str, int], doc_id: int, linked: set):
    """``(href, report)`` of a document page's sources: the source's page, the pair's
    report when it was written (None: not written)."""

    def href(key: str) -> str | None:
        return f"{ids[key]}.html" if key in ids else None

    def report(key: str) -> str | None:
        if key not in ids:
            return None
        pair = (min(doc_id, ids[key]), max(doc_id, ids[key]))
        return f"../pairs/{pair[0]}-{pair[1]}.html" if pair in linked else None

    return href, report


def _documents_table(docs, totals, top: dict[str, float], ids: dict[str, int]) -> str:
    """The front page's documents, the largest total first (those without one last, "not
    computed"), sortable and filterable, with their best source and best chunk match."""

    def order(d):
        t = totals.get(d.key)
        return (t is None, -(t.total if t else 0.0), -top.get(d.key, 0.0), d.key)

    trs = []
    for d in sorted(docs, key=order):
        t = totals.get(d.key)
        best = t.sources[0] if t is not None and t.sources else None
        src = (
            f'<a href="docs/{ids[best.key]}.html">{html.escape(best.key)}</a>'
            if best is not None and best.key in ids
            else ""
        )
        trs.append(
            f'<tr data-key="{html.escape(d.key)}"><td><a href="docs/{d.doc_id}.html">'
            f"{html.escape(d.key)}</a></td><td class=n data-v={d.n_words}>{d.n_words}</td>"
            + number_cell(None if t is None else t.total, "not computed")
            + f"<td>{src}</td>"
            + number_cell(None if best is None else best.share, "")
            + number_cell(top.get(d.key, 0.0))
            + "</tr>"
        )
    note = (
        ""
        if len(totals) == len(docs)
        else f"<p id=totals-missing>{len(docs) - len(totals)} documents: "
        f"{html.escape(NOT_COMPUTED)}.</p>"
    )
    return (
        note + "<p><input id=q class=filter data-table=docs placeholder='filter by key'>"
        "<label>total at least <input type=number class=min-filter data-table=docs data-col=2 "
        "min=0 max=100 step=1> %</label></p><table id=docs class=sortable><thead><tr>"
        + sort_header("key", "text")
        + sort_header("words")
        + sort_header("% found in other documents", title="the total: aligned passages")
        + sort_header("best source", "text")
        + sort_header("% found in it")
        + sort_header("% of its chunks in its best match", title="5-word chunks")
        + f"</tr></thead><tbody>{''.join(trs)}</tbody></table>"
    )
