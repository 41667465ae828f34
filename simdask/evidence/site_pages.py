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

from simdask.evidence.doc_html import number_cell, sort_header
from simdask.evidence.site_pair_page import PAIR_PAGE

__all__ = [
    "NOT_EXPORTED",
    "doc_body",
    "failed_table",
    "index_info",
    "pairs_table",
]

#: the page every pair without a side-by-side page links to (``#<a>-<b>``: which pair); it
#: renders the pair in the browser (:mod:`.site_pair_page`)
NOT_EXPORTED = PAIR_PAGE

_SETTINGS = (
    ("k", "words per chunk"),
    ("threshold", "least similarity stored, %"),
    ("top_k", "most similar documents kept per document"),
    ("max_df", "chunks held by more documents than this are not counted"),
    ("similarity_mode", "similarity mode"),
    ("hash_bits", "bits of a hashed chunk"),
)


def _pair_link(a_id: int, b_id: int, linked: set, prefix: str, text: str) -> str:
    """The pair's side-by-side page, or the generic page rendering it in the browser."""
    pair = (min(a_id, b_id), max(a_id, b_id))
    if pair in linked:
        return f'<a class=report href="{prefix}pairs/{pair[0]}-{pair[1]}.html">{text}</a>'
    return (
        f'<a class=noexp href="{prefix}{NOT_EXPORTED}#{pair[0]}-{pair[1]}" '
        'title="exact passages, computed in the browser">side by side (exact)</a>'
    )


def pairs_table(
    pairs,
    ids: dict[str, int],
    linked: set,
    prefix: str = "",
    table_id="",
    aligned: dict[tuple[str, str], float] | None = None,
) -> str:
    """A table of pairs (:class:`~simdask.read.undirected_pairs.Pair`), one row each: both
    keys (linking their pages), both percentages, the wording, the report link when it was
    written, and
    the aligned coverage both ways (``aligned``: ``(doc, other) -> percent`` of ``doc``
    inside passages taken from ``other``; a pair not in it: "—", never aligned). Sortable by
    every number and key."""
    aligned = aligned or {}
    rows = []
    for p in pairs:
        a, b = html.escape(p.a_key), html.escape(p.b_key)
        ia, ib = ids[p.a_key], ids[p.b_key]
        rows.append(
            f'<tr data-key="{a} {b}"><td><a href="{prefix}docs/{ia}.html">{a}</a></td>'
            f'<td><a href="{prefix}docs/{ib}.html">{b}</a></td>'
            f"<td class=n data-v={p.a_in_b:.6f}>{p.a_in_b:.2f}</td>"
            f"<td class=n data-v={p.b_in_a:.6f}>{p.b_in_a:.2f}</td>"
            f"<td>{html.escape(p.wording)}</td>"
            f"<td>{_pair_link(ia, ib, linked, prefix, 'side by side')}</td>"
            + number_cell(aligned.get((p.a_key, p.b_key)))
            + number_cell(aligned.get((p.b_key, p.a_key)))
            + "</tr>"
        )
    ident = f" id={table_id}" if table_id else ""
    return (
        f"<table{ident} class=sortable><thead><tr>"
        + sort_header("document A", "text")
        + sort_header("document B", "text")
        + sort_header("% of A in B", title="5-word chunks of A found in B")
        + sort_header("% of B in A", title="5-word chunks of B found in A")
        + "<th>in words</th><th></th>"
        + sort_header("% of A found in B (passages)", title="aligned coverage")
        + sort_header("% of B found in A (passages)", title="aligned coverage")
        + f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
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


def doc_body(
    d, pairs, ids: dict[str, int], linked: set, view: tuple[str, str], aligned=None
) -> str:
    """The body of a document's page: its words, the top of its view (``view[0]``: the total
    first, its sources; :func:`~simdask.evidence.doc_html.doc_head_html`), its best match and
    stored pairs by 5-word chunks (or that it has none), then the bottom of its view
    (``view[1]``: its text with every source's passages marked); ``aligned``: as
    :func:`pairs_table`."""
    head = (
        f'<p><a href="../index.html">all documents</a></p><h1>{html.escape(d.key)}</h1>'
        f"<p>{d.n_words} words, {d.status}.</p>{view[0]}"
    )
    if pairs:
        best = pairs[0]
        head += (
            "<h2>Stored pairs (5-word chunks)</h2>"
            f"<p id=best>Best match: <strong>{html.escape(best.b_key)}</strong>: "
            f"{html.escape(best.wording)}.</p>"
            + pairs_table(pairs, ids, linked, "../", "similar", aligned)
        )
    else:
        head += (
            "<p id=no-similar>No similar documents: no other document shares enough text "
            "with this one to pass the index's threshold.</p>"
        )
    return head + view[1]
