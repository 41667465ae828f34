"""ODT (OpenDocument text): the body of ``content.xml`` in order, then the headers and footers
of the master pages in ``styles.xml``, straight from the package's XML (no extra library).

Kept: paragraphs and headings (each ends with a line break), spans, links, lists, tables
(cells end with a line break), text boxes, ``text:s`` spaces, tabs and line breaks; the
bodies of footnotes and endnotes come after the body text (as in DOCX), not inside the
sentence that cites them. Left out: comments (``office:annotation``), the text of tracked
deletions (``text:tracked-changes``) and footnote marks (``text:note-citation``).

Paragraphs in a quotation style (LibreOffice's ``Quotations``, Word's ``Quote``, ...) or
indented clearly more than the body text are block quotes: each of their lines starts with
``> `` (:mod:`simdask.ingest.extract.blockquote`; styles from both XML parts).
"""

from __future__ import annotations

from simdask.errors import ExtractionError
from simdask.ingest.extract.blockquote import Paragraph, QuoteParagraphs, Style, length_pt
from simdask.ingest.extract.extract_limits import ExtractLimits
from simdask.ingest.extract.package import Package, Rules

__all__ = ["extract_odt"]

_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
_FO = "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0}"  # attributes
_DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
_BODY = _OFFICE + "body"
_NOTE_BODY = _TEXT + "note-body"
_MANIFEST = "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"  # without braces
_RULES: Rules = {
    _TEXT + "p": ("", "\n", ""),
    _TEXT + "h": ("", "\n", ""),
    _TEXT + "tab": ("\t", "", ""),
    _TEXT + "line-break": ("\n", "", ""),
    _TEXT + "s": (" ", "", ""),
    _TABLE + "table-cell": ("", "\n", ""),
    _OFFICE + "annotation": ("", "", "skip"),
    _TEXT + "tracked-changes": ("", "", "skip"),
    _TEXT + "note": ("", "", "skip"),  # footnotes and endnotes follow the body
    _TEXT + "sequence-decls": ("", "", "skip"),
}


_APART = frozenset({_TABLE + "table", _DRAW + "text-box"})  # no block quotes by indentation
_LISTS = frozenset({_TEXT + "list", _TEXT + "numbered-paragraph"})


class _Quotes(QuoteParagraphs):
    """Paragraph styles and paragraphs as the XML parts are parsed."""

    def __init__(self) -> None:
        super().__init__()
        self.apart = self.lists = 0
        self.style: Style | None = None  # the style being read

    def start(self, tag: str, attrs: dict) -> str:
        if tag in (_TEXT + "p", _TEXT + "h"):
            par = Paragraph(attrs.get(_TEXT[1:] + "style-name"), apart=self.apart > 0)
            par.apart |= tag == _TEXT + "h"
            par.listed = self.lists > 0
            return self.begin(par)
        if tag == _TEXT + "line-break":
            return self.mark()
        if tag in _APART:
            self.apart += 1
        elif tag in _LISTS:
            self.lists += 1
        elif tag == _STYLE + "style" and attrs.get(_STYLE[1:] + "family") == "paragraph":
            self.style = Style(
                attrs.get(_STYLE[1:] + "display-name") or attrs.get(_STYLE[1:] + "name", ""),
                attrs.get(_STYLE[1:] + "parent-style-name"),
                listed=True if attrs.get(_STYLE[1:] + "list-style-name") else None,
            )
            self.styles[attrs.get(_STYLE[1:] + "name", "")] = self.style
        elif tag == _STYLE + "default-style" and attrs.get(_STYLE[1:] + "family") == "paragraph":
            self.style = self.default
        elif tag == _STYLE + "paragraph-properties" and self.style is not None:
            self.style.left = length_pt(attrs.get(_FO + "margin-left"))
            self.style.first = length_pt(attrs.get(_FO + "text-indent"))
        return ""

    def end(self, tag: str) -> None:
        if tag in (_TEXT + "p", _TEXT + "h"):
            self.finish()
        elif tag in _APART:
            self.apart -= 1
        elif tag in _LISTS:
            self.lists -= 1
        elif tag in (_STYLE + "style", _STYLE + "default-style"):
            self.style = None


def _encrypted(pkg: Package) -> bool:
    """True when the manifest lists encryption data for some part."""
    if "META-INF/manifest.xml" not in pkg.names:
        return False
    tag = f"{{{_MANIFEST}}}encryption-data"
    return bool(pkg.texts("META-INF/manifest.xml", {}, tails=False, roots={tag}))


def extract_odt(data: bytes, name: str = "<odt>", limits: ExtractLimits | int | None = None) -> str:
    """The text of an OpenDocument text file (see the module docstring).

    Raises :class:`~simdask.errors.ExtractionError` of kind ``corrupt`` (not a ZIP package,
    no ``content.xml``, malformed XML), ``encrypted`` (saved with a password), ``bomb`` or
    ``too_large`` (its XML parts inflate beyond ``limits``), ``too_complex`` (too many or
    too deeply nested elements): :mod:`simdask.ingest.extract.package`.
    """
    pkg = Package(data, name, "ODT", "an ODT file (a ZIP package with content.xml)", limits)
    if _encrypted(pkg):
        raise ExtractionError(
            name,
            "encrypted",
            "expected a readable ODT file, found one saved with a password; "
            "save it without a password to index it",
        )
    if "content.xml" not in pkg.names:
        raise ExtractionError(
            name, "corrupt", "expected an ODT package with content.xml, found a ZIP without it"
        )
    quotes, pages = _Quotes(), []
    if "styles.xml" in pkg.names:  # the styles first, the pages' text last
        master = {f"{_STYLE}master-page"}
        pages = pkg.texts("styles.xml", _RULES, tails=True, roots=master, hook=quotes)
    found = pkg.texts("content.xml", _RULES, tails=True, roots={_BODY, _NOTE_BODY}, hook=quotes)
    bodies = [text for tag, text in found if tag == _BODY][:1]
    parts = bodies + [text for tag, text in found if tag == _NOTE_BODY] if bodies else []
    parts.extend(text for _, text in pages)
    return quotes.render("\n".join(parts))
