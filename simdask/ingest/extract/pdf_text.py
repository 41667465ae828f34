"""PDF, read in this process: the text layer of every page, in page order, with pypdfium2
(PDFium's bindings). :func:`simdask.ingest.extract.pdf_extract.extract_pdf` runs :func:`read_pdf` in
a helper process bounded in memory (:mod:`simdask.ingest.extract.isolated`).

PDFium marks a hyphen at the end of a line as U+FFFE and drops the line break after it;
such words are joined (``exam-`` / ``ple`` -> ``example``), except before an upper-case
letter (``Jean-`` / ``Paul`` -> ``Jean-Paul``). Hyphens that a producer left as ``-`` plus a
line break before a lower-case letter are joined the same way; hyphens inside a line
(``well-known``) are kept. Pages are separated by a line break (a word hyphenated at the
end of a page is joined too). Page furniture (running headers and footers, page numbers) is
left out: :mod:`simdask.ingest.extract.furniture`.

PDFium is not thread-safe, so all calls into it take one process-wide lock (Dask workers
may run several chunking tasks in threads of one process).
"""

from __future__ import annotations

import re
import threading
import time

from simdask.errors import ExtractionError
from simdask.ingest.extract.extract_limits import ExtractLimits
from simdask.ingest.extract.furniture import drop_furniture
from simdask.ingest.extract.sniff import describe

__all__ = ["join_hyphenated", "read_pdf"]

_LOCK = threading.Lock()
_PDFIUM_HYPHEN = re.compile(r"()\ufffe[ \t]*(?:\r?\n[ \t]*)?")
_LINE_END_HYPHEN = re.compile(r"([^\W\d_])[-\u00ad\u2010][ \t]*\r?\n[ \t]*(?=[^\W\d_])")
_PASSWORD_ERROR = 4  # FPDF_ERR_PASSWORD
_SECURITY_ERROR = 5  # FPDF_ERR_SECURITY (unsupported security handler)


def join_hyphenated(text: str) -> str:
    """Join words split by a hyphen at a line end (see the module docstring)."""

    def join(m: re.Match) -> str:
        upper = m.string[m.end() : m.end() + 1].isupper()
        return m.group(1) + ("-" if upper else "")

    text = _PDFIUM_HYPHEN.sub(join, text)
    text = _LINE_END_HYPHEN.sub(join, text)
    return text.replace("\u00ad", "").replace("\r\n", "\n")


def _load(data: bytes, name: str):
    try:
        import pypdfium2 as pdfium  # optional (pdf extra)
    except ImportError as e:
        raise ExtractionError(
            name,
            "missing_dependency",
            "expected the optional library pypdfium2 to read PDF files, found it is not "
            "installed: pip install 'simdask[pdf]'",
        ) from e
    try:
        return pdfium, pdfium.PdfDocument(data)
    except pdfium.PdfiumError as e:
        code = getattr(e, "err_code", None)
        if code == _PASSWORD_ERROR:
            raise ExtractionError(
                name,
                "encrypted",
                "expected a readable PDF, found one encrypted with a password; "
                "save it without protection to index it",
            ) from e
        if code == _SECURITY_ERROR:
            raise ExtractionError(
                name, "encrypted", "expected a readable PDF, found an unsupported encryption"
            ) from e
        raise ExtractionError(
            name, "corrupt", f"expected a valid PDF, found a damaged or truncated one ({e})"
        ) from e


def _page_text(pdfium, page) -> tuple[str, bool]:
    """The page's text and whether it holds an image."""
    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range()
    finally:
        textpage.close()
    image = pdfium.raw.FPDF_PAGEOBJ_IMAGE
    has_image = any(True for _ in page.get_objects(filter=(image,), max_depth=4))
    return text, has_image


def _over(name: str, kind: str, what: str, found: str) -> ExtractionError:
    return ExtractionError(name, kind, f"expected {what}, found {found}")


def _pages(pdfium, doc, name: str, limits: ExtractLimits, cpu_start: float):
    """``(texts, pages with images)`` of every page, within ``limits`` (text, CPU)."""
    pages, images, chars = [], 0, 0
    for i in range(len(doc)):
        try:
            page = doc[i]
        except pdfium.PdfiumError as e:
            raise ExtractionError(
                name, "corrupt", f"expected a valid PDF, found page {i + 1} damaged ({e})"
            ) from e
        try:
            text, has_image = _page_text(pdfium, page)
        finally:
            page.close()
        chars += len(text)
        if chars > limits.text_chars:
            raise _over(
                name,
                "too_large",
                f"at most {limits.text_chars:,} characters of text",
                f"more by page {i + 1} of {len(doc):,}",
            )
        spent = time.process_time() - cpu_start
        if spent > limits.cpu_seconds:
            raise _over(
                name,
                "too_complex",
                f"a PDF read within {limits.cpu_seconds:g} s of CPU",
                f"{spent:.0f} s spent by page {i + 1} of {len(doc):,}",
            )
        pages.append(text)
        images += has_image
    return pages, images


def read_pdf(
    data: bytes, name: str = "<pdf>", limits: ExtractLimits | None = None, cpu_start=None
) -> str:
    """The text layer of a PDF, pages in order, read in this process (unbounded memory:
    :func:`simdask.ingest.extract.pdf_extract.extract_pdf` runs it in a bounded helper process).
    ``cpu_start``: :func:`time.process_time` when the document's CPU budget began (None:
    now).

    Raises :class:`~simdask.errors.ExtractionError` of kind ``encrypted`` (a password is
    needed), ``corrupt`` (PDFium cannot load it or a page), ``image_only`` (no text on any
    page, but images: scanned pages without OCR), ``empty`` (no text, no images),
    ``too_complex`` (more than ``limits.pdf_pages`` pages, or more than
    ``limits.cpu_seconds`` of CPU), ``too_large`` (more than ``limits.text_chars``
    characters of text) or ``missing_dependency`` (pypdfium2 not installed).
    """
    limits = limits or ExtractLimits()
    cpu_start = time.process_time() if cpu_start is None else cpu_start
    if b"%PDF-" not in data[:1024]:
        raise ExtractionError(
            name, "corrupt", f"expected a PDF (starting with %PDF-), found {describe(data)}"
        )
    with _LOCK:
        pdfium, doc = _load(data, name)
        try:
            if len(doc) == 0:
                raise ExtractionError(
                    name, "corrupt", "expected a PDF with pages, found none (damaged or truncated)"
                )
            if len(doc) > limits.pdf_pages:
                raise _over(
                    name,
                    "too_complex",
                    f"a PDF of at most {limits.pdf_pages:,} pages",
                    f"{len(doc):,} pages in {len(data):,} bytes",
                )
            pages, images = _pages(pdfium, doc, name, limits, cpu_start)
        finally:
            doc.close()
    pages = drop_furniture(pages)  # running headers, footers, page numbers
    text = join_hyphenated("\n".join(pages))  # a word may go on over a page break
    if not text.strip():
        if images:
            raise ExtractionError(
                name,
                "image_only",
                f"expected a text layer, found none on {len(pages)} pages ({images} with "
                "images): the PDF appears to be scanned images without a text layer; "
                "it needs OCR first",
            )
        raise ExtractionError(
            name, "empty", f"expected text, found {len(pages)} pages without any text"
        )
    return text
