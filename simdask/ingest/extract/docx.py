"""DOCX (Office Open XML): body paragraphs and tables in order, then footnotes, endnotes,
headers and footers, straight from the package's XML parts (no extra library).

Kept: ``w:t`` text, tabs, line breaks, non-breaking hyphens; table cells and paragraphs end
with a line break. Left out: deleted text of tracked changes (``w:delText``, ``w:moveFrom``),
field codes (``w:instrText``), comments, and the fallback copy of alternate content (text
boxes are stored twice, ``mc:Choice`` and ``mc:Fallback``; the first is kept).
"""

from __future__ import annotations

import re

from simdask.errors import ExtractionError
from simdask.ingest.extract.package import DEFAULT_UNCOMPRESSED_LIMIT, Package, Rules

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
_EXTRA = re.compile(r"word/(footnotes|endnotes|header\d*|footer\d*)\.xml")
_ORDER = {"footnotes": 0, "endnotes": 1, "header": 2, "footer": 3}


def _extra_parts(names: set[str]) -> list[str]:
    found = [(m.group(1), n) for n in names if (m := _EXTRA.fullmatch(n))]
    return [n for _, n in sorted(found, key=lambda f: (_ORDER[f[0].rstrip("0123456789")], f))]


def extract_docx(data: bytes, name: str = "<docx>", limit: int = DEFAULT_UNCOMPRESSED_LIMIT) -> str:
    """The text of a Word document (see the module docstring).

    Raises :class:`~simdask.errors.ExtractionError` of kind ``corrupt`` (not a ZIP package,
    no ``word/document.xml``, malformed XML), ``encrypted`` (a password-protected
    document, stored as an OLE compound file), ``bomb`` or ``too_large`` (its XML parts
    inflate to more than ``limit`` bytes together:
    :mod:`simdask.ingest.extract.package`).
    """
    if data.startswith(b"\xd0\xcf\x11\xe0") and "EncryptionInfo".encode("utf-16-le") in data:
        raise ExtractionError(
            name,
            "encrypted",
            "expected a DOCX file, found a password-protected Office document; "
            "save it without a password to index it",
        )
    pkg = Package(data, name, "DOCX", "a DOCX file (a ZIP package with word/document.xml)", limit)
    if "word/document.xml" not in pkg.names:
        raise ExtractionError(
            name,
            "corrupt",
            "expected a DOCX package with word/document.xml, found a ZIP archive without it",
        )
    parts = ["word/document.xml", *_extra_parts(pkg.names)]
    return "\n".join(text for p in parts for _, text in pkg.texts(p, _RULES, tails=False))
