"""The pages of the static site that answer a teacher's questions (issue 18): which pairs are
most similar (one row per pair), what failed, when and how the index was built, and for each
document its best match and its text with the passages it shares marked.

Pure formatting: the data (pairs, failures, texts, passages) is gathered by
:mod:`simdask.evidence.site`. Every key and text is escaped once here.
"""

from __future__ import annotations

import html
import time
from typing import Any

from simdask.evidence.report_html import excluded_html

__all__ = [
    "MARK_COLORS",
    "doc_body",
    "failed_table",
    "index_info",
    "marked_text",
    "pairs_table",
]

#: colours of the passages shared with a document's 1st, 2nd, 3rd... best match
MARK_COLORS = ("#ffe08a", "#a8e6cf", "#ffb3ba", "#bae1ff", "#d5b3ff")

_SETTINGS = (
    ("k", "words per chunk"),
    ("threshold", "least similarity stored, %"),
    ("top_k", "most similar documents kept per document"),
    ("max_df", "chunks held by more documents than this are not counted"),
    ("similarity_mode", "similarity mode"),
    ("hash_bits", "bits of a hashed chunk"),
)


def _pair_link(a_id: int, b_id: int, linked: set, prefix: str, text: str) -> str:
    pair = (min(a_id, b_id), max(a_id, b_id))
    if pair in linked:
        return f'<a class=report href="{prefix}pairs/{pair[0]}-{pair[1]}.html">{text}</a>'
    return ""


def pairs_table(pairs, ids: dict[str, int], linked: set, prefix: str = "", table_id="") -> str:
    """A table of pairs (:class:`~simdask.read.pairs.Pair`), one row each: both keys (linking
    their pages), both percentages, the wording, the report link when it was written."""
    rows = []
    for p in pairs:
        a, b = html.escape(p.a_key), html.escape(p.b_key)
        ia, ib = ids[p.a_key], ids[p.b_key]
        rows.append(
            f'<tr><td><a href="{prefix}docs/{ia}.html">{a}</a></td>'
            f'<td><a href="{prefix}docs/{ib}.html">{b}</a></td>'
            f"<td class=n>{p.a_in_b:.2f}</td><td class=n>{p.b_in_a:.2f}</td>"
            f"<td>{html.escape(p.wording)}</td>"
            f"<td>{_pair_link(ia, ib, linked, prefix, 'side by side')}</td></tr>"
        )
    ident = f" id={table_id}" if table_id else ""
    return (
        f"<table{ident}><thead><tr><th>document A</th><th>document B</th>"
        "<th>% of A in B</th><th>% of B in A</th><th>in words</th><th></th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def failed_table(failures) -> str:
    """The documents not indexed (:class:`~simdask.storage.failures.Failure`), or a sentence saying
    every document is indexed."""
    if not failures:
        return "<p id=no-failed>Every document found in the sources is indexed.</p>"
    rows = "".join(
        f"<tr><td>{html.escape(f.key)}</td><td>{html.escape(f.kind)}</td>"
        f"<td>{html.escape(f.message)}</td></tr>"
        for f in failures
    )
    return (
        "<table id=failed><thead><tr><th>file</th><th>kind</th><th>why</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def index_info(last_run: dict[str, Any] | None, config: dict[str, Any]) -> str:
    """When the index was last updated (UTC) and its settings, as a paragraph and a list."""
    when = "never"
    if last_run and last_run.get("finished_at"):
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(last_run["finished_at"]))
    items = "".join(
        f"<li>{html.escape(label)}: <span data-setting={name}>"
        f"{html.escape('none' if config[name] is None else str(config[name]))}</span></li>"
        for name, label in _SETTINGS
        if name in config
    )
    return f"<p id=updated>Index last updated: {when}.</p><ul id=settings>{items}</ul>"


def marked_text(
    text: str,
    spans: list[tuple[int, int, int, str]],
    excluded: list[tuple[int, int, str]] | tuple = (),
) -> str:
    """``text`` escaped, with ``<mark>`` around each ``(start, end, match number, title)``
    span (coloured by match number); overlapping spans are clipped so that every character
    is in at most one mark. Text in an ``excluded`` ``(start, end, kind)`` span (sorted) is
    shown as excluded (:func:`~simdask.evidence.report_html.excluded_html`)."""
    out, pos = [], 0
    for start, end, i, title in sorted(spans):
        start = max(start, pos)
        if end <= start:
            continue
        out.append(excluded_html(text, pos, start, excluded))
        color = MARK_COLORS[i % len(MARK_COLORS)]
        out.append(
            f'<mark data-match="{i}" style="background:{color}" title="{html.escape(title)}">'
            f"{html.escape(text[start:end])}</mark>"
        )
        pos = end
    out.append(excluded_html(text, pos, len(text), excluded))
    return "".join(out)


def doc_body(d, pairs, ids: dict[str, int], linked: set, text_html: str | None) -> str:
    """The body of a document's page: its best match in words (or that it has none), its
    pairs, and its text with the shared passages marked (``text_html``, already escaped)."""
    head = (
        f'<p><a href="../index.html">all documents</a></p><h1>{html.escape(d.key)}</h1>'
        f"<p>{d.n_words} words, {d.status}.</p>"
    )
    if pairs:
        best = pairs[0]
        head += (
            f"<p id=best>Best match: <strong>{html.escape(best.b_key)}</strong>: "
            f"{html.escape(best.wording)}.</p>" + pairs_table(pairs, ids, linked, "../", "similar")
        )
    else:
        head += (
            "<p id=no-similar>No similar documents: no other document shares enough text "
            "with this one to pass the index's threshold.</p>"
        )
    if text_html is not None:
        legend = "".join(
            f'<span style="background:{MARK_COLORS[i % len(MARK_COLORS)]}">'
            f"{html.escape(p.b_key)}</span> "
            for i, p in enumerate(pairs[: len(MARK_COLORS)])
        )
        head += (
            "<h2>Text</h2>"
            + (f"<p>Marked: passages shared with {legend}</p>" if legend else "")
            + (
                "<p id=excl-legend><span class=excl>greyed out</span>: text the index "
                "excludes (template, quotation, reference list), not counted</p>"
                if 'class="excl ' in text_html
                else ""
            )
            + f"<div id=text class=text>{text_html}</div>"
        )
    return head
