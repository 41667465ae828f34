"""The static site's generic pair page (issue 31 item 7): every stored pair without a
side-by-side page of its own links to ``pair.html#<a>-<b>`` (doc IDs), where a script renders
the pair side by side in the browser (:mod:`.site_pair_js`) from the site's compact data
(:mod:`.site_data`): the exact 5-word passages ``simdask report --exact-only`` gives, with the
index's exclusions applied. No server: the page works from ``file://`` and from any static
web server. It also gives the command that writes the pair's full report.
"""

from __future__ import annotations

from simdask.evidence.site_data import DATA_DIR
from simdask.evidence.site_pair_js import PAIR_JS

__all__ = ["PAIR_CSS", "PAIR_PAGE", "pair_page_body"]

#: the page every pair without a side-by-side page links to (``#<a>-<b>``: which pair)
PAIR_PAGE = "pair.html"

_COLOURS = ("#ffe08a", "#a8e0ff", "#c8f0a0", "#ffc0d8", "#d8c8ff", "#ffd0a0", "#b0f0e0", "#e8e8a0")

#: the page's own styles (two columns of text, one colour per passage, cycling)
PAIR_CSS = (
    ".cols{display:flex;gap:1.5em;align-items:flex-start}.cols .text{flex:1;min-width:0;"
    "max-height:80vh;overflow:auto;border:1px solid #ddd;padding:.5em}"
    + "".join(f"mark.p{i}{{background:{c}}}" for i, c in enumerate(_COLOURS))
)


def pair_page_body() -> str:
    """The body of :data:`PAIR_PAGE` (the same for every site: the pair comes from the
    address, the data from ``data/``)."""
    return (
        '<p><a href="index.html">all documents</a></p>'
        "<h1>Side by side: <span id=pair-keys></span></h1>"
        '<p><a id=link-a href="index.html"></a> and <a id=link-b href="index.html"></a></p>'
        "<p id=pair-status>This page needs JavaScript: it computes the pair's passages in "
        "the browser.</p>"
        "<p>The exact passages of at least 5 shared words (as <code>simdask report "
        "--exact-only</code>), with the index's exclusions applied, computed by this page "
        "from the site's data: this site writes a full side-by-side page (the aligner's "
        "passages, paraphrase included) for each document's most similar partners only, so "
        "that it stays small whatever the number of stored pairs.</p>"
        "<div id=pair></div>"
        "<p>The pair's full report is written by:</p><pre id=pair-cmd></pre>"
        "<p>Every stored pair: <code>simdask export-html INDEX OUTDIR --all-pairs</code>; the "
        "pairs listed in a file of <code>KEY_A&lt;TAB&gt;KEY_B</code> lines: "
        "<code>simdask export-html INDEX OUTDIR --pairs FILE</code>.</p>"
        f'<style>{PAIR_CSS}</style><script src="{DATA_DIR}/site.js"></script>'
        f"<script>{PAIR_JS}</script>"
    )
