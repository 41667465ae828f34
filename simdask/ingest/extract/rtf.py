"""RTF (Rich Text Format) documents, through the maintained library ``striprtf`` (the ``rtf``
extra): its ``rtf_to_text`` drops the control words and groups (fonts, colours, pictures)
and decodes ``\\'xx`` and ``\\uN`` escapes; the text is then plain text. RTF is 7-bit
text: its bytes are read as cp1252 (``\\'xx`` escapes carry the rest)."""

from __future__ import annotations

from simdask.errors import ExtractionError
from simdask.ingest.extract.sniff import describe

__all__ = ["extract_rtf"]

#: RTF nesting deeper than this is refused (``striprtf`` keeps a stack per group)
MAX_DEPTH = 10_000


def _rtf_to_text():
    try:
        from striprtf.striprtf import rtf_to_text  # optional (rtf extra)
    except ImportError as e:
        raise ImportError("striprtf") from e
    return rtf_to_text


def extract_rtf(data: bytes, name: str = "<rtf>") -> str:
    """The text of an RTF document. Raises :class:`~simdask.errors.ExtractionError` of kind
    ``corrupt`` (not RTF, or the library fails on it) or ``missing_dependency`` (striprtf
    not installed: ``pip install 'simdask[rtf]'``)."""
    if not data.lstrip(b"\xef\xbb\xbf").startswith(b"{\\rtf"):
        raise ExtractionError(
            name,
            "corrupt",
            f"expected an RTF document (starting with {{\\rtf), found {describe(data)}",
        )
    try:
        rtf_to_text = _rtf_to_text()
    except ImportError as e:
        raise ExtractionError(
            name,
            "missing_dependency",
            "expected the optional library striprtf to read RTF files, found it is not "
            "installed: pip install 'simdask[rtf]'",
        ) from e
    text = data.decode("cp1252", errors="replace")
    if text.count("{") > MAX_DEPTH and text.count("{") > len(text) // 4:
        raise ExtractionError(
            name, "corrupt", f"expected an RTF document, found {text.count('{'):,} nested groups"
        )
    try:
        return rtf_to_text(text, errors="replace")
    except (ValueError, IndexError, KeyError, RecursionError) as e:
        raise ExtractionError(
            name, "corrupt", f"expected a readable RTF document, found damage: {e}"
        ) from e
