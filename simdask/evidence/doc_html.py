"""The HTML of one document with all its sources (:class:`~simdask.evidence.doc_view.DocView`),
shared by the web page (``serve``), the static site (``export-html``) and ``query --html``:
the total first, in a teacher's words; the sources with their shares in a table that sorts and
filters; the chunk containment folded in a details section; the text with the passages of
every source marked, one colour per source; a list of the passages with links and a "next
passage" button in a header small enough to leave the text most of a 1024x700 window; a
legend for the excluded text.

Pure formatting: every key and text is escaped once here. The behaviour (sorting, filtering,
next passage) is :data:`VIEW_JS`, inlined by the site and served as ``/view.js`` by the web
page (whose content security policy allows no inline script).
"""

from __future__ import annotations

import html
from collections.abc import Callable

from simdask.evidence.doc_view import DocView, total_sentence
from simdask.evidence.pair_view import passage_label
from simdask.evidence.report_html import excluded_html
from simdask.read.review import iso_time

__all__ = [
    "SOURCE_COLORS",
    "VIEW_CSS",
    "VIEW_JS",
    "date_cell",
    "doc_head_html",
    "doc_text_html",
    "doc_view_html",
    "marked_sources",
    "number_cell",
    "sort_header",
]

#: one colour per source of a document (its 1st, 2nd, ... source by share)
SOURCE_COLORS = (
    "#ffe08a",
    "#a8e6cf",
    "#ffb3ba",
    "#bae1ff",
    "#d5b3ff",
    "#ffd1a8",
    "#c8f7a0",
    "#f7c8e0",
)

VIEW_CSS = (
    ".docview-head{position:sticky;top:0;background:#fafafa;border-bottom:1px solid #ddd;"
    "padding:.3em .6em;z-index:1}"
    "p.total{font-size:1.25em;font-weight:700;margin:.1em 0}p.total.none{color:#a00}"
    "div.passages{max-height:2.8em;overflow:auto;font-size:.9em}"
    "div.passages a{margin-right:.6em;white-space:nowrap;color:#222}"
    "td.src,a.report,td.n,td.d{white-space:nowrap}"
    "span.sw{display:inline-block;width:.9em;height:.9em;border-radius:2px;"
    "vertical-align:middle;margin-right:.2em}"
    "#next-passage{font-size:.9em;margin-left:.4em}"
    "table.sortable th[data-type]{cursor:pointer;white-space:nowrap}"
    "table.sortable th[data-type]::after{content:' \\2195';color:#999}"
    "input.filter{font-size:1em;padding:.2em;width:16em;margin-right:1em}"
    "input.min-filter{width:5em}"
    ".text{white-space:pre-wrap;word-wrap:break-word;font-family:Georgia,serif;max-width:50em}"
    ".text mark{border-radius:2px;padding:0 1px}mark.flash{outline:3px solid #d33}"
    ".excl{color:#777;background:repeating-linear-gradient(135deg,#eee 0 6px,#f7f7f7 6px 12px)}"
    ".legend span{padding:0 .4em;margin-right:.6em}"
    "mark.q-from-quote,span.q-from-quote{outline:2px solid #b60}"
    "mark.q-quoted,span.q-quoted{outline:2px dashed #b60;font-style:italic}"
)

