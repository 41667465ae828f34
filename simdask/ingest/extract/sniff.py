"""Recognising a document's format by its first bytes (magic numbers), whatever its name says."""

from __future__ import annotations

import io
import re
import zipfile

__all__ = ["describe", "foreign", "sniff"]

_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
#: magic bytes of formats simdask does not read, named in error messages
_OTHER = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"BZh", "bzip2-compressed data"),
    (b"\xfd7zXZ\x00", "xz-compressed data"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed data"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"\x7fELF", "an ELF executable"),
    (b"MZ", "a Windows executable"),
)
_HTML_START = re.compile(rb"\s*(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body)[\s>]", re.I | re.S)


def _zip_format(data: bytes) -> str | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = set(zf.namelist())
            if "word/document.xml" in names:
                return "docx"
            if "content.xml" in names and "mimetype" in names:
                mime = zf.read("mimetype")[:100]
                if mime.startswith(b"application/vnd.oasis.opendocument.text"):
                    return "odt"
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, KeyError, NotImplementedError):
        return None
    return None


def sniff(data: bytes) -> str | None:
    """The format the bytes are in, by content: ``pdf``, ``docx``, ``odt``, ``html``, ``rtf``,
    ``ole`` (an OLE compound file: old .doc, or a password-protected Office document), or
    None."""
    head = data[:1024]
    if b"%PDF-" in head:
        return "pdf"
    if head.startswith(b"PK\x03\x04"):
        return _zip_format(data)
    if head.startswith(_OLE):
        return "ole"
    if head.startswith((b"{\\rtf", b"\xef\xbb\xbf{\\rtf")):
        return "rtf"
    for bom in (b"\xef\xbb\xbf", b""):
        if head.startswith(bom) and _HTML_START.match(head, len(bom)):
            return "html"
    return None


#: magic bytes long enough that text never starts with them by chance ("MZ", "BZh" are not)
_FOREIGN = tuple((magic, what) for magic, what in _OTHER if len(magic) >= 4 or magic[0] >= 0x80)


def foreign(data: bytes) -> str | None:
    """What the bytes are when their first bytes plainly say a format simdask does not read
    (an RTF document, an image, an archive), else None; whatever the file's name says."""
    for magic, what in _FOREIGN:
        if data.startswith(magic):
            return what
    return None


def describe(data: bytes) -> str:
    """A short phrase naming what the bytes look like, for error messages."""
    if not data:
        return "an empty file"
    kind = sniff(data)
    if kind == "ole":
        return "an OLE compound file (an old .doc/.xls, or a password-protected Office file)"
    if kind == "rtf":
        return "an RTF document"
    if kind:
        return f"a {kind.upper()} document"
    if data.startswith(b"PK\x03\x04"):
        return "a ZIP archive"
    for magic, what in _OTHER:
        if data.startswith(magic):
            return what
    head = data[:16]
    return f"{len(data)} bytes starting with {head!r}"
