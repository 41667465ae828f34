"""Block quotes where a DOCX or ODT document shows them (issue 16, ``--exclude-quotes``).

A paragraph is a block quote when its paragraph style is a quotation style (by name, or
based on one: Word's ``Quote``, ``Intense Quote``; LibreOffice's ``Quotations``; the style's
name is English in every language version, its ID may be localised) or when it is indented
clearly more than the body text: both its left edge and its first line start at least
:data:`MIN_INDENT_PT` points (1 cm) right of the body's, the body's being the most common
left edge, weighted by characters, of the paragraphs outside lists and tables. Paragraphs in
lists, tables, text boxes, headings, contents and captions are never block quotes by
indentation (a hanging indent, as in a reference list, starts its first line at the body's
edge, so it is none either).

The extractor renders each line of a block quote with ``> `` in front, as e-mail and
Markdown do, so that :func:`simdask.kernels.exclusions.quote_spans` finds it in the extracted
(and stored) text: the words are unchanged (``>`` is no word character), character offsets
in reports are offsets of that text, and a later change of ``--exclude-quotes`` re-chunks the
stored text without the original file. While the XML streams by, :class:`QuoteParagraphs`
records each paragraph's style and indentation and puts a mark naming the paragraph where
each of its lines starts (two Unicode noncharacters around its number, removed from the
document's own text); :meth:`QuoteParagraphs.render` decides once the whole document is read
and turns each mark into ``> `` or nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["MIN_INDENT_PT", "QUOTE_STYLES", "Paragraph", "QuoteParagraphs", "Style", "length_pt"]

#: how much further right than the body text an indented block quote starts, in points (1 cm)
MIN_INDENT_PT = 72 / 2.54
#: names (and IDs, lower case without spaces) of quotation paragraph styles
QUOTE_STYLES = frozenset(
    {
        "quote",
        "intensequote",
        "quotations",
        "quotation",
        "blockquote",
        "blockquotation",
        "blocktext",
    }
)
#: styles whose indentation says something else (contents, index, headings, captions, lists)
_NOT_BY_INDENT = re.compile(
    r"(?:toc|index|tableof\w+|heading|title|subtitle|caption|listparagraph|list\w*|"
    r"footnotetext|endnotetext|bibliography|contents|contentsheading)\d*"
)
_OPEN, _CLOSE = "\ufdd0", "\ufdd1"
_MARK = re.compile(f"{_OPEN}(\\d+){_CLOSE}")
_UNITS = {"pt": 1.0, "cm": 72 / 2.54, "mm": 72 / 25.4, "in": 72.0, "pc": 12.0, "px": 0.75}
_LENGTH = re.compile(r"\s*(-?[0-9]*\.?[0-9]+)\s*(pt|cm|mm|in|pc|px)?\s*")


def length_pt(value: str | None, unit_pt: float | None = None) -> float | None:
    """A length as points: ``"1.27cm"``, ``"0.5in"``, ``"12pt"``; a bare number is in
    ``unit_pt`` points (DOCX twips: 1/20); None when absent or unreadable."""
    if value is None:
        return None
    m = _LENGTH.fullmatch(value)
    if m is None or (m.group(2) is None and unit_pt is None):
        return None
    return float(m.group(1)) * (_UNITS[m.group(2)] if m.group(2) else unit_pt)


@dataclass
class Style:
    """A paragraph style: its name, the style it is based on, and what it sets (None: inherited):
    ``left`` edge and ``first`` line offset from it (points), ``listed`` (numbered or bulleted)."""

    name: str = ""
    parent: str | None = None
    left: float | None = None
    first: float | None = None
    listed: bool | None = None


@dataclass
class Paragraph:
    """A paragraph as read: its style ID, direct ``left``/``first`` (points, None: from the
    style), ``apart``: in a table or text box, or a heading; ``chars``: its text's length."""

    style: str | None = None
    left: float | None = None
    first: float | None = None
    listed: bool = False
    apart: bool = False
    chars: int = 0


