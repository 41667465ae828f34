"""RTF (Rich Text Format) documents read in this process, through the maintained library
``striprtf`` (the ``rtf`` extra): its ``rtf_to_text`` drops the control words and groups
(fonts, colours, pictures) and decodes ``\\'xx`` and ``\\uN`` escapes; the text is then plain
text. RTF is 7-bit text: its bytes are read as cp1252 (``\\'xx`` escapes carry the rest).

``striprtf``'s regular expressions take quadratic time on some inputs (80 kB of ``\\f1``
control words cost 7.5 s, 1 MB would cost minutes), so
:func:`simdask.ingest.extract.rtf.extract_rtf` runs :func:`read_rtf` in the bounded helper
process (:mod:`simdask.ingest.extract.isolated`). Groups nested deeper than
``ExtractLimits.depth`` are ``too_complex`` before the library sees them.
"""

from __future__ import annotations

import numpy as np

from simdask.errors import ExtractionError
from simdask.ingest.extract.extract_limits import ExtractLimits
from simdask.ingest.extract.sniff import describe

__all__ = ["group_depth", "read_rtf"]


def _rtf_to_text():
    try:
        from striprtf.striprtf import rtf_to_text  # optional (rtf extra)
    except ImportError as e:
        raise ImportError("striprtf") from e
    return rtf_to_text


def group_depth(data: bytes) -> int:
    """The deepest nesting of ``{`` ``}`` groups in RTF ``data`` (braces escaped as ``\\{``
    ``\\}`` do not count; unbalanced closing braces do not go below 0 for later groups)."""
    raw = np.frombuffer(data, dtype=np.uint8)
    step = (raw == ord("{")).astype(np.int64) - (raw == ord("}"))
    if len(raw) > 1:
        step[1:][raw[:-1] == ord("\\")] = 0  # an escaped brace (\\{ rarely: a backslash)
    if not step.any():
        return 0
    level = np.cumsum(step)
    return int((level - np.minimum.accumulate(np.minimum(level, 0))).max())


def read_rtf(data: bytes, name: str = "<rtf>", limits: ExtractLimits | None = None) -> str:
    """The text of an RTF document. Raises :class:`~simdask.errors.ExtractionError` of kind
    ``corrupt`` (not RTF, or the library fails on it), ``too_complex`` (groups nested deeper
    than ``limits.depth``) or ``missing_dependency`` (striprtf not installed:
    ``pip install 'simdask[rtf]'``)."""
    limits = limits or ExtractLimits()
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
            "expected the optional library striprtf to read RTF documents, found it is not "
            "installed: pip install 'simdask[rtf]'",
        ) from e
    depth = group_depth(data)
    if depth > limits.depth:
        raise ExtractionError(
            name,
            "too_complex",
            f"expected RTF groups nested at most {limits.depth} deep, found {depth:,} levels",
        )
    try:
        return rtf_to_text(data.decode("cp1252", errors="replace"), errors="replace")
    except (ValueError, IndexError, KeyError, RecursionError) as e:
        raise ExtractionError(
            name, "corrupt", f"expected a readable RTF document, found damage: {e}"
        ) from e
