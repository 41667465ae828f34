"""HTML (.html, .htm): the visible text, with the standard library's ``html.parser``.

Left out: the contents of ``script``, ``style``, ``template``, ``noscript``, ``title``
(shown in a tab, not the page) and of elements with the ``hidden`` attribute. Block
elements, ``br``, table cells and list items break words; inline elements (``b``, ``span``,
``a``) do not, so ``<b>exam</b>ple`` is one word. Entities are decoded, soft hyphens
(``&shy;``) dropped.

Quotations the markup shows are kept visible in the text, as a reader sees them (issue 16,
``--exclude-quotes``): every line of a ``blockquote`` starts with ``> `` (as in e-mail and
Markdown: :func:`simdask.kernels.exclusions.quote_spans` reads them), and a ``q`` element is
put between ``“…”`` (``‘…’`` inside another ``q``), as browsers draw it. Neither adds a word.

The encoding comes from a byte order mark, else a ``<meta charset>`` (or ``http-equiv``)
declaration in the first 4 KB (labels as browsers read them: ``iso-8859-1`` is cp1252), else
detection as for plain text.
"""

from __future__ import annotations

import codecs
import re
from collections import Counter
from html.parser import HTMLParser

from simdask.errors import ExtractionError
from simdask.ingest.extract.extract_limits import ExtractLimits
from simdask.ingest.extract.plain import decode_text, reject_control_heavy

__all__ = ["extract_html", "html_encoding"]

_SKIP = frozenset({"script", "style", "template", "noscript", "title"})
_BLOCK = frozenset(
    "address article aside blockquote body br caption dd details dialog div dl dt fieldset "  # noqa: SIM905
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr html li main nav ol "
    "option p pre section summary table tbody td tfoot th thead tr ul".split()
)
#: elements without an end tag
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())  # noqa: SIM905
_META = re.compile(
    rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE | re.DOTALL
)
#: labels whose meaning differs in browsers (WHATWG Encoding Standard)
_LABELS = {"iso-8859-1": "cp1252", "latin1": "cp1252", "ascii": "cp1252", "us-ascii": "cp1252"}
#: put before the first character of each line of text inside a blockquote while parsing (a
#: Unicode noncharacter, removed from the document's own text), turned into ``> `` at the end
_LINE_MARK = "\ufdd0"
_LINE_START = re.compile(r"(?:^|(?<=\n))[^\S\n]*(?=\S)")
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


class _TextParser(HTMLParser):
    """The visible text (``parts``) of the HTML fed; ``too_complex`` beyond
    ``limits.elements`` start tags."""

    def __init__(self, name: str, limits: ExtractLimits) -> None:
        super().__init__(convert_charrefs=True)
        self.name, self.limits, self.elements = name, limits, 0
        self.parts: list[str] = []
        self.stack: list[str] = []  # open elements whose content is skipped (outermost first)
        self.open: Counter[str] = Counter()  # of each tag in the stack: O(1) lookups
        self.quoted = 0  # open blockquote elements
        self.inline = 0  # open q elements

    def handle_starttag(self, tag: str, attrs) -> None:
        self.elements += 1
        if self.elements > self.limits.elements:
            raise ExtractionError(
                self.name,
                "too_complex",
                f"expected an HTML document of at most {self.limits.elements:,} elements, "
                f"found more by character {self.getpos()[1]:,} of line {self.getpos()[0]:,}",
            )
        if tag in _VOID:
            if tag in _BLOCK and not self.stack:
                self.parts.append("\n")
            return
        if self.stack or tag in _SKIP or any(name == "hidden" for name, _ in attrs):
            self.stack.append(tag)
            self.open[tag] += 1
            return
        if tag in _BLOCK:
            self.parts.append("\n")
        if tag == "blockquote":
            self.quoted += 1
        elif tag == "q":
            self.parts.append("‘" if self.inline % 2 else "“")
            self.inline += 1

    def handle_startendtag(self, tag: str, attrs) -> None:
        if tag in _BLOCK and not self.stack:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if self.stack:
            if self.open[tag]:  # close up to the matching element (tolerates bad nesting)
                while (top := self.stack.pop()) != tag:
                    self.open[top] -= 1
                self.open[tag] -= 1
            return
        if tag in _BLOCK:
            self.parts.append("\n")
        if tag == "blockquote" and self.quoted:
            self.quoted -= 1
        elif tag == "q" and self.inline:
            self.inline -= 1
            self.parts.append("’" if self.inline % 2 else "”")

    def handle_data(self, data: str) -> None:
        if self.stack:
            return
        data = data.replace(_LINE_MARK, "")
        if self.quoted:  # the mark before each line's first character (see _mark_lines)
            data = _LINE_START.sub(lambda m: m.group() + _LINE_MARK, data)
        self.parts.append(data)


def _mark_lines(text: str) -> str:
    """``text`` with each line holding a :data:`_LINE_MARK` started by ``> `` instead (the
    lines of a blockquote, once whitespace is normalised)."""
    if _LINE_MARK not in text:
        return text
    return "\n".join(
        "> " + line.replace(_LINE_MARK, "") if _LINE_MARK in line else line
        for line in text.split("\n")
    )


def html_encoding(data: bytes) -> str | None:
    """The encoding a byte order mark or a ``<meta>`` declaration names, or None."""
    for bom, enc in _BOMS:
        if data.startswith(bom):
            return enc
    m = _META.search(data[:4096])
    if not m:
        return None
    label = m.group(1).decode("ascii").lower()
    label = _LABELS.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def extract_html(
    data: bytes,
    name: str = "<html>",
    notes: list | None = None,
    limits: ExtractLimits | None = None,
) -> str:
    """The visible text of an HTML document (see the module docstring); ``notes`` receives a
    ``(kind, message)`` for stray control bytes dropped
    (:func:`~simdask.ingest.extract.plain.decode_text`).

    Raises :class:`~simdask.errors.ExtractionError` of kind ``encoding`` or ``binary`` when
    the bytes are not text, ``too_complex`` beyond ``limits.elements`` elements (the parser
    costs about 5 us and the text a few bytes per element; markup is bounded by the file
    size, elements by this limit).
    """
    limits = limits or ExtractLimits()
    enc = html_encoding(data)
    text = None
    if enc is not None:
        try:
            text = reject_control_heavy(data.decode(enc), name, enc, notes)
        except UnicodeDecodeError:
            text = None  # the declaration lies: detect instead
    if text is None:
        text = decode_text(data, name, notes)
    parser = _TextParser(name, limits)
    try:
        parser.feed(text)
        parser.close()
    except ExtractionError:
        raise
    except (AssertionError, ValueError) as e:  # html.parser's last resort on broken markup
        raise ExtractionError(
            name, "corrupt", f"expected HTML, found markup the parser gives up on ({e})"
        ) from e
    out = "".join(parser.parts).replace("\u00ad", "")
    return _mark_lines(re.sub(r"[ \t\r\f\v]*\n\s*", "\n", out).strip())
