"""PDF: the text layer of every page, in page order, with pypdfium2 (PDFium's bindings), read
in a helper process bounded in memory and CPU time (:mod:`simdask.ingest.extract.isolated`;
the reading itself: :mod:`simdask.ingest.extract.pdf_text`)."""

from __future__ import annotations

from simdask.errors import ExtractionError
from simdask.ingest.extract.extract_limits import ExtractLimits, as_limits
from simdask.ingest.extract.isolated import extract_isolated
from simdask.ingest.extract.pdf_text import join_hyphenated
from simdask.ingest.extract.sniff import describe

__all__ = ["extract_pdf", "join_hyphenated"]


def extract_pdf(data: bytes, name: str = "<pdf>", limits: ExtractLimits | int | None = None) -> str:
    """The text layer of a PDF, pages in order (an integer ``limits``: characters of text at
    most, as before :class:`~simdask.ingest.extract.extract_limits.ExtractLimits`).

    Raises :class:`~simdask.errors.ExtractionError` of the kinds of
    :func:`~simdask.ingest.extract.pdf_text.read_pdf`, and ``bomb`` or ``too_large`` when
    PDFium needs more than ``limits.pdf_memory_bytes`` to read it, ``too_complex`` when it
    takes more than ``limits.cpu_seconds`` of CPU.
    """
    if b"%PDF-" not in data[:1024]:
        raise ExtractionError(
            name, "corrupt", f"expected a PDF (starting with %PDF-), found {describe(data)}"
        )
    return extract_isolated("pdf", data, name, as_limits(limits))
