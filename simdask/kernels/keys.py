"""The key scheme's pure string rules, shared by ingest (which makes keys), storage (which
migrates old keys) and the change resolution (which reads them). No I/O.

A document read from a folder is keyed ``<folder name>/<path inside>``, a file given directly
by its name, a JSONL line by its id (docs/design.md, "Keys")."""

from __future__ import annotations

import re

from simdask.errors import ConfigError

__all__ = ["FOLDER_SUFFIX", "key_prefix", "safe_text", "unsafe_text"]

#: Keys naming a folder (an unreadable one, in a per-file error) end with this (``essays/sub/``).
FOLDER_SUFFIX = "/"


#: an escape as :func:`safe_text` writes it, after its backslash: ``\\``, ``xNN``, ``uNNNN``
_ESCAPE_TAIL = re.compile(r"\\|x[0-9a-f]{2}|u[0-9a-f]{4}")
_NEEDS_CARE = re.compile(r"[\\\ud800-\udfff]")


def _is_surrogate(ch: str) -> bool:
    return "\ud800" <= ch <= "\udfff"


def safe_text(text: str) -> str:
    """``text`` as valid Unicode, one to one: undecodable bytes of a file name (kept by Python
    as surrogate escapes) are written ``\\xNN``, any other lone surrogate ``\\udNNN``, and a
    backslash that would read as such an escape (one followed by another backslash, by an
    undecodable byte, or by ``xNN`` / ``uNNNN`` in lower-case hex) is doubled. So a name holding
    the byte 0xFF and one literally named ``\\xff`` get different keys (issue 30 item 15);
    names without backslashes or undecodable bytes are kept as they are, and
    :func:`unsafe_text` gives the original back."""
    if not _NEEDS_CARE.search(text):
        return text
    out = []
    for i, ch in enumerate(text):
        if _is_surrogate(ch):
            code = ord(ch)
            byte = 0xDC80 <= code <= 0xDCFF  # Python's surrogate escape of one byte
            out.append(f"\\x{code - 0xDC00:02x}" if byte else f"\\u{code:04x}")
        elif ch == "\\" and (
            (i + 1 < len(text) and _is_surrogate(text[i + 1])) or _ESCAPE_TAIL.match(text, i + 1)
        ):
            out.append("\\\\")
        else:
            out.append(ch)
    return "".join(out)


def unsafe_text(text: str) -> str:
    """The inverse of :func:`safe_text`: ``\\\\`` is a backslash, ``\\xNN`` (``NN`` 80-ff) an
    undecodable byte (a surrogate escape), ``\\uNNNN`` a lone surrogate; any other backslash
    is itself."""
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        m = _ESCAPE_TAIL.match(text, i + 1) if text[i] == "\\" else None
        tail = m.group() if m else ""
        if tail == "\\":
            out.append("\\")
        elif tail.startswith("x") and int(tail[1:], 16) >= 0x80:
            out.append(chr(0xDC00 + int(tail[1:], 16)))
        elif tail.startswith("u") and _is_surrogate(chr(int(tail[1:], 16))):
            out.append(chr(int(tail[1:], 16)))
        else:
            out.append(text[i])
            tail = ""
        i += 1 + len(tail)
    return "".join(out)


def key_prefix(text: str) -> str:
    """A ``--key-prefix`` as put before keys: ``2026`` and ``2026/`` give ``2026/``, nested
    ``term/2026`` gives ``term/2026/``, ``""`` none. Raises :class:`ConfigError` for a prefix
    that starts with ``/``, holds an empty, ``.`` or ``..`` part, or is not valid text."""
    if not text:
        return ""
    parts = text.rstrip(FOLDER_SUFFIX).split(FOLDER_SUFFIX)
    if text.startswith(FOLDER_SUFFIX) or any(p in ("", ".", "..") for p in parts):
        raise ConfigError(
            f"expected a key prefix of folder names such as 2026/ or term1/2026/, found {text!r}"
        )
    if safe_text(text) != text:
        raise ConfigError(f"expected a key prefix of valid Unicode, found {safe_text(text)!r}")
    return FOLDER_SUFFIX.join(parts) + FOLDER_SUFFIX
