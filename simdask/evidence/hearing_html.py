"""The evidence block of a pair's side-by-side page (issue 31, item 14): what a hearing needs
beside the two marked texts: both names with the date each was first indexed and its file
last modified (who was first), the decision and note kept on the pair, the settings and
exclusions the view used, a legend of the colours and styles, and the numbered passages
matched across the two texts, one row each (its words in each text, side by side).

On screen the block is folded under the header; printed (and in ``report --pdf``) it is open
and the page prints as one side-by-side document (:data:`PRINT_CSS`). Reports made without an
index (``compare --html``, tests) lack ``review`` and ``settings``: those parts say so.
"""

from __future__ import annotations

import html
from bisect import bisect_left, bisect_right
from typing import Any

from simdask.kernels.words import WORD_PATTERN

__all__ = ["PRINT_CSS", "evidence_html", "legend_html"]

#: a passage's words shown in a row of the passage table before it is cut ("… N more words")
ROW_WORDS = 400

#: how the page prints: one side-by-side document on A4, evidence first, no navigation
PRINT_CSS = """
#evidence{padding:0 1em}#evidence table{border-collapse:collapse;width:100%}
#evidence td,#evidence th{border:1px solid #ccc;padding:.2em .4em;vertical-align:top;
  text-align:left}
#evidence table.matched td.t{font-family:Georgia,serif;width:46%;white-space:pre-wrap;
  word-wrap:break-word}
#evidence .where{color:#555;font-size:.85em;display:block}
.legend-list li{list-style:none;margin:.15em 0}.legend-list mark{cursor:default}
@page{size:A4;margin:12mm 10mm 14mm}
@media print{
  body{font-size:9.5pt;-webkit-print-color-adjust:exact;print-color-adjust:exact}
  header{position:static;border:0}nav.passages,#next-passage,.links{display:none}
  main{display:grid;grid-template-columns:1fr 1fr;gap:6mm;padding:0 1em}
  section{break-inside:auto}.text{font-size:9pt}
  #evidence summary{display:none}h2,h3{break-after:avoid}
  mark.flash{outline:0}
}
"""

#: passage kinds and how a passage of that kind is drawn
_KIND_STYLES = (
    ("verbatim", "copied word for word: filled with its colour"),
    ("paraphrased", "paraphrased: its colour, a dashed outline"),
    ("summarised", "summarised: its colour, a dotted outline"),
)
#: excluded text and how it is drawn (the same classes as the texts)
_EXCLUDED_STYLES = (
    ("template", "template text (update --exclude): grey, dotted underline"),
    ("quote", "quotation (--exclude-quotes): grey, italic"),
    ("bibliography", "reference list (--exclude-bibliography): grey, struck through"),
    ("common", "held by more than max_df documents: grey, dashed underline"),
)


class _Words:
    """The words (:data:`WORD_PATTERN` runs) of a text, to count those of a part of it in
    O(log n): a run of ``text[s:e]`` is a run of ``text`` cut to ``[s, e)`` (the pattern
    has no anchors), so they are the runs starting before ``e`` and ending after ``s``."""

    def __init__(self, text: str):
        spans = [m.span() for m in WORD_PATTERN.finditer(text)]
        self.starts = [a for a, _ in spans]
        self.ends = [b for _, b in spans]

    def count(self, start: int, end: int) -> int:
        """``sum(1 for _ in WORD_PATTERN.finditer(text, start, end))``."""
        if end <= start:
            return 0
        return bisect_left(self.starts, end) - bisect_right(self.ends, start)


def _cut(text: str, start: int, end: int) -> str:
    """``text[start:end]``, cut after :data:`ROW_WORDS` words ("… N more words")."""
    words = list(WORD_PATTERN.finditer(text, start, end))
    if len(words) <= ROW_WORDS:
        return text[start:end]
    rest = len(words) - ROW_WORDS
    return f"{text[start : words[ROW_WORDS - 1].end()]} … ({rest:,} more words)"


def _where(words: _Words, length: int, start: int, end: int) -> str:
    """``"words 451–748 of 1,200"`` (1-based, inclusive) of a text of ``length``
    characters whose words are ``words``."""
    first = words.count(0, start) + 1
    n = words.count(start, end)
    total = words.count(0, length)
    return f"words {first:,}–{first + n - 1:,} of {total:,}"


