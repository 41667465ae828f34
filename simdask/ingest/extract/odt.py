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
from simdask.ingest.extract.package import Package, Rules, xml_text

__all__ = ["extract_odt"]

_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
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
    return f"{{{_MANIFEST}}}encryption-data" in {
        el.tag for el in pkg.parse("META-INF/manifest.xml").iter()
    }


def extract_odt(data: bytes, name: str = "<odt>") -> str:
    """The text of an OpenDocument text file (see the module docstring).

    Raises :class:`~simdask.errors.ExtractionError` of kind ``corrupt`` (not a ZIP package,
    no ``content.xml``, malformed XML) or ``encrypted`` (saved with a password).
    """
    pkg = Package(data, name, "ODT", "an ODT file (a ZIP package with content.xml)")
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
    body = pkg.parse("content.xml").find(f"{_OFFICE}body")
    parts = [] if body is None else [xml_text(body, _RULES, tails=True)]
    if body is not None:
        parts.extend(xml_text(n, _RULES, tails=True) for n in body.iter(f"{_TEXT}note-body"))
    if "styles.xml" in pkg.names:
        for page in pkg.parse("styles.xml").iter(f"{_STYLE}master-page"):
            parts.append(xml_text(page, _RULES, tails=True))
    return "\n".join(parts)
