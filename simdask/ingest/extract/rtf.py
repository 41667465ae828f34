"""RTF documents (the ``rtf`` extra), read by :func:`~simdask.ingest.extract.rtf_text.read_rtf`
in the helper process bounded in memory and CPU time (:mod:`simdask.ingest.extract.isolated`):
the library's regular expressions can take quadratic time on a small file."""

from __future__ import annotations

from simdask.errors import ExtractionError
from simdask.ingest.extract.extract_limits import ExtractLimits, as_limits
from simdask.ingest.extract.isolated import extract_isolated
from simdask.ingest.extract.sniff import describe

__all__ = ["extract_rtf"]


def extract_rtf(data: bytes, name: str = "<rtf>", limits: ExtractLimits | None = None) -> str:
    """The text of an RTF document. Raises :class:`~simdask.errors.ExtractionError` of the
    kinds of :func:`~simdask.ingest.extract.rtf_text.read_rtf`, and ``too_complex`` when it
    takes more than ``limits.cpu_seconds`` of CPU, ``too_large`` when more than
    ``limits.pdf_memory_bytes`` of memory."""
    if not data.lstrip(b"\xef\xbb\xbf").startswith(b"{\\rtf"):
        raise ExtractionError(
            name,
            "corrupt",
            f"expected an RTF document (starting with {{\\rtf), found {describe(data)}",
        )
    return extract_isolated("rtf", data, name, as_limits(limits))
