"""The key scheme's pure string rules, shared by ingest (which makes keys), storage (which
migrates old keys) and the change resolution (which reads them). No I/O.

A document read from a folder is keyed ``<folder name>/<path inside>``, a file given directly
by its name, a JSONL line by its id (docs/design.md, "Keys")."""

from __future__ import annotations

__all__ = ["FOLDER_SUFFIX", "safe_text"]

#: Keys naming a folder (an unreadable one, in a per-file error) end with this (``essays/sub/``).
FOLDER_SUFFIX = "/"


def safe_text(text: str) -> str:
    """``text`` as valid Unicode: undecodable bytes of a file name (kept by Python as
    surrogate escapes) are written ``\\xNN``, any other lone surrogate ``\\udNNN``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return text.encode("utf-8", "backslashreplace").decode("utf-8")
        return raw.decode("utf-8", "backslashreplace")
    return text
