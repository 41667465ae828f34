"""The side-by-side HTML report of one pair: both texts, passages highlighted in the same colour
in both columns (one colour per passage, its number and kind at its start), a click on a
passage scrolls its twin into view; a list of the passages links to each. One self-contained
file (no network), printable, fast on 100-page documents (plain text with ``<mark>`` elements
only)."""

from __future__ import annotations

import html
import json

from simdask.alignment.coverage import word_share
from simdask.evidence.hearing_html import PRINT_CSS, evidence_html
from simdask.evidence.pair_view import coverage_sentence, passage_label
from simdask.read.undirected_pairs import pct

__all__ = ["exact_headline", "excluded_html", "render_pair_html"]

_PALETTE = ["#ffe08a", "#a8e6cf", "#ffb3ba", "#bae1ff", "#d5b3ff", "#ffd1a8", "#c8f7a0", "#f7c8e0"]

_CSS = """
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#222}
header{position:sticky;top:0;background:#fafafa;border-bottom:1px solid #ddd;
  padding:.6em 1em;z-index:1}
h1{font-size:1.1em;margin:0 0 .3em} table.sum td{padding:0 1em 0 0}
main{display:grid;grid-template-columns:1fr 1fr;gap:1em;padding:1em}
section{min-width:0} h2{font-size:1em;margin:.2em 0;word-break:break-all}
.text{white-space:pre-wrap;word-wrap:break-word;font-family:Georgia,serif}
mark{cursor:pointer;border-radius:2px;padding:0 1px}
mark.flash{outline:3px solid #d33}
mark[data-label]::before{content:attr(data-label);font:bold 11px/1 system-ui,sans-serif;
  color:#333;background:#fff;border:1px solid #999;border-radius:3px;padding:0 3px;margin-right:3px}
mark.k-paraphrased{outline:1px dashed #777}mark.k-summarised{outline:1px dotted #555}
nav.passages{max-height:3.3em;overflow:auto}
nav.passages a{margin-right:.8em;white-space:nowrap;color:#222}
nav.passages span.sw{display:inline-block;width:.9em;height:.9em;border-radius:2px;
  vertical-align:middle;margin-right:.2em}
header p{margin:.2em 0}header details summary{cursor:pointer;color:#555}
.excl{color:#777;background:repeating-linear-gradient(135deg,#eee 0 6px,#f7f7f7 6px 12px)}
.excl-template{border-bottom:2px dotted #999}.excl-quote{font-style:italic}
.excl-bibliography{text-decoration:line-through #bbb}.excl-common{border-bottom:2px dashed #bbb}
.legend span{padding:0 .4em;margin-right:.6em}
"""

_JS = """
window.addEventListener('beforeprint',function(){
  var d=document.getElementById('evidence'); if(d) d.open=true;});
document.addEventListener('click',function(e){
  if(e.target.id==='next-passage'){
    var top=document.querySelector('header').getBoundingClientRect().bottom+8;
    var ms=document.querySelectorAll('#doc mark[id]'),go=ms[0];
    for(var i=0;i<ms.length;i++){if(ms[i].getBoundingClientRect().top>top){go=ms[i];break;}}
    if(go){go.scrollIntoView({block:'center'});go.classList.add('flash');
      setTimeout(function(){go.classList.remove('flash')},1200);}
    return;
  }
  var m=e.target.closest('mark[data-twin]'); if(!m) return;
  var t=document.getElementById(m.dataset.twin); if(!t) return;
  t.scrollIntoView({block:'center'}); t.classList.add('flash');
  setTimeout(function(){t.classList.remove('flash')},1200);
});
"""


_KIND_TITLE = {
    "template": "template text (update --exclude): not counted",
    "quote": "quotation (--exclude-quotes): not counted",
    "bibliography": "reference list (--exclude-bibliography): not counted",
    "common": "held by more than max_df documents of the index: not counted",
}


#: the labels of the two sides of a passage one side copies from the other's quotation
#: (``--exclude-quotes``: a quotation is left out of its own document only, docs/term.md)
_QUOTED_LABEL = {
    "quoted": "quoted: not counted",
    "from-quote": "copied from the other's quotation: counted",
}


def _quoted_spans(report: dict, first: int) -> tuple[list, list]:
    """The ``(start, end, passage, kind)`` marks of each text for the report's passages
    inside the other text's quotation (``quoted_copies``), numbered from ``first``: kind
    ``from-quote`` in the text they count for, ``quoted`` in the quoting one."""
    found = report.get("quoted_copies") or {}
    a_spans: list[tuple[int, int, int, str]] = []
    b_spans: list[tuple[int, int, int, str]] = []
    for side in ("doc", "other"):
        for p in found.get(side, []):
            i = first + len(a_spans)
            kind_a, kind_b = ("from-quote", "quoted") if side == "doc" else ("quoted", "from-quote")
            a_spans.append((p["doc_start"], p["doc_end"], i, kind_a))
            b_spans.append((p["other_start"], p["other_end"], i, kind_b))
    return a_spans, b_spans


