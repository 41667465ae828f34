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

__all__ = [
    "NOT_EXPORTED",
    "doc_body",
    "failed_table",
    "index_info",
    "not_exported_page",
    "pairs_table",
]

#: the page every pair without a side-by-side page links to (``#<a>-<b>``: which pair)
NOT_EXPORTED = "not-exported.html"

_NOT_EXPORTED_JS = r"""
(function(){'use strict';
function key(i){var li=document.querySelector('#keys li[data-id="'+i+'"]');
  return li?li.textContent:null;}
function q(s){return "'"+s.replace(/'/g,"'\\''")+"'";}
function show(){
  var m=/^#(\d+)-(\d+)$/.exec(location.hash),box=document.getElementById('this-pair');
  if(!m){box.hidden=true;return;}
  var a=key(m[1]),b=key(m[2]);if(a===null||b===null){box.hidden=true;return;}
  document.getElementById('pair-keys').textContent=a+' and '+b;
  document.getElementById('pair-cmd').textContent='simdask report INDEX '+q(a)+' '+q(b)+
    ' --html '+m[1]+'-'+m[2]+'.html';
  box.hidden=false;}
window.addEventListener('hashchange',show);show();
})();
"""

_SETTINGS = (
    ("k", "words per chunk"),
    ("threshold", "least similarity stored, %"),
    ("top_k", "most similar documents kept per document"),
    ("max_df", "chunks held by more documents than this are not counted"),
    ("similarity_mode", "similarity mode"),
    ("hash_bits", "bits of a hashed chunk"),
)


def _pair_link(a_id: int, b_id: int, linked: set, prefix: str, text: str) -> str:
    """The pair's side-by-side page, or the page saying how to write it."""
    pair = (min(a_id, b_id), max(a_id, b_id))
    if pair in linked:
        return f'<a class=report href="{prefix}pairs/{pair[0]}-{pair[1]}.html">{text}</a>'
    return (
        f'<a class=noexp href="{prefix}{NOT_EXPORTED}#{pair[0]}-{pair[1]}" '
        'title="no side-by-side page in this site: how to write it">not exported</a>'
    )


def not_exported_page(docs) -> str:
    """The body of :data:`NOT_EXPORTED`: why a pair has no side-by-side page, the commands
    that write one, and (with ``#<a>-<b>``, doc IDs, and script) the command for that pair;
    ``docs``: the index's documents (``doc_id``, ``key``)."""
    keys = "".join(f"<li data-id={d.doc_id}>{html.escape(d.key)}</li>" for d in docs)
    return (
        '<p><a href="index.html">all documents</a></p>'
        "<h1>Pair not exported</h1>"
        "<p>This site has a side-by-side page for each document's most similar partners "
        "only, so that it stays small whatever the number of stored pairs. Each document's "
        "page still marks the passages of all its sources in its text.</p>"
        "<div id=this-pair hidden><p>The side-by-side page of <strong id=pair-keys></strong>"
        " is written by:</p><pre id=pair-cmd></pre></div>"
        "<p>Any pair: <code>simdask report INDEX A B --html FILE</code> (A, B: the keys). "
        "Every stored pair: <code>simdask export-html INDEX OUTDIR --all-pairs</code>; the "
        "pairs listed in a file of <code>KEY_A&lt;TAB&gt;KEY_B</code> lines: "
        "<code>simdask export-html INDEX OUTDIR --pairs FILE</code>.</p>"
        f"<ul id=keys hidden>{keys}</ul><script>{_NOT_EXPORTED_JS}</script>"
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
