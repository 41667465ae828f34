"""The key scheme's pure string rules, shared by ingest (which makes keys), storage (which
migrates old keys) and the change resolution (which reads them). No I/O.

A document read from a folder is keyed ``<folder name>/<path inside>``, a file given directly
by its name, a JSONL line by its id (docs/design.md, "Keys")."""

from __future__ import annotations

from simdask.errors import ConfigError

__all__ = ["FOLDER_SUFFIX", "key_prefix", "safe_text"]

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
