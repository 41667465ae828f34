"""Files simdask does not read, and what the user can do about each (issue 18: no file of a
folder is dropped silently; each is reported as ``unsupported`` with a hint)."""

from __future__ import annotations

import os

__all__ = ["hint_for", "unsupported_message"]

_CONVERT = "save it as .docx, .odt, PDF or plain text"
_IMAGE = "an image: simdask reads text, not pictures (OCR is not done); add the text as a file"
#: hints by suffix (lower case)
_HINTS = {
    ".doc": f"an old Word file: {_CONVERT}",
    ".rtf": "an RTF document: simdask reads it with the optional library striprtf "
    "(pip install 'simdask[rtf]')",
    ".pages": "an Apple Pages file: export it as .docx or PDF (File > Export To)",
    ".wpd": f"a WordPerfect file: {_CONVERT}",
    ".jsonl": "a .jsonl file inside a folder is not read: give it as a SOURCE of its own",
    ".zip": "an archive: unpack it into the folder",
    ".7z": "an archive: unpack it into the folder",
    ".rar": "an archive: unpack it into the folder",
    ".gz": "a compressed file: unpack it into the folder",
}
for _s in (".png", ".jpg", ".jpeg", ".gif", ".tif", ".tiff", ".bmp", ".heic", ".webp"):
    _HINTS[_s] = _IMAGE
for _s in (".xls", ".xlsx", ".ods", ".csv", ".ppt", ".pptx", ".odp", ".key", ".numbers"):
    _HINTS[_s] = "a spreadsheet or slides, not a text document: export the text as PDF"


_GENERIC = "convert it to one of these formats if it holds text"


def hint_for(suffix: str = "", found: str = "") -> str:
    """What to do with a file of this suffix (``.doc``), or of what its content was found to
    be (``found``: ``an RTF document``, ``a PNG image``, ``a RAR archive``, ...)."""
    if found:
        low = found.lower()
        suffix = (
            ".rtf"
            if "rtf" in low
            else ".png"
            if "image" in low
            else ".zip"
            if "archive" in low or "compressed" in low
            else suffix
        )
    return _HINTS.get(suffix.lower(), _GENERIC)


def unsupported_message(name: str, readable: tuple[str, ...]) -> str:
    """Why the file ``name`` is not read and what to do: ``expected a document simdask reads
    (.txt .md ...), found a .doc file: an old Word file: save it as ...``."""
    suffix = os.path.splitext(name)[1].lower()
    found = f"a {suffix} file" if suffix else "a file without a suffix"
    hint = hint_for(suffix)
    return f"expected a document simdask reads ({' '.join(readable)}), found {found}: {hint}"
