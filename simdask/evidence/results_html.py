"""One self-contained HTML page of ``query`` or ``compare`` results (``--html FILE``): one row
per pair with both percentages and their wording, the matching passages of each pair when
the texts are at hand (``query``), and the documents that could not be compared."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

from simdask.read.pairs import Pair

__all__ = ["render_results_html", "write_page"]

_CSS = (
    "body{font:15px/1.5 system-ui,sans-serif;margin:1.5em;color:#222}"
    "table{border-collapse:collapse}td,th{padding:.15em .8em;border-bottom:1px solid #eee;"
    "text-align:left;vertical-align:top}td.n{text-align:right}details{margin:.2em 0}"
    "q{font-family:Georgia,serif}"
)
#: pairs whose passages are listed (the most similar first)
DETAILED_PAIRS = 100


def render_results_html(
    title: str,
    pairs: Sequence[Pair],
    headers: tuple[str, str],
    notes: Sequence[tuple[str, str]] = (),
    passages: Callable[[Pair], list[str]] | None = None,
) -> str:
    """The page: ``title``, a table of ``pairs`` (columns named by ``headers``: what A and B
    are, e.g. ``("checked document", "indexed document")``), for the first
    :data:`DETAILED_PAIRS` pairs the lines ``passages(pair)`` gives (None: none), then
    ``notes`` as ``(level, message)`` (``error`` or ``note``)."""
    rows = []
    for i, p in enumerate(pairs):
        detail = ""
        if passages is not None and i < DETAILED_PAIRS:
            lines = passages(p)
            items = "".join(f"<li>{html.escape(x)}</li>" for x in lines)
            detail = (
                f"<details><summary>{len(lines)} matching passage{'' if len(lines) == 1 else 's'}"
                f"</summary><ol>{items}</ol>"
                "</details>"
                if lines
                else ""
            )
        rows.append(
            f"<tr><td>{html.escape(p.a_key)}</td><td>{html.escape(p.b_key)}</td>"
            f"<td class=n>{p.a_in_b:.2f}</td><td class=n>{p.b_in_a:.2f}</td>"
            f"<td>{html.escape(p.wording)}{detail}</td></tr>"
        )
    a, b = (html.escape(h) for h in headers)
    table = (
        f"<table id=results><thead><tr><th>{a} (A)</th><th>{b} (B)</th><th>% of A in B</th>"
        f"<th>% of B in A</th><th>in words</th></tr></thead><tbody>{''.join(rows)}</tbody>"
        "</table>"
        if pairs
        else "<p id=no-similar>No similar documents.</p>"
    )
    listed = "".join(
        f"<li class={html.escape(level)}>{html.escape(level)}: {html.escape(msg)}</li>"
        for level, msg in notes
    )
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>{table}"
        + (f"<h2>Not compared</h2><ul id=notes>{listed}</ul>" if notes else "")
        + "</body></html>"
    )


def write_page(path, text: str) -> None:
    """Write an HTML page atomically (a temporary file beside it, then replace)."""
    import os
    from pathlib import Path

    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
