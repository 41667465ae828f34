"""ODT (OpenDocument text): the body of ``content.xml`` in order, then the headers and footers
of the master pages in ``styles.xml``, straight from the package's XML (no extra library).

Kept: paragraphs and headings (each ends with a line break), spans, links, lists, tables
(cells end with a line break), text boxes, ``text:s`` spaces, tabs and line breaks; the
bodies of footnotes and endnotes come after the body text (as in DOCX), not inside the
sentence that cites them. Left out: comments (``office:annotation``), the text of tracked
deletions (``text:tracked-changes``) and footnote marks (``text:note-citation``).
"""

from __future__ import annotations

from simdask.errors import ExtractionError
from simdask.ingest.extract.package import DEFAULT_UNCOMPRESSED_LIMIT, Package, Rules

__all__ = ["extract_odt"]

_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
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


def _encrypted(pkg: Package) -> bool:
    """True when the manifest lists encryption data for some part."""
    if "META-INF/manifest.xml" not in pkg.names:
        return False
    tag = f"{{{_MANIFEST}}}encryption-data"
    return bool(pkg.texts("META-INF/manifest.xml", {}, tails=False, roots={tag}))


def extract_odt(data: bytes, name: str = "<odt>", limit: int = DEFAULT_UNCOMPRESSED_LIMIT) -> str:
    """The text of an OpenDocument text file (see the module docstring).

    Raises :class:`~simdask.errors.ExtractionError` of kind ``corrupt`` (not a ZIP package,
    no ``content.xml``, malformed XML), ``encrypted`` (saved with a password), ``bomb`` or
    ``too_large`` (its XML parts inflate to more than ``limit`` bytes together:
    :mod:`simdask.ingest.extract.package`).
    """
    pkg = Package(data, name, "ODT", "an ODT file (a ZIP package with content.xml)", limit)
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
    found = pkg.texts("content.xml", _RULES, tails=True, roots={_BODY, _NOTE_BODY})
    bodies = [text for tag, text in found if tag == _BODY][:1]
    parts = bodies + [text for tag, text in found if tag == _NOTE_BODY] if bodies else []
    if "styles.xml" in pkg.names:
        pages = pkg.texts("styles.xml", _RULES, tails=True, roots={f"{_STYLE}master-page"})
        parts.extend(text for _, text in pages)
    return "\n".join(parts)
