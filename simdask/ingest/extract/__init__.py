"""Text extraction from documents (DESIGN §3.1): one module per format, one entry point.

:func:`extract_text` picks the format by content where the first bytes say it plainly (a PDF,
a DOCX or ODT package, an RTF document, an OLE compound file: an old Word .doc, read by the
Debian tool antiword where it is installed), else by the name's suffix, else sniffs for
HTML and falls back to plain text. Every failure is an
:class:`~simdask.errors.ExtractionError` whose ``kind`` is one of :data:`KINDS` and whose
message says what was expected and what was found.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath

from simdask.errors import ExtractionError
from simdask.ingest.extract.doc import extract_doc
from simdask.ingest.extract.docx import extract_docx
from simdask.ingest.extract.extract_limits import ExtractLimits
from simdask.ingest.extract.html import extract_html
from simdask.ingest.extract.odt import extract_odt
from simdask.ingest.extract.pdf_extract import extract_pdf
from simdask.ingest.extract.plain import decode_text, extract_plain
from simdask.ingest.extract.rtf import extract_rtf
from simdask.ingest.extract.sniff import foreign, sniff
from simdask.ingest.unsupported import hint_for

__all__ = [
    "FORMATS",
    "KINDS",
    "SUFFIXES",
    "decode_text",
    "extract_doc",
    "extract_docx",
    "extract_html",
    "extract_odt",
    "extract_pdf",
    "extract_plain",
    "extract_rtf",
    "extract_text",
    "format_of",
]

#: Extractor of each format.
FORMATS: dict[str, Callable[..., str]] = {
    "plain": extract_plain,
    "html": extract_html,
    "pdf": extract_pdf,
    "docx": extract_docx,
    "odt": extract_odt,
    "rtf": extract_rtf,
    "doc": extract_doc,
}
#: File name suffixes (lower case) and their formats; a folder is walked for these.
SUFFIXES: dict[str, str] = {
    ".txt": "plain",
    ".md": "plain",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
    ".odt": "odt",
    ".rtf": "rtf",
    ".doc": "doc",
}
#: The kinds of per-document errors, as recorded in the catalog's ``errors`` table.
KINDS: dict[str, str] = {
    "empty": "the file is empty, or has no text once extracted",
    "binary": "binary data where text was expected (NUL bytes, control characters)",
    "encoding": "text in no encoding that decodes it plausibly, or invalid under its BOM",
    "corrupt": "a damaged or truncated PDF, DOCX or ODT file",
    "encrypted": "a password-protected PDF, DOCX or ODT file",
    "image_only": "a PDF without a text layer (scanned pages; OCR is not done)",
    "unsupported": "a format simdask does not read (e.g. an image), or an old binary .doc "
    "without the antiword tool installed",
    "missing_dependency": "the optional library for the format is not installed",
    "unreadable": "the file vanished or could not be read after it was listed",
    "too_large": "the file is over the size limit of the run (--max-file-size), or its "
    "content inflates beyond twice that (DOCX/ODT parts, text) or PDFium needs more memory "
    "than its limit to read it",
    "bomb": "a file whose content inflates beyond a limit (DOCX/ODT parts: twice "
    "--max-file-size; PDF: the PDF reader's memory) and to over 100 times its own size (a "
    "decompression bomb)",
    "control_bytes": "a warning, the document is indexed: a few stray control bytes (NUL and "
    "other non-whitespace C0 controls, at most 5 % of the text) were dropped from it",
    "too_complex": "parsing the file would cost too much work: DOCX/ODT/HTML with more than "
    "1,000,000 elements or nested more than 256 deep, RTF groups nested more than 256 deep, "
    "a PDF of more than 20,000 pages, a PDF, RTF or .doc taking more than 60 s of CPU",
    "jsonl": "a JSONL line that is not an object with an id and a string text",
    "too_short": "fewer words than a chunk needs (indexed, without chunks)",
    "duplicate_key": "the same key twice in one run (the first is kept)",
}


def format_of(data: bytes, name: str) -> str:
    """The format to extract ``data`` as: by content where it is plain, else by suffix."""
    found = sniff(data)
    if found in FORMATS and found != "html":
        return found
    if found == "ole":
        return "ole"
    by_suffix = SUFFIXES.get(PurePosixPath(name).suffix.lower())
    return by_suffix or ("html" if found == "html" else "plain")


def extract_text(
    data: bytes,
    name: str,
    max_file_bytes: int | None = None,
    notes: list | None = None,
    limits: ExtractLimits | None = None,
) -> str:
    """The plain text of a document given as bytes; ``name`` (a key or file name) gives the
    suffix and labels errors. ``max_file_bytes``: the run's --max-file-size (None: the
    default, 0: none); ``limits``: what extracting may cost
    (:class:`~simdask.ingest.extract.extract_limits.ExtractLimits`; None:
    ``ExtractLimits.for_file_size(max_file_bytes)``), beyond which the document fails as
    ``bomb``, ``too_large`` or ``too_complex``. ``notes`` (a list) receives ``(kind,
    message)`` of what was changed in a document still extracted (stray control bytes
    dropped: ``control_bytes``).

    Raises :class:`~simdask.errors.ExtractionError` (``kind`` in :data:`KINDS`); never any
    other exception for bad input.
    """
    if not data:
        raise ExtractionError(name, "empty", "expected a document, found an empty file (0 bytes)")
    if limits is None:
        limits = ExtractLimits.for_file_size(max_file_bytes)
    other = foreign(data)
    if other is not None:  # e.g. an .rtf given directly: not indexed as its markup
        raise ExtractionError(
            name,
            "unsupported",
            f"expected {_expected(name)}, found {other}: {hint_for(found=other)}",
        )
    fmt = format_of(data, name)
    if fmt == "ole":
        if "EncryptionInfo".encode("utf-16-le") in data:
            return extract_docx(data, name, limits)  # raises: password-protected
        return _nonempty(extract_doc(data, name, limits), name, "old Word")
    if fmt in ("plain", "html"):
        text = FORMATS[fmt](data, name, notes, limits)
    else:
        text = FORMATS[fmt](data, name, limits)
    if len(text) > limits.text_chars:
        raise ExtractionError(
            name,
            "too_large",
            f"expected at most {limits.text_chars:,} characters of text from one document "
            f"(indexing costs about 20 bytes per character), found {len(text):,}",
        )
    return _nonempty(text, name, fmt.upper())


def _nonempty(text: str, name: str, what: str) -> str:
    if not text.strip():
        raise ExtractionError(name, "empty", f"expected text, found none in this {what} document")
    return text


def _expected(name: str) -> str:
    fmt = SUFFIXES.get(PurePosixPath(name).suffix.lower())
    if not fmt or fmt == "plain":
        return "a text document"
    return f"{'an' if fmt in ('html', 'odt') else 'a'} {fmt.upper()} document"