VIEW_JS = r"""
(function(){'use strict';
function val(td){var v=td.getAttribute('data-v');return v===null?td.textContent.trim():v;}
document.querySelectorAll('table.sortable').forEach(function(t){
  t.querySelectorAll('th[data-type]').forEach(function(th,_){
    th.addEventListener('click',function(){
      var col=Array.prototype.indexOf.call(th.parentNode.children,th);
      var num=th.getAttribute('data-type')==='num';
      var desc=th.getAttribute('data-dir')!=='desc';
      t.querySelectorAll('th[data-dir]').forEach(function(h){h.removeAttribute('data-dir');});
      th.setAttribute('data-dir',desc?'desc':'asc');
      var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){
        var x=val(a.cells[col]),y=val(b.cells[col]);
        if(num){x=x===''?-1:parseFloat(x);y=y===''?-1:parseFloat(y);}
        var c=x<y?-1:x>y?1:0;return desc?-c:c;});
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
});
function refilter(id){
  var t=document.getElementById(id);if(!t)return;
  var words=document.querySelectorAll('input.filter[data-table="'+id+'"]');
  var mins=document.querySelectorAll('input.min-filter[data-table="'+id+'"]');
  Array.prototype.forEach.call(t.tBodies[0].rows,function(r){
    var show=true;
    words.forEach(function(w){var q=w.value.toLowerCase();
      if(q&&(r.getAttribute('data-key')||'').toLowerCase().indexOf(q)<0)show=false;});
    mins.forEach(function(m){var lo=parseFloat(m.value);if(isNaN(lo))return;
      var v=val(r.cells[parseInt(m.getAttribute('data-col'),10)]);
      if(v===''||parseFloat(v)<lo)show=false;});
    r.style.display=show?'':'none';});
}
document.querySelectorAll('input.filter,input.min-filter').forEach(function(i){
  i.addEventListener('input',function(){refilter(i.getAttribute('data-table'));});
});
var next=document.getElementById('next-passage');
if(next)next.addEventListener('click',function(){
  var head=document.querySelector('.docview-head');
  var top=head?head.getBoundingClientRect().bottom+4:0;
  var marks=document.querySelectorAll('#text mark[id]');if(!marks.length)return;
  var go=marks[0];
  for(var i=0;i<marks.length;i++){
    if(marks[i].getBoundingClientRect().top>top+8){go=marks[i];break;}}
  go.scrollIntoView({block:'center'});go.classList.add('flash');
  setTimeout(function(){go.classList.remove('flash');},1200);
});
})();
"""

_EXCL_LEGEND = (
    "<p id=excl-legend class=legend><span class=excl>greyed out</span>: text the index "
    "excludes (template, quotation, reference list, text most documents hold), not counted</p>"
)


_QUOTE_LEGEND = (
    "<p id=quote-legend class=legend>Inside a quotation (--exclude-quotes: a quotation is not "
    "counted for the document it is in): <span class=q-from-quote>solid outline</span>: "
    "copied from a source's quotation without quotation marks, counted for this text; "
    "<span class=q-quoted>dashed outline</span>: quoted here, and copied by the source without "
    "quotation marks, not counted for this text</p>"
)


def _quoted_title(p: dict, source: str) -> str:
    """A passage inside a quotation in a teacher's words (:attr:`SourceView.quoted
    <simdask.evidence.doc_view.SourceView>`)."""
    if p["quoted"] == "from-quote":
        return f"copied from {source}'s quotation: counted"
    return f"quoted: not counted (copied by {source} without quotation marks)"


def _label(p: dict) -> str:
    """A passage's label in the list of passages."""
    if p.get("quoted") == "from-quote":
        return f"copied from a quotation, {p['words']} words"
    if p.get("quoted"):
        return f"quoted (not counted), {p['words']} words"
    return passage_label(p)


def sort_header(label: str, kind: str = "num", title: str = "") -> str:
    """A ``<th>`` that sorts its table (``kind``: ``num`` or ``text``) on a click."""
    t = f' title="{html.escape(title)}"' if title else ""
    return f'<th data-type="{kind}"{t}>{html.escape(label)}</th>'


def number_cell(value: float | None, missing: str = "—") -> str:
    """A percentage cell: one decimal, its exact value as ``data-v`` (empty: missing)."""
    if value is None:
        return f'<td class=n data-v="">{html.escape(missing)}</td>'
    return f'<td class=n data-v="{value:.6f}">{value:.1f}</td>'


def date_cell(seconds: float | None) -> str:
    """A date cell: ``2026-11-28 02:30`` in a ``<time>`` whose ``datetime`` (and the cell's
    ``data-v``, to sort by) is the ISO 8601 time in UTC of ``seconds`` since the epoch
    (:func:`~simdask.read.review.iso_time`, as ``report`` and ``similar --details`` give it);
    a dash when unknown."""
    when = iso_time(seconds)
    if when is None:
        return '<td class=d data-v="">—</td>'
    shown = when[:16].replace("T", " ")
    return f'<td class=d data-v="{when}"><time datetime="{when}">{shown}</time></td>'