@dataclass
class QuoteParagraphs:
    """The paragraphs and paragraph styles of one document, recorded as its XML parts are
    parsed (format modules subclass it with ``start``/``end`` hooks, see
    :class:`~simdask.ingest.extract.package.Package`); ``default``: the document's default
    paragraph style (its left edge and first-line offset)."""

    paragraphs: list[Paragraph] = field(default_factory=list)
    styles: dict[str, Style] = field(default_factory=dict)
    default: Style = field(default_factory=Style)
    open: list[int] = field(default_factory=list)

    def start(self, tag: str, attrs: dict) -> str:
        """Text to add where element ``tag`` starts."""
        return ""

    def end(self, tag: str) -> None:
        """Element ``tag`` ends."""

    def clean(self, text: str) -> str:
        """The document's own text without the characters marks are made of."""
        return text.replace(_OPEN, "").replace(_CLOSE, "")

    def begin(self, paragraph: Paragraph) -> str:
        """Record a paragraph that starts here (closed by :meth:`finish`); its first mark."""
        self.paragraphs.append(paragraph)
        self.open.append(len(self.paragraphs) - 1)
        return self.mark()

    def finish(self) -> None:
        """The innermost open paragraph ends."""
        if self.open:
            self.open.pop()

    @property
    def current(self) -> Paragraph | None:
        """The innermost open paragraph."""
        return self.paragraphs[self.open[-1]] if self.open else None

    def mark(self) -> str:
        """The mark of a line start in the innermost open paragraph ("" outside paragraphs)."""
        return f"{_OPEN}{self.open[-1]}{_CLOSE}" if self.open else ""

    def _chain(self, style_id: str | None) -> list[Style]:
        out, seen = [], set()
        while style_id is not None and style_id in self.styles and style_id not in seen:
            seen.add(style_id)
            out.append(self.styles[style_id])
            style_id = self.styles[style_id].parent
        return [*out, self.default]

    def _is_quote_style(self, style_id: str | None) -> bool:
        names = {_key(style_id or "")} | {_key(s.name) for s in self._chain(style_id)}
        return bool(names & QUOTE_STYLES)

    def _edges(self, p: Paragraph) -> tuple[float, bool]:
        """The leftmost point of the paragraph's lines, and whether it is in a list."""
        chain = self._chain(p.style)
        left = p.left if p.left is not None else _first_set(chain, "left")
        first = p.first if p.first is not None else _first_set(chain, "first")
        listed = p.listed or bool(_first_set(chain, "listed"))
        listed = listed or any(_NOT_BY_INDENT.fullmatch(_key(s.name)) for s in chain)
        return (left or 0.0) + min(first or 0.0, 0.0), listed

    def quotes(self) -> set[int]:
        """The numbers of the paragraphs that are block quotes (see the module docstring)."""
        out = {i for i, p in enumerate(self.paragraphs) if self._is_quote_style(p.style)}
        edges = [(i, p, *self._edges(p)) for i, p in enumerate(self.paragraphs)]
        plain = [(i, p, e) for i, p, e, listed in edges if not (listed or p.apart)]
        weight: Counter[float] = Counter()
        for _, p, e in plain:
            weight[round(e, 1)] += p.chars
        if not weight or not any(weight.values()):
            return out
        body = max(weight.items(), key=lambda kv: (kv[1], -kv[0]))[0]
        out |= {i for i, p, e in plain if p.chars and e >= body + MIN_INDENT_PT - 0.05}
        return out

    def render(self, text: str) -> str:
        """``text`` with each mark turned into ``> `` (a line of a block quote) or removed;
        counts each paragraph's characters first."""
        pieces = _MARK.split(text)
        for j in range(1, len(pieces), 2):
            self.paragraphs[int(pieces[j])].chars += len(pieces[j + 1].strip())
        quoted = self.quotes()
        out = [pieces[0]]
        for j in range(1, len(pieces), 2):
            out.append("> " if int(pieces[j]) in quoted else "")
            out.append(pieces[j + 1])
        return "".join(out)


def _key(name: str) -> str:
    return re.sub(r"[\s_-]+", "", name).casefold()


def _first_set(chain: list[Style], attr: str):
    return next((getattr(s, attr) for s in chain if getattr(s, attr) is not None), None)