def _matched(report: dict, text_a: str, text_b: str, palette: list[str]) -> str:
    """The passages, one row each: number and kind, then each text's words side by side."""
    ps = report["passages"]
    if not ps:
        return "<p>No passages.</p>"
    a, b = html.escape(report["doc"]), html.escape(report["other"])
    words_a, words_b = _Words(text_a), _Words(text_b)  # once, not per passage
    rows = []
    for i, p in enumerate(ps):
        color = palette[i % len(palette)]
        kind = p.get("kind") or "exact"
        cells = []
        for text, words, s, e in ((text_a, words_a, p["doc_start"], p["doc_end"]),
                                  (text_b, words_b, p["other_start"], p["other_end"])):  # fmt: skip
            where = _where(words, len(text), s, e)
            cells.append(
                f"<td class=t><span class=where>{html.escape(where)}</span>"
                f'<mark class="k-{html.escape(kind)}" style="background:{color}">'
                f"{html.escape(_cut(text, s, e))}</mark></td>"
            )
        rows.append(
            f'<tr data-passage="{i + 1}"><th><span class=sw style="background:{color}">'
            f"</span> {i + 1}<br>{html.escape(kind)}</th>{''.join(cells)}</tr>"
        )
    return (
        f"<table class=matched id=matched><thead><tr><th>passage</th><th>{a}</th>"
        f"<th>{b}</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _dates(report: dict) -> str:
    """Both names with their dates, and the decision kept on the pair."""
    review = report.get("review")
    if review is None:
        return "<p id=dates>Dates: not known (the texts were compared without an index).</p>"
    rows = []
    for side, key in (("a", report["doc"]), ("b", report["other"])):
        first = review.get(f"{side}_first_indexed") or "not indexed"
        mod = review.get(f"{side}_modified") or "unknown"
        rows.append(
            f"<tr><td>{html.escape(key)}</td><td>{html.escape(first)}</td>"
            f"<td>{html.escape(mod)}</td></tr>"
        )
    decision = review.get("decision")
    said = "none kept (simdask mark)" if decision is None else decision
    note = review.get("note")
    if note:
        said += f": {note}"
    gone = review.get("source_excluded")
    gone_html = (
        f"<p id=source-excluded>Excluded by the teacher: {html.escape(gone)} (not counted in "
        "that document's total; the similarities are the stored ones)</p>"
        if gone
        else ""
    )
    return (
        "<table id=dates><thead><tr><th>document</th><th>first indexed (UTC)</th>"
        f"<th>file last modified (UTC)</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        f"<p id=decision>Decision on this pair: {html.escape(said)}</p>{gone_html}"
    )


def _settings(report: dict) -> str:
    """The settings and exclusions the view used."""
    s = report.get("settings")
    method = report.get("passages_method", "exact")
    how = (
        "the text aligner (copied, paraphrased and summarised passages)"
        if method == "aligned"
        else "exact runs of shared 5-word chunks"
    )
    items = [f"passages found by {how}"]
    if report.get("min_words"):
        items.append(f"matches shorter than {report['min_words']} words ignored (--min-match)")
    if s is not None:
        templates = ", ".join(s["excluded_templates"]) or "none"
        items += [
            f"words per chunk: {s['k']}",
            f"template texts excluded: {templates}",
            "quotations excluded: " + ("yes" if s["exclude_quotes"] else "no"),
            "reference lists excluded: " + ("yes" if s["exclude_bibliography"] else "no"),
            "chunks held by more documents than this are not counted: "
            + ("no limit" if s["max_df"] is None else str(s["max_df"])),
        ]
    li = "".join(f"<li>{html.escape(x)}</li>" for x in items)
    return f"<ul id=view-settings>{li}</ul>"


def legend_html(palette: list[str]) -> str:
    """What the colours and styles of the texts mean, each drawn as the texts draw it."""
    items = [
        "<li>Each passage has a colour of its own, the same in both texts, and its number at "
        "its start: "
        + " ".join(
            f'<mark style="background:{c}" data-label="{i + 1}">…</mark>'
            for i, c in enumerate(palette[:3])
        )
        + " (the colours repeat after "
        + f"{len(palette)} passages)</li>"
    ]
    for kind, said in _KIND_STYLES:
        items.append(
            f'<li><mark class="k-{kind}" style="background:{palette[0]}">{kind}</mark> '
            f"{html.escape(said)}</li>"
        )
    for kind, said in _EXCLUDED_STYLES:
        items.append(
            f'<li><span class="excl excl-{kind}">{kind}</span> '
            f"{html.escape(said)}; not counted</li>"
        )
    return f"<ul class=legend-list id=legend>{''.join(items)}</ul>"


def evidence_html(
    report: dict, text_a: str, text_b: str, palette: list[str], opened: bool = False
) -> str:
    """The evidence block (folded unless ``opened``; the page opens it to print): dates and
    decision, settings, legend, the matched passages."""
    body: list[Any] = [
        "<h3>Documents and dates</h3>",
        _dates(report),
        "<h3>Settings and exclusions</h3>",
        _settings(report),
        "<h3>Legend</h3>",
        legend_html(palette),
        f"<h3>Passages matched across the two texts ({len(report['passages'])})</h3>",
        _matched(report, text_a, text_b, palette),
        "<h3>The two texts side by side</h3>",
    ]
    return (
        f"<details id=evidence{' open' if opened else ''}><summary>Evidence: dates, decision, "
        f"settings, legend, the passages side by side</summary>{''.join(body)}</details>"
    )