def _color(i: int) -> str:
    return SOURCE_COLORS[i % len(SOURCE_COLORS)]


def marked_sources(view: DocView) -> str:
    """The document's text escaped, each source's passages in ``<mark id="p-N">`` of its
    colour (``data-source``: its number), overlapping passages clipped so that every
    character is in at most one mark, excluded text shown as such."""
    text = view.text or ""
    excluded = view.excluded()
    out, pos = [], 0
    for n, (start, end, i, p) in enumerate(view.passages()):
        start = max(start, pos)
        if end <= start:
            continue
        out.append(excluded_html(text, pos, start, excluded))
        kind = f" ({p['kind']})" if p.get("kind") else ""
        title = f"shared with {view.sources[i].key}{kind}"
        quoted = ""
        if p.get("quoted"):  # inside a quotation (--exclude-quotes), counted for one side
            title = _quoted_title(p, view.sources[i].key)
            quoted = f' class="q-{p["quoted"]}" data-quoted="{p["quoted"]}"'
        out.append(
            f'<mark id="p-{n}" data-source="{i}"{quoted} style="background:{_color(i)}"'
            f' title="{html.escape(title)}">{html.escape(text[start:end])}</mark>'
        )
        pos = end
    out.append(excluded_html(text, pos, len(text), excluded))
    return "".join(out)


def _nav(view: DocView) -> str:
    items = view.passages()
    if not items:
        return ""
    links = "".join(
        f'<a href="#p-{n}" title="{html.escape(view.sources[i].key)}">'
        f'<span class=sw style="background:{_color(i)}"></span>{n + 1}: '
        f"{html.escape(_label(p))}</a>"
        for n, (_, _, i, p) in enumerate(items)
    )
    return (
        f"<div class=passages>Passages ({len(items)}): {links}"
        "<button id=next-passage type=button>next passage ↓</button></div>"
    )


def _source_rows(
    view: DocView, href: Callable[[str], str | None], report: Callable[[str], str | None]
) -> str:
    rows = []
    for i, s in enumerate(view.sources):
        link, rep = href(s.key), report(s.key)
        name = html.escape(s.key)
        name = f'<a href="{html.escape(link)}">{name}</a>' if link else name
        side = f'<a class=report href="{html.escape(rep)}">side by side</a>' if rep else ""
        rows.append(
            f'<tr data-key="{html.escape(s.key)}"><td class=src><span class=sw style="background:'
            f'{_color(i)}"></span>{name}</td>{number_cell(s.share)}{number_cell(s.back)}'
            f"<td class=n data-v={len(s.passages)}>{len(s.passages)}</td>"
            f"{date_cell(s.first_indexed)}{date_cell(s.modified)}<td>{side}</td></tr>"
        )
    return "".join(rows)


def _chunks(view: DocView) -> str:
    rows = "".join(
        f'<tr data-key="{html.escape(s.key)}"><td>{html.escape(s.key)}</td>'
        f"{number_cell(s.a_in_b)}{number_cell(s.b_in_a)}</tr>"
        for s in view.sources
    )
    return (
        "<details id=chunk-details><summary>5-word chunks (what the index stores)</summary>"
        "<table id=chunks class=sortable><thead><tr>"
        + sort_header("source", "text")
        + sort_header("% of this text's chunks in it")
        + sort_header("% of its chunks in this text")
        + f"</tr></thead><tbody>{rows}</tbody></table></details>"
    )


