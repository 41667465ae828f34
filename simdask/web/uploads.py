"""Uploaded files: names made safe, bytes bounded, written only inside a temporary folder.

:func:`safe_name` keeps the last component of whatever name the browser sent (``../../x``,
``C:\\x``, ``/etc/passwd`` all become a plain file name); :func:`save_uploads` writes each
file as ``<folder>/<n>/<safe name>`` (``n``: its position, so two files of the same name stay
two) and checks that every path it writes resolves inside ``folder``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from simdask.errors import ConfigError, SimdaskError
from simdask.ingest.sources import format_size

__all__ = [
    "TooLargeError",
    "limited_receive",
    "safe_name",
    "save_uploads",
    "upload_folder",
]

_UNSAFE = re.compile(r"[^\w.\- ]+")
_MAX_NAME = 150
_BLOCK = 1 << 20


class TooLargeError(SimdaskError, ValueError):
    """An upload (one file, or the whole request) is larger than the server accepts."""


def safe_name(name: str | None, default: str = "upload.txt") -> str:
    """A file name that cannot leave its folder: the last path component (``/`` and ``\\``
    both separate), control characters and anything but letters, digits, ``. - _`` and space
    replaced by ``_``, no leading dots, at most 150 characters (the suffix kept)."""
    base = re.split(r"[\\/]", unicodedata.normalize("NFC", name or ""))[-1]
    base = "".join(ch for ch in base if unicodedata.category(ch)[0] != "C")
    base = _UNSAFE.sub("_", base).strip(" ").lstrip(".")
    if not base or set(base) <= {"_", "."}:
        return default
    if len(base) > _MAX_NAME:
        stem, dot, suffix = base.rpartition(".")
        keep = suffix[:20] if dot else ""
        base = (stem if dot else base)[: _MAX_NAME - len(keep) - 1] + ("." + keep if keep else "")
    return base


def limited_receive(receive: Callable[[], Awaitable[dict]], limit: int) -> Callable:
    """An ASGI ``receive`` that raises :class:`TooLargeError` once the request body passes
    ``limit`` bytes (whether or not the client sent a Content-Length)."""
    seen = 0

    async def wrapped() -> dict:
        nonlocal seen
        message = await receive()
        if message.get("type") == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise TooLargeError(
                    f"the upload is larger than the server accepts ({format_size(limit)} per "
                    "request); send fewer or smaller files"
                )
        return message

    return wrapped


#: levels and characters per level of an upload folder
MAX_FOLDER_DEPTH = 5
MAX_FOLDER_PART = 100
_FOLDER_PART = re.compile(r"[\w][\w .-]*")


def upload_folder(value: str | None) -> str:
    """The folder a teacher chose for an upload (``2026/essays``: the documents get the
    keys ``uploads/2026/essays/NAME``), checked: relative, parts of letters, digits,
    ``_``, ``-``, ``.`` and spaces (not starting with ``.`` or a space), none ``..``, at
    most :data:`MAX_FOLDER_DEPTH` levels of :data:`MAX_FOLDER_PART` characters; ``/``
    separates levels (leading and trailing ones are an error, not dropped). Empty or None:
    ``""`` (no folder). Raises :class:`~simdask.errors.ConfigError` (a ``ValueError``)
    saying what was expected."""
    text = (value or "").strip()
    if not text:
        return ""
    parts = text.split("/")
    expected = (
        f"expected a folder inside uploads/ such as 2026/essays (at most {MAX_FOLDER_DEPTH} "
        "levels of letters, digits, _ - . and spaces, separated by /)"
    )
    if text.startswith("/") or "\\" in text or len(parts) > MAX_FOLDER_DEPTH:
        raise ConfigError(f"{expected}, found {value!r}")
    for part in parts:
        ok = _FOLDER_PART.fullmatch(part) and len(part) <= MAX_FOLDER_PART
        if not ok or part.rstrip() != part or set(part) == {"."}:
            raise ConfigError(f"{expected}, found {value!r} (the part {part!r})")
    return "/".join(parts)


async def save_uploads(
    files: list[Any], folder: Path, max_file_bytes: int, flat: bool = False
) -> list[Path]:
    """Write uploaded files (Starlette ``UploadFile``) into ``folder``; returns their paths.

    Each file goes to ``folder/<n>/<safe name>``, or with ``flat`` to ``folder/<safe name>``
    (a repeated name gets ``-2``, ``-3`` ... before its suffix). A file larger than
    ``max_file_bytes`` raises :class:`TooLargeError` naming it (nothing of it is kept).
    ``folder`` must exist; nothing is written outside it.
    """
    root = folder.resolve()
    out: list[Path] = []
    for i, f in enumerate(files):
        name = safe_name(getattr(f, "filename", None))
        size = getattr(f, "size", None)
        if size is not None and size > max_file_bytes:
            raise _too_large(name, size, max_file_bytes)
        sub = root if flat else root / str(i)
        sub.mkdir(exist_ok=flat)
        name = _unique(sub, name) if flat else name
        path = (sub / name).resolve()
        if path.parent != sub:  # cannot happen after safe_name; checked all the same
            raise TooLargeError(f"refused upload name {name!r}: it leaves the upload folder")
        written = 0
        with open(path, "xb") as dst:
            while block := await f.read(_BLOCK):
                written += len(block)
                if written > max_file_bytes:
                    dst.close()
                    path.unlink()
                    raise _too_large(name, written, max_file_bytes, partial=True)
                dst.write(block)
        out.append(path)
    return out


def _unique(folder: Path, name: str) -> str:
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        stem, suffix = name, ""
    n = 1
    while (folder / name).exists():
        n += 1
        name = f"{stem}-{n}" + (f".{suffix}" if suffix else "")
    return name


def _too_large(name: str, size: int, limit: int, partial: bool = False) -> TooLargeError:
    """``partial``: ``size`` is what was read before stopping (the file is larger)."""
    return TooLargeError(
        f"{name} is {'over ' if partial else ''}{format_size(size)}, larger than the upload "
        f"limit of {format_size(limit)} per file (the server's --max-file-size)"
    )