def _marked(
    text: str,
    spans: list[tuple[int, int, int, str]],
    side: str,
    twin: str,
    excluded: list[tuple[int, int, str]] = (),
) -> str:
    """``text`` escaped, with ``<mark>`` around each (start, end, passage, kind) span;
    overlapping spans are clipped so that every character belongs to at most one passage.
    Text outside the passages in an ``excluded`` (start, end, kind) span is shown as
    excluded (``<span class="excl excl-KIND">``)."""
    out, pos = [], 0
    for start, end, i, kind in sorted(spans):
        start = max(start, pos)
        if end <= start:
            continue
        out.append(excluded_html(text, pos, start, excluded))
        color = _PALETTE[i % len(_PALETTE)]
        label = f"{i + 1} {_QUOTED_LABEL.get(kind, kind)}" if kind else f"{i + 1}"
        cls = f' class="k-{html.escape(kind)}"' if kind else ""
        out.append(
            f'<mark id="{side}-{i}" data-twin="{twin}-{i}"{cls} style="background:{color}"'
            f' data-label="{html.escape(label)}" title="passage {html.escape(label)}">'
            f"{html.escape(text[start:end])}</mark>"
        )
        pos = end
    out.append(excluded_html(text, pos, len(text), excluded))
    return "".join(out)


def excluded_html(text: str, lo: int, hi: int, excluded) -> str:
    """``text[lo:hi]`` escaped, the parts inside ``excluded`` ``(start, end, kind)`` spans
    wrapped as ``<span class="excl excl-KIND">`` (kinds ``template``, ``quote``,
    ``bibliography``; sorted spans)."""
    out, pos = [], lo
    for s, e, kind in excluded:
        s, e = max(s, pos), min(e, hi)
        if e <= s:
            continue
        out.append(html.escape(text[pos:s]))
        out.append(
            f'<span class="excl excl-{html.escape(kind)}"'
            f' title="{html.escape(_KIND_TITLE.get(kind, kind))}">'
            f"{html.escape(text[s:e])}</span>"
        )
        pos = e
    out.append(html.escape(text[pos:hi]))
    return "".join(out)


def _quoted_said(report: dict) -> str:
    """How many passages each text copies from the other's quotation (counted for it, not
    for the quoting text)."""
    found = report["quoted_copies"]
    parts = [
        f"{len(found[side])} passage(s) of {report[side]} inside a quotation of "
        f"{report['other' if side == 'doc' else 'doc']} (counted for {report[side]} only)"
        for side in ("doc", "other")
        if found.get(side)
    ]
    return "; ".join(parts)


def _coverage(spans: list[tuple[int, int]], length: int) -> float:
    covered, pos = 0, 0
    for s, e in sorted(spans):
        s = max(s, pos)
        if e > s:
            covered += e - s
            pos = e
    return 100.0 * covered / length if length else 0.0


def _summary(report: dict, text_a: str, text_b: str) -> tuple[list, list]:
    """The header's rows ``(label, value)``: the headline rows (the aligned passages in
    words; for the exact evidence :func:`exact_headline` and its passages) and the detail
    rows (the chunk containment both ways, the hashed similarity), shown folded."""
    ps = report["passages"]
    ka, kb = report["doc"], report["other"]  # raw keys: each summary cell is escaped once
    longest = max((p["words"] for p in ps), default=0)
    chunks = [
        (f"{ka} → {kb}", f"{report['similarity']:.2f} % of {ka}'s chunks are in {kb}"),
        (f"{kb} → {ka}", f"{report['reverse_similarity']:.2f} % of {kb}'s chunks are in {ka}"),
        (
            "shared chunks",
            f"{report['shared']} (exact, runs of 5 words in any order); index holds "
            f"{report['hashed_similarity']:.2f} % (it compares chunks by a hash, "
            "which rarely collides)",
        ),
    ]
    cover = coverage_sentence(report)
    if cover is not None:
        kinds = ", ".join(sorted({p["kind"] for p in ps})) or "none"
        head = [("in words", cover), ("passages", f"{len(ps)} ({kinds}); longest {longest} words")]
        return head, chunks
    truncated = (
        " (truncated: a large pair; the most repeated chunks and the shortest "
        "passages are not shown, the similarities are complete)"
    )
    head = exact_headline(report, text_a, text_b)
    head.append(
        (
            "passages",
            f"{len(ps)} exact; longest {longest} words"
            + (truncated if report.get("passages_truncated") else ""),
        )
    )
    if report.get("passages_note"):
        head.append(("note", report["passages_note"]))
    return head, chunks