def _sources(view: DocView, href, report) -> str:
    if not view.sources:
        return ""
    if not view.more:
        more = ""
    elif view.total_from == "view":
        more = (
            f"<p id=more-sources>The total counts the passages of the {len(view.sources)} "
            f"sources shown; {view.more} further match"
            f"{'' if view.more == 1 else 'es'} were not aligned.</p>"
        )
    else:
        more = (
            f"<p id=more-sources>{view.more} further source{'' if view.more == 1 else 's'} "
            "counted in the total, not marked.</p>"
        )
    share_title = "stored share" if view.total_from == "stored" else "share of the passages shown"
    return (
        "<h2>Sources</h2><p><input class=filter data-table=sources placeholder='filter by key'>"
        "<label>at least <input type=number class=min-filter data-table=sources data-col=1 "
        "min=0 max=100 step=1> % found in it</label></p>"
        "<table id=sources class=sortable><thead><tr>"
        + sort_header("source", "text")
        + sort_header("% of this text found in it", title=share_title)
        + sort_header("% of it found in this text")
        + sort_header("passages")
        + sort_header("first indexed", "text", "when simdask first indexed it (UTC)")
        + sort_header("file modified", "text", "its file's modification time (UTC)")
        + "<th></th></tr></thead><tbody>"
        + _source_rows(view, href, report)
        + f"</tbody></table>{more}"
    )


def doc_head_html(
    view: DocView,
    href: Callable[[str], str | None] = lambda key: None,
    report: Callable[[str], str | None] = lambda key: None,
) -> str:
    """The top of a document's view: the header (the total first, the passages with links,
    next passage), the sources table (``href(key)``: a source's page, ``report(key)``: the
    pair's side-by-side page; None: no link) and the chunk containment folded."""
    cls = "total" if view.total is not None else "total none"
    value = "" if view.total is None else f"{view.total:.6f}"
    head = (
        f'<div class=docview-head><p id=total class="{cls}" data-total="{value}">'
        f"{html.escape(total_sentence(view))}</p>{_nav(view)}</div>"
    )
    head += _own_dates(view)
    if view.min_words:  # --min-match, or the web page's setting
        head += (
            f"<p id=min-match>Matches shorter than {view.min_words} words are left out of the "
            "passages and of the percentages of this view (the stored total counts them).</p>"
        )
    return (
        head
        + _sources(view, href, report)
        + _left_out(view, href)
        + (_chunks(view) if view.sources else "")
    )


def _own_dates(view: DocView) -> str:
    """The document's own dates, to compare with its sources' (empty when unknown)."""
    first, mod = iso_time(view.first_indexed), iso_time(view.modified)
    if first is None:
        return ""
    said = f"first indexed {_time('doc-first-indexed', first)}"
    if mod is not None:
        said += f", file modified {_time('doc-modified', mod)}"
    return f"<p id=doc-dates>This document: {said} (UTC).</p>"


def _time(ident: str, when: str) -> str:
    """``<time id=ident datetime=ISO>2026-11-28 02:30</time>``."""
    return f'<time id={ident} datetime="{when}">{when[:16].replace("T", " ")}</time>'


def _left_out(view: DocView, href: Callable[[str], str | None]) -> str:
    """The sources the teacher left out of this document, each linked (or an empty string)."""
    if not view.excluded_sources:
        return ""
    items = []
    for key in view.excluded_sources:
        link = href(key)
        name = html.escape(key)
        items.append(f'<a href="{html.escape(link)}">{name}</a>' if link else name)
    return (
        f"<p id=excluded-sources>Excluded by the teacher (not in the total nor the sources "
        f"above; simdask mark --exclude-source): {', '.join(items)}.</p>"
    )


def doc_text_html(view: DocView) -> str:
    """The bottom of a document's view: the excluded text's legend and the text with every
    source's passages marked (empty when the index keeps no text)."""
    if view.text is None:
        return ""
    marked = marked_sources(view)
    return (
        "<h2>Text</h2>"
        + (_EXCL_LEGEND if 'class="excl ' in marked else "")
        + (_QUOTE_LEGEND if " data-quoted=" in marked else "")
        + f"<div id=text class=text>{marked}</div>"
    )


def doc_view_html(
    view: DocView,
    href: Callable[[str], str | None] = lambda key: None,
    report: Callable[[str], str | None] = lambda key: None,
) -> str:
    """The whole view of a document (:func:`doc_head_html`, then :func:`doc_text_html`)."""
    body = doc_head_html(view, href, report) + doc_text_html(view)
    return f"<section class=docview>{body}</section>"
