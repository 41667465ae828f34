"""Page furniture of paginated text (issue 31 item 6): running headers, footers and page
numbers, which the text layer of a PDF puts between the last line of one page and the first
of the next, inside a sentence that goes on over the page break (so a passage copied across
a page break would be cut in two, and "Page 3/12" would be counted as text).

The rule, on the text of each page (pure, no I/O):

* only the first and last :data:`EDGE_LINES` non-blank lines of a page can be furniture;
* a line is compared with the lines of other pages by its **pattern**: lower-cased, runs of
  white space made one space, every run of digits made ``#`` (so "Page 3 of 12" and "Page 4
  of 12" are one pattern, ``page # of #``); at most :data:`MAX_CHARS` characters;
* a pattern at the edges of at least :data:`MIN_FRACTION` of the pages (each page counted
  once), and of at least :data:`MIN_PAGES` pages, is furniture: removed from the edges of
  every page where it is (never from the middle of a page);
* a bare page number ("7", "- 7 -", "Page 7", "p. 7", "7/12", "Page 7 of 12", "Seite 7",
  "Strana 7 z 12") is furniture on a document of 2 pages or more once its pattern reaches
  the same fraction of pages: the numbering of a two-page letter goes too.

Limits: a document of fewer pages (1, or 2 for text that is not a page number) keeps
everything; a line repeated on fewer pages than the fraction (a heading used twice, a
quotation repeated once) is kept; furniture printed in the middle of a page, or longer than
:data:`MAX_CHARS`, is kept; a header that changes on every page without digits (chapter
titles) is kept.
"""

from __future__ import annotations

import math
import re
from collections import Counter

__all__ = [
    "EDGE_LINES",
    "MAX_CHARS",
    "MIN_FRACTION",
    "MIN_PAGES",
    "drop_furniture",
    "furniture_patterns",
    "line_pattern",
]

#: non-blank lines at the top and at the bottom of a page that can be furniture
EDGE_LINES = 3
#: a pattern is furniture when it is at the edges of at least this fraction of the pages
MIN_FRACTION = 0.5
#: ... and of at least this many pages (page numbers: 2)
MIN_PAGES = 3
#: longer lines are never furniture (running titles and footers are short)
MAX_CHARS = 120

_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")
_PAGE_NUMBER = re.compile(
    r"^[\W_]*(?:(?:page|p\.|pg\.?|seite|s\.|strana|str\.|página|pagina)\s*)?#"
    r"(?:\s*(?:/|of|von|z|de|di|sur)\s*#)?[\W_]*$"
)


def line_pattern(line: str) -> str:
    """The pattern of a line: lower-cased, white space runs one space, digit runs ``#``,
    trimmed ("" for a blank line)."""
    return _DIGITS.sub("#", _SPACE.sub(" ", line.strip().lower()))


def _edges(lines: list[str]) -> list[int]:
    """Indexes of the first and last :data:`EDGE_LINES` non-blank lines (each once)."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    return sorted(set(filled[:EDGE_LINES]) | set(filled[-EDGE_LINES:]))


def _is_page_number(pattern: str) -> bool:
    return bool(_PAGE_NUMBER.match(pattern))


def furniture_patterns(pages: list[str]) -> set[str]:
    """The patterns (:func:`line_pattern`) that are furniture in ``pages`` (the text of each
    page; see the module docstring for the rule)."""
    n = len(pages)
    if n < 2:
        return set()
    seen: Counter[str] = Counter()
    for page in pages:
        lines = page.splitlines()
        found = {line_pattern(lines[i]) for i in _edges(lines)}
        seen.update(p for p in found if p and len(p) <= MAX_CHARS)
    need = max(2, math.ceil(MIN_FRACTION * n))
    return {p for p, c in seen.items() if c >= need and (c >= MIN_PAGES or _is_page_number(p))}


def drop_furniture(pages: list[str]) -> list[str]:
    """``pages`` (the text of each page) without their furniture lines; a page that lost
    its last lines ends without a line break (as a page's text does), so that a sentence or
    a hyphenated word goes on over the page break."""
    patterns = furniture_patterns(pages)
    if not patterns:
        return list(pages)
    out = []
    for page in pages:
        lines = page.splitlines(keepends=True)
        drop = {i for i in _edges(lines) if line_pattern(lines[i]) in patterns}
        kept = "".join(line for i, line in enumerate(lines) if i not in drop)
        out.append(kept.rstrip("\r\n") if drop else kept)
    return out