def exact_headline(report: dict, text_a: str, text_b: str) -> list[tuple[str, str]]:
    """The exact evidence's headline, one row per direction in a teacher's words: ``"83 % of
    scott.txt is found in thesis.pdf"``, the percent of each text's words lying wholly inside
    the exact passages (:func:`~simdask.alignment.coverage.word_share`, the measure of the
    aligned pages' coverage, here of the exact passages)."""
    ps = report["passages"]
    ka, kb = report["doc"], report["other"]
    in_a = 100.0 * word_share(text_a, [(p["doc_start"], p["doc_end"]) for p in ps])
    in_b = 100.0 * word_share(text_b, [(p["other_start"], p["other_end"]) for p in ps])
    return [
        (f"{ka} in {kb}", f"{pct(in_a)} of {ka} is found in {kb}"),
        (f"{kb} in {ka}", f"{pct(in_b)} of {kb} is found in {ka}"),
    ]


def _rows(rows: list[tuple[str, str]]) -> str:
    return "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in rows)


def _excluded(report: dict, side: str) -> list[tuple[int, int, str]]:
    ex = report.get("excluded") or {}
    return [(x["start"], x["end"], x["kind"]) for x in ex.get(side, [])]


def _nav(ps: list[dict]) -> str:
    """Links to each passage (in the first text), with its colour, number and kind."""
    if not ps:
        return "<p id=no-passages>No passages.</p>"
    links = "".join(
        f'<a href="#a-{i}"><span class=sw style="background:{_PALETTE[i % len(_PALETTE)]}">'
        f"</span>{i + 1}: {html.escape(passage_label(p))}</a> "
        for i, p in enumerate(ps)
    )
    button = "<button id=next-passage type=button>next passage ↓</button>"
    return f"<nav class=passages>{links}{button}</nav>"


def render_pair_html(
    report: dict,
    text_a: str,
    text_b: str,
    links: tuple[tuple[str, str], ...] = (),
    printing: bool = False,
    controls: str = "",
) -> str:
    """The HTML page for a report as made by :func:`simdask.evidence.pair_view.index_report`
    (or :meth:`simdask.Index.report`); ``links``: ``(href, text)`` shown in the header (e.g.
    the other kind of evidence). The evidence block (dates, decision, settings, legend, the
    matched passages: :mod:`simdask.evidence.hearing_html`) is folded on screen and opened to
    print; ``printing``: open from the start (``report --pdf``); ``controls``: HTML (already
    escaped) shown in the header, e.g. the web page's form of the view's settings."""
    ps = report["passages"]
    a_spans = [(p["doc_start"], p["doc_end"], i, p.get("kind", "")) for i, p in enumerate(ps)]
    b_spans = [(p["other_start"], p["other_end"], i, p.get("kind", "")) for i, p in enumerate(ps)]
    qa, qb = _quoted_spans(report, len(ps))
    a_spans, b_spans = a_spans + qa, b_spans + qb
    ka, kb = report["doc"], report["other"]
    summary, details = _summary(report, text_a, text_b)
    if qa:
        summary.append(("inside a quotation", _quoted_said(report)))
    if report.get("min_words"):  # --min-match, or the web page's setting
        summary.append(
            (
                "short matches",
                f"matches shorter than {report['min_words']} words are left out of the passages "
                "and the percentages",
            )
        )
    gone = (report.get("review") or {}).get("source_excluded")
    if gone:  # simdask mark DOC SOURCE --exclude-source
        summary.append(("excluded by the teacher", f"{gone} (not counted in its total)"))
    ex_a, ex_b = _excluded(report, "doc"), _excluded(report, "other")
    if ex_a or ex_b:
        summary.append(
            (
                "excluded (not counted)",
                f"{_coverage([x[:2] for x in ex_a], len(text_a)):.1f} % of {ka}, "
                f"{_coverage([x[:2] for x in ex_b], len(text_b)):.1f} % of {kb}: "
                + ", ".join(sorted({x[2] for x in ex_a + ex_b}))
                + " (shown greyed out)",
            )
        )
    rows = _rows(summary)
    folded = (
        f"<details><summary>5-word chunks (what the index stores)</summary>"
        f"<table class=details>{_rows(details)}</table></details>"
        if details
        else ""
    )
    extra = "".join(f'<a href="{html.escape(h)}">{html.escape(t)}</a>' for h, t in links)
    extra = (f"<p class=links>{extra}</p>" if extra else "") + controls
    a, b = html.escape(ka), html.escape(kb)
    data = html.escape(json.dumps({k: v for k, v in report.items() if k != "passages"}))
    body_a = _marked(text_a, a_spans, "a", "b", ex_a)
    body_b = _marked(text_b, b_spans, "b", "a", ex_b)
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        f"<title>{a} vs {b} — simdask</title><style>{_CSS}{PRINT_CSS}</style></head><body>"
        f"<header><h1>{a} and {b}</h1>{extra}"
        f'<table class=sum data-report="{data}">{rows}</table>{folded}{_nav(ps)}'
        f"</header>{evidence_html(report, text_a, text_b, _PALETTE, printing)}<main>"
        f"<section id=doc><h2>{a}</h2><div class=text>{body_a}</div></section>"
        f"<section id=other><h2>{b}</h2><div class=text>{body_b}</div></section>"
        f"</main><script>{_JS}</script></body></html>"
    )
