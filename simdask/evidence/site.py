"""A static HTML site to browse an index: documents (searchable), each document's matches,
pair reports, and the similarity histogram of the base on the front page."""

from __future__ import annotations

import html
import os
from collections import defaultdict
from pathlib import Path

from simdask.evidence.report_html import render_pair_html
from simdask.kernels.similarity import containment
from simdask.progress import Callback

__all__ = ["export_site", "histogram_svg"]

_CSS = (
    "body{font:15px/1.5 system-ui,sans-serif;margin:1.5em;color:#222}"
    "table{border-collapse:collapse}td,th{padding:.15em .8em;border-bottom:1px solid #eee;"
    "text-align:left}td.n{text-align:right}input{font-size:1em;padding:.3em;width:20em}"
)
_SEARCH_JS = (
    "document.getElementById('q').addEventListener('input',function(){var q=this.value"
    ".toLowerCase();document.querySelectorAll('#docs tbody tr').forEach(function(r){"
    "r.style.display=r.dataset.key.indexOf(q)<0?'none':''})});"
)


def _page(title: str, body: str, script: str = "") -> str:
    return (
        f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{html.escape(title)}"
        f"</title><style>{_CSS}</style></head><body>{body}<script>{script}</script></body></html>"
    )


def histogram_svg(similarities: list[float], bins: int = 10, width: int = 600) -> str:
    """An inline SVG bar chart of similarities (percent) in ``bins`` equal ranges of 0..100."""
    counts = [0] * bins
    for s in similarities:
        counts[min(bins - 1, int(s * bins / 100.0))] += 1
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


def export_site(
    index,
    outdir: str | os.PathLike,
    min_similarity: float = 0.0,
    max_pairs: int = 20_000,
    callback: Callback | None = None,
) -> dict[str, int]:
    """Write the site into ``outdir``: ``index.html``, ``docs/<doc id>.html`` and one
    ``pairs/<a>-<b>.html`` report per stored pair with similarity >= ``min_similarity``
    percent either way (at most ``max_pairs``, the most similar first). Returns counts."""
    cb = callback or Callback()
    out = Path(outdir)
    (out / "docs").mkdir(parents=True, exist_ok=True)
    (out / "pairs").mkdir(exist_ok=True)
    docs = index.catalog.documents()
    by_key = {d.key: d for d in docs}
    rows = index.pairs()
    matches = defaultdict(list)
    for r in rows:
        matches[r.doc].append(r)
    best = {}
    for r in rows:
        a, b = sorted((by_key[r.doc].doc_id, by_key[r.other].doc_id))
        if r.similarity >= min_similarity:
            best[(a, b)] = max(best.get((a, b), 0.0), r.similarity)
    chosen = sorted(best, key=lambda p: -best[p])[:max_pairs]
    by_id = {d.doc_id: d for d in docs}
    cb.stage("pairs", len(chosen))
    for a, b in chosen:
        ka, kb = by_id[a].key, by_id[b].key
        rep = index.report(ka, kb)
        page = render_pair_html(rep, index.text(ka), index.text(kb))
        (out / "pairs" / f"{a}-{b}.html").write_text(page, encoding="utf-8")
        cb.advance(1)
    cb.end_stage()
    linked = set(chosen)
    for d in docs:
        items = []
        for r in matches.get(d.key, []):
            o = by_key[r.other]
            pair = tuple(sorted((d.doc_id, o.doc_id)))
            name = html.escape(r.other)
            link = (
                f'<a href="../pairs/{pair[0]}-{pair[1]}.html">{name}</a>'
                if pair in linked
                else name
            )
            items.append(
                f"<tr><td>{link}</td><td class=n>{r.similarity:.2f}</td>"
                f"<td class=n>{containment(r.shared, o.n_chunks):.2f}</td>"
                f"<td class=n>{r.shared}</td></tr>"
            )
        body = (
            f'<p><a href="../index.html">all documents</a></p><h1>{html.escape(d.key)}</h1>'
            f"<p>{d.n_words} words, {d.n_chunks} chunks, {d.status}</p>"
            "<table><thead><tr><th>similar document</th><th>% of this in it</th>"
            "<th>% of it in this</th><th>shared chunks</th></tr></thead><tbody>"
            + "".join(items)
            + "</tbody></table>"
        )
        (out / "docs" / f"{d.doc_id}.html").write_text(_page(d.key, body), encoding="utf-8")
    top = {k: max((r.similarity for r in v), default=0.0) for k, v in matches.items()}
    trs = "".join(
        f'<tr data-key="{html.escape(d.key.lower())}"><td><a href="docs/{d.doc_id}.html">'
        f"{html.escape(d.key)}</a></td><td class=n>{d.n_words}</td>"
        f"<td class=n>{top.get(d.key, 0.0):.2f}</td></tr>"
        for d in sorted(docs, key=lambda d: (-top.get(d.key, 0.0), d.key))
    )
    body = (
        f"<h1>simdask: {len(docs)} documents, {len(rows)} similar pairs</h1>"
        "<h2>Similarity of the stored pairs (percent)</h2>"
        + histogram_svg([r.similarity for r in rows])
        + "<h2>Documents</h2><p><input id=q placeholder='search by key'></p>"
        "<table id=docs><thead><tr><th>key</th><th>words</th><th>best match %</th></tr>"
        f"</thead><tbody>{trs}</tbody></table>"
    )
    (out / "index.html").write_text(_page("simdask index", body, _SEARCH_JS), encoding="utf-8")
    return {"documents": len(docs), "pairs": len(chosen), "pairs_skipped": len(best) - len(chosen)}
