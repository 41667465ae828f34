"""DOCX (Office Open XML): body paragraphs and tables in order, then footnotes, endnotes,
headers and footers, straight from the package's XML parts (no extra library).

Kept: ``w:t`` text, tabs, line breaks, non-breaking hyphens; table cells and paragraphs end
with a line break. Left out: deleted text of tracked changes (``w:delText``, ``w:moveFrom``),
field codes (``w:instrText``), comments, and the fallback copy of alternate content (text
boxes are stored twice, ``mc:Choice`` and ``mc:Fallback``; the first is kept).

Paragraphs in a quotation style (``Quote``, ``Intense Quote``, ...) or indented clearly more
than the body text are block quotes: each of their lines starts with ``> ``
(:mod:`simdask.ingest.extract.blockquote`; styles from ``word/styles.xml``).
"""

from __future__ import annotations

import re

from simdask.errors import ExtractionError
from simdask.ingest.extract.blockquote import Paragraph, QuoteParagraphs, Style, length_pt
from simdask.ingest.extract.extract_limits import ExtractLimits
from simdask.ingest.extract.package import Package, Rules

__all__ = ["extract_docx"]

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_RULES: Rules = {
    _W + "t": ("", "", "text"),
    _W + "tab": ("\t", "", ""),
    _W + "br": ("\n", "", ""),
    _W + "cr": ("\n", "", ""),
    _W + "noBreakHyphen": ("-", "", ""),
    _W + "p": ("", "\n", ""),
    _W + "tc": ("", "\n", ""),
    _W + "delText": ("", "", "skip"),
    _W + "instrText": ("", "", "skip"),
    _W + "moveFrom": ("", "", "skip"),
    _MC + "Fallback": ("", "", "skip"),
}
_A = _W[1:]  # attribute names: "namespace}name"
_TWIP = 1 / 20  # points
_APART = frozenset({_W + "tbl", _W + "txbxContent"})  # no block quotes by indentation


def _indent(attrs: dict) -> tuple[float | None, float | None]:
    """``w:ind``: the left edge and the first line's offset from it, points (None: not set)."""
    left = attrs.get(_A + "start", attrs.get(_A + "left"))
    hanging, first = attrs.get(_A + "hanging"), attrs.get(_A + "firstLine")
    offset = None
    if hanging is not None or first is not None:
        offset = (length_pt(first, _TWIP) or 0.0) - (length_pt(hanging, _TWIP) or 0.0)
    return length_pt(left, _TWIP), offset


class _Quotes(QuoteParagraphs):
    """Paragraph styles (``word/styles.xml``) and paragraphs as the parts are parsed."""

    def __init__(self) -> None:
        super().__init__()
        self.path: list[str] = []
        self.apart = 0
        self.style: Style | None = None  # the style being read

    def start(self, tag: str, attrs: dict) -> str:
        self.path.append(tag)
        if tag == _W + "p":
            return self.begin(Paragraph(apart=self.apart > 0))
        if tag in _APART:
            self.apart += 1
        elif tag in (_W + "br", _W + "cr"):
            return self.mark()
        elif tag == _W + "style":
            self.style = None
            if attrs.get(_A + "type", "paragraph") == "paragraph":
                self.style = self.styles.setdefault(attrs.get(_A + "styleId", ""), Style())
        elif tag == _W + "pPrDefault":
            self.style = self.default
        elif self.path[-2:-1] == [_W + "style"] and self.style is not None:
            if tag == _W + "name":
                self.style.name = attrs.get(_A + "val", "")
            elif tag == _W + "basedOn":
                self.style.parent = attrs.get(_A + "val")
        elif len(self.path) > 2 and self.path[-2] == _W + "pPr":
            self._properties(tag, attrs, self.path[-3])
        return ""

    def _properties(self, tag: str, attrs: dict, owner: str) -> None:
        """``w:pStyle``, ``w:ind``, ``w:numPr`` of a paragraph, a style or the defaults."""
        target = self.current if owner == _W + "p" else None
        if owner in (_W + "style", _W + "pPrDefault"):
            target = self.style
        if target is None:  # e.g. the old properties of a tracked change (w:pPrChange)
            return
        if tag == _W + "pStyle" and isinstance(target, Paragraph):
            target.style = attrs.get(_A + "val")
        elif tag == _W + "ind":
            target.left, target.first = _indent(attrs)
        elif tag == _W + "numPr":
            target.listed = True

    def end(self, tag: str) -> None:
        self.path.pop()
        if tag == _W + "p":
            self.finish()
        elif tag in _APART:
            self.apart -= 1
        elif tag in (_W + "style", _W + "pPrDefault"):
            self.style = None


_EXTRA = re.compile(r"word/(footnotes|endnotes|header\d*|footer\d*)\.xml")
_ORDER = {"footnotes": 0, "endnotes": 1, "header": 2, "footer": 3}


def _extra_parts(names: set[str]) -> list[str]:
    found = [(m.group(1), n) for n in names if (m := _EXTRA.fullmatch(n))]
    return [n for _, n in sorted(found, key=lambda f: (_ORDER[f[0].rstrip("0123456789")], f))]


def extract_docx(
    data: bytes, name: str = "<docx>", limits: ExtractLimits | int | None = None
) -> str:
    """The text of a Word document (see the module docstring).

    Raises :class:`~simdask.errors.ExtractionError` of kind ``corrupt`` (not a ZIP package,
    no ``word/document.xml``, malformed XML), ``encrypted`` (a password-protected
    document, stored as an OLE compound file), ``bomb`` or ``too_large`` (its XML parts
    inflate beyond ``limits``), ``too_complex`` (too many or too deeply nested
    elements): :mod:`simdask.ingest.extract.package`.
    """
    if data.startswith(b"\xd0\xcf\x11\xe0") and "EncryptionInfo".encode("utf-16-le") in data:
        raise ExtractionError(
            name,
            "encrypted",
            "expected a DOCX file, found a password-protected Office document; "
            "save it without a password to index it",
        )
    pkg = Package(data, name, "DOCX", "a DOCX file (a ZIP package with word/document.xml)", limits)
    if "word/document.xml" not in pkg.names:
        raise ExtractionError(
            name,
            "corrupt",
            "expected a DOCX package with word/document.xml, found a ZIP archive without it",
        )
    quotes = _Quotes()
    if "word/styles.xml" in pkg.names:
        pkg.texts("word/styles.xml", {}, tails=False, hook=quotes)
    parts = ["word/document.xml", *_extra_parts(pkg.names)]
    texts = (text for p in parts for _, text in pkg.texts(p, _RULES, tails=False, hook=quotes))
    return quotes.render("\n".join(texts))
